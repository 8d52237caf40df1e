// Single weights read and zeroed in place (model.weight / zeroWeights: every dtype, the 4-row
// interleaved q8 and q4 layouts too) against the weight files, the exact effect of one zeroed
// weight on the pass, restore putting the model back bit for bit, and the super-weight scan
// (js/superweights.js) against a brute-force search and hand-built ablations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel, loadModelInWorker, superWeights } from '../js/index.js';
import { loadWeights } from './reference/reference.js';
import { CLI, DEMO, ROOT, tmpDir } from './helpers.js';

const synth = (dtype) => {
  const d = tmpDir(`wedit-${dtype}`);
  execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-a.json'), '--seed', '5', '--dtype', dtype, '--out', d], { stdio: 'pipe' });
  return d;
};
const ids = [3, 17, 250, 9, 44, 101, 7, 12];

const dirs = {};
for (const [dtype, activations, stored] of [['f32', 'int8', 'f32'], ['f16', 'int8', 'f16'], ['bf16', 'int8', 'bf16'], ['q8', 'int8', 'q8_0'], ['q8', 'plain', 'q8_0'], ['q4', 'int8', 'q4_0'], ['q4', 'plain', 'q4_0']]) {
  // int8 activations lay q8 / q4 matrices out four rows interleaved; plain keeps the file's blocks
  test(`${dtype} (${activations} activations): weight() is the stored value, zeroWeights sets exactly one element to 0, restore gives the same logits bit for bit`, async () => {
    const dir = (dirs[dtype] ??= synth(dtype)), m = await loadModel(dir, { threads: 1, activations }), { W, man } = loadWeights(dir);
    assert.equal(man.tensors.find((t) => t.name === 'layers.1.mlp.gate_proj').dtype, stored, 'the edited matrix is stored in the dtype under test');
    const { intermediate_size: I, hidden_size: H } = m.config;
    for (const [name, rows, cols] of [['layers.1.mlp.down_proj', H, I], ['layers.2.mlp.gate_proj', I, H], ['embed_tokens', m.config.vocab_size, H]])
      for (const [r, c] of [[0, 0], [1, 31], [2, 32], [3, 33], [5, cols - 1], [rows - 1, 17], [rows - 2, cols - 2]])
        assert.equal(m.weight(name, r, c), Math.fround(W[name][r * cols + c]), `${name}[${r}][${c}]`);
    const before = m.forward(ids, { logits: 'all' }).logits;
    // a weight of a row that is not the first of its group of four, away from column 0 of its block
    // (gate_proj: 64 columns, two blocks of 32, so q8 / q4 sets keep it quantized)
    const name = 'layers.1.mlp.gate_proj', row = 6, col = 45, group = [4, 5, 6, 7];
    const old = group.map((r) => Array.from({ length: H }, (_, c) => m.weight(name, r, c)));
    assert.deepEqual(Array.from(m.weightRow(name, row)), old[2], 'weightRow is the row weight() reads');
    assert.notEqual(old[2][col], 0);
    const orig = m.neuronWeightClass(1, row).cosGateIn; // computed and kept before the edit
    const e = m.zeroWeights([{ tensor: name, row, col }]);
    assert.ok(m.weight(name, row, col) === 0, "zero (a negative scale times code 0 reads as -0)");
    group.forEach((r, k) => { for (let c = 0; c < H; c++) if (!(r === row && c === col)) assert.equal(m.weight(name, r, c), old[k][c], `[${r}][${c}] untouched`); });

    const after = m.forward(ids, { logits: 'all' }).logits;
    assert.ok(after.some((v, i) => v !== before[i]), 'the pass sees the change');
    // the weight classes read the weights: they follow the edit, and the restore
    assert.notEqual(m.neuronWeightClass(1, row).cosGateIn, orig);
    e.restore();
    e.restore(); // twice is harmless
    assert.equal(m.neuronWeightClass(1, row).cosGateIn, orig);
    assert.equal(m.weight(name, row, col), old[2][col]);
    assert.deepEqual(Array.from(m.forward(ids, { logits: 'all' }).logits), Array.from(before));
    m.dispose();
  });
}

test('one zeroed down_proj weight changes only its row of hook_mlp_out, by minus activation × weight (f32)', async () => {
  const m = await loadModel(synth('f32'), { threads: 1 }), { hidden_size: H, intermediate_size: I } = m.config, l = 2, h = 9, j = 30;
  const hooks = [`blocks.${l}.mlp.hook_post`, `blocks.${l}.hook_mlp_out`];
  const a = m.forward(ids, { hooks }), w = m.weight(`layers.${l}.mlp.down_proj`, h, j);
  const e = m.zeroWeights([{ tensor: `layers.${l}.mlp.down_proj`, row: h, col: j }]);
  const b = m.forward(ids, { hooks });
  e.restore();
  for (let t = 0; t < ids.length; t++) for (let i = 0; i < H; i++) {
    const d = b.hooks[hooks[1]][t * H + i] - a.hooks[hooks[1]][t * H + i];
    if (i !== h) assert.equal(d, 0);
    else assert.ok(Math.abs(d + a.hooks[hooks[0]][t * I + j] * w) < 1e-5 * (1 + Math.abs(a.hooks[hooks[1]][t * H + i])), `token ${t}: ${d}`);
  }
  m.dispose();
});

