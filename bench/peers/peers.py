#!/usr/bin/env python3
"""The peers of bench/apps' programs and bench/programs' micro-operations, on the GPU.

Usage: peers.py [--reps N] [--only NAME,...] [--jsonl FILE] > peers.json

For every entry with a `-- bench:` line in bench/apps/*.weft and bench/programs/*.weft,
the inputs are drawn on the GPU from that line's specs (the same shapes and ranges as
`weft bench`; a scalar `T in LO..HI` takes LO, a scalar without a range 0.5 or 1), and
each peer that is natural for it is timed:

- eager:   PyTorch eager (cuBLAS/cuDNN/ATen kernels; TF32 off);
- compile: torch.compile(mode="max-autotune-no-cudagraphs") of the same function
           (for the iterative programs, of one step; the loop stays in Python);
- cupy:    CuPy array code, the numpy reference of bench/apps/numpy_ref.py run with
           CuPy in numpy's place (reductions through CUB when CUPY_ACCELERATORS=cub,
           products through cuBLAS), or CuPy's own function for a micro-operation;
- cuda:    hand-written CUDA (cupy.RawKernel / ElementwiseKernel), where a competent
           engineer would write a kernel.

Times are the median of CUDA-event-timed runs after warm-up (events on the stream the
peer runs on). Every peer runs in its own try/except: a failure is recorded as
"PEER_error" and the others go on. Also measured: a device-to-device copy of 2^26 f32
(256 MiB), reported as copy bandwidth (bytes read + written per second).

Prints {"device", "torch", "cupy", "copy": {"bytes", "ms", "gb_per_s"},
"times_ms": {ENTRY: {"eager": MS, "compile": MS, "cupy": MS, "cuda": MS, ...}}};
with --jsonl, also one line per entry as it finishes (what a timeout leaves behind).
"""
import glob, json, math, os, re, sys, time, traceback, types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "apps"))

import torch
import torch.nn.functional as F

try:
    import cupy
except Exception as error:  # the torch peers still run
    cupy = None
    CUPY_IMPORT_ERROR = str(error)

dev = "cuda"
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


# ---------------------------------------------------------------- the bench lines

def key_of(path, entry):
    """The key of an entry in the results: its name, "programs/NAME" for bench/programs'
    entries whose name an app has too."""
    apps = set()
    for p in glob.glob(os.path.join(ROOT, "bench", "apps", "*.weft")):
        apps.update(re.findall(r"^entry\s+(\w+)", open(p).read(), re.M))
    return "programs/" + entry if "bench/programs/" in path and entry in apps else entry


