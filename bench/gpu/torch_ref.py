#!/usr/bin/env python3
"""PyTorch eager and torch.compile on bench/gpu's programs, same shapes, on the GPU.

Usage: torch_ref.py > torch.json
Prints {"device": NAME, "times_ms": {ENTRY: {"eager": MS, "compile": MS}}}: the median
of CUDA-event-timed runs after warm-up (torch.compile with
mode="max-autotune-no-cudagraphs", as the performance issue asks).
"""
import json, sys

import torch

dev = "cuda"
torch.backends.cuda.matmul.allow_tf32 = False


def row_softmax(x):
    return torch.softmax(x, dim=1)


def layer_norm(x, g, b):
    return torch.nn.functional.layer_norm(x, (x.shape[1],), g, b, eps=1e-5)


def accelerations(xs, ys, zs, ms):
    dx = xs[None, :] - xs[:, None]
    dy = ys[None, :] - ys[:, None]
    dz = zs[None, :] - zs[:, None]
    inv = torch.rsqrt(dx * dx + dy * dy + dz * dz + 1e-4)
    s = ms[None, :] * inv * inv * inv
    return (s * dx).sum(1), (s * dy).sum(1), (s * dz).sum(1)


def assign(points, centroids):
    d = (points * points).sum(1)[:, None] - 2 * points @ centroids.T + (centroids * centroids).sum(1)[None, :]
    return d.argmin(dim=1)


def histogram(xs):
    return torch.bincount(xs, minlength=256)


def column_sums(x):
    return x.sum(0)


def feature_means(x):
    return x.mean(0)


def rand(*shape):
    return torch.rand(*shape, device=dev, dtype=torch.float32)


CASES = {
    "row_softmax": (row_softmax, lambda: (rand(8192, 1024),)),
    "layer_norm": (layer_norm, lambda: (rand(16384, 1024), rand(1024), rand(1024))),
    "accelerations": (accelerations, lambda: (rand(16384), rand(16384), rand(16384), rand(16384))),
    "assign": (assign, lambda: (rand(1 << 20, 16), rand(64, 16))),
    "histogram": (histogram, lambda: (torch.randint(0, 256, (1 << 24,), device=dev),)),
    "column_sums": (column_sums, lambda: (rand(16384, 1024),)),
    "feature_means": (feature_means, lambda: (rand(1 << 20, 16),)),
}


def time_ms(fn, args, reps=20):
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def main():
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "times_ms": {}}
    for name, (fn, make) in CASES.items():
        args = make()
        row = {"eager": time_ms(fn, args)}
        try:
            row["compile"] = time_ms(torch.compile(fn, mode="max-autotune-no-cudagraphs"), args)
        except Exception as error:  # report, do not hide: the row says why it is missing
            row["compile_error"] = str(error)[:300]
        out["times_ms"][name] = row
        print(name, row, file=sys.stderr)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
