#!/usr/bin/env python3
"""numpy implementations of bench/apps' programs, timed at CPU sizes.

Usage: numpy_ref.py [--reps N] [--only NAME,...] > numpy.json
       numpy_ref.py --specs      (one line per entry: NAME, then its specs, tab-separated)
Each computation is what a numpy user would write from the original algorithm
(vectorised, float32, BLAS where numpy uses it; a Python loop only over the iterations,
diagonals or unknowns that the algorithm runs in sequence). Inputs are drawn once,
outside the timing, at the sizes of SIZES (the same sizes bench/apps/cpu.sh gives
`weft bench --random`). Prints one JSON object:
{"numpy": VERSION, "sizes": {ENTRY: [SPEC, ...]}, "times_ms": {ENTRY: median milliseconds}}.
"""
import json, sys, time

import numpy as np

f32 = np.float32
rng = np.random.default_rng(0)


def rand(*shape, lo=0.0, hi=1.0):
    return (lo + (hi - lo) * rng.random(shape, dtype=f32)).astype(f32)


def randint(lo, hi, *shape, dtype=np.int32):
    return rng.integers(lo, hi, shape).astype(dtype)


def up(a, axis):  # the neighbour at index - 1, clamped at the edge
    idx = np.maximum(np.arange(a.shape[axis]) - 1, 0)
    return np.take(a, idx, axis=axis)


def down(a, axis):  # the neighbour at index + 1, clamped at the edge
    idx = np.minimum(np.arange(a.shape[axis]) + 1, a.shape[axis] - 1)
    return np.take(a, idx, axis=axis)


def hotspot(iterations, temp, power):
    r, c = temp.shape
    t_chip, chip_h, chip_w = f32(0.0005), f32(0.016), f32(0.016)
    spec_heat, k_si, factor, max_pd, precision = f32(1.75e6), f32(100), f32(0.5), f32(3e6), f32(0.001)
    gh, gw = chip_h / f32(r), chip_w / f32(c)
    cap = factor * spec_heat * t_chip * gw * gh
    rx = gw / (2 * k_si * t_chip * gh)
    ry = gh / (2 * k_si * t_chip * gw)
    rz = t_chip / (k_si * gh * gw)
    step = precision / (max_pd / (factor * t_chip * spec_heat))
    k = f32(step / cap)
    for _ in range(iterations):
        temp = temp + k * (power + (up(temp, 0) + down(temp, 0) - 2 * temp) / ry
                           + (down(temp, 1) + up(temp, 1) - 2 * temp) / rx + (f32(80) - temp) / rz)
    return temp


def srad(iterations, lam, image):
    j = np.exp(image)
    for _ in range(iterations):
        mean = j.sum(dtype=f32) / f32(j.size)
        var = (j * j).sum(dtype=f32) / f32(j.size) - mean * mean
        q0 = var / (mean * mean)
        dn, ds, dw, de = up(j, 0) - j, down(j, 0) - j, up(j, 1) - j, down(j, 1) - j
        g2 = (dn * dn + ds * ds + dw * dw + de * de) / (j * j)
        l = (dn + ds + dw + de) / j
        num = f32(0.5) * g2 - f32(1 / 16) * (l * l)
        den = 1 + f32(0.25) * l
        qsqr = num / (den * den)
        den = (qsqr - q0) / (q0 * (1 + q0))
        c = np.clip(1 / (1 + den), 0, 1).astype(f32)
        d = c * dn + down(c, 0) * ds + c * dw + down(c, 1) * de
        j = j + f32(0.25) * f32(lam) * d
    return np.log(j)


def pathfinder(wall):
    prev = wall[0]
    for t in range(1, wall.shape[0]):
        prev = wall[t] + np.minimum(prev, np.minimum(up(prev, 0), down(prev, 0)))
    return prev


def layerforward(inp, w):
    return 1 / (1 + np.exp(-(inp @ w)))


def nn(lat, lng, tlat, tlng):
    d = np.sqrt((lat - tlat) ** 2 + (lng - tlng) ** 2)
    return d, d.argmin()


def lud(m):
    n = m.shape[0]
    a = m + np.eye(n, dtype=f32) * f32(n)
    for k in range(n):
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a


def nw(penalty, sim):
    m = sim.shape[0]
    f = np.zeros((m, m), np.int32)
    f[0, :] = -np.arange(m) * penalty
    f[:, 0] = -np.arange(m) * penalty
    for s in range(2, 2 * m - 1):  # anti-diagonal i + j = s
        i = np.arange(max(1, s - (m - 1)), min(m - 1, s - 1) + 1)
        j = s - i
        f[i, j] = np.maximum(f[i - 1, j - 1] + sim[i, j], np.maximum(f[i - 1, j], f[i, j - 1]) - penalty)
    return f


