"""Does perfbench's ddp/allreduce read what torch.distributed itself can do?

Alternates, round by round, `perfbench run --suite ddp --filter allreduce`
(Gloo, world size 2, this machine's loopback) with the same all-reduce from
the build's Python environment through torch.distributed, at the same sizes,
in fresh processes each round. The reference is timed two ways:
  as perfbench   barrier, then `iters` back-to-back all-reduces (iters =
                 clamp(8 MiB / bytes, 1, 100), as ddp/allreduce), t = the
                 slowest rank's time / iters, median over 15 repetitions
                 (nccl-tests' convention, and the timed region perfbench uses)
  single op      barrier, one all-reduce, rank 0's time, median of 15 (how
                 the issue's first comparison timed it)
busbw = 2(n-1)/n * bytes / t for both. Prints per size the medians over
rounds and the median of the per-round ratios perfbench / reference.
Development-time tool: needs torch in the Python that runs it.

  .venv/bin/python bench/allreduce_fidelity.py [--perfbench build/perfbench] [--rounds 3]
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = (1 << 20, 16 << 20)
REPS = 15


def worker(rank, port, out):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    result = {}
    for nbytes in SIZES:
        x = torch.ones(nbytes // 4)
        iters = max(1, min(100, (8 << 20) // nbytes))
        for _ in range(3):
            dist.all_reduce(x)
        grouped, single = [], []
        for _ in range(REPS):
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(x)
            t = torch.tensor([(time.perf_counter() - t0) / iters], dtype=torch.float64)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            grouped.append(t.item())
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(x)
            single.append(time.perf_counter() - t0)
        busbw = lambda s: nbytes / statistics.median(s) / 1e9  # 2(n-1)/n = 1 at n = 2
        result[nbytes] = {"as_perfbench": busbw(grouped), "single_op": busbw(single)}
    if rank == 0:
        out.update({str(k): v for k, v in result.items()})
    dist.destroy_process_group()


def reference():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with mp.Manager() as m:
        out = m.dict()
        mp.spawn(worker, args=(port, out), nprocs=2)
        return {int(k): dict(v) for k, v in out.items()}


def perfbench(binary, db):
    cmd = [binary, "run", "--suite", "ddp", "--filter", "allreduce.*gloo", "--world-sizes", "2", "--param",
           ",".join(["bytes=" + ",".join(str(b) for b in SIZES)]), "--repetitions", str(REPS), "--no-control",
           "--format", "json", "--db", db]
    doc = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return {int(r["params"]["bytes"]): r["median"] for r in doc["results"]
            if r["workload"] == "allreduce" and r["metric"] == "busbw" and r["status"] == "ok"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfbench", default="build/perfbench")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            first_ours = r % 2 == 0  # alternate which goes first
            ours = perfbench(a.perfbench, os.path.join(tmp, "f.db")) if first_ours else None
            ref = reference()
            if not first_ours:
                ours = perfbench(a.perfbench, os.path.join(tmp, "f.db"))
            rows.append((ours, ref))
            print(f"round {r + 1}: " + "  ".join(
                f"{b >> 20} MiB perfbench {ours[b]:.3f} ref {ref[b]['as_perfbench']:.3f} single-op {ref[b]['single_op']:.3f}"
                for b in SIZES), flush=True)
    print(f"\nbusbw GB/s, Gloo, world size 2, loopback; medians over {a.rounds} alternated rounds")
    print(f"{'size':>8} {'perfbench':>10} {'torch.dist':>11} {'single-op':>10} {'ratio':>7} {'ratio range':>15}")
    for b in SIZES:
        ours = [o[b] for o, _ in rows]
        ref = [x[b]["as_perfbench"] for _, x in rows]
        single = [x[b]["single_op"] for _, x in rows]
        ratios = [o / x for o, x in zip(ours, ref)]
        print(f"{b >> 20:>5} MiB {statistics.median(ours):>10.3f} {statistics.median(ref):>11.3f} "
              f"{statistics.median(single):>10.3f} {statistics.median(ratios):>7.3f} "
              f"{min(ratios):>7.3f}..{max(ratios):<7.3f}")


if __name__ == "__main__":
    main()
