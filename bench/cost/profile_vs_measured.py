#!/usr/bin/env python3
"""`weft profile` in calibrated time against measured runs (issue 17, item 5).

Usage: profile_vs_measured.py WEFT MEASURED.jsonl [--size small] [--profile NAME|FILE]

For every entry that `weft bench --predict --json` measured at SIZE (default small),
profiles it with the same random inputs and seed (`weft profile --json --device-profile
PROFILE`, default `nvidia-h200`) and prints, per entry: the profile's device work (its
kernels, in time) against the measured kernel time (median) and the model's recorded
prediction, and the profile's simulated time T_1 against the measured wall time of the
plan (`wall_ns`: host code and kernels, no transfers) plus the predicted transfers. The
last lines give the geometric mean of |error| of the device work against the measured
kernel time, and how many profiles equal the recorded prediction (within 1%; they differ
when the compiler changed since the measurement).
"""
import json
import math
import subprocess
import sys
import tempfile


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 2 or args[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    weft, measured = args[0], args[1]
    size = args[args.index("--size") + 1] if "--size" in args else "small"
    profile = args[args.index("--profile") + 1] if "--profile" in args else "nvidia-h200"
    rows, errors, same = [], [], 0
    with open(measured) as f:
        records = [json.loads(line) for line in f if line.strip()]
    for r in records:
        if r.get("size") != size or "total_kernel_ns" not in r:
            continue
        cmd = [weft, "profile", r["file"], "--entry", r["entry"], "--json", "--processors", "1",
               "--device-profile", profile, "--seed", str(r.get("seed", 0))]
        if not r.get("checks", True):
            cmd.append("--unsafe")
        for spec in r["inputs"]:
            cmd += ["--random", spec]
        with tempfile.TemporaryDirectory() as out:
            done = subprocess.run(cmd + ["--out", out], capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            print(f"{r['file']} {r['entry']}: weft profile failed: {done.stderr.strip()}")
            continue
        p = json.loads(done.stdout)
        if p["units"] != "seconds":
            print(f"{r['file']} {r['entry']}: not timed: {'; '.join(p['notes'])}")
            continue
        kernels_ns = r["total_kernel_ns"]["median"]
        wall_ns = r["wall_ns"]["median"]
        predicted = (r.get("predicted") or {}).get("kernel_ns")
        device_ns = p["device_work"] * 1e9
        time_ns = p["time"] * 1e9
        transfers_ns = p["transfer_work"] * 1e9
        error = (device_ns - kernels_ns) / kernels_ns
        errors.append(abs(error))
        if predicted and abs(device_ns - predicted) <= 0.01 * predicted:
            same += 1
        rows.append((r["entry"], device_ns, kernels_ns, predicted, error, time_ns,
                     wall_ns + transfers_ns))
    print(f"{'entry':<16} {'profile dev':>12} {'measured':>12} {'predicted':>12} {'error':>8}"
          f" {'profile T_1':>12} {'wall+xfer':>12}")
    for e, d, k, pr, err, t, w in rows:
        prs = f"{pr / 1e3:10.1f}µs" if pr else f"{'-':>12}"
        print(f"{e:<16} {d / 1e3:10.1f}µs {k / 1e3:10.1f}µs {prs} {err:+8.1%}"
              f" {t / 1e3:10.1f}µs {w / 1e3:10.1f}µs")
    if errors:
        geo = math.exp(sum(math.log(max(x, 1e-9)) for x in errors) / len(errors))
        print(f"device work against measured kernel time: geometric mean |error| {geo:.1%} "
              f"over {len(errors)} entries")
        walls = [abs(t - w) / w for *_, t, w in rows]
        geo_t = math.exp(sum(math.log(max(x, 1e-9)) for x in walls) / len(walls))
        print(f"T_1 against measured wall time plus predicted transfers: geometric mean |error| "
              f"{geo_t:.1%} over {len(walls)} entries")
        print(f"profiles equal to the recorded prediction (within 1%): {same} of {len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