test('superWeights: candidates as a brute-force search finds them, loss changes equal ablations by hand; the Worker; typed errors', async () => {
  const m = await loadModel(DEMO, { threads: 1 }), prompt = '我上周从巴黎飞到东京。The food was not bad.', evalTexts = ['饭菜一点也不好。', 'We walked to the park.'];
  const r = superWeights(m, prompt, { k: 2, evalTexts });
  const { hidden_size: H, intermediate_size: I } = m.config, p = m.tokenizer.encode(prompt), T = p.length;
  const { W } = loadWeights(DEMO);
  for (const x of r.layers) {
    const h = m.forward(p, { hooks: [`blocks.${x.layer}.mlp.hook_post`, `blocks.${x.layer}.hook_mlp_out`] }).hooks;
    const a = h[`blocks.${x.layer}.mlp.hook_post`], out = h[`blocks.${x.layer}.hook_mlp_out`];
    let at = 0; for (let i = 0; i < T * H; i++) if (Math.abs(out[i]) > Math.abs(out[at])) at = i;
    assert.deepEqual([x.token, x.row], [Math.floor(at / H), at % H]);
    const D = W[`layers.${x.layer}.mlp.down_proj`];
    let j = 0; for (let c = 0; c < I; c++) if (Math.abs(a[x.token * I + c] * D[x.row * I + c]) > Math.abs(a[x.token * I + j] * D[x.row * I + j])) j = c;
    assert.equal(x.col, j, `layer ${x.layer}`);
  }
  assert.deepEqual(r.candidates.map((c) => c.layer), [...r.layers].sort((a, b) => b.spike - a.spike).slice(0, 2).map((x) => x.layer));
  const V = m.config.vocab_size, n = m.tokenizer.vocabSize;
  const loss = () => { let s = 0, c = 0; for (const t of evalTexts) { const q = m.tokenizer.encode(t), lg = m.forward(q, { logits: 'all' }).logits; for (let k = 0; k + 1 < q.length; k++) { const row = Array.from(lg.subarray(k * V, k * V + n)), mx = Math.max(...row); s += mx + Math.log(row.reduce((z, y) => z + Math.exp(y - mx), 0)) - row[q[k + 1]]; c++; } } return s / c; };
  assert.ok(Math.abs(r.loss - loss()) < 1e-9);
  for (const c of r.candidates) {
    const e = m.zeroWeights([{ tensor: c.tensor, row: c.row, col: c.col }]), byHand = loss(); e.restore();
    assert.ok(Math.abs(c.dLoss - (byHand - r.loss)) < 1e-9);
    const D = W[c.tensor]; let big = 0;
    for (let i = 0; i < H * I; i++) if (i !== c.row * I + c.col && Math.abs(D[i]) > Math.abs(D[big])) big = i;
    assert.equal(Math.abs(c.control.value), Math.abs(Math.fround(D[big])), 'the control is the largest other weight');
  }
  assert.ok(Math.abs(r.loss - loss()) < 1e-9, 'the model is back as it was');
  const w = await loadModelInWorker(DEMO, { threads: 1 });
  try {
    assert.deepEqual((await w.superWeights(prompt, { k: 2, evalTexts })).candidates, r.candidates);
    assert.equal(await w.weight('layers.0.mlp.up_proj', 3, 4), m.weight('layers.0.mlp.up_proj', 3, 4));
  } finally { await w.dispose(); }
  for (const [f, re] of [[() => m.weight('nope', 0, 0), /"nope": no such tensor/], [() => m.weight('layers.0.mlp.down_proj', H, 0), new RegExp(`row ${H} is not in 0\\.\\.${H - 1}`)],
    [() => m.weight('layers.0.mlp.down_proj', 0, -1), /col -1/], [() => m.weight('norm', 0, 0), /not a matrix/], [() => m.weight(5, 0, 0), /tensor must be a name/],
    [() => superWeights(m, [5]), /at least 2/], [() => superWeights(m, prompt, { k: 0 }), /k 0/]])
    assert.throws(f, { code: 'E_ARG', message: re });
  // the command line prints the same scan
  const dir = tmpDir('sw-cli'), file = path.join(dir, 'texts.txt');
  fs.writeFileSync(file, evalTexts.join('\n'));
  const cli = JSON.parse(execFileSync(process.execPath, [CLI, 'superweights', DEMO, '--prompt', prompt, '--k', '2', '--texts', file, '--json'], { encoding: 'utf8' }));
  assert.deepEqual(cli.candidates, JSON.parse(JSON.stringify(r.candidates)));
  // a list that fails part-way leaves nothing changed
  const keep = m.weight('layers.0.mlp.down_proj', 1, 1);
  assert.throws(() => m.zeroWeights([{ tensor: 'layers.0.mlp.down_proj', row: 1, col: 1 }, { tensor: 'layers.0.mlp.down_proj', row: 1, col: I }]), { code: 'E_ARG', message: /column/ });
  assert.equal(m.weight('layers.0.mlp.down_proj', 1, 1), keep);
  m.dispose();
});
