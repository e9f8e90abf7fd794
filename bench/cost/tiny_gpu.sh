#!/usr/bin/env bash
# Runs on the GPU machine: the micro-programs at tiny sizes on the GPU and on the CPU
# device, predicted, for the placement check where the CPU may win
# (`bench/cost/placement.py OUT/tiny-gpu.jsonl OUT/tiny-cpu.jsonl`; docs/costs.md,
# "Placement"). The CPU is predicted from its calibration in the same run, the GPU from
# the committed profile.
# Usage: bench/cost/tiny_gpu.sh BIN_DIR OUT_DIR
set -u
BIN=$(cd "$1" && pwd); OUT=$2
mkdir -p "$OUT" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export WEFT_RUNNER="$BIN/weft-runner"
timeout 90 "$BIN/weft" calibrate --device cpu -o "$OUT/profile-cpu.json" 2> "$OUT/calibrate-cpu.txt"
run() { # FILE ENTRY SPECS...
  local file=$1 entry=$2; shift 2
  local specs=()
  for s in "$@"; do specs+=(--random "$s"); done
  "$BIN/weft" bench --predict --json --unsafe --device gpu --warmup 3 --reps 20 \
    --entry "$entry" "${specs[@]}" "$file" | grep -v summary >> "$OUT/tiny-gpu.jsonl"
  "$BIN/weft" bench --predict --profile "$OUT/profile-cpu.json" --json --unsafe --device cpu \
    --warmup 3 --reps 20 --entry "$entry" "${specs[@]}" "$file" | grep -v summary >> "$OUT/tiny-cpu.jsonl"
}
for n in 16 256 4096; do
  run bench/programs/dot.weft dot_product "[$n]f32" "[$n]f32"
  run bench/programs/sum.weft total "[$n]f32"
  run bench/programs/saxpy.weft saxpy f32 "[$n]f32" "[$n]f32"
  run bench/programs/reverse.weft flip "[$n]f32"
  run bench/programs/scan.weft inclusive_scan "[$n]f32"
done
for n in 4 16 64; do
  run bench/programs/gemv.weft gemv "[$n][$n]f32" "[$n]f32"
  run bench/programs/transpose.weft transpose_copy "[$n][$n]f32"
  run bench/programs/sgemm.weft sgemm "[$n][$n]f32" "[$n][$n]f32"
done
wc -l "$OUT"/tiny-*.jsonl >&2