def bench_lines():
    """[(key, file, [spec, ...])] for every `-- bench:` line above an entry."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "bench", "apps", "*.weft"))
                       + glob.glob(os.path.join(ROOT, "bench", "programs", "*.weft"))):
        pending = None
        for line in open(path):
            m = re.match(r"\s*--\s*bench:\s*(.*)$", line)
            if m:
                pending = m.group(1)
                continue
            m = re.match(r"\s*entry\s+(\w+)", line)
            if m:
                if pending is not None:
                    rel = os.path.relpath(path, ROOT)
                    out.append((key_of(rel, m.group(1)), rel, split_specs(pending)))
                pending = None
    return out


def split_specs(text):
    """`[4][4]f32 in 0..1 i64 flops=...` -> ["[4][4]f32 in 0..1", "i64"]"""
    tokens = [t for t in text.split() if not t.startswith("flops=")]
    specs = []
    i = 0
    while i < len(tokens):
        spec = tokens[i]
        if i + 2 < len(tokens) + 1 and i + 1 < len(tokens) and tokens[i + 1] == "in":
            spec += " in " + tokens[i + 2]
            i += 3
        else:
            i += 1
        specs.append(spec)
    return specs


def parse_spec(spec):
    m = re.match(r"((?:\[\d+\])*)(\w+)(?:\s+in\s+(-?[\d.e]+)\.\.(-?[\d.e]+))?$", spec)
    if not m:
        raise ValueError(f"cannot read spec {spec!r}")
    shape = [int(d) for d in re.findall(r"\[(\d+)\]", m.group(1))]
    ty = m.group(2)
    lo, hi = m.group(3), m.group(4)
    if lo is not None:
        lo, hi = float(lo), float(hi)
    return shape, ty, lo, hi


def make_input(spec, gen):
    """A torch tensor on the GPU (ints as int64, u32 too), or a Python scalar."""
    shape, ty, lo, hi = parse_spec(spec)
    is_int = ty[0] in "iu"
    if not shape:
        if lo is not None:
            return int(lo) if is_int else float(lo)
        return 1 if is_int else 0.5
    if is_int:
        lo, hi = (0, 1000) if lo is None else (int(lo), int(hi))
        t = torch.randint(lo, hi, shape, device=dev, dtype=torch.int64, generator=gen)
        return t.to(torch.int32) if ty == "i32" else t
    lo, hi = (0.0, 1.0) if lo is None else (lo, hi)
    t = torch.rand(shape, device=dev, dtype=torch.float64 if ty == "f64" else torch.float32, generator=gen)
    return lo + (hi - lo) * t


def spec_types(specs):
    return [parse_spec(s)[1] for s in specs]


def to_cupy(args, types_):
    out = []
    for a, ty in zip(args, types_):
        if isinstance(a, torch.Tensor):
            c = cupy.from_dlpack(a.contiguous())
            out.append(c.astype(cupy.uint32) if ty == "u32" else c)
        else:
            out.append(cupy.float32(a) if ty == "f32" else a)
    return out


# ---------------------------------------------------------------- timing

def time_torch(fn, args, reps):
    fn(*args)
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn(*args)
    torch.cuda.synchronize()
    slow = time.perf_counter() - start > 1.0
    reps, warm = (3, 0) if slow else (reps, 2)
    for _ in range(warm):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(*args)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return sorted(times)[len(times) // 2]


def time_cupy(fn, args, reps):
    fn(*args)
    cupy.cuda.Device().synchronize()
    start = time.perf_counter()
    fn(*args)
    cupy.cuda.Device().synchronize()
    slow = time.perf_counter() - start > 1.0
    reps, warm = (3, 0) if slow else (reps, 2)
    for _ in range(warm):
        fn(*args)
    cupy.cuda.Device().synchronize()
    stream = cupy.cuda.get_current_stream()
    times = []
    for _ in range(reps):
        s, e = cupy.cuda.Event(), cupy.cuda.Event()
        s.record(stream)
        fn(*args)
        e.record(stream)
        e.synchronize()
        times.append(cupy.cuda.get_elapsed_time(s, e))
    return sorted(times)[len(times) // 2]


# ---------------------------------------------------------------- PyTorch versions

def up(t, dim):  # neighbour at index - 1, clamped
    return torch.cat([t.narrow(dim, 0, 1), t.narrow(dim, 0, t.shape[dim] - 1)], dim)


def down(t, dim):  # neighbour at index + 1, clamped
    n = t.shape[dim]
    return torch.cat([t.narrow(dim, 1, n - 1), t.narrow(dim, n - 1, 1)], dim)


def hotspot_consts(r, c):
    f = lambda x: float(torch.tensor(x, dtype=torch.float32))
    t_chip, spec_heat, k_si, factor, max_pd, precision = 0.0005, 1.75e6, 100.0, 0.5, 3e6, 0.001
    gh, gw = 0.016 / r, 0.016 / c
    cap = factor * spec_heat * t_chip * gw * gh
    rx, ry = gw / (2 * k_si * t_chip * gh), gh / (2 * k_si * t_chip * gw)
    rz = t_chip / (k_si * gh * gw)
    step = precision / (max_pd / (factor * t_chip * spec_heat))
    return f(rx), f(ry), f(rz), f(step / cap)


def hotspot_step(temp, power, rx, ry, rz, k):
    return temp + k * (power + (up(temp, 0) + down(temp, 0) - 2 * temp) / ry
                       + (down(temp, 1) + up(temp, 1) - 2 * temp) / rx + (80 - temp) / rz)


def t_hotspot(step):
    def run(iterations, temp, power):
        rx, ry, rz, k = hotspot_consts(*temp.shape)
        for _ in range(iterations):
            temp = step(temp, power, rx, ry, rz, k)
        return temp
    return run


def srad_step(j, lam):
    mean = j.mean()
    var = (j * j).mean() - mean * mean
    q0 = var / (mean * mean)
    dn, ds, dw, de = up(j, 0) - j, down(j, 0) - j, up(j, 1) - j, down(j, 1) - j
    g2 = (dn * dn + ds * ds + dw * dw + de * de) / (j * j)
    l = (dn + ds + dw + de) / j
    num = 0.5 * g2 - (1 / 16) * (l * l)
    den = 1 + 0.25 * l
    qsqr = num / (den * den)
    c = (1 / (1 + (qsqr - q0) / (q0 * (1 + q0)))).clamp(0, 1)
    d = c * dn + down(c, 0) * ds + c * dw + down(c, 1) * de
    return j + 0.25 * lam * d


def t_srad(step):
    def run(iterations, lam, image):
        j = image.exp()
        for _ in range(iterations):
            j = step(j, lam)
        return j.log()
    return run


def pathfinder_step(prev, row):
    return row + torch.minimum(prev, torch.minimum(up(prev, 0), down(prev, 0)))


def t_pathfinder(step):
    def run(wall):
        prev = wall[0]
        for t in range(1, wall.shape[0]):
            prev = step(prev, wall[t])
        return prev
    return run


def layerforward(inp, w):
    return torch.sigmoid(inp @ w)


def nn(lat, lng, tlat, tlng):
    d = torch.sqrt((lat - tlat) ** 2 + (lng - tlng) ** 2)
    return d, d.argmin()


def lud_eager(m):
    n = m.shape[0]
    a = m + n * torch.eye(n, device=m.device, dtype=m.dtype)
    lu, _, _ = torch.linalg.lu_factor_ex(a, pivot=False)  # cuSOLVER/MAGMA getrf without pivoting
    return lu


def nw_eager(penalty, sim):
    m = sim.shape[0]
    f = torch.zeros((m, m), dtype=torch.int32, device=sim.device)
    ar = torch.arange(m, device=sim.device, dtype=torch.int32) * penalty
    f[0, :] = -ar
    f[:, 0] = -ar
    for s in range(2, 2 * m - 1):
        i = torch.arange(max(1, s - (m - 1)), min(m - 1, s - 1) + 1, device=sim.device)
        j = s - i
        f[i, j] = torch.maximum(f[i - 1, j - 1] + sim[i, j], torch.maximum(f[i - 1, j], f[i, j - 1]) - penalty)
    return f


def mriq(kx, ky, kz, x, y, z, phi_r, phi_i):
    mag = phi_r * phi_r + phi_i * phi_i
    arg = (2 * math.pi) * (x[:, None] * kx[None, :] + y[:, None] * ky[None, :] + z[:, None] * kz[None, :])
    return torch.cos(arg) @ mag, torch.sin(arg) @ mag


def stencil_step(a, c0, c1):
    inner = c1 * (a[1:-1, 1:-1, 2:] + a[1:-1, 1:-1, :-2] + a[1:-1, 2:, 1:-1] + a[1:-1, :-2, 1:-1]
                  + a[2:, 1:-1, 1:-1] + a[:-2, 1:-1, 1:-1]) - c0 * a[1:-1, 1:-1, 1:-1]
    return F.pad(inner, (1, 1, 1, 1, 1, 1)) + a - F.pad(a[1:-1, 1:-1, 1:-1], (1, 1, 1, 1, 1, 1))


def t_stencil(step):
    def run(iterations, c0, c1, a):
        for _ in range(iterations):
            a = step(a, c0, c1)
        return a
    return run


def histo(bins, image):
    return torch.bincount(image.reshape(-1), minlength=bins)[:bins].clamp(max=255)


def sgemm_app(alpha, beta, a, bt, c):
    return torch.addmm(c, a, bt.t(), beta=beta, alpha=alpha)


def cnd(d):
    k = 1 / (1 + 0.2316419 * d.abs())
    poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))
    c = 0.3989422804014327 * torch.exp(-0.5 * d * d) * poly
    return torch.where(d > 0, 1 - c, c)


def blackscholes(s, x, t):
    r, v = 0.02, 0.30
    sqrt_t = t.sqrt()
    d1 = (torch.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    e = torch.exp(-r * t)
    c1, c2 = cnd(d1), cnd(d2)
    return s * c1 - x * e * c2, x * e * (1 - c2) - s * (1 - c1)


def tridag_eager(a, b, c, y):
    n = a.shape[1]
    uu, yy = b.clone(), y.clone()
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
    r2 = dx * dx + dy * dy + dz * dz + 1e-4
    s = ms[None, :] / (r2 * torch.sqrt(r2))
    vx, vy, vz = vxs + dt * (s * dx).sum(1), vys + dt * (s * dy).sum(1), vzs + dt * (s * dz).sum(1)
    return xs + dt * vx, ys + dt * vy, zs + dt * vz, vx, vy, vz


def mandelbrot_step(x, y, k, cx, cy):
    live = x * x + y * y <= 4
    return torch.where(live, x * x - y * y + cx, x), torch.where(live, 2 * x * y + cy, y), k + live.int()


def t_mandelbrot(step):
    def run(h, w, limit, x0, y0, x1, y1):
        cx = (x0 + (x1 - x0) * torch.arange(w, device=dev, dtype=torch.float32) / w)[None, :].expand(h, w)
        cy = (y0 + (y1 - y0) * torch.arange(h, device=dev, dtype=torch.float32) / h)[:, None].expand(h, w)
        x = torch.zeros((h, w), device=dev)
        y = torch.zeros((h, w), device=dev)
        k = torch.zeros((h, w), device=dev, dtype=torch.int32)
        for _ in range(limit):  # a fixed count: no host synchronisation per iteration
            x, y, k = step(x, y, k, cx, cy)
        return k
    return run


def softmax(x):
    return torch.softmax(x, dim=1)


def layernorm(x, g, b):
    return F.layer_norm(x, (x.shape[1],), g, b, eps=1e-5)


def kmeans(points, centroids):
    k, d = centroids.shape
    dist = (points * points).sum(1)[:, None] - 2 * points @ centroids.T + (centroids * centroids).sum(1)[None, :]
    member = dist.argmin(dim=1)
    counts = torch.bincount(member, minlength=k)
    sums = torch.zeros((k, d), device=points.device).index_add_(0, member, points)
    new = torch.where(counts[:, None] > 0, sums / counts.clamp(min=1)[:, None], centroids)
    return new, member


# (eager function, compile target or None with the reason)
TORCH = {
    "hotspot": (t_hotspot(hotspot_step), lambda: t_hotspot(torch.compile(hotspot_step, mode=MODE))),
    "srad": (t_srad(srad_step), lambda: t_srad(torch.compile(srad_step, mode=MODE))),
    "pathfinder": (t_pathfinder(pathfinder_step), lambda: t_pathfinder(torch.compile(pathfinder_step, mode=MODE))),
    "layerforward": (layerforward, None),
    "nn": (nn, None),
    "lud": (lud_eager, "not natural: 2048 steps on shrinking submatrices (eager is cuSOLVER's getrf without pivoting)"),
    "nw": (nw_eager, "not natural: 4095 anti-diagonals of different lengths"),
    "mriq": (mriq, None),
    "stencil": (t_stencil(stencil_step), lambda: t_stencil(torch.compile(stencil_step, mode=MODE))),
    "histo": (histo, None),
    "sgemm": (sgemm_app, None),
    "blackscholes": (blackscholes, None),
    "tridag_batch": (tridag_eager, "not natural: 510 sequential column updates (eager loops over them)"),
    "nbody_step": (nbody_step, None),
    "mandelbrot": (t_mandelbrot(mandelbrot_step), lambda: t_mandelbrot(torch.compile(mandelbrot_step, mode=MODE))),
    "softmax": (softmax, None),
    "layernorm": (layernorm, None),
    "kmeans": (kmeans, None),
    # bench/programs
    "saxpy": (lambda a, x, y: torch.add(y, x, alpha=a), None),
    "total": (lambda x: x.sum(), None),
    "dot_product": (lambda x, y: torch.dot(x, y), None),
    "flip": (lambda x: torch.flip(x, (0,)), None),
    "inclusive_scan": (lambda x: torch.cumsum(x, 0), None),
    "transpose_copy": (lambda a: a.t().contiguous(), None),
    "gemv": (lambda a, x: torch.mv(a, x), None),
    "row_sums": (lambda a: a.sum(1), None),
    "programs/sgemm": (lambda a, b: torch.mm(a, b), None),
}
MODE = "max-autotune-no-cudagraphs"


# ---------------------------------------------------------------- CuPy versions

def cupy_numpy_refs():
    """bench/apps/numpy_ref.py's functions with CuPy in numpy's place."""
    import numpy_ref
    g = dict(vars(numpy_ref))
    g["np"] = cupy
    for name, value in list(g.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == "numpy_ref":
            g[name] = types.FunctionType(value.__code__, g, name, value.__defaults__)
    return g


CUPY_MICRO = {
    "saxpy": lambda a, x, y: SAXPY(a, x, y) if SAXPY else a * x + y,
    "total": lambda x: x.sum(),
    "dot_product": lambda x, y: cupy.dot(x, y),
    "flip": lambda x: x[::-1].copy(),
    "inclusive_scan": lambda x: cupy.cumsum(x),
    "transpose_copy": lambda a: cupy.ascontiguousarray(a.T),
    "gemv": lambda a, x: a @ x,
    "row_sums": lambda a: a.sum(axis=1),
    "programs/sgemm": lambda a, b: a @ b,
}
SAXPY = None

CUDA_SRC = r"""
extern "C" __global__ void hotspot_step(const float* t, const float* p, float* out, int r, int c,
                                        float rx, float ry, float rz, float k) {
  int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= r || j >= c) return;
  long at = (long)i * c + j;
  float v = t[at];
  float n = t[(long)max(i - 1, 0) * c + j], s = t[(long)min(i + 1, r - 1) * c + j];
  float w = t[(long)i * c + max(j - 1, 0)], e = t[(long)i * c + min(j + 1, c - 1)];
  out[at] = v + k * (p[at] + (n + s - 2.f * v) / ry + (e + w - 2.f * v) / rx + (80.f - v) / rz);
}
extern "C" __global__ void stencil_step(const float* a, float* out, int nx, int ny, int nz, float c0, float c1) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= nx || j >= ny) return;
  long plane = (long)nx * ny;
  for (int k = 0; k < nz; k++) {  // one thread per (i, j) column, marching in k (Parboil's scheme)
    long at = k * plane + (long)j * nx + i;
    if (i == 0 || j == 0 || k == 0 || i == nx - 1 || j == ny - 1 || k == nz - 1) out[at] = a[at];
    else out[at] = c1 * (a[at + 1] + a[at - 1] + a[at + nx] + a[at - nx] + a[at + plane] + a[at - plane]) - c0 * a[at];
  }
}
extern "C" __global__ void pathfinder_step(const int* prev, const int* row, int* out, int cols) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  int m = min(prev[j], min(prev[max(j - 1, 0)], prev[min(j + 1, cols - 1)]));
  out[j] = row[j] + m;
}
extern "C" __global__ void mandelbrot(int* out, int h, int w, int limit, float x0, float y0, float x1, float y1) {
  int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= h || j >= w) return;
  float cx = x0 + (x1 - x0) * (float)j / (float)w, cy = y0 + (y1 - y0) * (float)i / (float)h;
  float x = 0.f, y = 0.f; int k = 0;
  while (k < limit && x * x + y * y <= 4.f) { float nx = x * x - y * y + cx; y = 2.f * x * y + cy; x = nx; k++; }
  out[(long)i * w + j] = k;
}
extern "C" __global__ void tridag(const float* a, const float* b, const float* c, const float* y,
                                  float* uu, float* yy, float* x, int m, int n) {
  int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= m) return;
  long o = (long)s * n;
  uu[o] = b[o]; yy[o] = y[o];
  for (int k = 1; k < n; k++) {
    float beta = a[o + k] / uu[o + k - 1];
    uu[o + k] = b[o + k] - beta * c[o + k - 1];
    yy[o + k] = y[o + k] - beta * yy[o + k - 1];
  }
  x[o + n - 1] = yy[o + n - 1] / uu[o + n - 1];
  for (int k = n - 2; k >= 0; k--) x[o + k] = (yy[o + k] - c[o + k] * x[o + k + 1]) / uu[o + k];
}
extern "C" __global__ void nbody(const float* xs, const float* ys, const float* zs, const float* ms,
                                 const float* vxs, const float* vys, const float* vzs, float dt, int n,
                                 float* px, float* py, float* pz, float* vx, float* vy, float* vz) {
  extern __shared__ float tile[];  // 256 bodies at a time: x, y, z, m
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float xi = i < n ? xs[i] : 0.f, yi = i < n ? ys[i] : 0.f, zi = i < n ? zs[i] : 0.f;
  float ax = 0.f, ay = 0.f, az = 0.f;
  for (int base = 0; base < n; base += blockDim.x) {
    int j = base + threadIdx.x;
    tile[4 * threadIdx.x] = j < n ? xs[j] : 0.f; tile[4 * threadIdx.x + 1] = j < n ? ys[j] : 0.f;
    tile[4 * threadIdx.x + 2] = j < n ? zs[j] : 0.f; tile[4 * threadIdx.x + 3] = j < n ? ms[j] : 0.f;
    __syncthreads();
    for (int t = 0; t < blockDim.x; t++) {
      float dx = tile[4 * t] - xi, dy = tile[4 * t + 1] - yi, dz = tile[4 * t + 2] - zi;
      float r2 = dx * dx + dy * dy + dz * dz + 1e-4f;
      float s = tile[4 * t + 3] * rsqrtf(r2) / r2;
      ax += s * dx; ay += s * dy; az += s * dz;
    }
    __syncthreads();
  }
  if (i < n) {
    float nvx = vxs[i] + dt * ax, nvy = vys[i] + dt * ay, nvz = vzs[i] + dt * az;
    vx[i] = nvx; vy[i] = nvy; vz[i] = nvz;
    px[i] = xi + dt * nvx; py[i] = yi + dt * nvy; pz[i] = zi + dt * nvz;
  }
}
extern "C" __global__ void mriq(const float* kx, const float* ky, const float* kz, const float* mag, int nk,
                                const float* x, const float* y, const float* z, int nx, float* qr, float* qi) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= nx) return;
  float xv = x[v], yv = y[v], zv = z[v], sr = 0.f, si = 0.f;
  for (int k = 0; k < nk; k++) {  // every thread reads the same sample: broadcast loads
    float arg = 6.2831853f * (kx[k] * xv + ky[k] * yv + kz[k] * zv);
    float s, c;
    __sincosf(arg, &s, &c);
    sr += mag[k] * c; si += mag[k] * s;
  }
  qr[v] = sr; qi[v] = si;
}
extern "C" __global__ void nw_diagonal(int* f, const int* sim, int m, int s, int lo, int len, int penalty) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= len) return;
  int i = lo + t, j = s - i;
  long at = (long)i * m + j;
  int v = f[at - m - 1] + sim[at];
  v = max(v, max(f[at - m], f[at - 1]) - penalty);
  f[at] = v;
}
"""
CUDA_MODULE = None


def kern(name):
    global CUDA_MODULE
    if CUDA_MODULE is None:
        CUDA_MODULE = cupy.RawModule(code=CUDA_SRC, options=("-use_fast_math",) if False else ())
    return CUDA_MODULE.get_function(name)


def grid2(h, w, bx=32, by=8):
    return ((w + bx - 1) // bx, (h + by - 1) // by), (bx, by)


def c_hotspot(iterations, temp, power):
    r, c = temp.shape
    rx, ry, rz, k = hotspot_consts(r, c)
    f = kern("hotspot_step")
    g, b = grid2(r, c)
    a, out = temp.copy(), cupy.empty_like(temp)
    for _ in range(iterations):
        f(g, b, (a, power, out, cupy.int32(r), cupy.int32(c), cupy.float32(rx), cupy.float32(ry), cupy.float32(rz), cupy.float32(k)))
        a, out = out, a
    return a


def c_stencil(iterations, c0, c1, a0):
    nz, ny, nx = a0.shape
    f = kern("stencil_step")
    g, b = grid2(ny, nx)
    a, out = a0.copy(), cupy.empty_like(a0)
    for _ in range(iterations):
        f(g, b, (a, out, cupy.int32(nx), cupy.int32(ny), cupy.int32(nz), cupy.float32(c0), cupy.float32(c1)))
        a, out = out, a
    return a


def c_pathfinder(wall):
    rows, cols = wall.shape
    f = kern("pathfinder_step")
    prev, out = wall[0].copy(), cupy.empty(cols, cupy.int32)
    for t in range(1, rows):
        f(((cols + 255) // 256,), (256,), (prev, wall[t], out, cupy.int32(cols)))
        prev, out = out, prev
    return prev


def c_mandelbrot(h, w, limit, x0, y0, x1, y1):
    out = cupy.empty((h, w), cupy.int32)
    g, b = grid2(h, w, 16, 16)
    kern("mandelbrot")(g, b, (out, cupy.int32(h), cupy.int32(w), cupy.int32(limit), cupy.float32(x0),
                              cupy.float32(y0), cupy.float32(x1), cupy.float32(y1)))
    return out


def c_tridag(a, b, c, y):
    m, n = a.shape
    uu, yy, x = cupy.empty_like(a), cupy.empty_like(a), cupy.empty_like(a)
    kern("tridag")(((m + 127) // 128,), (128,), (a, b, c, y, uu, yy, x, cupy.int32(m), cupy.int32(n)))
    return x


def c_nbody(dt, xs, ys, zs, vxs, vys, vzs, ms):
    n = xs.shape[0]
    outs = [cupy.empty_like(xs) for _ in range(6)]
    kern("nbody")(((n + 255) // 256,), (256,), (xs, ys, zs, ms, vxs, vys, vzs, cupy.float32(dt), cupy.int32(n), *outs),
                  shared_mem=256 * 4 * 4)
    return outs


def c_mriq(kx, ky, kz, x, y, z, phi_r, phi_i):
    mag = phi_r * phi_r + phi_i * phi_i
    n = x.shape[0]
    qr, qi = cupy.empty_like(x), cupy.empty_like(x)
    kern("mriq")(((n + 255) // 256,), (256,), (kx, ky, kz, mag, cupy.int32(kx.shape[0]), x, y, z, cupy.int32(n), qr, qi))
    return qr, qi


def c_nw(penalty, sim):
    m = sim.shape[0]
    ar = cupy.arange(m, dtype=cupy.int32) * penalty
    f = cupy.zeros((m, m), cupy.int32)
    f[0, :] = -ar
    f[:, 0] = -ar
    k = kern("nw_diagonal")
    for s in range(2, 2 * m - 1):
        lo, hi = max(1, s - (m - 1)), min(m - 1, s - 1)
        length = hi - lo + 1
        k(((length + 255) // 256,), (256,), (f, sim, cupy.int32(m), cupy.int32(s), cupy.int32(lo), cupy.int32(length), cupy.int32(penalty)))
    return f


BS_KERNEL = None


def c_blackscholes(s, x, t):
    global BS_KERNEL
    if BS_KERNEL is None:
        BS_KERNEL = cupy.ElementwiseKernel(
            "float32 s, float32 x, float32 t", "float32 call, float32 put",
            """
            const float r = 0.02f, v = 0.30f;
            float sqrt_t = sqrtf(t);
            float d1 = (logf(s / x) + (r + 0.5f * v * v) * t) / (v * sqrt_t);
            float d2 = d1 - v * sqrt_t;
            float e = expf(-r * t);
            float c1, c2;
            {
              float k = 1.f / (1.f + 0.2316419f * fabsf(d1));
              float c = 0.39894228f * expf(-0.5f * d1 * d1) * (k * (0.31938153f + k * (-0.356563782f + k * (1.781477937f + k * (-1.821255978f + k * 1.330274429f)))));
              c1 = d1 > 0.f ? 1.f - c : c;
              k = 1.f / (1.f + 0.2316419f * fabsf(d2));
              c = 0.39894228f * expf(-0.5f * d2 * d2) * (k * (0.31938153f + k * (-0.356563782f + k * (1.781477937f + k * (-1.821255978f + k * 1.330274429f)))));
              c2 = d2 > 0.f ? 1.f - c : c;
            }
            call = s * c1 - x * e * c2;
            put = x * e * (1.f - c2) - s * (1.f - c1);
            """, "blackscholes")
    return BS_KERNEL(s, x, t)


CUDA = {
    "hotspot": c_hotspot, "stencil": c_stencil, "pathfinder": c_pathfinder, "mandelbrot": c_mandelbrot,
    "tridag_batch": c_tridag, "nbody_step": c_nbody, "mriq": c_mriq, "nw": c_nw, "blackscholes": c_blackscholes,
}


# ---------------------------------------------------------------- main

def copy_bandwidth():
    n = 1 << 26
    src = torch.rand(n, device=dev)
    dst = torch.empty_like(src)
    ms = time_torch(lambda: dst.copy_(src), (), 20)
    nbytes = 2 * 4 * n
    return {"bytes": nbytes, "ms": ms, "gb_per_s": nbytes / ms / 1e6}


def err(e):
    return (type(e).__name__ + ": " + str(e))[:400]


def main():
    global SAXPY
    reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 10
    only = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else None
    jsonl = open(sys.argv[sys.argv.index("--jsonl") + 1], "w") if "--jsonl" in sys.argv else None
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cupy": cupy.__version__ if cupy else "missing: " + CUPY_IMPORT_ERROR,
           "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "times_ms": {}}
    try:
        out["copy"] = copy_bandwidth()
    except Exception as e:
        out["copy"] = {"error": err(e)}
    print("copy", out["copy"], file=sys.stderr)
    if jsonl:
        jsonl.write(json.dumps({"copy": out["copy"], "device": out["device"]}) + "\n")
        jsonl.flush()
    refs = {}
    if cupy is not None:
        try:
            refs = cupy_numpy_refs()
        except Exception as e:
            print("numpy_ref with CuPy:", err(e), file=sys.stderr)
        try:
            SAXPY = cupy.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 z", "z = a * x + y", "saxpy")
        except Exception as e:
            print("saxpy kernel:", err(e), file=sys.stderr)
    # keys: the entry's name; bench/programs/sgemm.weft's `sgemm` (a name bench/apps has
    # too) is "programs/sgemm" (compare.py keys Weft's results the same way)
    names = bench_lines()
    # the apps first, the micro-operations after, the SGEMMs (long autotuning) last
    names.sort(key=lambda t: (t[0].endswith("sgemm"), "programs" in t[1], t[1], t[0]))
    for name, path, specs in names:
        if only and name not in only:
            continue
        row = {"file": path, "inputs": specs}
        try:
            gen = torch.Generator(device=dev).manual_seed(0)
            args = [make_input(s, gen) for s in specs]
        except Exception as e:
            row["inputs_error"] = err(e)
            out["times_ms"][name] = row
            continue
        eager, comp = TORCH.get(name, (None, None))
        if eager is not None:
            try:
                row["eager"] = time_torch(eager, args, reps)
            except Exception as e:
                row["eager_error"] = err(e)
            if isinstance(comp, str):
                row["compile_skipped"] = comp
            else:
                try:
                    fn = comp() if comp is not None else torch.compile(eager, mode=MODE)
                    row["compile"] = time_torch(fn, args, reps)
                except Exception as e:
                    row["compile_error"] = err(e)
        if cupy is not None:
            try:
                cargs = to_cupy(args, spec_types(specs))
            except Exception as e:
                row["cupy_error"] = "inputs: " + err(e)
                cargs = None
            if cargs is not None:
                fn = CUPY_MICRO.get(name) or refs.get(name)
                if fn is not None:
                    try:
                        row["cupy"] = time_cupy(fn, cargs, reps)
                    except Exception as e:
                        row["cupy_error"] = err(e)
                if name in CUDA:
                    try:
                        row["cuda"] = time_cupy(CUDA[name], cargs, reps)
                    except Exception as e:
                        row["cuda_error"] = err(e)
            del cargs
        del args
        torch.cuda.empty_cache()
        if cupy is not None:
            cupy.get_default_memory_pool().free_all_blocks()
        out["times_ms"][name] = row
        print(name, {k: v for k, v in row.items() if k not in ("file", "inputs")}, file=sys.stderr)
        if jsonl:
            jsonl.write(json.dumps({"entry": name, **row}) + "\n")
            jsonl.flush()
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
