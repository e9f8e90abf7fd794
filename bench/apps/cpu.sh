#!/usr/bin/env bash
# Times bench/apps' programs with Weft on POCL (the CPU) and with numpy (numpy_ref.py),
# in the same run on this machine, at the CPU sizes of numpy_ref.py's CASES (the GPU
# sizes of the `-- bench:` lines are too large for a 2-core machine), and prints the
# comparison (bench/cpu/compare.py: numpy's time over Weft's, and the geometric mean).
# Writes the raw results to OUT_DIR (default bench/results/pocl-DATE-apps).
# Usage: bench/apps/cpu.sh [OUT_DIR]
#   WEFT=path/to/weft (default target/release/weft; `weft-runner` is looked for beside
#   it unless WEFT_RUNNER is set), REPS (default 10), WARMUP (default 2).
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${1:-bench/results/pocl-$(date -u +%Y-%m-%d)-apps}"
mkdir -p "$out"
weft="${WEFT:-${CARGO_TARGET_DIR:-$PWD/target}/release/weft}"
[ -x "$weft" ] || { echo "no weft at $weft: build (cargo build --release -p weft-cli -p weft-runtime) or set WEFT" >&2; exit 2; }
export WEFT_RUNNER="${WEFT_RUNNER:-$(dirname "$weft")/weft-runner}"
python=python3
"$python" -c 'import numpy' 2>/dev/null || python=/usr/bin/python3
"$python" -c 'import numpy' || { echo "numpy is missing" >&2; exit 2; }
reps="${REPS:-10}"; warmup="${WARMUP:-2}"
{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "commit: $(git rev-parse --short HEAD)"
  echo "weft: $weft"
  echo "reps: $reps, warm-up: $warmup"
} > "$out/machine.txt"
: > "$out/weft.jsonl"; : > "$out/weft.err"
"$python" bench/apps/numpy_ref.py --specs | while IFS=$'\t' read -r name specs; do
  file=$(grep -l "^entry $name " bench/apps/*.weft | head -1)
  [ -n "$file" ] || { echo "no entry $name in bench/apps" >&2; continue; }
  args=()
  IFS=$'\t' read -r -a spec_list <<< "$specs"
  for s in "${spec_list[@]}"; do args+=(--random "$s"); done
  echo "== $name ($file)" >&2
  timeout 300 "$weft" bench --device cpu --json --warmup "$warmup" --reps "$reps" --timeout 120 \
    --entry "$name" "${args[@]}" "$file" >> "$out/weft.jsonl" 2>> "$out/weft.err" \
    || echo "weft bench $name failed (exit $?)" | tee -a "$out/weft.err" >&2
done
"$python" bench/apps/numpy_ref.py --reps "$reps" > "$out/numpy.json" 2> "$out/numpy.err"
"$python" bench/cpu/compare.py "$out/weft.jsonl" "$out/numpy.json" | tee "$out/table.md"
