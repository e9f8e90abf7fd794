#!/usr/bin/env bash
# End-to-end test of the Weft extension in a real VS Code: code-server 4.100.3 (VS Code
# 1.100) with the freshly packaged weft.vsix installed, driven by Debian's headless
# Chromium through playwright-core (e2e.js). It opens examples/scale.weft and checks
# diagnostics, hovers, the code lenses, Show kernels, Run on GPU on POCL (the CPU
# OpenCL device) and that every way to run an unsaved edit runs the buffer's text and
# prints once. Screenshots and logs go to target/vscode-e2e/ (kept as CI artefacts).
#
# Needs: the debug `weft` and `weft-runner` (cargo build -p weft-cli -p weft-runtime),
# editors/vscode/weft.vsix (editors/vscode/ci.sh), Node.js 20 with npm, a C/C++
# toolchain with make and python3 (native modules, first run only), Debian's `chromium`
# and `ripgrep`, POCL. Downloads only from npm's registry (code-server, playwright-core):
# no browser download, no prebuilt binaries from GitHub.
#
# Environment: WEFT_BIN (default: $CARGO_TARGET_DIR or target, /debug/weft), CHROMIUM
# (default /usr/bin/chromium), WEFT_E2E_OUT (default target/vscode-e2e),
# WEFT_E2E_CACHE (default target/code-server).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
CODE_SERVER_VERSION=4.100.3
cache="${WEFT_E2E_CACHE:-$root/target/code-server}"
out="${WEFT_E2E_OUT:-$root/target/vscode-e2e}"
weft_bin="${WEFT_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/weft}"
runner_bin="$(dirname "$weft_bin")/weft-runner"
chromium="${CHROMIUM:-/usr/bin/chromium}"
vsix="$root/editors/vscode/weft.vsix"
example="$root/examples/scale.weft"
# One clock for this script's progress lines and e2e.js's.
export WEFT_E2E_T0_MS="${WEFT_E2E_T0_MS:-$(date +%s%3N)}"

elapsed() { echo $((($(date +%s%3N) - WEFT_E2E_T0_MS) / 1000)); }
say() { printf '[e2e %3ds] %s\n' "$(elapsed)" "$*"; }
fail() { printf '[e2e %3ds] FAIL: %s\n' "$(elapsed)" "$*" >&2; exit 1; }

for f in "$weft_bin" "$runner_bin"; do
  [ -x "$f" ] || fail "$f is missing: build it with cargo build -p weft-cli -p weft-runtime"
done
[ -f "$vsix" ] || fail "$vsix is missing: run editors/vscode/ci.sh"
[ -x "$chromium" ] || fail "$chromium is missing: apt-get install chromium (scripts/install-deps.sh)"
command -v rg >/dev/null || fail "rg is missing: apt-get install ripgrep (scripts/install-deps.sh)"
# code-server 4.100.3 declares `engines: { node: "20" }` and loads native modules built
# for the running Node.js.
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" = 20 ] || fail "code-server $CODE_SERVER_VERSION needs Node.js 20, found $(node --version)"

