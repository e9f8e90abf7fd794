#!/usr/bin/env bash
# Runs on a GPU machine (the device tool's H100): the benchmark suite through
# `weft bench --predict --json`, so that every kernel's measured time sits next to the
# time the static cost model predicts from the committed device profile (docs/costs.md,
# "Predictions and validation"). The last line of predict.jsonl is the summary: the
# geometric mean of the absolute relative errors over all kernels and all entries.
# Usage: bench/predict_gpu.sh BIN_DIR OUT_DIR   (BIN_DIR holds release `weft` and `weft-runner`,
# e.g. bin-gpu/)
set -u
BIN=$(cd "$1" && pwd); OUT=$2
mkdir -p "$OUT" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export WEFT_DEVICE=gpu
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$BIN/weft-runner" devices; } > "$OUT/device.txt" 2>&1
echo "== weft bench --predict bench/programs/" >&2
# Kernels are compiled without checks, as in bench/run_gpu.sh; the profile is the
# committed one matching the device (an error if none does).
WEFT_RUNNER="$BIN/weft-runner" "$BIN/weft" bench --predict --json --unsafe --device gpu --warmup 3 \
  --reps "${REPS:-20}" bench/programs/ > "$OUT/predict.jsonl" 2>>"$OUT/predict_errors.txt"
# The same as a table, for people.
WEFT_RUNNER="$BIN/weft-runner" "$BIN/weft" bench --predict --unsafe --device gpu --warmup 3 \
  --reps "${REPS:-20}" bench/programs/ > "$OUT/predict.txt" 2>>"$OUT/predict_errors.txt"
tail -n 1 "$OUT/predict.jsonl" >&2
ls -la "$OUT" >&2
