#!/usr/bin/env bash
# Headless Neovim test of the Weft plugin.
#
#   test/run.sh                 against test/fake_server.py (proves the harness), then
#                               checks that the harness fails on a wrong expectation
#   WEFT_LSP_CMD="weft lsp" WEFT_TEST_FILE=... WEFT_EXPECT_...=... test/run.sh
#                               against a real server: see the variables in smoke.lua
#
# NVIM=/path/to/nvim picks the editor (default: nvim on PATH; 0.7 or later).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
plugin=$(dirname "$here")
nvim_bin=${NVIM:-nvim}

if ! command -v "$nvim_bin" >/dev/null 2>&1; then
  echo "test/run.sh: $nvim_bin not found (apt-get install neovim)" >&2
  exit 2
fi

run_nvim() {
  # -u NONE: no user config; -i NONE: no shada; -n: no swap files.
  timeout "${WEFT_TEST_WALL_S:-120}" "$nvim_bin" --headless -u NONE -i NONE -n \
    --cmd "set rtp^=$plugin" \
    -c "luafile $here/smoke.lua"
}

if [ -n "${WEFT_LSP_CMD:-}" ]; then
  run_nvim
  exit $?
fi

# The fake server, with expectations that match what it answers.
command -v python3 >/dev/null 2>&1 || { echo "test/run.sh: python3 not found" >&2; exit 2; }
export WEFT_LSP_CMD="python3 $here/fake_server.py"
export WEFT_TEST_FILE="$here/fixtures/dot.weft"
export WEFT_TEST_FILE2="$here/fixtures/other.weft"
export WEFT_ROOT_MARKERS=".weft-test-root"
export WEFT_EXPECT_ROOT="$here/fixtures"
export WEFT_EXPECT_DIAGNOSTIC="fake-server: 11 lines"
export WEFT_HOVER_POS="10:21" WEFT_EXPECT_HOVER='`sq` (fake hover)'
export WEFT_DEFINITION_POS="10:21" WEFT_EXPECT_DEFINITION="dot.weft:7:5"
export WEFT_RUN_POS="10:17" WEFT_EXPECT_RUN="fake run of norm2"
export WEFT_GPU_RUN_POS="5:7" WEFT_EXPECT_GPU_RUN="fake GPU run of dot: kernels 1.0 µs"
export WEFT_KERNEL_POS="5:7" WEFT_EXPECT_KERNEL="__kernel void dot(" WEFT_EXPECT_KERNEL_LINKS=1
export WEFT_PROFILE_POS="5:7" WEFT_EXPECT_PROFILE="work W = 42 (fake)"
export WEFT_TEST_RESTART=1

echo "== editors/nvim: $("$nvim_bin" --version | head -n 1), fake server"
run_nvim
status=$?

# The harness must notice a wrong answer: run once more expecting a hover the fake
# server never gives, and require a failure (its output is kept out of the log, so
# that its closing "N passed, 1 failed" line is not read as this script's result).
log=$(mktemp)
WEFT_EXPECT_HOVER="no such hover" WEFT_TEST_RESTART=0 run_nvim >"$log" 2>&1
self=$?
if [ $self -ne 0 ] && grep -q '^FAIL hover' "$log"; then
  echo "PASS harness fails on a wrong hover expectation"
else
  echo "FAIL harness did not fail on a wrong hover expectation (exit $self):"
  sed 's/^/  | /' "$log"
  status=1
fi
rm -f "$log"

# The real server, when a built `weft` is at hand (WEFT_BIN, else target/{debug,release}/weft):
# diagnostics, hover, definition and the generated program of an entry on the same
# fixture; and :WeftRunGpu when a `weft-runner` beside it finds an OpenCL device.
repo=$(cd "$plugin/../.." && pwd)
weft_bin=${WEFT_BIN:-}
for candidate in "$repo/target/debug/weft" "$repo/target/release/weft"; do
  if [ -z "$weft_bin" ] && [ -x "$candidate" ]; then weft_bin=$candidate; fi
done
if [ -n "$weft_bin" ] && "$weft_bin" lsp --help >/dev/null 2>&1; then
  echo "== editors/nvim: real server $weft_bin"
  (
    unset WEFT_RUN_POS WEFT_EXPECT_RUN WEFT_GPU_RUN_POS WEFT_EXPECT_GPU_RUN WEFT_TEST_FILE2
    export WEFT_LSP_CMD="$weft_bin lsp"
    export WEFT_EXPECT_DIAGNOSTIC=NONE
    export WEFT_HOVER_POS="10:21" WEFT_EXPECT_HOVER='def sq : f32 -> f32'
    export WEFT_DEFINITION_POS="10:21" WEFT_EXPECT_DEFINITION="7:5"
    export WEFT_KERNEL_POS="5:7" WEFT_EXPECT_KERNEL='// Weft: the OpenCL program of entry `dot`' WEFT_EXPECT_KERNEL_LINKS=1
    # "Profile" writes under the user's cache (~/.cache/weft/profiles/), never beside
    # the source; the trap removes what an older server wrote there. (The SVG needs
    # Graphviz's `dot`.)
    if command -v dot >/dev/null 2>&1; then
      export WEFT_PROFILE_POS="5:7" WEFT_EXPECT_PROFILE='profile of `dot`' WEFT_PROFILE_SVG_EXISTS=1
    else
      echo "SKIP :WeftProfile against the real server: Graphviz \`dot\` is not installed"
    fi
    trap 'rm -rf "$here/fixtures/dot.dot.profile"' EXIT
    export WEFT_TEST_RESTART=0
    runner="$(dirname "$weft_bin")/weft-runner"
    if [ -x "$runner" ] && "$runner" devices >/dev/null 2>&1; then
      export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$repo/target/pocl-cache}"
      export WEFT_GPU_RUN_POS="5:7" WEFT_EXPECT_GPU_RUN='32.0f32'
    else
      echo "SKIP :WeftRunGpu against the real server: no weft-runner with an OpenCL device beside $weft_bin"
    fi
    run_nvim
  ) || status=1
else
  echo "SKIP editors/nvim real server: no built weft with \`lsp\` (set WEFT_BIN or cargo build)"
fi
exit $status
