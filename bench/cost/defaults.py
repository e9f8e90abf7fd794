#!/usr/bin/env python3
"""Defaults against tuning (issue "Cost model", item 4).

Usage: defaults.py DIR   (rule.jsonl, model.jsonl, tuned.jsonl of bench/cost/defaults_gpu.sh)

Per entry the median kernel time of the middle end's rule (--no-tuning), of the cost
model's choice (`weft tune --predict`) and of `weft tune`'s measured best (the committed
tuning); then the geometric means of rule / tuned and model / tuned over the apps and
over the programs, as the issue defines the measure (a committed tuning measured on
another day can lose to a default by noise: ratios below 1).
"""
import json
import math
import sys


def load(path):
    out = {}
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            if "total_kernel_ns" in d:
                out[(d["file"], d["entry"])] = d["total_kernel_ns"]["median"]
    return out


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    d = sys.argv[1]
    rule, model, tuned = (load(f"{d}/{w}.jsonl") for w in ("rule", "model", "tuned"))
    groups = {"apps": ([], []), "programs": ([], [])}
    print(f"{'entry':<40} {'rule':>10} {'model':>10} {'tuned':>10} {'rule/tuned':>10} {'model/tuned':>11}")
    for key in sorted(tuned):
        if key not in rule or key not in model:
            continue
        r, m, t = rule[key], model[key], tuned[key]
        group = "apps" if "/apps/" in key[0] else "programs"
        groups[group][0].append(r / t)
        groups[group][1].append(m / t)
        name = f"{key[0].split('/')[-1]}:{key[1]}"
        print(f"{name:<40} {r / 1e6:9.3f}ms {m / 1e6:9.3f}ms {t / 1e6:9.3f}ms {r / t:10.3f} {m / t:11.3f}")
    for group, (rs, ms) in groups.items():
        print(f"{group}: n={len(rs)} geomean rule/tuned {geomean(rs):.3f}, model/tuned {geomean(ms):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
