#!/usr/bin/env bash
# The thesis's benchmarks (bench/apl/*.apl) at the sizes of its Tables 3.5 and 3.6
# (the option pricer, which has no GPU figure there, at Table 3.1's), timed with
# `weft bench` on DEVICE (`gpu` on the device tool's H100, or `cpu1`: POCL limited to
# one thread, the sequential baseline). The files here keep test sizes;
# this script writes copies with the thesis's constants (and no test block) to
# OUT_DIR/programs and the timings to OUT_DIR/DEVICE.jsonl.
# Usage: bench/apl/thesis.sh DEVICE BIN_DIR OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
device=$1; BIN=$(cd "$2" && pwd); OUT=$3
mkdir -p "$OUT/programs"
export WEFT_RUNNER="$BIN/weft-runner"
size() { # FILE NAME VALUE...: the file with each `NAME ← ...` line set, test block dropped
  local file=$1; shift
  local text; text=$(sed '/^⍝ ==/,$d' "bench/apl/$file.apl")
  while [ $# -gt 0 ]; do text=$(printf '%s\n' "$text" | sed "s/^$1 ← .*/$1 ← $2/"); shift 2; done
  printf "%s\n" "$text" > "$OUT/programs/$file.apl"
}
size signal N 50000000
size easter N 10000000
size blackscholes N 10000000
size sobol_pi N 10000000
size life N 2000
size hotspot M 1024 I 360
size optionpricing N 1048576
case "$device" in
  gpu) [ -f /etc/OpenCL/vendors/nvidia.icd ] || { mkdir -p /etc/OpenCL/vendors; echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd; }
       "$BIN/weft" bench --unsafe --json --device gpu --warmup 1 --reps 5 --timeout 300 "$OUT/programs" > "$OUT/gpu.jsonl" ;;
  cpu1) POCL_MAX_PTHREAD_COUNT=1 taskset -c 0 "$BIN/weft" bench --unsafe --json --device cpu --warmup 0 --reps 2 --timeout 600 "$OUT/programs" > "$OUT/cpu1.jsonl" ;;
  *) echo "DEVICE is gpu or cpu1" >&2; exit 2 ;;
esac
