// Which neuron writes a set of next tokens (neuronsForTokens), a neuron pushed (pushNeuron), the
// tokens a labelled feature starts with (featureTokens): each against a brute-force computation
// here (every knock-out run by hand, the token sets found by hand, softmax sums in float64); the
// identities "a push of 0 changes nothing" and "knocking out a neuron that is already 0 changes
// nothing"; the page's running example; the Worker gives the same; bad arguments are typed errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadModel, loadModelInWorker, featureTokens, neuronsForTokens, neuronTopActivations, pushNeuron, tokenSetProbability, MlpscopeError } from '../js/index.js';
import { probes } from '../js/corpus.js';
import { ROOT } from './helpers.js';

const DEMO = path.join(ROOT, 'weights/demo');
const model = await loadModel(DEMO);
const P = probes(9, 160); // the page's probe sentences (tools/build-site.mjs)
const I = model.config.intermediate_size;

/** softmax in float64, summed over a set */
function prob(logits, set) {
  const mx = Math.max(...logits);
  let z = 0, s = 0;
  for (let i = 0; i < logits.length; i++) z += Math.exp(logits[i] - mx);
  for (const id of set) s += Math.exp(logits[id] - mx);
  return s / z;
}
const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-12 + 1e-9 * Math.abs(b), `${what}: ${a} vs ${b}`);

test('featureTokens: the first token of every labelled span, found by hand, per language', () => {
  for (const lang of ['zh', 'en', undefined]) {
    const want = new Set();
    for (const p of P) {
      if (lang && p.lang !== lang) continue;
      const ids = model.tokenizer.encode(p.text, { addSpecial: true });
      // by hand: the text decoded up to each token (a character still incomplete does not count)
      const ends = ids.map((_, t) => model.tokenizer.decode(ids.slice(0, t + 1)).replace(/\uFFFD+$/, '').length);
      for (const s of p.spans) if (s.label === 'city') {
        const t = ends.findIndex((b, i) => (i ? ends[i - 1] : 0) <= s.start && s.start < b);
        assert.ok(t >= 0, `a token covers ${JSON.stringify(p.text.slice(s.start, s.end))}`);
        want.add(ids[t]);
      }
    }
    const got = featureTokens(model, P, { label: 'city', ...(lang ? { lang } : {}) });
    assert.deepEqual(got, [...want].sort((a, b) => a - b), `lang ${lang}`);
    assert.ok(got.length >= 20, `${got.length} city tokens (${lang})`);
  }
  assert.deepEqual(featureTokens(model, P, { label: 'no-such-label' }), []);
  // every city token starts a city somewhere: a token never seen at a span start is not in the set
  const zh = new Set(featureTokens(model, P, { label: 'city', lang: 'zh' }));
  assert.ok(!zh.has(model.tokenizer.encode('饭')[0]), '饭 is not a city start');
});

test('tokenSetProbability is the softmax summed in float64; all tokens sum to 1', () => {
  const logits = model.forward(model.tokenizer.encode('我上周从巴黎飞到'), { stats: false }).logits;
  const all = Array.from({ length: logits.length }, (_, i) => i);
  close(tokenSetProbability(logits, all), 1, 'all tokens');
  close(tokenSetProbability(logits, [3, 17, 400]), prob(logits, [3, 17, 400]), 'three tokens');
});

