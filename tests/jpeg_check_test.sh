#!/usr/bin/env bash
# The configure-time libjpeg check (cmake/PerfbenchJpeg.cmake): with the
# library's own jconfig.h it passes; with a planted jconfig.h that claims
# another JPEG_LIB_VERSION ahead of it (the GPU build's failure: Ubuntu's 80
# compiled against Debian's libjpeg.so.62) the configure fails naming both.
#   tests/jpeg_check_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work/planted"
cmake -S "$src/tests/cmake/jpeg_check" -B "$work/good" -DPERFBENCH_SOURCE_DIR="$src" >"$work/good.log" 2>&1 ||
  { cat "$work/good.log"; echo "FAIL: the check rejects the machine's own libjpeg"; exit 1; }
grep -q "headers and library agree" "$work/good.log" || { cat "$work/good.log"; echo "FAIL: no verdict"; exit 1; }
own="$(grep -o 'JPEG_LIB_VERSION [0-9]*' "$work/good.log" | awk '{print $2}')"
other=$(( own == 80 ? 62 : 80 ))
jconfig="$(find /usr/include -name jconfig.h | head -1)"
[ -n "$jconfig" ] || { echo "FAIL: no jconfig.h under /usr/include"; exit 1; }
sed "s/^#define JPEG_LIB_VERSION .*/#define JPEG_LIB_VERSION $other/" "$jconfig" >"$work/planted/jconfig.h"
if cmake -S "$src/tests/cmake/jpeg_check" -B "$work/bad" -DPERFBENCH_SOURCE_DIR="$src" \
     -DJPEG_EXTRA_INCLUDE="$work/planted" >"$work/bad.log" 2>&1; then
  cat "$work/bad.log"; echo "FAIL: a planted jconfig.h ($other) against libjpeg $own configured"; exit 1
fi
# CMake wraps its messages: compare with the line breaks folded.
tr -s ' \n' '  ' <"$work/bad.log" | grep -q "library is $own, headers (jconfig.h) say $other" ||
  { cat "$work/bad.log"; echo "FAIL: the error does not name both versions"; exit 1; }
echo "ok: libjpeg $own accepted; a planted jconfig.h of $other refused with both named"
