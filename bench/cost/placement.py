#!/usr/bin/env python3
"""Checks the choice between CPU and GPU (`weft run --device auto`, docs/costs.md
"Placement") on measurements: for every (entry, size) measured on both devices by
`weft bench --predict --json`, the device the model predicts faster against the device
measured faster. A run's time on a device is its kernels plus its transfers (inputs up,
results down); the kernels are measured, the transfers are the device profile's
measured transfer lines for the entry's bytes (what `with_transfers_ns` adds to
`kernel_ns`), the same on both sides of the comparison.

Usage: bench/cost/placement.py GPU.jsonl CPU.jsonl
"""
import json
import sys


def load(path):
    runs = {}
    for line in open(path):
        j = json.loads(line)
        p = j.get("predicted") or {}
        if "kernels" not in j or p.get("kernel_ns") is None:
            continue
        transfers = p["with_transfers_ns"] - p["kernel_ns"]
        key = (j["file"], j["entry"], j.get("size") or "main", " ".join(j.get("inputs", [])))
        runs[key] = (p["with_transfers_ns"], j["total_kernel_ns"]["median"] + transfers)
    return runs


gpu, cpu = load(sys.argv[1]), load(sys.argv[2])
pairs = sorted(set(gpu) & set(cpu))
right = 0
for key in pairs:
    (gp, gm), (cp, cm) = gpu[key], cpu[key]
    predicted = "gpu" if gp <= cp else "cpu"
    measured = "gpu" if gm <= cm else "cpu"
    right += predicted == measured
    mark = "" if predicted == measured else "   <- wrong"
    name = f"{key[0].split('/')[-1].removesuffix('.weft')}.{key[1]} [{key[2]}]"
    if key[2] == "main" and len(key[3]) < 40:
        name = f"{key[0].split('/')[-1].removesuffix('.weft')}.{key[1]} {key[3]}"
    print(f"{name:44} predicted gpu {gp/1e3:9.1f} cpu {cp/1e3:9.1f} us -> {predicted}; "
          f"measured gpu {gm/1e3:9.1f} cpu {cm/1e3:9.1f} us -> {measured}{mark}")
print(f"{right} of {len(pairs)} choices right ({100 * right / max(len(pairs), 1):.0f}%)")
