#!/usr/bin/env bash
# Runs on the GPU machine: `weft run --device auto` as a user would, on a large and a
# tiny input of three programs, to see the choice between the GPU and the CPU device
# and its reason (docs/costs.md, "Placement").
# Usage: bench/cost/auto_gpu.sh BIN_DIR   (release `weft` and `weft-runner`)
set -u
BIN=$(cd "$1" && pwd)
export WEFT_RUNNER="$BIN/weft-runner"
mkdir -p /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
for args in "--entry dot_product --random [67108864]f32 --random [67108864]f32 bench/programs/dot.weft" \
            "--entry dot_product --random [256]f32 --random [256]f32 bench/programs/dot.weft" \
            "--entry sgemm --random [1024][1024]f32 --random [1024][1024]f32 bench/programs/sgemm.weft" \
            "--entry sgemm --random [8][8]f32 --random [8][8]f32 bench/programs/sgemm.weft" \
            "--entry total --random [1000]f32 bench/programs/sum.weft"; do
  echo "== weft run --device auto $args"
  # shellcheck disable=SC2086 # the arguments are words
  "$BIN/weft" run --device auto $args 2>&1 | cut -c1-600 | head -c 2000 | tail -n 4
done
