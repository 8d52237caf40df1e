// The source tree's layers only look down: each C directory of src/ includes headers of its own
// directory and of lower layers only, and the shipped JS (js/) imports nothing from the dev
// folders. The order is docs/architecture.md's ("Layers").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.js';

// lower number = lower layer; directories with the same number must not include each other
const RANK = { util: 0, kernels: 1, tokenizer: 1, model: 2, layers: 3, io: 3, engine: 4, analysis: 5, api: 6 };

function filesUnder(dir, re) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? filesUnder(p, re) : re.test(d.name) ? [p] : [];
  });
}

/** the directory an include of file f (under src/) points to, and whether that goes uphill */
function includeTarget(src, f, inc) {
  const from = path.relative(src, f).split(path.sep)[0];
  const to = path.relative(src, path.resolve(path.dirname(f), inc)).split(path.sep)[0];
  return { from, to, uphill: to !== from && !(RANK[to] < RANK[from]) };
}

test('C: every #include of src/ goes to the same directory or a lower layer', () => {
  const src = path.join(ROOT, 'src'), bad = [];
  assert.deepEqual(fs.readdirSync(src).sort(), Object.keys(RANK).sort(), 'every directory of src/ has a place in the order');
  for (const f of filesUnder(src, /\.[ch]$/)) {
    for (const m of fs.readFileSync(f, 'utf8').matchAll(/^#include "([^"]+)"/gm)) {
      const { from, to, uphill } = includeTarget(src, f, m[1]);
      if (uphill) bad.push(`${path.relative(ROOT, f)} includes ${m[1]} (${from} -> ${to})`);
    }
  }
  assert.deepEqual(bad, []);
});

test('JS: the package (js/, bin/) imports nothing from tools/, web/, tests/ or bench/', () => {
  const bad = [];
  for (const f of [...filesUnder(path.join(ROOT, 'js'), /\.m?js$/), ...filesUnder(path.join(ROOT, 'bin'), /\.m?js$/)])
    for (const m of fs.readFileSync(f, 'utf8').matchAll(/(?:from|import\()\s*['"]([^'"]+)['"]/g))
      if (/^\.\.?\//.test(m[1]) && /^(tools|web|tests|bench)\//.test(path.relative(ROOT, path.resolve(path.dirname(f), m[1]))))
        bad.push(`${path.relative(ROOT, f)} imports ${m[1]}`);
  assert.deepEqual(bad, []);
});

test('the rule reports the uphill includes this tree used to have, and allows downhill and same-directory ones', () => {
  const src = path.join(ROOT, 'src'), at = (f) => path.join(src, f);
  assert.equal(includeTarget(src, at('layers/layers.h'), '../engine/state.h').uphill, true);
  assert.equal(includeTarget(src, at('engine/forward.h'), '../analysis/run.h').uphill, true);
  assert.equal(includeTarget(src, at('io/convert.c'), '../layers/layers.h').uphill, true); // same rank, other directory
  assert.equal(includeTarget(src, at('layers/layers.h'), '../model/state.h').uphill, false);
  assert.equal(includeTarget(src, at('engine/forward.c'), 'forward.h').uphill, false);
});
