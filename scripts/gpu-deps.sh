#!/usr/bin/env bash
# Prepares, on a Debian machine with apt-get, what a perfbench build needs
# beyond a GPU machine's CUDA toolkit, CMake and torch wheel: Debian's
# development packages for SQLite, nlohmann-json, Boost.Program_options (and
# the Boost headers the core uses), {fmt}, Google Benchmark, gloo's headers
# and libjpeg-turbo, as .deb files unpacked with `dpkg -x` into a private
# prefix (never into /), small enough to travel with the working tree.
#
#   scripts/gpu-deps.sh [--check] [DIR]
#
#   DIR      where to put them (default: .gpu-deps, git-ignored):
#              DIR/debs/*.deb    the packages, as downloaded
#              DIR/prefix/usr    their files, unpacked; Boost's headers pruned
#                                to those perfbench's sources include
#              DIR/MANIFEST      package versions and sizes
#   --check  only check an existing DIR (prefix complete, size within limit)
#
# Build with it:  cmake -DPERFBENCH_DEPS_PREFIX=DIR/prefix/usr ...  (scripts/
# gpu-smoke.sh does this by itself when DIR is .gpu-deps or $PERFBENCH_DEPS).
# The whole DIR must stay within 48 MiB (PERFBENCH_DEPS_LIMIT_MIB to change);
# the script fails otherwise. Tests need GoogleTest, which the smoke does not
# build, so it is not included.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'gpu-deps: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

check_only=0
dir=""
for a in "$@"; do
  case "$a" in
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    --check) check_only=1 ;;
    -*) die "unknown option $a (see --help)" ;;
    *) [ -z "$dir" ] || die "one DIR only (see --help)"; dir="$a" ;;
  esac
done
dir="${dir:-.gpu-deps}"
limit_mib="${PERFBENCH_DEPS_LIMIT_MIB:-48}"

# Runtime libraries come with their -dev packages: a GPU image may lack them.
packages=(libsqlite3-dev libsqlite3-0 nlohmann-json3-dev
          libboost-program-options-dev libboost-program-options1.74-dev libboost-program-options1.74.0
          libboost1.74-dev libfmt-dev libfmt9 libbenchmark-dev libbenchmark1debian
          libgloo-dev libjpeg62-turbo-dev libjpeg62-turbo)
# What the build looks for in the prefix (relative to prefix/usr). jconfig.h
# lives in Debian's multiarch folder: without it the host's (another
# JPEG_LIB_VERSION) would be compiled against the prefix's libjpeg.so.62.
needed=(include/sqlite3.h include/nlohmann/json.hpp include/boost/program_options.hpp
        include/boost/math/distributions/students_t.hpp include/fmt/format.h include/benchmark/benchmark.h
        include/gloo/algorithm.h include/jpeglib.h include/x86_64-linux-gnu/jconfig.h lib/x86_64-linux-gnu/libsqlite3.so
        lib/x86_64-linux-gnu/libboost_program_options.so lib/x86_64-linux-gnu/libfmt.so
        lib/x86_64-linux-gnu/libbenchmark.so lib/x86_64-linux-gnu/libjpeg.so)

check() {
  local missing=()
  for f in "${needed[@]}"; do [ -e "$dir/prefix/usr/$f" ] || missing+=("$f"); done
  [ "${#missing[@]}" -eq 0 ] || die "$dir/prefix/usr lacks ${missing[*]}"
  local kib
  kib=$(du -sk "$dir" | cut -f1)
  [ "$kib" -le $((limit_mib * 1024)) ] || die "$dir holds $((kib / 1024)) MiB, over the ${limit_mib} MiB limit"
  say "$dir: complete, $((kib / 1024)) MiB of at most ${limit_mib} MiB"
}

if [ "$check_only" = 1 ]; then
  [ -d "$dir/prefix" ] || die "$dir/prefix does not exist: run scripts/gpu-deps.sh $dir first"
  check
  exit 0
fi

command -v apt-get >/dev/null && command -v dpkg >/dev/null || die "needs apt-get and dpkg (a Debian machine)"
work="$dir.partial"
rm -rf "$work"
mkdir -p "$work/debs" "$work/prefix"
say "downloading ${#packages[@]} packages"
(cd "$work/debs" && apt-get download -q "${packages[@]}" >/dev/null 2>"../apt.log") ||
  die "apt-get download failed: $(tail -1 "$work/apt.log")"
rm -f "$work/apt.log"
for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/prefix"; done
rm -rf "$work/prefix/usr/share/doc" "$work/prefix/usr/share/man" "$work/prefix/usr/share/lintian"

# Boost's headers are 160 MiB: keep the ones perfbench's torch-free sources
# reach (their -M closure against the prefix), and boost/version.hpp, which
# Boost's CMake configuration reads.
inc="$(cd "$work/prefix/usr/include" && pwd)"
keep="$work/boost-headers"
sources=$(grep -rl '#include <boost/' harness bench tests suites 2>/dev/null | sort -u)
{
  echo "boost/version.hpp"
  for src in $sources; do
    g++ -std=c++20 -M -MG -I"$inc" -Iharness/include -Iharness/src -Iharness/cli -Isuites -Ibench "$src" 2>/dev/null |
      tr ' \\' '\n\n' | grep "^$inc/boost/" | sed "s|^$inc/||" || true
  done
} | sort -u >"$keep"
[ "$(wc -l <"$keep")" -gt 50 ] || die "could not list the Boost headers perfbench uses (g++ -M found $(wc -l <"$keep"))"
(cd "$inc" && find boost -type f | sort) | comm -23 - "$keep" | (cd "$inc" && xargs -r rm -f)
find "$inc/boost" -type d -empty -delete
rm -f "$keep"

{
  echo "# scripts/gpu-deps.sh, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(. /etc/os-release && echo "$PRETTY_NAME")"
  for deb in "$work"/debs/*.deb; do
    dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb"
  done
  echo "boost headers kept: $(find "$inc/boost" -type f | wc -l)"
} >"$work/MANIFEST"
rm -rf "$dir"
mv "$work" "$dir"
check
