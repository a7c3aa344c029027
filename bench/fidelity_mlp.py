"""The amp/mlp fp32 training step as a Python eager loop, for bench/harness_fidelity.

Same model (Linear+GELU stack), batch, loss and optimiser (SGD, momentum 0.9,
lr 0.05, zero_grad(set_to_none=True)) as suites/common; prints the median
step time in seconds after the warm-up. Development-time reference only.

  python bench/fidelity_mlp.py --size quick --steps 40 --warmup 3 [--threads N]
"""
import argparse
import statistics
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=["quick", "full"], default="quick")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    batch, features, width, depth = (128, 256, 512, 4) if a.size == "quick" else (256, 1024, 2048, 6)
    torch.manual_seed(42)
    layers, n = [], features
    for _ in range(depth):
        layers += [torch.nn.Linear(n, width), torch.nn.GELU()]
        n = width
    layers.append(torch.nn.Linear(n, 10))
    model = torch.nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    teacher = torch.randn(features, 10)
    batches = []
    for _ in range(4):
        x = torch.randn(batch, features)
        batches.append((x, (x @ teacher).argmax(1)))
    times = []
    for i in range(a.warmup + a.steps):
        x, y = batches[i % len(batches)]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        loss.item()
        t1 = time.perf_counter()
        if i >= a.warmup:
            times.append(t1 - t0)
    print(f"{statistics.median(times):.9f}")


if __name__ == "__main__":
    main()
