#!/usr/bin/env node
// Prints the TextMate scopes of every token of a Weft file (or of stdin), one token a
// line: `line:col  "text"  scopes`. A helper for writing grammar-test assertions:
//   node scripts/dump-tokens.js test/grammar/literals.weft
'use strict';
const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

async function main() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== 'source.weft') return null;
      const file = path.join(__dirname, '..', 'syntaxes', 'weft.tmLanguage.json');
      return vsctm.parseRawGrammar(fs.readFileSync(file, 'utf8'), file);
    },
  });
  const grammar = await registry.loadGrammar('source.weft');
  const text = process.argv[2] ? fs.readFileSync(process.argv[2], 'utf8') : fs.readFileSync(0, 'utf8');
  let stack = vsctm.INITIAL;
  text.split(/\r?\n/).forEach((line, i) => {
    const r = grammar.tokenizeLine(line, stack);
    for (const t of r.tokens) {
      const s = line.substring(t.startIndex, t.endIndex);
      if (s.trim() === '') continue;
      console.log(`${i + 1}:${t.startIndex}\t${JSON.stringify(s)}\t${t.scopes.slice(1).join(' ')}`);
    }
    stack = r.ruleStack;
  });
}
main().catch((e) => { console.error(e); process.exit(1); });
