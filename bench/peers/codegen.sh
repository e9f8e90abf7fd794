#!/usr/bin/env bash
# On the GPU machine: the two code generators side by side (docs/middle.md, "Code
# generation from the GPU IR"): every example and app through `--codegen gpu-only`
# against the interpreter, then bench/apps/ and bench/programs/ timed with `--codegen
# bridge` and `--codegen gpu-only` (`--unsafe`, as the peers run no checks), and the
# device's profile (`weft calibrate`, with CALIBRATE=1). Every step has a timeout; the whole stays under
# about 9 minutes.
# Usage: bench/peers/codegen.sh BIN_DIR OUT_DIR   (BIN_DIR holds release `weft` and `weft-runner`)
set -u
cd "$(dirname "$0")/../.."
BIN=$(cd "$1" && pwd); OUT=$2
mkdir -p "$OUT" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export WEFT_RUNNER="$BIN/weft-runner"
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$BIN/weft-runner" devices;
  git rev-parse --short HEAD; } > "$OUT/device.txt" 2>&1
step() { echo "== $1 ($(( $(date +%s) - start )) s)" >&2; }
# Without a committed profile of this device, one measured now steers both.
if "$BIN/weft" calibrate --help >/dev/null 2>&1 && [ -n "${CALIBRATE:-}" ]; then
  step calibrate
  timeout 60 "$BIN/weft" calibrate --device gpu -o "$OUT/profile.json" 2>> "$OUT/errors.txt"
  [ -s "$OUT/profile.json" ] && export WEFT_PROFILE="$OUT/profile.json"
fi
step "tests, --codegen gpu-only"
timeout "${TEST_TIMEOUT:-200}" "$BIN/weft" test --codegen gpu-only --backend opencl --device gpu \
  examples/ bench/apps/ bench/programs/ > "$OUT/tests-gpu-only.txt" 2>&1
echo "exit $?" >> "$OUT/tests-gpu-only.txt"
tail -1 "$OUT/tests-gpu-only.txt" >&2
for codegen in bridge gpu-only; do
  for set in apps programs; do
    step "bench $set, --codegen $codegen"
    timeout "${BENCH_TIMEOUT:-75}" "$BIN/weft" bench --codegen "$codegen" --unsafe --json --device gpu \
      --warmup 2 --reps 10 --timeout 20 "bench/$set/" \
      > "$OUT/$set-$codegen.jsonl" 2>> "$OUT/errors.txt"
    echo "$set $codegen: exit $?" >> "$OUT/errors.txt"
  done
done
step done
python3 - "$OUT" <<'EOF' | tee "$OUT/table.md"
import json, math, sys, pathlib
out = pathlib.Path(sys.argv[1])
def load(name):
    times = {}
    path = out / name
    if not path.exists():
        return times
    for line in path.read_text().splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if "total_kernel_ns" in d:
            times[(d["file"], d["entry"])] = d["total_kernel_ns"]["median"] / 1e6
    return times
for s in ["apps", "programs"]:
    a, b = load(f"{s}-bridge.jsonl"), load(f"{s}-gpu-only.jsonl")
    print(f"\n| {s} entry | bridge ms | gpu-only ms | bridge / gpu-only |\n|---|---|---|---|")
    ratios = []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        r = x / y if x and y else None
        if r:
            ratios.append(r)
        fmt = lambda v: f"{v:.3f}" if v is not None else "–"
        print(f"| {key[0]}:{key[1]} | {fmt(x)} | {fmt(y)} | {fmt(r)} |")
    if ratios:
        g = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"| geometric mean | | | {g:.3f} |")
EOF
