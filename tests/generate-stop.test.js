// generate(): stop strings matched across token boundaries (never emitted, held-back text released),
// their mix with stop ids, bad values as E_ARG, the same in the Worker; Symbol.dispose and
// Symbol.asyncDispose end a model as dispose() does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadModel, loadModelInWorker, demoModelUrl } from '../js/index.js';

const PROMPT = 'I flew from Paris to';
const model = await loadModel(demoModelUrl);
const run = async (m, opts) => {
  const toks = [];
  for await (const t of m.generate(PROMPT, { maxTokens: 40, ...opts })) toks.push(t);
  return { toks, text: toks.map((t) => t.text).join(''), summary: m.lastGeneration };
};
const free = await run(model, {}); // greedy, ending at the end-of-sequence token: the text every run below is cut from

/** a stop string that straddles tokens k and k+1, and occurs first there */
function straddling() {
  let at = 0;
  for (let k = 0; k + 1 < free.toks.length; k++) {
    at += free.toks[k].text.length;
    const a = free.toks[k].text, b = free.toks[k + 1].text;
    if (a.length < 3 || b.length < 2) continue; // token k keeps some text before the stop string
    const s = a.slice(-2) + b.slice(0, 2);
    if (free.text.indexOf(s) === at - 2) return { s, k };
  }
  return null;
}

test('a stop string across a token boundary ends the text where it begins, and is not emitted', async () => {
  const hit = straddling();
  assert.ok(hit, `no straddling stop string in ${JSON.stringify(free.text)}`);
  const r = await run(model, { stop: [hit.s] });
  assert.equal(r.text, free.text.slice(0, free.text.indexOf(hit.s)));
  assert.equal(r.summary.finishReason, 'stop');
  assert.equal(r.summary.stopString, hit.s);
  assert.deepEqual(r.toks.map((t) => t.id), free.toks.slice(0, hit.k + 1).map((t) => t.id), 'the tokens up to the one where it begins');
  assert.equal(r.toks.at(-1).text, free.toks[hit.k].text.slice(0, -2), 'the last token cut where the stop string begins');
  assert.ok(r.toks.every((t) => !t.text.includes(hit.s)));
});

test('a stop string that never comes: the same tokens and text as without it (held-back text released at the end)', async () => {
  const r = await run(model, { stop: ['\u2603never\u2603', free.text.slice(-3) + '\u2603'] });
  assert.equal(r.text, free.text);
  assert.deepEqual(r.toks.map((t) => t.id), free.toks.map((t) => t.id));
  assert.equal(r.summary.finishReason, free.summary.finishReason);
  assert.equal(r.summary.stopString, undefined);
});

test('stop ids and strings together: whichever comes first; strings alone keep the end-of-sequence ids', async () => {
  const hit = straddling();
  const idAfter = free.toks[hit.k + 3]?.id, idBefore = free.toks[1].id;
  const early = await run(model, { stop: [idBefore, hit.s] });
  assert.deepEqual(early.toks.map((t) => t.id), free.toks.slice(0, free.toks.findIndex((t) => t.id === idBefore)).map((t) => t.id));
  assert.equal(early.summary.stopString, undefined);
  if (idAfter !== undefined && free.toks.findIndex((t) => t.id === idAfter) > hit.k) {
    const late = await run(model, { stop: [idAfter, hit.s] });
    assert.equal(late.summary.stopString, hit.s);
  }
  const eos = model.tokenizer.eosIds[0];
  const withEos = [];
  for await (const t of model.generate([...model.tokenizer.encode(PROMPT)], { maxTokens: 5, stop: ['\u2603'] })) withEos.push(t.id);
  assert.ok(!withEos.includes(eos), 'the end-of-sequence id still stops');
});

test('bad stop values are E_ARG', async () => {
  for (const stop of [[''], [1.5], 'x', [null]]) await assert.rejects(model.generate(PROMPT, { stop }).next(), (e) => e.code === 'E_ARG', JSON.stringify(stop));
});

test('the Worker: the same stop string, the same text and summary; Symbol.asyncDispose ends it', async () => {
  const hit = straddling();
  const w = await loadModelInWorker(demoModelUrl);
  const r = await run(w, { stop: [hit.s] });
  assert.equal(r.text, free.text.slice(0, free.text.indexOf(hit.s)));
  assert.equal(r.summary.stopString, hit.s);
  await w[Symbol.asyncDispose]();
  await assert.rejects(w.forward([1]), (e) => e.code === 'E_STATE' && /disposed/.test(e.message));
  await w[Symbol.asyncDispose](); // twice is harmless
});

test('Symbol.dispose ends a model (what `using` calls)', async () => {
  const m = await loadModel(demoModelUrl);
  m[Symbol.dispose]();
  assert.throws(() => m.forward([1]), (e) => e.code === 'E_STATE');
  m[Symbol.dispose](); // twice is harmless
});

test.after(() => model.dispose());

test('mlpscope run --stop TEXT: the text ends before it, and the finish reason says stop', async () => {
  const { execFileSync } = await import('node:child_process');
  const { CLI } = await import('./helpers.js');
  const hit = straddling();
  const out = JSON.parse(execFileSync(process.execPath, [CLI, 'run', new URL(demoModelUrl).pathname, '--prompt', PROMPT, '--max-tokens', '40', '--json', `--stop=${hit.s}`], { encoding: 'utf8' }));
  assert.equal(out.generated_text, free.text.slice(0, free.text.indexOf(hit.s)));
  assert.equal(out.text, PROMPT + out.generated_text);
  assert.equal(out.timings.finish_reason, 'stop');
});
