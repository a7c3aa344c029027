#!/usr/bin/env python3
"""The README's recipes run as written.

Every ```sh block under "## Recipes" runs, command by command, in a fresh
folder per recipe ("### " heading) where build/perfbench is the binary under
test. A command must exit 0; compare, gate and ab may also exit 3
(inconclusive: what this machine's noise allows is the verdict's business,
not the recipe's). Lines ending in a backslash continue; comments are skipped.

    readme_recipes_test.py PERFBENCH_BINARY SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile
import time

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
VERDICT = re.compile(r"build/perfbench (compare|gate|ab)\b")


def recipes(readme):
    section = readme.split("\n## Recipes", 1)
    if len(section) != 2:
        sys.exit("FAIL: README.md has no '## Recipes' section")
    body = section[1].split("\n## ", 1)[0]
    out = []
    for part in re.split(r"\n### ", body)[1:]:
        title = part.splitlines()[0].strip()
        blocks = re.findall(r"```sh\n(.*?)```", part, re.S)
        out.append((title, blocks))
    return out


def commands(block):
    cmds, cur = [], ""
    for line in block.splitlines():
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        cur += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            cmds.append(cur.strip())
            cur = ""
    return cmds


def main():
    readme = open(os.path.join(SRC, "README.md")).read()
    if len(readme.splitlines()) > 250:
        sys.exit("FAIL: README.md has %d lines, at most 250" % len(readme.splitlines()))
    for command in ("scripts/setup.sh && build/perfbench run --quick", "scripts/test.sh"):
        if command not in readme:
            sys.exit("FAIL: README.md lacks `%s`" % command)
    found = recipes(readme)
    if len(found) < 5:
        sys.exit("FAIL: %d recipes in the README, 5 expected" % len(found))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFBENCH_")}
    # AOTInductor exports skip inductor's ISA probes, as in model_suite_test.py.
    env["TORCHINDUCTOR_VEC_ISA_OK"] = "1"
    for title, blocks in found:
        if not blocks:
            sys.exit("FAIL: recipe '%s' has no sh block" % title)
        with tempfile.TemporaryDirectory() as tmp:
            os.symlink(os.path.dirname(BIN), os.path.join(tmp, "build"))
            # The own-model recipe exports with the torch wheel's Python and the example models.
            for name in (".venv", "scripts", "examples"):
                if os.path.exists(os.path.join(SRC, name)):
                    os.symlink(os.path.join(SRC, name), os.path.join(tmp, name))
            start = time.time()
            # One script per recipe, so an `export` holds for the lines after it.
            cmds = [c for b in blocks for c in commands(b)]
            script = "set -o pipefail\n"
            for i, cmd in enumerate(cmds):
                allowed = "0|3" if VERDICT.search(cmd) else "0"
                script += "%s\nrc=$?; case $rc in %s) ;; *) echo \"@@failed %d $rc\"; exit 1;; esac\n" % (cmd, allowed, i)
            r = subprocess.run(["bash", "-c", script], cwd=tmp, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                m = re.search(r"@@failed (\d+) (\d+)", r.stdout)
                what = "`%s` exited %s" % (cmds[int(m.group(1))], m.group(2)) if m else "exited %d" % r.returncode
                sys.exit("FAIL: recipe '%s': %s:\n%s" % (title, what, r.stdout[-4000:]))
            print("recipe '%s': ok (%.0f s)" % (title, time.time() - start))


if __name__ == "__main__":
    main()
