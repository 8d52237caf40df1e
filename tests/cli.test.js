// The README's commands, as a user types them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CLI, ROOT, STORIES, DEMO, golden, tmpDir, NEEDS_STORIES } from './helpers.js';

const out = tmpDir('cli');
test('mlpscope convert + run --json reproduce llama2.c', { skip: NEEDS_STORIES }, () => {
  execFileSync(process.execPath, [CLI, 'convert', path.join(STORIES, 'stories260K.bin'), path.join(STORIES, 'tok512.bin'), '--out', out]);
  const man = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  assert.equal(man.family, 'llama');
  assert.equal(man.tensors.length, 2 + 5 * 9);
  const c = golden().cases[1];
  const r = JSON.parse(execFileSync(process.execPath, [CLI, 'run', out, '--prompt', c.prompt, '--max-tokens', String(c.greedy_ids.length - c.prompt_ids.length), '--top-logits', '5', '--json'], { encoding: 'utf8' }));
  assert.deepEqual(r.prompt_ids, c.prompt_ids);
  assert.deepEqual(r.ids, c.greedy_ids);
  for (const k of ['attn_out_l2', 'mlp_out_l2', 'resid_mid_l2', 'resid_post_l2', 'resid_pre_l2', 'mlp_ratio']) assert.equal(r.stats[k].length, 5);
  r.top_logits.forEach((row, t) => row.forEach(([id, v], k) => {
    assert.equal(id, c.top5_logits[t][k][0]);
    assert.ok(Math.abs(v - c.top5_logits[t][k][1]) < 1e-4);
  }));
  const txt = execFileSync(process.execPath, [CLI, 'run', out, '--prompt', 'Once upon a time', '--max-tokens', '10'], { encoding: 'utf8' });
  assert.match(txt, /there was a little girl/);
  assert.match(txt, /layer {2}mixer/);
});

test('mlpscope run: the same ids and logits on 1 and 3 threads; a bad thread count is E_ARG', () => {
  const runT = (t) => JSON.parse(execFileSync(process.execPath, [CLI, 'run', DEMO, '--prompt', 'Lily went to Paris', '--max-tokens', '12', '--top-logits', '3', '--json', '--threads', t], { encoding: 'utf8' }));
  const r1 = runT('1'), r3 = runT('3');
  assert.deepEqual(r3.ids, r1.ids);
  assert.deepEqual(r3.top_logits, r1.top_logits);
  assert.ok(r1.ids.length > r1.prompt_ids.length, 'generated something');
  const badT = spawnSync(process.execPath, [CLI, 'run', DEMO, '--ids', '1,2', '--threads', '0'], { encoding: 'utf8' });
  assert.equal(badT.status, 1);
  assert.match(badT.stderr, /E_ARG.*threads/);
});

