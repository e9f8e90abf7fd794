// Unit tests for src/entries.ts (compiled to out/entries.js), run with `node --test`.
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { entriesOf, entryAt } = require('../../out/entries.js');

const src = [
  '-- | Dot product.', // 0
  '-- ==', // 1
  '-- input { [1f32] [2f32] }', // 2
  'entry dot (xs: [n]f32) (ys: [n]f32) : f32 =', // 3
  '  reduce (+) 0 (map2 (*) xs ys)', // 4
  '', // 5
  "def sq' (x: f32) : f32 = x * x", // 6
  '', // 7
  "entry norm2' (xs: [n]f32) : f32 =", // 8
  "  reduce (+) 0 (map sq' xs)", // 9
  'import "lib"', // 10
].join('\n');

test('entriesOf finds top-level entries with primes', () => {
  assert.deepStrictEqual(entriesOf(src), [
    { name: 'dot', line: 3 },
    { name: "norm2'", line: 8 },
  ]);
});

test('entryAt: the enclosing entry', () => {
  assert.strictEqual(entryAt(src, 4, 'reduce'), 'dot');
  assert.strictEqual(entryAt(src, 9, 'map'), "norm2'");
  assert.strictEqual(entryAt(src, 3, 'xs'), 'dot');
});

test('entryAt: the entry named under the cursor wins', () => {
  assert.strictEqual(entryAt(src, 4, "norm2'"), "norm2'");
});

test('entryAt: none inside a def, an import or before any declaration', () => {
  assert.strictEqual(entryAt(src, 6, 'x'), undefined);
  assert.strictEqual(entryAt(src, 10, 'lib'), undefined);
  assert.strictEqual(entryAt(src, 1, undefined), undefined);
});

test('entryAt: the test block above an entry is not inside it', () => {
  assert.strictEqual(entryAt(src, 2, 'input'), undefined);
});