test('neuronsForTokens: candidates are the top |mlp.hook_post| at the last token per layer, each knock-out equals one by hand, sorted by the drop', () => {
  const text = '我上周从巴黎飞到', ids = model.tokenizer.encode(text, { addSpecial: true }), T = ids.length;
  const tokens = featureTokens(model, P, { label: 'city', lang: 'zh' });
  let calls = 0;
  const fwd = model.forward.bind(model);
  model.forward = (...a) => { calls++; return fwd(...a); };
  let r;
  try { r = neuronsForTokens(model, text, { tokens, perLayer: 4 }); } finally { delete model.forward; }
  assert.equal(r.passes, calls, 'passes counts the forward passes');
  assert.equal(r.passes, 1 + r.candidates.length);
  const base = model.forward(ids, { stats: false }).logits;
  close(r.p, prob(base, tokens), 'the probability before');
  const hooks = model.forward(ids, { stats: false, logits: 'none', hooks: Array.from({ length: model.nLayers }, (_, l) => `blocks.${l}.mlp.hook_post`) }).hooks;
  for (let l = 0; l < model.nLayers; l++) {
    const row = hooks[`blocks.${l}.mlp.hook_post`].subarray((T - 1) * I, T * I);
    const mine = r.candidates.filter((c) => c.layer === l);
    assert.equal(mine.length, 4, `layer ${l}: 4 candidates`);
    const cut = [...row].map(Math.abs).sort((a, b) => b - a)[3];
    for (const c of mine) {
      assert.equal(c.activation, row[c.neuron], `L${l} #${c.neuron}: its activation at the last token`);
      assert.ok(Math.abs(row[c.neuron]) >= cut, `L${l} #${c.neuron} is among the 4 largest |activations|`);
    }
  }
  for (const c of r.candidates.slice(0, 6)) {
    const off = model.forward(ids, { stats: false, interventions: [{ hook: `blocks.${c.layer}.mlp.hook_post`, neurons: [c.neuron], op: 'set', value: 0 }] }).logits;
    close(c.p, prob(off, tokens), `L${c.layer} #${c.neuron} switched off`);
    close(c.delta, c.p - r.p, 'delta');
  }
  for (let i = 1; i < r.candidates.length; i++) assert.ok(r.candidates[i - 1].delta <= r.candidates[i].delta, 'sorted by the drop, largest first');
});

test('neuronsForTokens with every neuron of a layer as a candidate finds the brute-force best of that layer', () => {
  const text = 'I flew from Paris to', ids = model.tokenizer.encode(text, { addSpecial: true });
  const tokens = featureTokens(model, P, { label: 'city', lang: 'en' });
  const r = neuronsForTokens(model, text, { tokens, perLayer: 64 });
  const base = prob(model.forward(ids, { stats: false }).logits, tokens);
  const L = model.nLayers - 1;
  // brute force over the 64 most active neurons of the last layer, chosen here from the hook
  const T = ids.length, row = model.forward(ids, { stats: false, logits: 'none', hooks: [`blocks.${L}.mlp.hook_post`] }).hooks[`blocks.${L}.mlp.hook_post`].subarray((T - 1) * I, T * I);
  const top = [...row.keys()].sort((a, b) => Math.abs(row[b]) - Math.abs(row[a]) || a - b).slice(0, 64);
  let best = null;
  for (const j of top) {
    const d = prob(model.forward(ids, { stats: false, interventions: [{ hook: `blocks.${L}.mlp.hook_post`, neurons: [j], op: 'set', value: 0 }] }).logits, tokens) - base;
    if (!best || d < best.d) best = { j, d };
  }
  const mine = r.candidates.filter((c) => c.layer === L)[0];
  assert.equal(mine.neuron, best.j, 'the same neuron');
  close(mine.delta, best.d, 'the same drop');
});

test('the page\'s running example: the neuron that writes "a city comes next" after 我上周从巴黎飞到, and pushing it raises city tokens after 饭菜一点也不', () => {
  const tokens = featureTokens(model, P, { label: 'city', lang: 'zh' });
  const r = neuronsForTokens(model, '我上周从巴黎飞到', { tokens, perLayer: 8 });
  assert.ok(r.p > 0.5, `a city is the likely next word (${r.p})`);
  const w = r.candidates[0];
  assert.ok(w.delta < 0, 'switching the writer off lowers the city probability');
  const push = pushNeuron(model, '饭菜一点也不', { layer: w.layer, neuron: w.neuron, tokens, values: [1, 2, 4].map((k) => k * w.activation) });
  assert.ok(push.before.p < 0.01, `no city expected before the push (${push.before.p})`);
  const ps = push.after.map((a) => a.p);
  assert.ok(ps[0] < ps[1] && ps[1] < ps[2] && ps[2] > 10 * push.before.p, `pushing harder raises city tokens: ${push.before.p} → ${ps.join(', ')}`);
});

test('pushNeuron: each value equals an add intervention run by hand; a push of 0 changes nothing; top tokens are the softmax top', () => {
  const ids = model.tokenizer.encode('The food was', { addSpecial: true }), tokens = featureTokens(model, P, { label: 'city', lang: 'en' });
  const r = pushNeuron(model, ids, { layer: 10, neuron: 442, tokens, values: [0, -50, 30], k: 4 });
  const base = model.forward(ids, { stats: false }).logits;
  close(r.before.p, prob(base, tokens), 'before');
  assert.equal(r.after[0].p, r.before.p, 'a push of 0 changes no bit');
  for (const a of r.after.slice(1)) {
    const l = model.forward(ids, { stats: false, interventions: [{ hook: 'blocks.10.mlp.hook_post', neurons: [442], op: 'add', value: a.value }] }).logits;
    close(a.p, prob(l, tokens), `value ${a.value}`);
    const want = [...l.keys()].sort((x, y) => l[y] - l[x] || x - y).slice(0, 4);
    assert.deepEqual(a.top.map((t) => t.id), want, 'its top 4');
    assert.ok(a.top.every((t) => typeof t.text === 'string' && !t.text.includes('\uFFFD')));
  }
});

