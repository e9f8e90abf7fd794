#!/usr/bin/env bash
# Runs on a GPU machine (the device tool's H100): every example's test block through
# OpenCL, reductions and scans past 2^31 elements (bench/large), the benchmark suite with `weft bench`, and PyTorch's reference
# timings of the same operations, in one go so that both use the same GPU.
# Usage: bench/run_gpu.sh BIN_DIR OUT_DIR   (BIN_DIR holds release `weft` and `weft-runner`)
set -u
BIN=$(cd "$1" && pwd); OUT=$2
mkdir -p "$OUT" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export WEFT_DEVICE=gpu
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$BIN/weft-runner" devices; } > "$OUT/device.txt" 2>&1
echo "== examples through OpenCL" >&2
( time "$BIN/weft" test --backend opencl --device gpu examples/ ) > "$OUT/examples_opencl.txt" 2>&1
echo "== past 2^31 elements (bench/large)" >&2
( time "$BIN/weft" test --backend opencl --device gpu bench/large/ ) > "$OUT/large_n.txt" 2>&1
echo "== weft bench bench/programs/" >&2
# Every entry's inputs (and flops) are on its `-- bench:` line; one JSON object per
# entry per line. Kernels are compiled without checks, as PyTorch runs none.
# `--predict` adds the static cost model's prediction (committed profile of the device)
# to each measurement; the last line is the summary with the geometric-mean error.
WEFT_RUNNER="$BIN/weft-runner" "$BIN/weft" bench --predict --json --unsafe --device gpu --warmup 3 --reps "${REPS:-20}" \
  bench/programs/ > "$OUT/bench.jsonl" 2>>"$OUT/bench_errors.txt"
echo "== torch" >&2
python3 bench/torch_ref.py > "$OUT/torch.json" 2>"$OUT/torch_errors.txt"
ls -la "$OUT" >&2
