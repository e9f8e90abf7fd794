#!/usr/bin/env bash
# On the GPU machine, in one go: bench/apps/ and bench/programs/ checked against the
# interpreter (`weft test`), timed with `weft bench` untuned (the device's rule,
# `--no-tuning`) and tuned (`weft tune` over the same files; SKIP_TUNE=1 leaves it out), then the peers (peers.py: PyTorch eager, torch.compile, CuPy,
# hand-written CUDA) on the same shapes, and the table (compare.py). Every step has a
# timeout so the whole stays under about 9 minutes; what a step finished before its
# timeout is kept (peers.jsonl line by line).
# Usage: bench/peers/run.sh BIN_DIR OUT_DIR   (BIN_DIR holds release `weft` and `weft-runner`)
set -u
cd "$(dirname "$0")/../.."
BIN=$(cd "$1" && pwd); OUT=$2
mkdir -p "$OUT" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export WEFT_RUNNER="$BIN/weft-runner"
export CUPY_ACCELERATORS="${CUPY_ACCELERATORS:-cub,cutensor}"
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$BIN/weft-runner" devices;
  git rev-parse --short HEAD; python3 -c 'import torch, cupy; print("torch", torch.__version__, "cupy", cupy.__version__)'; } > "$OUT/device.txt" 2>&1
# Kernels without checks (--unsafe), as the peers run none; 2 warm-up and 10 measured runs.
bench() {  # bench SECONDS OUTNAME [weft bench options] PATH
  local t=$1 name=$2; shift 2
  echo "== $name ($(( $(date +%s) - start )) s)" >&2
  timeout "$t" "$BIN/weft" bench --unsafe --json --device gpu --warmup 2 --reps 10 --timeout 20 "$@" \
    > "$OUT/$name.jsonl" 2> "$OUT/$name.err"
  echo "exit $?" >> "$OUT/$name.err"
}
tune() {  # tune SECONDS NAME PATH: writes OUT/tuning-NAME.json
  echo "== tune $2 ($(( $(date +%s) - start )) s)" >&2
  timeout "$1" "$BIN/weft" tune --device gpu --reps 3 -o "$OUT/tuning-$2.json" "$3" 2> "$OUT/tune-$2.err"
  echo "exit $?" >> "$OUT/tune-$2.err"
}
echo "== tests ($(( $(date +%s) - start )) s)" >&2
timeout "${TEST_TIMEOUT:-45}" "$BIN/weft" test --backend opencl --device gpu \
  bench/apps/ bench/programs/ > "$OUT/tests.txt" 2>&1
echo "exit $?" >> "$OUT/tests.txt"
bench 70 apps-untuned --no-tuning bench/apps/
bench 20 programs-untuned --no-tuning bench/programs/
if [ -z "${SKIP_TUNE:-}" ]; then
  # Tuned separately, so that a timeout of one leaves the other's tuning file.
  tune 30 programs bench/programs/
  tune 45 apps bench/apps/
  for set in apps programs; do
    if [ -s "$OUT/tuning-$set.json" ]; then
      bench $([ $set = apps ] && echo 70 || echo 20) $set-tuned --tuning "$OUT/tuning-$set.json" bench/$set/
    else
      echo "no tuning file for bench/$set (tune-$set.err says why): no tuned run" >&2
    fi
  done
fi
echo "== peers ($(( $(date +%s) - start )) s)" >&2
timeout "${PEERS_TIMEOUT:-250}" python3 bench/peers/peers.py --reps 10 --jsonl "$OUT/peers.jsonl" > "$OUT/peers.json" 2> "$OUT/peers.err"
echo "exit $?" >> "$OUT/peers.err"
echo "== done ($(( $(date +%s) - start )) s)" >&2
python3 bench/peers/compare.py "$OUT" | tee "$OUT/table.md"
ls -la "$OUT" >&2