test('the Worker gives the same; bad arguments are typed errors naming the field', async () => {
  const tokens = featureTokens(model, P, { label: 'city', lang: 'zh' });
  const wm = await loadModelInWorker(DEMO);
  try {
    assert.deepEqual(await wm.featureTokens(P, { label: 'city', lang: 'zh' }), tokens);
    assert.deepEqual(await wm.neuronsForTokens('我上周从巴黎飞到', { tokens, perLayer: 2 }), neuronsForTokens(model, '我上周从巴黎飞到', { tokens, perLayer: 2 }));
    const ids = model.tokenizer.encode('饭菜一点也不');
    assert.deepEqual(await wm.pushNeuron(Int32Array.from(ids), { layer: 3, neuron: 7, tokens, values: [5] }), pushNeuron(model, ids, { layer: 3, neuron: 7, tokens, values: [5] }));
  } finally { await wm.dispose(); }
  const bad = (fn, re) => assert.throws(fn, (e) => e instanceof MlpscopeError && e.code === 'E_ARG' && re.test(e.message), String(re));
  bad(() => featureTokens(model, P, { label: '' }), /label/);
  bad(() => featureTokens(model, 'probes', { label: 'city' }), /probes/);
  bad(() => featureTokens(model, [{ text: 1 }], { label: 'city' }), /probes\[0\]/);
  bad(() => neuronsForTokens(model, 'x', { tokens: [] }), /tokens/);
  bad(() => neuronsForTokens(model, 'x', { tokens: [1e9] }), /tokens/);
  bad(() => neuronsForTokens(model, 'x', { tokens: [1], perLayer: 0 }), /perLayer/);
  bad(() => neuronsForTokens(model, '', { tokens: [1] }), /no tokens/);
  bad(() => pushNeuron(model, 'x', { layer: 99, neuron: 0, tokens: [1], values: [1] }), /layer/);
  bad(() => pushNeuron(model, 'x', { layer: 0, neuron: I, tokens: [1], values: [1] }), /neuron/);
  bad(() => pushNeuron(model, 'x', { layer: 0, neuron: 0, tokens: [1], values: [NaN] }), /values/);
  bad(() => pushNeuron(model, 'x', { layer: 0, neuron: 0, tokens: [1], values: [] }), /values/);
});

test('neuronTopActivations quantiles: the example at each quantile is the token of that rank, found by sorting every activation by hand', () => {
  const texts = P.slice(0, 30).map((p) => p.text), layer = 10, neuron = 50, qs = [0, 0.5, 0.9, 0.99, 1];
  for (const sign of [1, -1]) {
    const r = neuronTopActivations(model, texts, { layer, neuron, sign, k: 3, quantiles: qs });
    const all = [];
    texts.forEach((text, p) => {
      const ids = model.tokenizer.encode(text, { addSpecial: true });
      const h = model.forward(ids, { stats: false, logits: 'none', hooks: [`blocks.${layer}.mlp.hook_post`] }).hooks[`blocks.${layer}.mlp.hook_post`];
      for (let t = 0; t < ids.length; t++) all.push({ p, t, a: h[t * I + neuron] });
    });
    const sorted = all.map((x, i) => ({ ...x, i })).sort((x, y) => sign * (x.a - y.a) || x.i - y.i);
    assert.equal(r.atQuantiles.length, qs.length);
    r.atQuantiles.forEach((e, k) => {
      const want = sorted[Math.round(qs[k] * (all.length - 1))];
      assert.deepEqual([e.q, e.text, e.token, e.activation], [qs[k], want.p, want.t, want.a], `sign ${sign}, q ${qs[k]}`);
    });
    assert.equal(r.atQuantiles.at(-1).activation, r.top[0].activation, 'the 1.0 quantile is the strongest');
  }
  assert.throws(() => neuronTopActivations(model, texts, { layer, neuron, quantiles: [1.5] }), (e) => e.code === 'E_ARG' && /quantiles/.test(e.message));
});