test('CLI errors carry the code and exit non-zero', () => {
  const V = JSON.parse(fs.readFileSync(path.join(DEMO, 'manifest.json'), 'utf8')).config.vocab_size;
  const bad = spawnSync(process.execPath, [CLI, 'run', DEMO, '--ids', `1,${V}`, '--json'], { encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.equal(JSON.parse(bad.stdout).error.code, 'E_TOKEN');
  const missing = spawnSync(process.execPath, [CLI, 'run', '/nonexistent', '--prompt', 'x'], { encoding: 'utf8' });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /E_MANIFEST/);
  const trunc = path.join(tmpDir('trunc'), 'x.bin');
  // a llama2.c checkpoint cut short (the small one the fuzzers start from)
  fs.writeFileSync(trunc, fs.readFileSync(path.join(ROOT, 'fuzz/corpus/llama2c_checkpoint/tiny.bin')).subarray(0, 300));
  const conv = spawnSync(process.execPath, [CLI, 'convert', trunc, path.join(ROOT, 'fuzz/corpus/tokenizer_bin/tiny.bin'), '--out', tmpDir('o')], { encoding: 'utf8' });
  assert.equal(conv.status, 1);
  assert.match(conv.stderr, /E_CHECKPOINT.*truncated/);
});

test('mlpscope features and mlpscope neuron on the demo model agree with the API', async () => {
  const { loadModel, findFeatureNeurons, neuronTopActivations } = await import('../js/index.js');
  const { probes } = await import('../tools/corpus.mjs');
  const m = await loadModel(DEMO);
  const want = findFeatureNeurons(m, probes(9, 160), { top: 1, directions: true });
  const got = JSON.parse(execFileSync(process.execPath, [CLI, 'features', DEMO, '--top', '1', '--directions', '--json'], { encoding: 'utf8' }));
  assert.deepEqual(got.best, want.best);
  assert.equal(got.directions.length, 3);
  got.directions.forEach((d, i) => assert.equal(d.heldOutAuc, want.directions[i].heldOutAuc));
  const table = execFileSync(process.execPath, [CLI, 'features', DEMO, '--top', '1', '--layers', '5', '--by-lang'], { encoding: 'utf8' });
  assert.match(table, /^city$/m);
  const five = findFeatureNeurons(m, probes(9, 160), { top: 1, layers: [5], byLang: true });
  const c5 = five.best.find((b) => b.feature === 'city');
  assert.ok(table.includes(`best: layer 5 neuron ${c5.neuron}, held-out AUC ${c5.heldOutAuc.toFixed(3)} (en ${c5.heldOutAucByLang.en.toFixed(3)}, zh ${c5.heldOutAucByLang.zh.toFixed(3)})`), table);
  for (const g of ['en', 'zh']) {
    const b = five.bestByLang[g].find((x) => x.feature === 'code');
    assert.ok(table.includes(`best within ${g}: layer 5 neuron ${b.neuron}, held-out AUC ${b.heldOutAuc.toFixed(3)}`), table);
  }
  const gl = JSON.parse(execFileSync(process.execPath, [CLI, 'features', DEMO, '--top', '1', '--layers', '5', '--by-lang', '--json'], { encoding: 'utf8' }));
  assert.deepEqual(gl.bestByLang, five.bestByLang);
  // a probe file of one's own, and a texts file
  const dir = tmpDir('features');
  const own = [{ text: 'We drove from Oslo to Rome.', spans: [{ start: 14, end: 18, label: 'city' }, { start: 22, end: 26, label: 'city' }] },
    { text: 'We drove from home to the lake.', spans: [{ start: 14, end: 18, label: 'noun' }, { start: 26, end: 30, label: 'noun' }] }];
  fs.writeFileSync(path.join(dir, 'p.json'), JSON.stringify({ probes: [...own, ...own] }));
  const g2 = JSON.parse(execFileSync(process.execPath, [CLI, 'features', DEMO, '--probes', path.join(dir, 'p.json'), '--json'], { encoding: 'utf8' }));
  assert.deepEqual(g2.best, findFeatureNeurons(m, [...own, ...own], { top: 3 }).best);
  fs.writeFileSync(path.join(dir, 't.txt'), 'I flew from Paris to Tokyo.\n\nThe food was not bad at all.\n');
  // the English code neuron (layer 5, neuron 231, fires positively) and the English negation
  // neuron (layer 2, neuron 381, fires negatively: it writes minus its column)
  const texts = ['I flew from Paris to Tokyo.', 'The food was not bad at all.'];
  const n = JSON.parse(execFileSync(process.execPath, [CLI, 'neuron', DEMO, '--layer', '5', '--neuron', '231', '--k', '3', '--texts', path.join(dir, 't.txt'), '--json'], { encoding: 'utf8' }));
  const { writes, ...top } = n;
  assert.deepEqual(top, neuronTopActivations(m, texts, { layer: 5, neuron: 231, sign: 1, k: 3 }));
  const o = m.neuronOutput(5, 231, { k: 10 });
  assert.deepEqual(writes.up.map((t) => [t.id, t.logit]), o.promoted.map((t) => [t.id, t.logit]));
  assert.deepEqual(writes.down.map((t) => [t.id, t.logit]), o.suppressed.map((t) => [t.id, t.logit]));
  const nn = JSON.parse(execFileSync(process.execPath, [CLI, 'neuron', DEMO, '--layer', '2', '--neuron', '381', '--sign', '-1', '--k', '3', '--texts', path.join(dir, 't.txt'), '--json'], { encoding: 'utf8' }));
  assert.deepEqual((({ writes: _, ...t }) => t)(nn), neuronTopActivations(m, texts, { layer: 2, neuron: 381, sign: -1, k: 3 }));
  const on = m.neuronOutput(2, 381, { k: 10 });
  assert.deepEqual(nn.writes.up.map((t) => [t.id, t.logit]), on.suppressed.map((t) => [t.id, -t.logit]), 'firing negatively, it pushes up what its column pushes down');
  assert.deepEqual(nn.writes.down.map((t) => [t.id, t.logit]), on.promoted.map((t) => [t.id, -t.logit]));
  // the text form over the default probe set (the Chinese city neuron, layer 3 #249, negative):
  // the count, the top token marked in its context, and the first tokens it pushes up
  const txt = execFileSync(process.execPath, [CLI, 'neuron', DEMO, '--layer', '3', '--neuron', '249', '--sign', '-1', '--k', '2'], { encoding: 'utf8' });
  const wantTop = neuronTopActivations(m, probes(9, 160), { layer: 3, neuron: 249, sign: -1, k: 2 });
  assert.match(txt, new RegExp(`${wantTop.tokens} tokens of 160 texts`));
  assert.equal(txt.trim().split('\n').length, 6);
  const wc = m.neuronWeightClass(3, 249);
  assert.ok(txt.trim().endsWith(`cos(w_gate, w_in) ${wc.cosGateIn.toFixed(3)}, cos(w_gate, w_out) ${wc.cosGateOut.toFixed(3)}, cos(w_in, w_out) ${wc.cosInOut.toFixed(3)}`), txt);
  assert.ok(txt.includes(`[[${wantTop.top[0].piece}]]`), txt);
  const up = m.neuronOutput(3, 249, { k: 10 }).suppressed.slice(0, 2).map((t) => JSON.stringify(m.tokenizer.decode([t.id])));
  assert.ok(txt.includes(`pushes up ${up[0]} `) && txt.includes(`, ${up[1]} `), `${txt} / ${up}`);
  m.dispose();
  // bad input: typed errors naming what is wrong
  fs.writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ probes: [{ text: 'x', spans: [{ start: 0 }] }] }));
  for (const [args, re] of [
    [['features', DEMO, '--probes', path.join(dir, 'bad.json')], /E_ARG.*bad\.json.*probe 0/],
    [['features', DEMO, '--probes', path.join(dir, 'nope.json')], /E_ARG.*nope\.json/],
    [['features', DEMO, '--layers', '11'], /E_ARG.*--layers/],
    [['neuron', DEMO, '--layer', '1'], /E_ARG.*--neuron/],
    [['neuron', DEMO, '--layer', '1', '--neuron', String(m.config.intermediate_size)], /E_ARG.*--neuron/],
    [['neuron', DEMO, '--layer', '1', '--neuron', '4', '--sign', '0'], /E_ARG.*--sign/],
  ]) {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
    assert.equal(r.status, 1, args.join(' '));
    assert.match(r.stderr, re);
  }
});

