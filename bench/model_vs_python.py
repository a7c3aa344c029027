#!/usr/bin/env python3
"""Does `perfbench run --model-file` measure a model as its own Python would?

Exports examples/models.py:wide_mlp (batch 256; one call takes tens of ms on a
2-core CPU) with scripts/export-model.py, then alternates fresh processes:
`perfbench run --model-file PKG --filter offline --processes 1` and the same
package in a Python loop (torch._inductor.aoti_load_package), the same inputs
(PKG.inputs.pt), warm-up, calls per repetition and repetitions. Each process
gives its median offline throughput; each pair a ratio perfbench / Python.
The order within a pair alternates (perfbench first in even pairs), so drift
of the machine does not favour one side. Prints every pair, the geometric
mean ratio and its 95% t interval over the pairs' log ratios; exit 0 when
the interval lies within [0.9, 1.1].

    .venv/bin/python bench/model_vs_python.py [--pairs 10] [--perfbench build/perfbench]

The t quantiles are scipy.stats.t.ppf(0.975, df) (SciPy 1.17.1), tabled below
so this script needs only the torch wheel's Python.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T975 = {3: 3.182446, 4: 2.776445, 5: 2.570582, 6: 2.446912, 7: 2.364624, 8: 2.306004, 9: 2.262157,
        10: 2.228139, 11: 2.200985, 12: 2.178813, 13: 2.160369, 14: 2.144787, 15: 2.131450, 16: 2.119905,
        17: 2.109816, 18: 2.100922, 19: 2.093024, 20: 2.085963, 25: 2.059539, 30: 2.042272}

PY_LOOP = r"""
import statistics, sys, time, torch
pkg, calls, reps, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
model = torch._inductor.aoti_load_package(pkg)
inputs = torch.load(pkg + ".inputs.pt")
batch = inputs[0].shape[0]
rates = []
with torch.inference_mode():
    for rep in range(warmup + reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            model(*inputs)
        dt = time.perf_counter() - t0
        if rep >= warmup:
            rates.append(calls * batch / dt)
print(statistics.median(rates))
"""


def t975(df):
    return T975[df] if df in T975 else T975[max(k for k in T975 if k <= df)]


def perfbench_side(binary, pkg, reps, warmup, db, calls=None):
    extra = ["--param", "calls=%d" % calls] if calls else []
    r = subprocess.run([binary, "run", "--model-file", pkg, "--filter", "offline", "--processes", "1", "--no-control",
                        "--repetitions", str(reps), "--warmup", str(warmup), "--format", "json", "--db", db] + extra,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True)
    doc = json.loads(r.stdout)
    row = [x for x in doc["results"] if x["suite"] == "model" and x["metric"] == "throughput"][0]
    calls = int(row["attributes"]["offline"].split(", ")[1].split()[0])
    return row["median"], calls


def python_side(pkg, calls, reps, warmup):
    r = subprocess.run([sys.executable, "-c", PY_LOOP, pkg, str(calls), str(reps), str(warmup)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True)
    return float(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--perfbench", default=os.path.join(SRC, "build", "perfbench"))
    ap.add_argument("--repetitions", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()
    if a.pairs < 4:
        sys.exit("--pairs must be at least 4")
    with tempfile.TemporaryDirectory() as tmp:
        pkg = os.path.join(tmp, "wide_mlp.pt2")
        subprocess.run([sys.executable, os.path.join(SRC, "scripts", "export-model.py"),
                        os.path.join(SRC, "examples", "models.py") + ":wide_mlp", "--out", pkg],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        db = os.path.join(tmp, "runs.db")
        # The calls per repetition perfbench chooses (about 0.2 s of them), then fixed for both sides.
        _, calls = perfbench_side(a.perfbench, pkg, 1, 1, db)
        logs = []
        for i in range(a.pairs):
            start = time.time()
            if i % 2 == 0:
                pb, _ = perfbench_side(a.perfbench, pkg, a.repetitions, a.warmup, db, calls)
                py = python_side(pkg, calls, a.repetitions, a.warmup)
            else:
                py = python_side(pkg, calls, a.repetitions, a.warmup)
                pb, _ = perfbench_side(a.perfbench, pkg, a.repetitions, a.warmup, db, calls)
            logs.append(math.log(pb / py))
            print("pair %2d (%s first): perfbench %.1f, python %.1f samples/s, ratio %.4f, %d calls/rep (%.0f s)"
                  % (i + 1, "perfbench" if i % 2 == 0 else "python", pb, py, pb / py, calls, time.time() - start),
                  flush=True)
    n = len(logs)
    mean, sd = statistics.mean(logs), statistics.stdev(logs)
    half = t975(n - 1) * sd / math.sqrt(n)
    lo, hi = math.exp(mean - half), math.exp(mean + half)
    print("ratio perfbench / python over %d pairs: %.4f, 95%% interval [%.4f, %.4f] (t, %d df); pairs %.4f..%.4f"
          % (n, math.exp(mean), lo, hi, n - 1, math.exp(min(logs)), math.exp(max(logs))))
    ok = 0.9 <= lo and hi <= 1.1
    print("within [0.9, 1.1]: %s" % ("yes" if ok else "no"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
