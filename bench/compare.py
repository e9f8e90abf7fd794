#!/usr/bin/env python3
"""Side-by-side table of Weft's benchmark run and PyTorch's on the same GPU.

Usage: bench/compare.py RESULTS_DIR   (holding bench.jsonl from `weft bench --json`, or
bench_*.json from `weft-runner bench --json`, and torch.json from bench/torch_ref.py)
Prints a Markdown table: each operation's median kernel time, PyTorch's, the speed-up
(PyTorch time / Weft time; above 1 means Weft is faster) and the issue's target.
"""
import glob, json, os, sys

ROWS = [  # (operation, Weft entry, PyTorch key, target speed-up)
    ("saxpy", "saxpy", "saxpy_ms", 0.8),
    ("sum", "total", "sum_ms", 0.8),
    ("dot", "dot_product", "dot_ms", 0.8),
    ("inclusive scan", "inclusive_scan", "scan_ms", None),
    ("reverse", "flip", "reverse_ms", 0.8),
    ("transpose 8192^2", "transpose_copy", "transpose_ms", 1.5),
    ("gemv 8192^2", "gemv", "gemv_ms", 0.8),
    ("SGEMM 4096^3", "sgemm", "sgemm_fp32_ms", 0.4),
    ("row sums [2^20][32]", "row_sums", "segreduce_rows32_ms", 2.0),
]

def main(d):
    weft = {}
    path = os.path.join(d, "bench.jsonl")
    if os.path.exists(path):
        for line in open(path):
            if line.strip():
                r = json.loads(line)
                if "entry" in r:  # not the `--predict` summary line
                    weft[r["entry"]] = r
    for p in glob.glob(os.path.join(d, "bench_*.json")):
        try:
            r = json.load(open(p))
            weft[r["entry"]] = r
        except (ValueError, KeyError):
            pass
    torch = json.load(open(os.path.join(d, "torch.json")))
    print(f"Device: {torch.get('device')}\n")
    print("| operation | Weft (ms) | PyTorch (ms) | speed-up | target | met |")
    print("|---|---|---|---|---|---|")
    for name, entry, key, target in ROWS:
        r = weft.get(entry)
        t = torch.get(key)
        if r is None or t is None or not r.get("kernels"):
            print(f"| {name} | n/a | {t if t is None else f'{t:.3f}'} | | {target or ''} | |")
            continue
        ms = r["total_kernel_ns"]["median"] / 1e6
        speed = t / ms
        met = "" if target is None else ("yes" if speed >= target else f"no ({speed / target:.0%} of target)")
        print(f"| {name} | {ms:.3f} | {t:.3f} | {speed:.2f}x | {'' if target is None else f'{target}x'} | {met} |")

def predictions(d):
    """The cost model's predictions next to the measurements (`weft bench --predict`)."""
    path = os.path.join(d, "bench.jsonl")
    if not os.path.exists(path):
        return
    rows, summary = [], None
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        if "summary" in r:
            summary = r["summary"]
            continue
        for k in r.get("kernels", []):
            if "predicted_ns" in k:
                rows.append((r["entry"], k["kernel"], k["ns"]["median"], k["predicted_ns"], k["error"]))
    if not rows:
        return
    print("\n| entry | kernel | measured (ms) | predicted (ms) | error |")
    print("|---|---|---|---|---|")
    for entry, kernel, ns, pred, err in rows:
        print(f"| {entry} | {kernel} | {ns / 1e6:.3f} | {pred / 1e6:.3f} | {err:+.0%} |")
    if summary:
        kg, eg = summary.get("kernel_geomean_abs_error"), summary.get("entry_geomean_abs_error")
        print(f"\nModel: {summary.get('model')}; profile `{summary.get('profile')}`. Geometric mean "
              f"of |error|: {kg:.1%} over {summary.get('kernels')} kernels, {eg:.1%} over "
              f"{summary.get('entries')} entries.")

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
    predictions(sys.argv[1] if len(sys.argv) > 1 else ".")