test('mlpscope lens: the stream after each mixer and each MLP; the last row is the model output', async () => {
  const { loadModel } = await import('../js/index.js');
  const m = await loadModel(DEMO);
  const ids = m.tokenizer.encode('I flew from Paris to', { addSpecial: true });
  const got = JSON.parse(execFileSync(process.execPath, [CLI, 'lens', DEMO, '--ids', ids.join(','), '--position', '3', '--k', '2', '--json'], { encoding: 'utf8' }));
  assert.equal(got.position, 3);
  assert.equal(got.rows.length, m.nLayers);
  const r = m.forward(ids.slice(0, 4), { logits: 'last' });
  const argmax = (x) => x.reduce((b, v, i) => (v > x[b] ? i : b), 0);
  assert.equal(got.rows.at(-1).afterMlp[0].id, argmax(r.logits));
  let z = 0; for (const v of r.logits) z += Math.exp(v - r.logits[argmax(r.logits)]);
  assert.ok(Math.abs(got.rows.at(-1).afterMlp[0].prob - 1 / z) < 1e-5);
  for (const row of got.rows) assert.ok(row.afterMixer[0].prob >= row.afterMixer[1].prob && row.afterMlp.length === 2);
  const txt = execFileSync(process.execPath, [CLI, 'lens', DEMO, '--prompt', 'I flew from Paris to'], { encoding: 'utf8' });
  assert.match(txt, /after MLP: {3}" /);
  assert.equal(txt.trim().split('\n').length, 1 + 2 * m.nLayers);
  const bad = spawnSync(process.execPath, [CLI, 'lens', DEMO, '--prompt', 'I flew', '--position', '9'], { encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /E_ARG.*--position/);
  m.dispose();
});

test('@demo names the shipped demo model; output piped into a reader that stops early ends quietly', () => {
  const demo = path.join(ROOT, 'weights/demo');
  const a = execFileSync(process.execPath, [CLI, 'run', '@demo', '--prompt', 'I flew from Paris to', '--max-tokens', '6', '--json'], { encoding: 'utf8' });
  const b = execFileSync(process.execPath, [CLI, 'run', demo, '--prompt', 'I flew from Paris to', '--max-tokens', '6', '--json'], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(a).ids, JSON.parse(b).ids);
  // `mlpscope run … | head -1`: the reader closes the pipe after one line
  const r = spawnSync('sh', ['-c', `"${process.execPath}" "${CLI}" run @demo --prompt "I flew from Paris to" --max-tokens 40 | head -c 1`], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.equal(r.stdout.length, 1);
  assert.doesNotMatch(r.stderr, /EPIPE|Error/, r.stderr);
});

test('--help (anywhere but as an option\'s value) prints the usage and exits 0; --version', () => {
  for (const args of [['--help'], ['-h'], ['help'], ['run', '--help'], ['features', '@demo', '--json', '--help']]) {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
    assert.equal(r.status, 0, args.join(' '));
    assert.match(r.stdout, /^usage:\n {2}mlpscope --help/, args.join(' '));
  }
  const v = spawnSync(process.execPath, [CLI, '--version'], { encoding: 'utf8' });
  assert.equal(v.stdout.trim(), JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version);
  const p = spawnSync(process.execPath, [CLI, 'run', '@demo', '--prompt', '--help', '--max-tokens', '2', '--json'], { encoding: 'utf8' });
  assert.equal(p.status, 0);
  assert.ok(JSON.parse(p.stdout).prompt_ids.length > 0, '--help after --prompt is the prompt');
  const bad = spawnSync(process.execPath, [CLI, 'bogus'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^usage:/);
});

test('options as --key=value too; a flag given a value, or an unknown option, is E_ARG naming it', () => {
  const run = (args) => spawnSync(process.execPath, [CLI, 'run', '@demo', ...args], { encoding: 'utf8' });
  const a = JSON.parse(run(['--prompt=I flew from Paris to', '--max-tokens=3', '--json']).stdout);
  const b = JSON.parse(run(['--prompt', 'I flew from Paris to', '--max-tokens', '3', '--json']).stdout);
  assert.deepEqual(a.ids, b.ids);
  assert.equal(a.ids.length, a.prompt_ids.length + 3);
  const flag = run(['--prompt', 'x', '--json=1']);
  assert.equal(flag.status, 1);
  assert.match(flag.stderr, /E_ARG: --json takes no value/);
  const unknown = run(['--prompt', 'x', '--max-tokenz=2']);
  assert.match(unknown.stderr, /E_ARG: unknown option --max-tokenz/);
});

test('run: timings from the generation passes, statistics over every token read once', async () => {
  const r = JSON.parse(spawnSync(process.execPath, [CLI, 'run', '@demo', '--prompt', 'I flew from Paris to', '--max-tokens', '6', '--json'], { encoding: 'utf8' }).stdout);
  const t = r.timings;
  assert.equal(t.prompt_tokens, r.prompt_ids.length);
  assert.equal(t.generated_tokens, r.ids.length - r.prompt_ids.length);
  assert.ok(t.load_ms > 0 && t.prefill_ms > 0 && t.prefill_tok_per_s > 0 && t.time_to_first_token_ms > 0);
  assert.ok(['stop', 'length'].includes(t.finish_reason));
  // every token of ids was read once: the stats cover all of them, and equal a single prefill's
  for (const row of r.stats.mlp_ratio) assert.equal(row.length, r.ids.length);
  const { loadModel } = await import('../js/index.js');
  const m = await loadModel(DEMO, { threads: 1 });
  const once = m.forward(r.ids).stats;
  m.dispose();
  once.mlp_out_l2.forEach((row, l) => row.forEach((v, p) => assert.ok(Math.abs(r.stats.mlp_out_l2[l][p] - v) <= 1e-5 * Math.max(v, 1), `layer ${l} position ${p}`)));
  const text = spawnSync(process.execPath, [CLI, 'run', '@demo', '--prompt', 'I flew from Paris to', '--max-tokens', '6'], { encoding: 'utf8' });
  assert.match(text.stderr, /^load: \d+\.\d\d s; int8 activations, \d threads?$/m);
  assert.match(text.stderr, /^prompt: \d+ tokens in [\d.]+ ms = [\d.]+ tok\/s \(time to first token [\d.]+ ms\)$/m);
  assert.match(text.stderr, /^generated: \d+ tokens, /m);
});

test('progress lines (bytes, rate, time left) on a terminal or with MLPSCOPE_PROGRESS=1; none when piped', () => {
  const out = tmpDir('progress');
  const go = (env, args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  const synth = go({ MLPSCOPE_PROGRESS: '1' }, ['synth', '--config', path.join(ROOT, 'tests/configs/llama-hf.json'), '--out', out, '--dtype', 'q8']);
  assert.equal(synth.status, 0, synth.stderr);
  const lines = synth.stderr.split(/[\r\n]/).filter((l) => l.startsWith('writing:'));
  assert.ok(lines.length >= 1, synth.stderr);
  assert.match(lines.at(-1), /^writing: ([\d.]+ [KMG]?i?B|\d+ B) \/ \1, [\d.]+ [KMG]?i?B\/s, in \d+s/);
  const run = go({ MLPSCOPE_PROGRESS: '1' }, ['run', '@demo', '--prompt', 'I flew', '--max-tokens', '2']);
  assert.match(run.stderr, /loading: [\d.]+ [KM]iB \/ [\d.]+ [KM]iB, .*\/s, in \d+s/);
  const piped = go({ MLPSCOPE_PROGRESS: '' }, ['run', '@demo', '--prompt', 'I flew', '--max-tokens', '2']);
  assert.doesNotMatch(piped.stderr, /loading:|\r/);
});

test('mlpscope decompose and mlpscope patch print what decomposePrediction and activationPatching give', async () => {
  const { loadModel } = await import('../js/index.js');
  const json = (...args) => JSON.parse(execFileSync(process.execPath, [CLI, ...args, '--json'], { encoding: 'utf8' }));
  const m = await loadModel(DEMO, { exact: true });
  const ids = m.tokenizer.encode('I flew from Paris to');
  const want = m.decomposePrediction(ids, { neurons: 6 });
  const got = json('decompose', DEMO, '--prompt', 'I flew from Paris to', '--neurons', '6', '--top', '4');
  assert.equal(got.token, want.token);
  assert.deepEqual(got.parts.map((q) => q.value), want.parts.map((q) => q.value));
  assert.ok(Math.abs(got.sum - got.logit) < 1e-4);
  assert.equal(got.neurons.top.length, 4);
  assert.equal(got.neurons.top[0].value, want.neurons.values[got.neurons.top[0].neuron]);
  const clean = m.tokenizer.encode('I flew from Paris to'), corrupted = m.tokenizer.encode('I flew from Rome to');
  const [a, b] = [m.tokenizer.encode(' T')[0], m.tokenizer.encode(' R')[0]];
  m.dispose();
  const m2 = await loadModel(DEMO);
  const pw = m2.activationPatching(clean, corrupted, { metric: { logitDiff: [a, b] }, layers: [0, 9] });
  m2.dispose();
  const pg = json('patch', DEMO, '--clean', 'I flew from Paris to', '--corrupted', 'I flew from Rome to', '--diff', ' T, R', '--layers', '0,9');
  assert.deepEqual(pg.restored, pw.restored);
  const r = spawnSync(process.execPath, [CLI, 'patch', DEMO, '--clean', 'a b', '--corrupted', 'a c'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /E_ARG: patch needs .*--diff A,B or --kl/);
  const t = spawnSync(process.execPath, [CLI, 'decompose', DEMO, '--prompt', 'a b', '--token', 'Paris Tokyo'], { encoding: 'utf8' });
  assert.match(t.stderr, /E_ARG: --token "Paris Tokyo" is not a token id or the text of one token/);
});

test('mlpscope story: the running example from the command line equals the API calls it names', async () => {
  const { loadModel, featureTokens, neuronsForTokens, neuronTopActivations, pushNeuron } = await import('../js/index.js');
  const { probes } = await import('../js/corpus.js');
  const m = await loadModel(DEMO);
  const got = JSON.parse(execFileSync(process.execPath, [CLI, 'story', DEMO, '--prompt', 'I flew from Paris to', '--lang', 'en', '--per-layer', '2', '--push', 'The food was', '--multiples', '1,3', '--json'], { encoding: 'utf8' }));
  const P = probes(9, 160), tokens = featureTokens(m, P, { label: 'city', lang: 'en' });
  assert.equal(got.tokens, tokens.length);
  const found = neuronsForTokens(m, 'I flew from Paris to', { tokens, perLayer: 2 });
  assert.deepEqual([got.p, got.passes, got.candidates], [found.p, found.passes, found.candidates]);
  const w = found.candidates[0], sign = w.activation < 0 ? -1 : 1;
  const unit = neuronTopActivations(m, P.filter((p) => p.lang === 'en').map((p) => p.text), { layer: w.layer, neuron: w.neuron, sign, k: 3, window: 3 }).top[0].activation;
  assert.deepEqual([got.writer.layer, got.writer.neuron, got.writer.sign, got.writer.unit], [w.layer, w.neuron, sign, unit]);
  const push = pushNeuron(m, 'The food was', { layer: w.layer, neuron: w.neuron, tokens, values: [unit, 3 * unit], k: 3 });
  assert.deepEqual(got.push, JSON.parse(JSON.stringify(push)));
  assert.ok(got.push.after[1].p > got.push.before.p, 'pushing the writer raises the city tokens');
  // the table form names the writer and the pushed rows; a label no probe has is E_ARG
  const txt = execFileSync(process.execPath, [CLI, 'story', DEMO, '--prompt', 'I flew from Paris to', '--lang', 'en', '--per-layer', '2', '--push', 'The food was', '--multiples', '2'], { encoding: 'utf8' });
  assert.match(txt, new RegExp(`writer: layer ${w.layer} neuron ${w.neuron};`));
  assert.match(txt, /\+2 +× \(/);
  const bad = spawnSync(process.execPath, [CLI, 'story', DEMO, '--prompt', 'x', '--label', 'no-such-label', '--json'], { encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.equal(JSON.parse(bad.stdout).error.code, 'E_ARG');
  m.dispose();
});
