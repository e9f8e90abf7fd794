#!/usr/bin/env bash
# Times bench/cpu's programs with Weft on POCL (the CPU) and with numpy, in the same
# run on this machine, and prints the comparison (compare.py). Writes the raw results
# to OUT_DIR (default bench/results/cpu-DATE).
# Usage: bench/cpu/run.sh [OUT_DIR]      (after cargo build --release -p weft-cli -p weft-runtime)
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-bench/results/cpu-$(date -u +%Y-%m-%d)}"
mkdir -p "$out"
weft="${CARGO_TARGET_DIR:-$PWD/target}/release/weft"
[ -x "$weft" ] || { echo "build first: cargo build --release -p weft-cli -p weft-runtime" >&2; exit 2; }
python=python3
"$python" -c 'import numpy' 2>/dev/null || python=/usr/bin/python3
"$python" -c 'import numpy' || { echo "numpy is missing: scripts/install-deps.sh installs python3-numpy" >&2; exit 2; }
{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "commit: $(git rev-parse --short HEAD)"
} > "$out/machine.txt"
"$weft" bench --device cpu --json --warmup 2 --reps 10 bench/cpu/ > "$out/weft.jsonl"
"$python" bench/cpu/numpy_ref.py --reps 10 > "$out/numpy.json"
"$python" bench/cpu/compare.py "$out/weft.jsonl" "$out/numpy.json" | tee "$out/table.md"
