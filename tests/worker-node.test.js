// loadModelInWorker() in Node (node:worker_threads): the same numbers as loadModel() in the main
// thread, progress, generation, the tools that run inside the worker, typed errors, abort, and a
// main thread that keeps running while the worker computes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs';
import { loadModel, loadModelInWorker, demoModelUrl, findFeatureNeurons, neuronTopActivations } from '../js/index.js';
import { ROOT, DEMO } from './helpers.js';

test('Node worker: same logits, hooks and greedy ids as in-process, tools inside the worker', async () => {
  const dir = DEMO, prompt = 'Lily went to Paris with her mom.';
  const progress = [];
  const wm = await loadModelInWorker(dir, { threads: 1, onProgress: (p) => progress.push(p) });
  const local = await loadModel(dir, { threads: 1 });
  try {
    assert.equal(progress.at(-1).loaded, progress.at(-1).total);
    const ids = local.tokenizer.encode(prompt), want = [];
    assert.deepEqual(await wm.tokenizer.encode(prompt), ids);
    for await (const t of local.generate(ids, { maxTokens: 12, stop: [] })) want.push(t.id);
    const seq = [...ids, ...want];
    const opts = { hooks: ['blocks.2.mlp.hook_post'], logits: 'all' };
    const fw = await wm.forward(seq, opts), lw = local.forward(seq, opts);
    assert.equal(fw.logits.constructor.name, 'Float32Array');
    assert.deepEqual(Array.from(fw.logits), Array.from(lw.logits));
    assert.deepEqual(Array.from(fw.hooks['blocks.2.mlp.hook_post']), Array.from(lw.hooks['blocks.2.mlp.hook_post']));
    assert.deepEqual(Array.from(fw.stats.mlp_out_l2[3]), Array.from(lw.stats.mlp_out_l2[3]));
    const gen = [];
    for await (const t of wm.generate(ids, { maxTokens: 12, stop: [] })) gen.push(t.id);
    assert.deepEqual(gen, want);
    const texts = ['Once upon a time, there was a little girl.', 'She liked to play in the park.'];
    assert.deepEqual(await wm.neuronTopActivations(texts, { layer: 1, neuron: 3, k: 4 }), neuronTopActivations(local, texts, { layer: 1, neuron: 3, k: 4 }));
    const probes = texts.map((text) => ({ text, spans: [{ start: 0, end: 4, label: 'thing' }] }));
    const fo = { features: { thing: { pos: ['thing'] } }, top: 1 };
    const seen = [];
    assert.deepEqual(await wm.findFeatureNeurons([...probes, ...probes], { ...fo, onProgress: (p) => seen.push(p) }), findFeatureNeurons(local, [...probes, ...probes], fo));
    assert.deepEqual(seen.at(-1), { done: 4, total: 4 });
    // the main thread keeps running while the worker computes: a timer set just after a forward
    // starts runs while it is still pending (impossible if it ran on this thread; 20 tries)
    let freeWhileBusy = 0;
    for (let k = 0; k < 20; k++) {
      let done = false;
      const p = wm.forward(seq, { logits: 'all' }).then(() => { done = true; });
      await new Promise((res) => setTimeout(res, 0));
      if (!done) freeWhileBusy++;
      await p;
    }
    assert.ok(freeWhileBusy >= 1, `a timer ran while a forward was pending in ${freeWhileBusy} of 20 tries`);
    await assert.rejects(wm.forward([1, 99999]), (e) => e.code === 'E_TOKEN');
  } finally { await wm.dispose(); local.dispose(); }
});

test('Node worker: a relative folder, the shipped demo model, typed load errors, abort', async () => {
  const rel = path.relative(process.cwd(), path.join(ROOT, 'weights/demo'));
  const a = await loadModelInWorker(rel), b = await loadModelInWorker(demoModelUrl, { threads: 1 });
  try {
    const ids = await a.tokenizer.encode('I flew from Paris to');
    assert.deepEqual(Array.from((await a.forward(ids)).logits), Array.from((await b.forward(ids)).logits));
    assert.equal(b.config.hidden_size, JSON.parse(fs.readFileSync(path.join(DEMO, 'manifest.json'), 'utf8')).config.hidden_size);
  } finally { await a.dispose(); await b.dispose(); }
  await assert.rejects(loadModelInWorker(path.join(ROOT, 'no-such-folder')), (e) => e.code === 'E_MANIFEST' && /no-such-folder/.test(e.message));
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(loadModelInWorker(demoModelUrl, { signal: ac.signal }), (e) => e.code === 'E_ABORTED');
});

test('Node worker: generate() returns the same summary as in-process (finish reason, token counts, statistics)', async () => {
  const wm = await loadModelInWorker(DEMO, { threads: 1 }), local = await loadModel(DEMO, { threads: 1 });
  try {
    const run = async (m) => { const g = m.generate('I flew from Paris to', { maxTokens: 4, stats: true, stop: [] }); let s; while (!(s = await g.next()).done); return s.value; };
    const a = await run(wm), b = await run(local);
    assert.equal(a.finishReason, 'length');
    assert.deepEqual([a.usage.promptTokens, a.usage.generatedTokens], [b.usage.promptTokens, b.usage.generatedTokens]);
    assert.deepEqual(Array.from(a.stats.mlp_ratio[2]), Array.from(b.stats.mlp_ratio[2]));
    assert.equal(wm.lastGeneration, a);
  } finally { await wm.dispose(); local.dispose(); }
});
