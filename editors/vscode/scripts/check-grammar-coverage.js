#!/usr/bin/env node
// Every scope the grammar can produce must be asserted by at least one grammar test
// (test/grammar/*.weft), so no lexical element of LANGUAGE.md goes untested.
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..');
const grammar = JSON.parse(fs.readFileSync(path.join(root, 'syntaxes/weft.tmLanguage.json'), 'utf8'));

// Scopes that need no assertion of their own.
const exempt = new Set([
  'invalid.illegal.annotation.weft', // a stray `@`
]);

const produced = new Set();
const walk = (node) => {
  if (Array.isArray(node)) return node.forEach(walk);
  if (!node || typeof node !== 'object') return;
  if (typeof node.name === 'string') node.name.split(/\s+/).forEach((s) => produced.add(s));
  for (const v of Object.values(node)) if (typeof v === 'object') walk(v);
};
walk(grammar.repository);
walk(grammar.patterns);

const dir = path.join(root, 'test', 'grammar');
const asserted = new Set();
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.weft'))) {
  for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split(/\r?\n/)) {
    const m = /^--\s*(?:\^+|<~*-+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const required = m[1].split(/\s+-\s*/)[0];
    required.split(/\s+/).filter(Boolean).forEach((s) => asserted.add(s));
  }
}

const missing = [...produced].filter((s) => !asserted.has(s) && !exempt.has(s)).sort();
if (missing.length) {
  console.error('Scopes the grammar produces but no grammar test asserts:');
  missing.forEach((s) => console.error(`  ${s}`));
  process.exit(1);
}
console.log(`grammar coverage: all ${produced.size} scopes are asserted by test/grammar/*.weft`);