def mriq(kx, ky, kz, x, y, z, phi_r, phi_i):
    mag = phi_r * phi_r + phi_i * phi_i
    arg = f32(2 * np.pi) * (np.outer(x, kx) + np.outer(y, ky) + np.outer(z, kz))
    return np.cos(arg) @ mag, np.sin(arg) @ mag


def stencil(iterations, c0, c1, a):
    a = a.copy()
    for _ in range(iterations):
        new = a.copy()
        new[1:-1, 1:-1, 1:-1] = c1 * (a[1:-1, 1:-1, 2:] + a[1:-1, 1:-1, :-2] + a[1:-1, 2:, 1:-1]
                                      + a[1:-1, :-2, 1:-1] + a[2:, 1:-1, 1:-1] + a[:-2, 1:-1, 1:-1]) - c0 * a[1:-1, 1:-1, 1:-1]
        a = new
    return a


def histo(bins, image):
    return np.minimum(np.bincount(image.ravel(), minlength=bins)[:bins], 255).astype(np.uint32)


def sgemm(alpha, beta, a, bt, c):
    return alpha * (a @ bt.T) + beta * c


def cnd(d):
    k = 1 / (1 + f32(0.2316419) * np.abs(d))
    poly = k * (f32(0.31938153) + k * (f32(-0.356563782) + k * (f32(1.781477937) + k * (f32(-1.821255978) + k * f32(1.330274429)))))
    c = f32(0.3989422804014327) * np.exp(f32(-0.5) * d * d) * poly
    return np.where(d > 0, 1 - c, c)


def blackscholes(s, x, t):
    r, v = f32(0.02), f32(0.30)
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / x) + (r + f32(0.5) * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    e = np.exp(-r * t)
    c1, c2 = cnd(d1), cnd(d2)
    return s * c1 - x * e * c2, x * e * (1 - c2) - s * (1 - c1)


def tridag_batch(a, b, c, y):
    # The Thomas algorithm over all systems at once: the loops run over the unknowns.
    n = a.shape[1]
    uu, yy = b.copy(), y.copy()
    for k in range(1, n):
        beta = a[:, k] / uu[:, k - 1]
        uu[:, k] = b[:, k] - beta * c[:, k - 1]
        yy[:, k] = y[:, k] - beta * yy[:, k - 1]
    x = yy / uu
    for k in range(n - 2, -1, -1):
        x[:, k] = (yy[:, k] - c[:, k] * x[:, k + 1]) / uu[:, k]
    return x


def nbody_step(dt, xs, ys, zs, vxs, vys, vzs, ms):
    dx, dy, dz = xs[None, :] - xs[:, None], ys[None, :] - ys[:, None], zs[None, :] - zs[:, None]
    r2 = dx * dx + dy * dy + dz * dz + f32(1e-4)
    s = ms[None, :] / (r2 * np.sqrt(r2))
    vx, vy, vz = vxs + dt * (s * dx).sum(1), vys + dt * (s * dy).sum(1), vzs + dt * (s * dz).sum(1)
    return xs + dt * vx, ys + dt * vy, zs + dt * vz, vx, vy, vz


def mandelbrot(h, w, limit, x0, y0, x1, y1):
    cx = (f32(x0) + (f32(x1) - f32(x0)) * np.arange(w, dtype=f32) / f32(w))[None, :].repeat(h, 0)
    cy = (f32(y0) + (f32(y1) - f32(y0)) * np.arange(h, dtype=f32) / f32(h))[:, None].repeat(w, 1)
    x, y = np.zeros((h, w), f32), np.zeros((h, w), f32)
    k = np.zeros((h, w), np.int32)
    for _ in range(limit):
        live = x * x + y * y <= 4
        if not live.any():
            break
        x, y = np.where(live, x * x - y * y + cx, x), np.where(live, 2 * x * y + cy, y)
        k += live
    return k


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm(x, g, b):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + f32(1e-5)) * g + b


def kmeans(points, centroids):
    # |p - c|^2 = |p|^2 - 2 p.c + |c|^2, the product in BLAS; sums per cluster by bincount
    k, d = centroids.shape
    dist = (points * points).sum(1)[:, None] - 2 * points @ centroids.T + (centroids * centroids).sum(1)[None, :]
    member = dist.argmin(axis=1)
    counts = np.bincount(member, minlength=k)
    sums = np.stack([np.bincount(member, weights=points[:, j], minlength=k) for j in range(d)], axis=1)
    new = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], centroids).astype(f32)
    return new, member


