#!/usr/bin/env python3
"""Structure checks that the build cannot express, run by ctest (structure_test).

  function length  no function body under harness/ or suites/ longer than
                   --max-lines lines (60). Every line between the braces
                   counts but those that hold only a string literal (usage text).
  layering         a file under suites/<s>/ includes only perfbench/... public
                   headers, headers of its own folder, and suites/common/;
                   harness/src/ headers are private to the core.
  CUDA sources     a file that tests PERFBENCH_WITH_CUDA is one that
                   suites/CMakeLists.txt names in perfbench_cuda_sources()
                   (the only files compiled with it: cmake/PerfbenchCuda.cmake),
                   and every file named there tests it.

Exit 0 when clean, 1 with one line per finding. A heuristic C++ reader:
comments and string literals are stripped before braces are counted.
"""
import argparse
import os
import re
import sys

SOURCE_EXT = (".cc", ".h", ".cpp", ".hpp")
CONTROL = re.compile(r"^(if|for|while|switch|catch|do|else|try|return)\b")
TYPE_HEAD = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$")


def strip(text):
    """Replaces comments and the insides of string/char literals with spaces,
    keeping newlines, so that line numbers and braces stay meaningful."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j])); i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c); i = j + 1
        else:
            out.append(c); i += 1
    return "".join(out)


def counted(line):
    return not re.fullmatch(r'\s*(""\s*)+[,;)]*\s*', line)


def long_functions(path, limit):
    raw = open(path, encoding="utf-8", errors="replace").read()
    text = strip(raw)
    lines = text.split("\n")
    findings, stack, head = [], [], ""
    start = None
    for lineno, line in enumerate(lines, 1):
        for c in line:
            if c == "{":
                kind = "block"
                if all(k == "scope" for k, _ in stack):
                    h = " ".join(head.split())
                    if TYPE_HEAD.search(h) or h.startswith("extern") or not h:
                        kind = "scope"
                    elif "(" in h and not CONTROL.match(h) and not h.endswith("="):
                        kind = "function"
                stack.append((kind, lineno))
                head = ""
            elif c == "}":
                if stack:
                    kind, begin = stack.pop()
                    if kind == "function":
                        body = [l for l in lines[begin:lineno - 1] if counted(l)]
                        if len(body) > limit:
                            findings.append(f"{path}:{begin}: function body of {len(body)} lines (limit {limit})")
                head = ""
            elif c == ";":
                head = ""
            else:
                head += c
        head += " "
    return findings


def bad_includes(path, root):
    rel = os.path.relpath(path, root)
    parts = rel.split(os.sep)
    if parts[0] != "suites" or len(parts) < 3:
        return []
    own = parts[1]
    findings = []
    for lineno, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not m:
            continue
        inc = m.group(1)
        ok = (inc.startswith("perfbench/") or inc.startswith("common/")
              or os.path.exists(os.path.join(root, "suites", own, inc))
              or (own == "common" and os.path.exists(os.path.join(root, "suites", "common", inc))))
        if not ok:
            findings.append(f"{rel}:{lineno}: includes \"{inc}\", outside harness/include, suites/{own} and suites/common")
    return findings


def cuda_source_findings(root, sources):
    """Files that test PERFBENCH_WITH_CUDA against those the build compiles with it."""
    cmake = os.path.join(root, "suites", "CMakeLists.txt")
    m = re.search(r"^\s*perfbench_cuda_sources\(([^)]*)\)", open(cmake, encoding="utf-8").read(), re.M)
    named = {os.path.join("suites", f) for f in (m.group(1).split() if m else [])}
    testing = {os.path.relpath(p, root) for p in sources
               if re.search(r"^\s*#\s*if(def|\s+defined)?\s*\(?\s*PERFBENCH_WITH_CUDA\b",
                            open(p, encoding="utf-8", errors="replace").read(), re.M)}
    return ([f"{f}: tests PERFBENCH_WITH_CUDA but suites/CMakeLists.txt's perfbench_cuda_sources() does not name it"
             for f in sorted(testing - named)] +
            [f"suites/CMakeLists.txt: perfbench_cuda_sources() names {f}, which does not test PERFBENCH_WITH_CUDA"
             for f in sorted(named - testing)])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--max-lines", type=int, default=60)
    ap.add_argument("paths", nargs="*", default=["harness", "suites"])
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    findings, sources = [], []
    for top in args.paths:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(SOURCE_EXT):
                    p = os.path.join(dirpath, f)
                    sources.append(p)
                    findings += [os.path.relpath(x, root) if x.startswith(root) else x
                                 for x in long_functions(p, args.max_lines)]
                    findings += bad_includes(p, root)
    if "suites" in args.paths:
        findings += cuda_source_findings(root, sources)
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
