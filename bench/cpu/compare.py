#!/usr/bin/env python3
"""Weft on POCL against numpy on this machine, one row per program.

Usage: compare.py WEFT_BENCH_JSONL NUMPY_JSON
The ratio is numpy's time over Weft's median kernel time (above 1: Weft is faster).
Prints a Markdown table, the geometric mean, and whether the middle-end issue's CPU
targets hold (no program below 0.5x, geometric mean at least 1x).
"""
import json, math, sys


def main(weft_path, numpy_path):
    weft = {}
    for line in open(weft_path):
        line = line.strip()
        if line:
            r = json.loads(line)
            if "entry" in r and "total_kernel_ns" in r:
                weft[r["entry"]] = r["total_kernel_ns"]["median"] / 1e6
    ref = json.load(open(numpy_path))
    print(f"numpy {ref['numpy']}\n")
    print("| program | Weft on POCL (ms) | numpy (ms) | ratio (numpy / Weft) |")
    print("|---|---:|---:|---:|")
    ratios = []
    for name, np_ms in ref["times_ms"].items():
        if name not in weft:
            print(f"| {name} | (not run) | {np_ms:.3f} | |")
            continue
        ratio = np_ms / weft[name]
        ratios.append(ratio)
        print(f"| {name} | {weft[name]:.3f} | {np_ms:.3f} | {ratio:.2f}x |")
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        worst = min(ratios)
        print(f"\nGeometric mean {geo:.2f}x over {len(ratios)} programs; the lowest {worst:.2f}x.")
        print(f"Targets (none below 0.5x, geometric mean at least 1x): {'met' if worst >= 0.5 and geo >= 1 else 'not met'}.")


if __name__ == "__main__":
    main(*sys.argv[1:3])
