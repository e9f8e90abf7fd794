#!/usr/bin/env bash
# Runs on a GPU machine (the device tool's): the cost model's validation data
# (docs/costs.md, "Predictions and validation").
#  1. `weft calibrate` of the GPU (profile.json; the committed profile is not replaced).
#  2. `weft bench --predict --json --all-sizes` over bench/apps/ and bench/programs/: every
#     entry at its small, medium and main size, each kernel's measured time beside the
#     time the model predicts from the profile just measured. The last
#     line of predict.jsonl is the summary. `weft bench --replay` re-predicts these
#     measurements later with another profile or model, without the device.
#  3. When the machine also has an OpenCL CPU device: its calibration and the same
#     entries at the small and medium sizes on it (cpu.jsonl), for the choice between
#     CPU and GPU (`--device auto`).
# Usage: bench/predict_gpu.sh BIN_DIR OUT_DIR   (BIN_DIR holds release `weft` and
# `weft-runner`); REPS (default 20) sets the measured runs on the GPU; CPU_SECONDS
# (default 200) bounds the CPU part. A profile just measured predicts (and, as
# `--profile` does, informs the code generator: it describes the same device as the
# committed profile that steers the middle end).
set -u
BIN=$(cd "$1" && pwd); OUT=$2
mkdir -p "$OUT" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export WEFT_RUNNER="$BIN/weft-runner"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; ls /etc/OpenCL/vendors; "$BIN/weft-runner" devices; } > "$OUT/device.txt" 2>&1
echo "== weft calibrate --device gpu" >&2
"$BIN/weft" calibrate --device gpu -o "$OUT/profile-gpu.json" 2> "$OUT/calibrate-gpu.txt"
echo "== weft bench --predict --all-sizes (GPU)" >&2
# Kernels are compiled without checks, as in bench/run_gpu.sh.
"$BIN/weft" bench --predict --profile "$OUT/profile-gpu.json" --json --unsafe --device gpu --all-sizes --warmup 3 \
  --reps "${REPS:-20}" bench/apps/ bench/programs/ > "$OUT/predict.jsonl" 2>>"$OUT/predict_errors.txt"
tail -n 1 "$OUT/predict.jsonl" >&2
if "$BIN/weft-runner" devices --json | grep -q '"kind": *"cpu"'; then
  echo "== the CPU device" >&2
  timeout 60 "$BIN/weft" calibrate --device cpu -o "$OUT/profile-cpu.json" 2> "$OUT/calibrate-cpu.txt"
  timeout "${CPU_SECONDS:-200}" "$BIN/weft" bench --predict --profile "$OUT/profile-cpu.json" --json --unsafe --device cpu --size small \
    --size medium --warmup 1 --reps 5 --timeout 20 bench/programs/ bench/apps/ \
    > "$OUT/cpu.jsonl" 2>>"$OUT/cpu_errors.txt"
  echo "cpu: $(wc -l < "$OUT/cpu.jsonl") lines" >&2
else
  echo "no OpenCL CPU device on this machine" >&2
fi
ls -la "$OUT" >&2
