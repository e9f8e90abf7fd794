#!/usr/bin/env bash
# Runs on a GPU machine (the device tool's H100): every example's test block through
# OpenCL, the benchmark suite with `weft-runner bench`, and PyTorch's reference
# timings of the same operations, in one go so that both use the same GPU.
# Usage: bench/run_gpu.sh BIN_DIR OUT_DIR   (BIN_DIR holds release `weft` and `weft-runner`)
set -u
BIN=$(cd "$1" && pwd); OUT=$2
mkdir -p "$OUT" /tmp/weft-plans /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export WEFT_DEVICE=gpu
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$BIN/weft-runner" devices; } > "$OUT/device.txt" 2>&1
echo "== examples through OpenCL" >&2
( time "$BIN/weft" test --backend opencl --device gpu examples/ ) > "$OUT/examples_opencl.txt" 2>&1
N=67108864
bench() { # name file entry specs...
  local name=$1 file=$2 entry=$3; shift 3
  "$BIN/weft" build "$file" -o /tmp/weft-plans --entry "$entry" --unsafe >/dev/null 2>>"$OUT/bench_errors.txt" || return
  local args=()
  for s in "$@"; do args+=(--random "$s"); done
  echo "== bench $name" >&2
  "$BIN/weft-runner" bench --plan "/tmp/weft-plans/$entry.plan.json" --device gpu --warmup 3 --reps "${REPS:-20}" --json "${args[@]}" > "$OUT/bench_$name.json" 2>>"$OUT/bench_errors.txt"
}
bench saxpy bench/programs/saxpy.weft saxpy 'f32' "[$N]f32" "[$N]f32"
bench sum bench/programs/sum.weft total "[$N]f32"
bench dot bench/programs/dot.weft dot_product "[$N]f32" "[$N]f32"
bench scan bench/programs/scan.weft inclusive_scan "[$N]f32"
bench reverse bench/programs/reverse.weft flip "[$N]f32"
bench transpose bench/programs/transpose.weft transpose_copy '[8192][8192]f32'
bench gemv bench/programs/gemv.weft gemv '[8192][8192]f32' '[8192]f32'
bench row_sums bench/programs/row_sums.weft row_sums '[1048576][32]f32'
REPS=5 bench sgemm bench/programs/sgemm.weft sgemm '[4096][4096]f32' '[4096][4096]f32'
echo "== torch" >&2
python3 bench/torch_ref.py > "$OUT/torch.json" 2>"$OUT/torch_errors.txt"
ls -la "$OUT" >&2