# ---------------------------------------------------------------- code-server, once
# `npm install code-server` runs its postinstall.sh, which installs VS Code's own
# dependencies (lib/vscode) with their install scripts: those download prebuilt
# binaries from GitHub (ripgrep, kerberos) or node headers from nodejs.org. Here every
# install runs with --ignore-scripts and we do by hand what the scripts would do:
# - argon2 (code-server's password hashing, `require`d at start even with --auth none):
#   built from source with node-pre-gyp's `rebuild --build-from-source` (its install
#   script would first try to download a prebuilt binary from GitHub);
# - lib/vscode: `npm install --omit=dev` (postinstall.sh's step), then from source with
#   node-gyp: @vscode/spdlog (the server's logger: the server fails to start without
#   it), native-watchdog (the extension host's watchdog of its parent) and node-pty (the
#   pty host the server starts; without it the terminal and its host log errors);
#   node-pty's own postinstall is skipped (it only cleans and writes
#   compile_commands.json through `npx node-gyp`, which is not installed);
# - not built: kerberos (proxy authentication), @vscode/deviceid (telemetry, off),
#   @vscode/windows-* (Windows only); @parcel/watcher comes prebuilt from npm's
#   registry (@parcel/watcher-linux-x64-glibc);
# - @vscode/ripgrep's bin/rg (its postinstall downloads it from GitHub): Debian's rg;
# - node_modules.asar -> node_modules (postinstall.sh's symlink_asar);
# - lib/vscode/extensions' only dependency (typescript, for the built-in TypeScript
#   extension) is not installed: nothing here opens TypeScript.
# node-gyp is npm's own; headers come from the installed Node.js (--nodedir), never
# downloaded.
install_code_server() {
  local nodedir
  nodedir="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
  [ -f "$nodedir/include/node/node.h" ] || fail "Node.js headers not found in $nodedir/include/node (Debian's own nodejs: apt-get install libnode-dev)"
  local node_gyp
  node_gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
  [ -f "$node_gyp" ] || fail "npm's node-gyp not found at $node_gyp"
  export npm_config_nodedir="$nodedir"
  rm -rf "$cache/node_modules" "$cache/.installed"
  mkdir -p "$cache"
  say "installing code-server@$CODE_SERVER_VERSION into $cache (npm, --ignore-scripts)"
  (cd "$cache" && npm install --no-audit --no-fund --ignore-scripts --no-save --loglevel=error "code-server@$CODE_SERVER_VERSION")
  local cs="$cache/node_modules/code-server"
  say "building argon2 from source"
  (cd "$cache/node_modules/argon2" && ../.bin/node-pre-gyp rebuild --build-from-source --nodedir="$nodedir" >"$cache/build-argon2.log" 2>&1) \
    || fail "argon2 build failed: $cache/build-argon2.log"
  say "installing VS Code's dependencies (lib/vscode, --ignore-scripts)"
  (cd "$cs/lib/vscode" && npm install --omit=dev --no-audit --no-fund --ignore-scripts --loglevel=error)
  for module in @vscode/spdlog native-watchdog node-pty; do
    say "building $module from source (node-gyp)"
    (cd "$cs/lib/vscode/node_modules/$module" && node "$node_gyp" rebuild --nodedir="$nodedir" >"$cache/build-${module//\//-}.log" 2>&1) \
      || fail "$module build failed: $cache/build-${module//\//-}.log"
  done
  mkdir -p "$cs/lib/vscode/node_modules/@vscode/ripgrep/bin"
  ln -sfn "$(command -v rg)" "$cs/lib/vscode/node_modules/@vscode/ripgrep/bin/rg"
  ln -sfn node_modules "$cs/lib/vscode/node_modules.asar"
  echo "$CODE_SERVER_VERSION" >"$cache/.installed"
}
if [ "$(cat "$cache/.installed" 2>/dev/null)" != "$CODE_SERVER_VERSION" ]; then
  install_code_server
else
  say "code-server@$CODE_SERVER_VERSION: cached in $cache"
fi
code_server=(node "$cache/node_modules/code-server/out/node/entry.js")

