#!/usr/bin/env python3
"""The cost model's validation statistics (docs/costs.md, "Measured error") from the
JSON lines of `weft bench --predict --json` or `weft bench --replay FILE --json`:
per kernel and per entry, the geometric mean, median, arithmetic mean and worst of
|error|, and the share within ±25% and ±50%; overall, per size (small, medium, main)
and per directory (bench/apps, bench/programs). Entries the model cannot predict (a
cost that depends on a value computed at run time) are counted and listed apart, and
predictions marked as lower bounds are checked against their measurements.

Usage: bench/cost/stats.py FILE.jsonl [--worst N]
"""
import json
import math
import sys


def summary(errors):
    if not errors:
        return "none"
    a = sorted(abs(e) for e in errors)
    n = len(a)
    geo = math.exp(sum(math.log(max(x, 1e-6)) for x in a) / n)
    med = a[n // 2] if n % 2 else (a[n // 2 - 1] + a[n // 2]) / 2
    mean = sum(a) / n
    w25 = sum(1 for x in a if x <= 0.25) / n
    w50 = sum(1 for x in a if x <= 0.5) / n
    # Off by more than 2x: predicted over measured above 2 or below 1/2.
    off2 = sum(1 for e in errors if e > 1.0 or e < -0.5)
    return (f"n={n:3d} geomean {geo*100:5.1f}%  median {med*100:5.1f}%  mean {mean*100:6.1f}%  "
            f"worst {a[-1]*100:7.1f}%  within ±25% {w25*100:3.0f}%  within ±50% {w50*100:3.0f}%  "
            f"off by >2x: {off2}")


def main():
    path = sys.argv[1]
    worst = int(sys.argv[sys.argv.index("--worst") + 1]) if "--worst" in sys.argv else 15
    kernels, entries, unpredicted = [], [], []
    for line in open(path):
        j = json.loads(line)
        if "kernels" not in j:
            continue
        group = j["file"].split("/")[1] if j["file"].count("/") >= 2 else j["file"]
        size = j.get("size") or "main"
        name = j["file"].split("/")[-1].removesuffix(".weft") + "." + j["entry"]
        p = j.get("predicted") or {}
        if p.get("error") is None:
            unpredicted.append(f"{name} [{size}]: {p.get('error_message', 'no prediction')}")
            continue
        entries.append((group, size, name, p["error"], j["total_kernel_ns"]["median"],
                        p["kernel_ns"], p.get("lower_bound", False)))
        for k in j["kernels"]:
            if k.get("error") is not None:
                kernels.append((group, size, name + ":" + k["kernel"], k["error"],
                                k["ns"]["median"], k["predicted_ns"]))
    for title, rows in (("kernels", kernels), ("entries", entries)):
        print(f"== {title}")
        print(f"  all              {summary([r[3] for r in rows])}")
        for size in ("small", "medium", "main"):
            print(f"  size {size:11} {summary([r[3] for r in rows if r[1] == size])}")
        for group in sorted({r[0] for r in rows}):
            print(f"  {group:16} {summary([r[3] for r in rows if r[0] == group])}")
    # Predictions marked as lower bounds (a `while` loop counted once; recorded since
    # session 16): whether each is at or below its measurement.
    bounds = [r for r in entries if r[6]]
    if bounds:
        held = sum(1 for r in bounds if r[5] <= r[4])
        print(f"== lower bounds (a `while` loop counted once): {len(bounds)} entries, "
              f"{held} at or below the measured time")
    print(f"== not predicted: {len(unpredicted)}")
    for line in unpredicted:
        print("  " + line)
    print(f"== the {worst} worst entries (measured, predicted)")
    for r in sorted(entries, key=lambda r: -abs(math.log1p(r[3])))[:worst]:
        print(f"  {r[2]:32} [{r[1]:6}] {r[4]/1e3:10.1f} us {r[5]/1e3:10.1f} us  {r[3]*100:+7.0f}%")
    print(f"== the {worst} worst kernels (measured, predicted)")
    for r in sorted(kernels, key=lambda r: -abs(math.log1p(r[3])))[:worst]:
        print(f"  {r[2][:56]:56} [{r[1]:6}] {r[4]/1e3:10.1f} us {r[5]/1e3:10.1f} us  {r[3]*100:+7.0f}%")


main()