# Entry: (function, Weft `--random` specs, inputs). The specs and the inputs describe
# the same sizes and ranges; bench/apps/cpu.sh passes the specs to `weft bench`.
CASES = {
    "hotspot": (hotspot, ["i64 in 10..11", "[1024][1024]f32 in 300..340", "[1024][1024]f32"],
                lambda: (10, rand(1024, 1024, lo=300, hi=340), rand(1024, 1024))),
    "srad": (srad, ["i64 in 5..6", "f32 in 0.5..0.51", "[1024][1024]f32"],
             lambda: (5, f32(0.5), rand(1024, 1024))),
    "pathfinder": (pathfinder, ["[100][100000]i32 in 0..10"], lambda: (randint(0, 10, 100, 100000),)),
    "layerforward": (layerforward, ["[262144]f32", "[262144][16]f32"], lambda: (rand(262144), rand(262144, 16))),
    "nn": (nn, ["[4194304]f32", "[4194304]f32", "f32", "f32"], lambda: (rand(1 << 22), rand(1 << 22), f32(0.3), f32(0.6))),
    "lud": (lud, ["[256][256]f32"], lambda: (rand(256, 256),)),
    "nw": (nw, ["i32 in 10..11", "[1025][1025]i32 in -4..12"], lambda: (10, randint(-4, 12, 1025, 1025))),
    "mriq": (mriq, ["[512]f32", "[512]f32", "[512]f32", "[16384]f32", "[16384]f32", "[16384]f32", "[512]f32", "[512]f32"],
             lambda: (rand(512), rand(512), rand(512), rand(16384), rand(16384), rand(16384), rand(512), rand(512))),
    "stencil": (stencil, ["i64 in 10..11", "f32", "f32", "[32][256][256]f32"],
                lambda: (10, f32(1 / 6), f32(1 / 36), rand(32, 256, 256))),
    "histo": (histo, ["i64 in 65536..65537", "[2048][2048]u32 in 0..65536"],
              lambda: (65536, randint(0, 65536, 2048, 2048, dtype=np.int64))),
    "sgemm": (sgemm, ["f32", "f32", "[512][512]f32", "[512][512]f32", "[512][512]f32"],
              lambda: (f32(1.5), f32(0.5), rand(512, 512), rand(512, 512), rand(512, 512))),
    "blackscholes": (blackscholes, ["[1048576]f32 in 5..30", "[1048576]f32 in 1..100", "[1048576]f32 in 0.25..10"],
                     lambda: (rand(1 << 20, lo=5, hi=30), rand(1 << 20, lo=1, hi=100), rand(1 << 20, lo=0.25, hi=10))),
    "tridag_batch": (tridag_batch, ["[4096][256]f32", "[4096][256]f32 in 2..3", "[4096][256]f32", "[4096][256]f32"],
                     lambda: (rand(4096, 256), rand(4096, 256, lo=2, hi=3), rand(4096, 256), rand(4096, 256))),
    "nbody_step": (nbody_step, ["f32"] + ["[2048]f32"] * 7, lambda: (f32(0.01),) + tuple(rand(2048) for _ in range(7))),
    "mandelbrot": (mandelbrot, ["i64 in 512..513", "i64 in 512..513", "i32 in 64..65", "f32 in -2..-1.99",
                                "f32 in -1.5..-1.49", "f32 in 1..1.01", "f32 in 1.5..1.51"],
                   lambda: (512, 512, 64, -2.0, -1.5, 1.0, 1.5)),
    "softmax": (softmax, ["[4096][512]f32"], lambda: (rand(4096, 512),)),
    "layernorm": (layernorm, ["[4096][768]f32", "[768]f32", "[768]f32"], lambda: (rand(4096, 768), rand(768), rand(768))),
    "kmeans": (kmeans, ["[131072][34]f32", "[5][34]f32"], lambda: (rand(131072, 34), rand(5, 34))),
}


def main():
    if "--specs" in sys.argv:
        for name, (_, specs, _) in CASES.items():
            print("\t".join([name] + specs))
        return
    reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 10
    only = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else None
    times, sizes = {}, {}
    for name, (fn, specs, make) in CASES.items():
        if only and name not in only:
            continue
        args = make()
        fn(*args)  # warm-up
        samples = []
        for _ in range(reps):
            start = time.perf_counter()
            fn(*args)
            samples.append((time.perf_counter() - start) * 1e3)
        times[name] = sorted(samples)[len(samples) // 2]
        sizes[name] = specs
        print(name, f"{times[name]:.3f} ms", file=sys.stderr)
    json.dump({"numpy": np.__version__, "sizes": sizes, "times_ms": times}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
