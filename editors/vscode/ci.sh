#!/usr/bin/env bash
# Builds, tests and packages the VS Code extension. Called by the repository's CI.
# Needs Node.js >= 20 and npm; VS Code itself is not needed (and not available in CI):
# the extension is compiled, its grammar tested and the .vsix packaged.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
npm run compile
npm test
npx @vscode/vsce package --out weft.vsix
echo "editors/vscode: built $(pwd)/weft.vsix"
