#!/usr/bin/env node
// Lints the extension's JSON: each file parses, the grammar's includes all resolve,
// every regex compiles under Oniguruma (the engine VS Code uses), and package.json
// contributes the commands and settings the extension code relies on.
'use strict';
const fs = require('fs');
const path = require('path');
const oniguruma = require('vscode-oniguruma');

const root = path.join(__dirname, '..');
let failures = 0;
function fail(msg) {
  console.error(`FAIL ${msg}`);
  failures++;
}
function readJson(rel) {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, rel), 'utf8'));
  } catch (e) {
    fail(`${rel}: ${e.message}`);
    return {};
  }
}

async function main() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
  await oniguruma.loadWASM(wasm);
  const compiles = (re, where) => {
    try {
      new oniguruma.OnigScanner([re]).dispose();
    } catch (e) {
      fail(`${where}: regex does not compile: ${re}: ${e.message}`);
    }
  };

  const pkg = readJson('package.json');
  const grammar = readJson('syntaxes/weft.tmLanguage.json');
  const langConfig = readJson('language-configuration.json');

  // Grammar: includes resolve, regexes compile.
  const repo = grammar.repository || {};
  const walk = (node, where) => {
    if (Array.isArray(node)) {
      node.forEach((n, i) => walk(n, `${where}[${i}]`));
      return;
    }
    if (!node || typeof node !== 'object') return;
    for (const key of ['match', 'begin', 'end', 'while']) {
      if (typeof node[key] === 'string') compiles(node[key], `${where}.${key}`);
    }
    if (typeof node.include === 'string' && node.include.startsWith('#') && !(node.include.slice(1) in repo)) {
      fail(`${where}: include ${node.include} has no repository entry`);
    }
    for (const [k, v] of Object.entries(node)) {
      if (typeof v === 'object') walk(v, `${where}.${k}`);
    }
  };
  walk(grammar, 'grammar');
  if (grammar.scopeName !== 'source.weft') fail('grammar scopeName must be source.weft');

  // Language configuration regexes are JavaScript regexes.
  const ir = langConfig.indentationRules || {};
  for (const [k, v] of Object.entries({ ...ir, wordPattern: langConfig.wordPattern })) {
    try {
      new RegExp(v);
    } catch (e) {
      fail(`language-configuration.json ${k}: ${e.message}`);
    }
  }
  if (!langConfig.comments || langConfig.comments.lineComment !== '--') fail('line comment must be --');
  if (!new RegExp(langConfig.wordPattern).exec("x'")?.[0]?.endsWith("'")) fail("wordPattern must allow ' in identifiers");

  // package.json: what src/extension.ts expects.
  const commands = (pkg.contributes?.commands || []).map((c) => c.command);
  for (const c of ['weft.restartServer', 'weft.runEntry', 'weft.showGeneratedKernel']) {
    if (!commands.includes(c)) fail(`package.json does not contribute command ${c}`);
  }
  for (const c of commands) {
    if (c.startsWith('weft.server.')) fail(`client command ${c} uses the server's weft.server. prefix`);
  }
  const props = pkg.contributes?.configuration?.properties || {};
  for (const p of ['weft.server.path', 'weft.server.extraEnv', 'weft.trace.server']) {
    if (!(p in props)) fail(`package.json does not contribute setting ${p}`);
  }
  if (!(pkg.activationEvents || []).includes('onLanguage:weft')) fail('activation event onLanguage:weft missing');

  if (failures) {
    console.error(`check-json: ${failures} problem(s)`);
    process.exit(1);
  }
  console.log('check-json: package.json, language configuration and grammar are consistent');
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
