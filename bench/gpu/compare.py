#!/usr/bin/env python3
"""The table of bench/gpu/run.sh's results: each program's median kernel time with the
staged translator, with the middle end (device rule and tuned), PyTorch eager and
torch.compile, and the ratio of the best peer's time to Weft's best (above 1: Weft is
faster). The middle-end issue's target is no program below 0.25x.

Usage: compare.py OUT_DIR
"""
import json, math, os, sys


def weft_times(path):
    times = {}
    if not os.path.exists(path):
        return times
    for line in open(path):
        line = line.strip()
        if line:
            r = json.loads(line)
            if "entry" in r and "total_kernel_ns" in r:
                times[r["entry"]] = r["total_kernel_ns"]["median"] / 1e6
    return times


def main(d):
    staged, middle, tuned = (weft_times(os.path.join(d, f)) for f in ("staged.jsonl", "middle.jsonl", "tuned.jsonl"))
    torch = json.load(open(os.path.join(d, "torch.json")))
    print(f"Device: {torch['device']}, PyTorch {torch['torch']}\n")
    print("| program | staged translator (ms) | middle end, rule (ms) | middle end, tuned (ms) | PyTorch eager (ms) | torch.compile (ms) | best peer / Weft |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    fmt = lambda x: f"{x:.3f}" if isinstance(x, (int, float)) else "-"
    ratios = []
    for name, peers in torch["times_ms"].items():
        best_peer = min(v for k, v in peers.items() if k in ("eager", "compile"))
        ours = [t for t in (middle.get(name), tuned.get(name)) if t is not None]
        best = min(ours) if ours else None
        ratio = best_peer / best if best else None
        if ratio:
            ratios.append(ratio)
        print(f"| {name} | {fmt(staged.get(name))} | {fmt(middle.get(name))} | {fmt(tuned.get(name))} | "
              f"{fmt(peers.get('eager'))} | {fmt(peers.get('compile'))} | {fmt(ratio)}x |")
    if ratios:
        print(f"\nLowest {min(ratios):.3f}x; geometric mean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}x.")


if __name__ == "__main__":
    main(sys.argv[1])
