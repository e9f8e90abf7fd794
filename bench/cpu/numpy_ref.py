#!/usr/bin/env python3
"""numpy implementations of bench/cpu's programs, timed on the same shapes.

Usage: numpy_ref.py [--reps N] > numpy.json
Each computation is what a numpy user would write (vectorised, float32, BLAS where
numpy uses it); inputs are drawn once, outside the timing. Prints one JSON object:
{"numpy": VERSION, "times_ms": {ENTRY: median milliseconds}}.
"""
import json, sys, time

import numpy as np

rng = np.random.default_rng(0)
f32 = np.float32


def rand(*shape):
    return rng.random(shape, dtype=f32)


def row_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layer_norm(x, g, b):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + f32(1e-5)) * g + b


def accelerations(xs, ys, zs, ms):
    dx = xs[None, :] - xs[:, None]
    dy = ys[None, :] - ys[:, None]
    dz = zs[None, :] - zs[:, None]
    inv = 1 / np.sqrt(dx * dx + dy * dy + dz * dz + f32(1e-4))
    s = ms[None, :] * inv * inv * inv
    return (s * dx).sum(1), (s * dy).sum(1), (s * dz).sum(1)


def assign(points, centroids):
    # |p - c|^2 = |p|^2 - 2 p.c + |c|^2, with the product in BLAS.
    d = (points * points).sum(1)[:, None] - 2 * points @ centroids.T + (centroids * centroids).sum(1)[None, :]
    return d.argmin(axis=1)


def jacobi(iterations, g):
    g = g.copy()
    for _ in range(iterations):
        new = g.copy()
        new[1:-1, 1:-1] = f32(0.2) * (g[1:-1, 1:-1] + g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
        g = new
    return g


N = 4194304
CASES = {
    "row_softmax": (row_softmax, lambda: (rand(4096, 256),)),
    "layer_norm": (layer_norm, lambda: (rand(4096, 256), rand(256), rand(256))),
    "accelerations": (accelerations, lambda: (rand(2048), rand(2048), rand(2048), rand(2048))),
    "assign": (assign, lambda: (rand(65536, 16), rand(32, 16))),
    "jacobi": (jacobi, lambda: (10, rand(1024, 1024))),
    "saxpy": (lambda a, x, y: a * x + y, lambda: (f32(2.5), rand(N), rand(N))),
    "total": (lambda x: x.sum(), lambda: (rand(N),)),
    "dot_product": (lambda x, y: np.dot(x, y), lambda: (rand(N), rand(N))),
    "flip": (lambda x: x[::-1].copy(), lambda: (rand(N),)),
    "inclusive_scan": (lambda x: np.cumsum(x), lambda: (rand(N),)),
    "transpose_copy": (lambda a: a.T.copy(), lambda: (rand(2048, 2048),)),
    "gemv": (lambda a, x: a @ x, lambda: (rand(2048, 2048), rand(2048))),
    "row_sums": (lambda a: a.sum(axis=1), lambda: (rand(131072, 32),)),
    "sgemm": (lambda a, b: a @ b, lambda: (rand(512, 512), rand(512, 512))),
}


def main():
    reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 10
    times = {}
    for name, (fn, make) in CASES.items():
        args = make()
        fn(*args)  # warm-up
        samples = []
        for _ in range(reps):
            start = time.perf_counter()
            fn(*args)
            samples.append((time.perf_counter() - start) * 1e3)
        times[name] = sorted(samples)[len(samples) // 2]
    json.dump({"numpy": np.__version__, "times_ms": times}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
