// Adding a statistic is one row in MS_STAT_LIST (src/model/hooks.h) plus its computation in
// src/engine/forward.c, and nothing else: the test builds of the engine carry one such row of their
// own (resid_post_max, compiled only with -DMS_TEST_EXPORTS), and here it reaches the API, the
// types, the CLI's table and the Worker although no JS or type file names it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createEngine, loadModel, loadModelInWorker } from '../js/index.js';
import { statsTable, statsJson } from '../js/stats-table.js';
import { renderEngineTypes, withBlock, DTS } from '../tools/gen-types.mjs';
import { ROOT, DEMO, tmpDir } from './helpers.js';

const NAME = 'resid_post_max';

test('the test build lists its own statistic; the release build does not', async () => {
  const [rel, tst] = [await createEngine(), await createEngine({ build: 'test' })];
  assert.equal(rel.info.stats.some((s) => s.name === NAME), false);
  const row = tst.info.stats.find((s) => s.name === NAME);
  assert.deepEqual({ type: row.type, shape: row.shape, when: row.when }, { type: 'f32', shape: ['layer', 'token'], when: 'always' });
  for (const s of rel.info.stats) assert.ok(tst.info.stats.some((t) => t.name === s.name && t.id === s.id), `${s.name} keeps its place`);
});

test('API and Worker: forward() returns it, [layer][token], equal to max |hook_resid_post| computed here', async () => {
  const model = await loadModel(DEMO, { build: 'test', threads: 1 });
  const w = await loadModelInWorker(DEMO, { build: 'test', threads: 1 });
  try {
    const ids = model.tokenizer.encode('I flew from Paris to'), L = model.nLayers, H = model.config.hidden_size;
    const hooks = Array.from({ length: L }, (_, l) => `blocks.${l}.hook_resid_post`);
    const r = model.forward(ids, { hooks });
    assert.equal(r.stats[NAME].length, L);
    for (let l = 0; l < L; l++) {
      const x = r.hooks[hooks[l]];
      const want = Float32Array.from(ids, (_, t) => Math.max(...x.subarray(t * H, (t + 1) * H).map(Math.abs)));
      assert.deepEqual(r.stats[NAME][l], want, `layer ${l}`);
    }
    const wr = await w.forward(ids);
    assert.deepEqual(wr.stats[NAME], r.stats[NAME], 'the Worker returns it too');
    const g = model.generate(ids, { maxTokens: 3, stats: true });
    let step;
    while (!(step = await g.next()).done);
    assert.equal(step.value.stats[NAME][0].length, step.value.stats.T, 'and generate()\'s statistics, over every token read');
  } finally { model.dispose(); await w.dispose(); }
});

test('the CLI table and --json print it, from the engine\'s list', async () => {
  const model = await loadModel(DEMO, { build: 'test', threads: 1 });
  try {
    const st = model.forward(model.tokenizer.encode('Lily went to Paris')).stats;
    const layerMs = Array.from({ length: model.nLayers }, () => [0]);
    const [head, ...rows] = statsTable(model.e.info, st, layerMs);
    const cols = head.trim().split(/\s+/);
    const at = cols.indexOf(NAME);
    assert.ok(at > 0, head);
    rows.forEach((row, l) => {
      const mean = st[NAME][l].reduce((a, b) => a + b, 0) / st[NAME][l].length;
      assert.equal(row.trim().split(/\s+/)[at], mean.toFixed(3), `layer ${l}`);
    });
    assert.deepEqual(statsJson(model.e.info, st)[NAME], st[NAME].map((r) => Array.from(r)));
  } finally { model.dispose(); }
});

test('the types: generated from the test build, Stats has the field (tsc --strict accepts a use of it)', async () => {
  const tst = await createEngine({ build: 'test' });
  const block = renderEngineTypes(tst.info);
  assert.match(block, new RegExp(`^  ${NAME}: Float32Array\\[\\];$`, 'm'));
  const dir = tmpDir('stat-types');
  fs.writeFileSync(path.join(dir, 'index.d.ts'), withBlock(fs.readFileSync(DTS, 'utf8'), block));
  fs.writeFileSync(path.join(dir, 'use.ts'), `import type { Stats, StatName } from './index.js';\n` +
    `export const f = (s: Stats): number => s.${NAME}[0][0];\nexport const n: StatName = '${NAME}';\n`);
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
    '--lib', 'es2022,dom,esnext.disposable', path.join(dir, 'use.ts')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
