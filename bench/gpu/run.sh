#!/usr/bin/env bash
# On the GPU machine (the device tool's GPU): bench/gpu's programs with the device's
# rule for the middle end's thresholds, tuned by `weft tune`, and PyTorch eager and
# torch.compile on the same shapes, in one go. (Results before session 13 also have a
# `staged.jsonl`: the staged translator alone, since removed.)
# Usage: bench/gpu/run.sh BIN_DIR OUT_DIR   (BIN_DIR holds release `weft` and `weft-runner`)
set -u
BIN=$(cd "$1" && pwd); OUT=$2
mkdir -p "$OUT" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export WEFT_RUNNER="$BIN/weft-runner"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > "$OUT/device.txt" 2>&1
bench() { timeout 240 "$BIN/weft" bench --unsafe --json --device gpu --warmup 2 --reps 10 "$@" bench/gpu/; }
echo "== middle end, rule" >&2;   bench > "$OUT/middle.jsonl" 2>"$OUT/middle.err"
echo "== tune" >&2
timeout 300 "$BIN/weft" tune --device gpu --reps 5 -o "$OUT/h100-tuning.json" bench/gpu/ 2>"$OUT/tune.err"
echo "== middle end, tuned" >&2;  bench --tuning "$OUT/h100-tuning.json" > "$OUT/tuned.jsonl" 2>"$OUT/tuned.err"
echo "== bench/programs" >&2
timeout 240 "$BIN/weft" bench --unsafe --json --device gpu --warmup 2 --reps 10 bench/programs/ > "$OUT/programs-middle.jsonl" 2>"$OUT/programs-middle.err"
echo "== torch" >&2
timeout 400 python3 bench/gpu/torch_ref.py > "$OUT/torch.json" 2>"$OUT/torch.err"
ls -la "$OUT" >&2
