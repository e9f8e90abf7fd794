#!/usr/bin/env bash
# Runs on the GPU machine (issue "Cost model", item 4): bench/apps and bench/programs at
# their main size three ways, each a `weft bench --json` file in OUT_DIR:
#   rule.jsonl   --no-tuning: the middle end's defaults (the device's shape rule);
#   model.jsonl  --tuning MODEL_TUNING: the thresholds and group sizes the cost model
#                chose (`weft tune --predict`, made without the device);
#   tuned.jsonl  the committed tuning files (`weft tune`'s measured best).
# `bench/cost/defaults.py OUT_DIR` compares them.
# Usage: bench/cost/defaults_gpu.sh BIN_DIR OUT_DIR MODEL_TUNING   (REPS, default 10)
set -u
BIN=$(cd "$1" && pwd); OUT=$2; MODEL=$3
mkdir -p "$OUT" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export WEFT_RUNNER="$BIN/weft-runner"
for way in rule model tuned; do
  case $way in
    rule) flags=(--no-tuning) ;;
    model) flags=(--tuning "$MODEL") ;;
    tuned) flags=() ;;
  esac
  echo "== $way" >&2
  "$BIN/weft" bench --json --unsafe --device gpu --warmup 3 --reps "${REPS:-10}" "${flags[@]}" \
    bench/apps/ bench/programs/ > "$OUT/$way.jsonl" 2>>"$OUT/defaults_errors.txt"
done
