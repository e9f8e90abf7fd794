#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 10) from a copy of the committed
# seeds, so a run never grows fuzz/corpus/. Needs the nightly toolchain and cargo-fuzz
# (`cargo install cargo-fuzz`); without them it says so and exits 0. Long runs:
# docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz: skipped (no nightly toolchain with cargo-fuzz)"
  exit 0
fi
targets=(check fmt values npy lsp)
# No sanitizer: the fuzzed crates forbid unsafe code; the checks are panics and hangs.
cargo +nightly fuzz build -s none
for target in "${targets[@]}"; do
  run="fuzz/corpus-run/$target"
  rm -rf "$run" "fuzz/artifacts/$target"
  mkdir -p "$run"
  echo "== fuzz $target (${seconds} s)"
  cargo +nightly fuzz run -s none "$target" "$run" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 2>&1 |
    grep -E '^(stat::number_of_executed_units|==|SUMMARY|thread|Failing input)' || true
  # A crash leaves an artifact and a non-zero status from cargo fuzz: fail the script.
  if compgen -G "fuzz/artifacts/$target/crash-*" >/dev/null ||
    compgen -G "fuzz/artifacts/$target/timeout-*" >/dev/null; then
    echo "fuzz $target: found a failing input in fuzz/artifacts/$target" >&2
    exit 1
  fi
done
