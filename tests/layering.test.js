// The source tree's layers only look down: each C directory of src/ includes headers of its own
// directory and of lower layers only, the shipped JS (js/) imports nothing from the dev folders,
// and no unit of src/, js/ or web/ takes part in an import circle (a C file and its header are one
// unit). The order is docs/architecture.md's ("Layers").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { ROOT } from './helpers.js';
import { importGraph, circles, siblingImports } from './import-graph.js';

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

test('no import circle in src/ (C units: a .c and its .h) or in js/ (ES modules, JSDoc import() types too)', () => {
  for (const dir of ['src', 'js']) assert.deepEqual(circles(importGraph(ROOT, [dir])), [], `${dir}/: every unit only looks one way`);
});

// The page (web/): a section imports web/core.js, web/widgets/ and the package, never another section.
test('web/: no import circle, and no web/sections/* module imports another', () => {
  const g = importGraph(ROOT, ['web']);
  assert.deepEqual(circles(g), []);
  assert.deepEqual(siblingImports(g, 'web/sections/'), []);
});

test('the circle check finds circles in C (through .c files whose headers include each other) and JS, and sibling imports', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mlpscope-graph-'));
  const put = (f, text) => { fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true }); fs.writeFileSync(path.join(dir, f), text); };
  put('src/io/a.h', ''); put('src/io/a.c', '#include "a.h"\n#include "b.h"\n'); put('src/io/b.h', ''); put('src/io/b.c', '#include "a.h"\n');
  put('src/io/c.c', '#include "a.h"\n');
  put('js/x.js', "import { y } from './y.js';\n"); put('js/y.js', "/** @param {import('./x.js').T} t */\nexport const y = 1;\n"); put('js/z.js', "export { y } from './y.js';\n");
  put('web/sections/p.js', "import { q } from './q.js';\n"); put('web/sections/q.js', 'export const q = 1;\n');
  try {
    assert.deepEqual(circles(importGraph(dir, ['src'])), [['src/io/a', 'src/io/b']]);
    assert.deepEqual(circles(importGraph(dir, ['js'])), [['js/x.js', 'js/y.js']]);
    assert.deepEqual(siblingImports(importGraph(dir, ['web']), 'web/sections/'), ['web/sections/p.js -> web/sections/q.js']);
  } finally { fs.rmSync(dir, { recursive: true, force: true }); }
});
