// A gated neuron's sign quadrants (neuronQuadrants) against a brute-force count from the captured
// hooks, computed here in float64 from mlp.hook_pre and mlp.hook_pre_linear; one forward pass per
// text; the Worker gives the same; bad arguments are typed errors naming the field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadModel, loadModelInWorker, neuronQuadrants, MlpscopeError } from '../js/index.js';
import { ROOT } from './helpers.js';

const DEMO = path.join(ROOT, 'weights/demo');
const TEXTS = ['我上周从巴黎飞到东京。饭菜一点也不好。', 'I flew from Paris to Tokyo last week. The food was not bad at all.',
  '从奥斯陆开往罗马的火车12点到站。', 'Nobody saw the cat near the museum in Berlin.', 'for i in range(10): print(i)'];
const model = await loadModel(DEMO);
const I = model.config.intermediate_size;

test('quadrant counts, means, output shares and top tokens equal a brute-force pass over the hooks', () => {
  for (const [layer, neuron] of [[3, 249], [0, 5], [model.nLayers - 1, I - 1]]) {
    let calls = 0;
    const fwd = model.forward.bind(model);
    model.forward = (...a) => { calls++; return fwd(...a); };
    let r;
    try { r = neuronQuadrants(model, TEXTS, { layer, neuron, k: 3 }); } finally { delete model.forward; }
    assert.equal(calls, TEXTS.length, 'one forward pass per text: the three hooks come from the same pass');
    // brute force: every token's (g, u, y), in float64 sums
    const rows = [];
    TEXTS.forEach((text, p) => {
      const ids = model.tokenizer.encode(text, { addSpecial: true });
      const h = model.forward(ids, { stats: false, logits: 'none', hooks: [`blocks.${layer}.mlp.hook_pre`, `blocks.${layer}.mlp.hook_pre_linear`, `blocks.${layer}.mlp.hook_post`] }).hooks;
      for (let t = 0; t < ids.length; t++) rows.push({ p, t, g: h[`blocks.${layer}.mlp.hook_pre`][t * I + neuron], u: h[`blocks.${layer}.mlp.hook_pre_linear`][t * I + neuron], y: h[`blocks.${layer}.mlp.hook_post`][t * I + neuron] });
    });
    assert.equal(r.tokens, rows.length);
    const abs = rows.reduce((s, x) => s + Math.abs(x.y), 0);
    let counted = 0;
    for (const q of r.quadrants) {
      const mine = rows.filter((x) => (q.gate === '+' ? x.g > 0 : x.g < 0) && (q.up === '+' ? x.u > 0 : x.u < 0));
      counted += mine.length;
      assert.equal(q.count, mine.length, `L${layer} #${neuron} g${q.gate}u${q.up}: count`);
      assert.equal(q.frequency, mine.length / rows.length);
      const mean = (f) => (mine.length ? mine.reduce((s, x) => s + f(x), 0) / mine.length : 0);
      for (const [key, f] of [['meanGate', (x) => x.g], ['meanUp', (x) => x.u], ['meanOutput', (x) => x.y]]) assert.ok(Math.abs(q[key] - mean(f)) <= 1e-9 * (1 + Math.abs(mean(f))), `${key} ${q[key]} vs ${mean(f)}`);
      assert.ok(Math.abs(q.share - mine.reduce((s, x) => s + Math.abs(x.y), 0) / abs) < 1e-12);
      const best = [...mine].sort((a, b) => Math.abs(b.y) - Math.abs(a.y)).slice(0, 3);
      assert.deepEqual(q.top.map((x) => [x.text, x.token, x.activation]), best.map((x) => [x.p, x.t, x.y]));
      // the output agrees with its definition silu(g)·u (float rounding of the engine's own silu)
      for (const x of mine) assert.ok(Math.abs(x.y - (x.g / (1 + Math.exp(-x.g))) * x.u) <= 1e-4 * (1 + Math.abs(x.y)));
    }
    assert.equal(counted + r.zero, rows.length);
    assert.ok(Math.abs(r.quadrants.reduce((s, q) => s + q.share, 0) - 1) < 1e-9 || r.zero > 0);
    for (const q of r.quadrants) for (const x of q.top) assert.ok(!`${x.before}${x.piece}${x.after}`.includes('\uFFFD'));
  }
});

test('the Worker gives the same quadrants', async () => {
  const w = await loadModelInWorker(DEMO);
  try { assert.deepEqual(await w.neuronQuadrants(TEXTS, { layer: 3, neuron: 249, k: 2 }), neuronQuadrants(model, TEXTS, { layer: 3, neuron: 249, k: 2 })); } finally { await w.dispose(); }
});

test('bad arguments are typed errors naming the field', () => {
  const bad = (texts, opts, re) => assert.throws(() => neuronQuadrants(model, texts, opts), (e) => e instanceof MlpscopeError && e.code === 'E_ARG' && re.test(e.message));
  bad(TEXTS, { layer: 99, neuron: 0 }, /layer 99/);
  bad(TEXTS, { layer: 0, neuron: I }, new RegExp(`neuron ${I}`));
  bad(TEXTS, { layer: 0, neuron: 1.5 }, /neuron 1.5/);
  bad([], { layer: 0, neuron: 0 }, /texts/);
  bad('text', { layer: 0, neuron: 0 }, /texts/);
  bad(TEXTS, null, /options/);
  bad(TEXTS, { layer: 0, neuron: 0, k: -1 }, /k must/);
});

test('mlpscope neuron --quadrants prints the same quadrants (--json) and a table', async () => {
  const { execFileSync } = await import('node:child_process');
  const fs = await import('node:fs');
  const { CLI, tmpDir } = await import('./helpers.js');
  const f = path.join(tmpDir('quad'), 'texts.txt');
  fs.writeFileSync(f, TEXTS.join('\n'));
  const cli = (...a) => execFileSync(process.execPath, [CLI, 'neuron', DEMO, '--layer', '3', '--neuron', '249', '--texts', f, '--quadrants', ...a], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(cli('--json')), JSON.parse(JSON.stringify(neuronQuadrants(model, TEXTS, { layer: 3, neuron: 249, k: 3 }))));
  const table = cli();
  assert.match(table, /^ {2}- {3}- +\d+ /m);
  assert.equal(table.trim().split('\n').length, 6);
});