# playwright-core, pinned in e2e/package-lock.json; it never downloads a browser here
# (launched with Debian's chromium as executablePath).
if ! cmp -s "$here/package-lock.json" "$here/node_modules/.package-lock.json.copy" 2>/dev/null; then
  say "npm ci (playwright-core)"
  (cd "$here" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  cp "$here/package-lock.json" "$here/node_modules/.package-lock.json.copy"
fi

# POCL's CPU device: "Run on GPU" runs with weft.runner.device `cpu` (what a user sets,
# and what makes the server predict with POCL's cost profile), and the test checks that
# the run says it ran on this device.
devices_json="$("$runner_bin" devices --json)" || fail "weft-runner devices failed: is an OpenCL ICD loader installed?"
read -r pocl_device pocl_name < <(node -e '
  const d = JSON.parse(process.argv[1]);
  for (const p of d.platforms ?? []) {
    if (!/Portable Computing Language|pocl/i.test(`${p.name} ${p.vendor}`)) continue;
    const dev = (p.devices ?? []).find((x) => x.kind === "cpu");
    if (dev) { console.log(`${dev.device} ${dev.name}`); process.exit(0); }
  }
  process.exit(1);' "$devices_json") || fail "no POCL CPU device in weft-runner devices: apt-get install pocl-opencl-icd"
say "POCL device $pocl_device: $pocl_name"

# ---------------------------------------------------------------- a fresh profile per run
rm -rf "$out"
mkdir -p "$out"
run="$cache/run"
rm -rf "$run"
mkdir -p "$run/user-data/User" "$run/extensions" "$run/home" "$out/workspace"
# code-server and Chromium write under $HOME (~/.config/code-server,
# ~/.local/share/code-server, ~/.config/chromium) and leave sockets in $TMPDIR: both are
# the run's own. TMPDIR stays short (a socket's path is limited to 107 bytes).
e2e_tmp="$(mktemp -d /tmp/weft-e2e.XXXXXX)"
sandbox=(env HOME="$run/home" XDG_CONFIG_HOME="$run/home/.config" XDG_DATA_HOME="$run/home/.local/share"
  XDG_CACHE_HOME="$run/home/.cache" TMPDIR="$e2e_tmp")
pids=()
cleanup() {
  local status=$?
  # Each child was started with setsid: kill its whole process group (code-server's
  # extension host and `weft lsp`; Chromium's renderers).
  for pid in "${pids[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
  sleep 0.5
  for pid in "${pids[@]}"; do
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  rm -rf "$e2e_tmp"
  # VS Code's own logs (server, extension host, the extension's output channels).
  [ -d "$run/user-data/logs" ] && cp -r "$run/user-data/logs" "$out/vscode-logs" 2>/dev/null
  if [ "$status" -eq 0 ]; then
    say "PASS: screenshots and logs in $out"
  else
    say "FAILED (exit $status): screenshots and logs in $out" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The example is copied: the test types into it and must not touch the repository.
cp "$example" "$out/workspace/"
: >"$run/config.yaml"
cat >"$run/user-data/User/settings.json" <<EOF
{
  "weft.server.path": "$weft_bin",
  "weft.runner.path": "$runner_bin",
  "weft.runner.device": "cpu",
  "weft.trace.server": "messages",
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "extensions.ignoreRecommendations": true,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "telemetry.telemetryLevel": "off",
  "chat.commandCenter.enabled": false,
  "files.autoSave": "off",
  "git.enabled": false,
  "editor.minimap.enabled": false,
  "editor.quickSuggestions": { "other": "off", "comments": "off", "strings": "off" },
  "editor.suggestOnTriggerCharacters": false,
  "editor.acceptSuggestionOnEnter": "off",
  "editor.autoClosingBrackets": "never",
  "editor.autoClosingQuotes": "never",
  "editor.autoIndent": "none",
  "editor.hover.delay": 200
}
EOF

say "installing $vsix"
"${sandbox[@]}" "${code_server[@]}" --config "$run/config.yaml" \
  --user-data-dir "$run/user-data" --extensions-dir "$run/extensions" --install-extension "$vsix" >"$out/install-extension.log" 2>&1 \
  || { cat "$out/install-extension.log" >&2; fail "code-server --install-extension failed"; }
ls "$run/extensions" | grep -q '^weft-lang\.weft-' || fail "weft-lang.weft not in $run/extensions after --install-extension"

# ---------------------------------------------------------------- code-server and the browser
# A free port is found by binding port 0 and closing it; another process may take it
# before code-server binds it (EADDRINUSE): then code-server exits and we try another
# port, three times at most.
for attempt in 1 2 3; do
  port="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
  say "starting code-server on 127.0.0.1:$port"
  setsid "${sandbox[@]}" "${code_server[@]}" --config "$run/config.yaml" --auth none --bind-addr "127.0.0.1:$port" \
    --user-data-dir "$run/user-data" --extensions-dir "$run/extensions" \
    --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
    >"$out/code-server.log" 2>&1 &
  code_server_pid=$!
  pids+=("$code_server_pid")
  deadline=$((SECONDS + 60))
  up=0
  until curl -fs -m 2 -o /dev/null "http://127.0.0.1:$port/healthz"; do
    if ! kill -0 "$code_server_pid" 2>/dev/null; then
      grep -q EADDRINUSE "$out/code-server.log" && [ "$attempt" -lt 3 ] && continue 2
      cat "$out/code-server.log" >&2
      fail "code-server exited"
    fi
    [ "$SECONDS" -lt "$deadline" ] || { cat "$out/code-server.log" >&2; fail "code-server did not answer on port $port within 60 s"; }
    sleep 0.2
  done
  up=1
  break
done
[ "$up" = 1 ] || fail "code-server did not start"
say "code-server is up"

# The driver has its own per-step time limits; this one bounds the whole run.
setsid "${sandbox[@]}" timeout -k 5 240 node "$here/e2e.js" \
  --url "http://127.0.0.1:$port/?folder=$out/workspace" \
  --file "$out/workspace/$(basename "$example")" \
  --out "$out" --chromium "$chromium" --device "$pocl_name" &
driver_pid=$!
pids+=("$driver_pid")
set +e
wait "$driver_pid"
status=$?
set -e
[ "$status" -eq 124 ] && fail "the browser test ran past 240 s"
[ "$status" -eq 0 ] || exit "$status"
