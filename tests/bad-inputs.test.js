// Runs the bad-input catalogue (tests/bad-inputs/catalogue.js) through the wasm build, the native
// build and the AddressSanitizer + UndefinedBehaviorSanitizer native build. Every case must fail
// with its typed error code and a message naming what is wrong, and never with a sanitizer report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel } from '../js/index.js';
import { hfCases, weightCases, tokenizerJsonCases, tokenizerBinCases } from './bad-inputs/catalogue.js';
import { writeHfCheckpoint } from './hf-writer.js';
import { CLI, ROOT, tmpDir } from './helpers.js';

const NATIVE = { native: path.join(ROOT, 'build/native/mlpscope-native'), asan: path.join(ROOT, 'build/asan/mlpscope-native') };
const ENV = { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1' };

const goodWs = tmpDir('bad-base-ws');
execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-a.json'), '--seed', '1', '--out', goodWs], { stdio: 'pipe' });
const goodHf = tmpDir('bad-base-hf');
writeHfCheckpoint(goodWs, goodHf, { dtype: 'F32', tokenizer: false });

// bases for the tokenizer cases: a tokenizer.json folder, and a weight set with a BPE tokenizer
const goodTokDir = tmpDir('bad-base-tokjson');
writeHfCheckpoint(goodWs, goodTokDir, { dtype: 'F32', tokenizer: true });
for (const f of fs.readdirSync(goodTokDir)) if (!/^tokenizer/.test(f) && f !== 'generation_config.json') fs.rmSync(path.join(goodTokDir, f));
const goodTokWs = tmpDir('bad-base-tokws');
{ const hf = tmpDir('bad-base-hf2'); writeHfCheckpoint(goodWs, hf, { dtype: 'F32', tokenizer: true }); execFileSync(process.execPath, [CLI, 'convert', hf, '--out', goodTokWs], { stdio: 'pipe' }); }

function prepare(base, c) {
  const d = tmpDir('bad-' + c.id);
  fs.cpSync(base, d, { recursive: true });
  c.build(d);
  return d;
}

function checkNative(kind, args, c) {
  const r = spawnSync(NATIVE[kind], args, { encoding: 'utf8', env: ENV });
  const out = r.stdout + r.stderr;
  assert.doesNotMatch(out, /(AddressSanitizer|LeakSanitizer|runtime error)/, `${c.id} (${kind}): sanitizer report\n${out}`);
  assert.equal(r.status, 1, `${c.id} (${kind}): exit ${r.status}\n${out}`);
  assert.match(out, new RegExp(`error ${c.code}:`), `${c.id} (${kind}): ${out}`);
  if (c.match) assert.match(out, c.match, `${c.id} (${kind}): ${out}`);
}

const total = hfCases.length + weightCases.length + tokenizerJsonCases.length + tokenizerBinCases.length;
test(`catalogue size: ${total} cases (${hfCases.length} checkpoint, ${weightCases.length} weight set, ${tokenizerJsonCases.length} tokenizer.json, ${tokenizerBinCases.length} tokenizer file)`, () => {
  assert.ok(hfCases.length >= 20 && weightCases.length >= 20 && total >= 80);
  const ids = [...hfCases, ...weightCases, ...tokenizerJsonCases, ...tokenizerBinCases].map((c) => c.id);
  assert.equal(new Set(ids).size, ids.length);
});

test('the unbroken inputs load and convert (so every failure below is the breakage)', async () => {
  const m = await loadModel(goodWs);
  m.dispose();
  execFileSync(process.execPath, [CLI, 'convert', goodHf, '--out', tmpDir('good-conv')], { stdio: 'pipe' });
  for (const kind of Object.keys(NATIVE)) execFileSync(NATIVE[kind], ['info', goodWs], { stdio: 'pipe', env: ENV });
  for (const src of [goodTokDir, goodTokWs]) {
    execFileSync(process.execPath, [CLI, 'tokenize', src, '--text', 'the rain'], { stdio: 'pipe' });
    for (const kind of Object.keys(NATIVE)) execFileSync(NATIVE[kind], ['tokenize', src, '--text', 'the rain'], { stdio: 'pipe', env: ENV });
  }
  const m2 = await loadModel(goodTokWs);
  assert.ok(m2.tokenizer);
  m2.dispose();
});

test('tokenizer.json files: wasm CLI, native and ASan', () => {
  for (const c of tokenizerJsonCases) {
    const d = prepare(goodTokDir, c);
    const r = spawnSync(process.execPath, [CLI, 'tokenize', d, '--text', 'the rain in spain', '--json'], { encoding: 'utf8' });
    assert.equal(r.status, 1, `${c.id} (wasm): ${r.stdout}${r.stderr}`);
    const err = JSON.parse(r.stdout).error;
    assert.equal(err.code, c.code, `${c.id} (wasm): ${err.message}`);
    if (c.match) assert.match(err.message, c.match, `${c.id} (wasm)`);
    for (const kind of Object.keys(NATIVE)) checkNative(kind, ['tokenize', d, '--text', 'the rain in spain'], c);
  }
});

test('tokenizer files in weight sets: wasm loadModel, native and ASan', async () => {
  for (const c of tokenizerBinCases) {
    const d = prepare(goodTokWs, c);
    await assert.rejects(loadModel(d), (e) => {
      assert.equal(e.code, c.code, `${c.id} (wasm): ${e.message}`);
      if (c.match) assert.match(e.message, c.match, `${c.id} (wasm)`);
      return true;
    });
    for (const kind of Object.keys(NATIVE)) checkNative(kind, ['tokenize', d, '--text', 'the rain in spain'], c);
  }
});

test('Hugging Face checkpoints: wasm CLI, native and ASan converters', () => {
  for (const c of hfCases) {
    const d = prepare(goodHf, c);
    const r = spawnSync(process.execPath, [CLI, 'convert', d, '--out', tmpDir('bad-out')], { encoding: 'utf8' });
    assert.equal(r.status, 1, `${c.id} (wasm): exit ${r.status}\n${r.stderr}`);
    assert.match(r.stderr, new RegExp(`${c.code}:`), `${c.id} (wasm): ${r.stderr}`);
    if (c.match) assert.match(r.stderr, c.match, `${c.id} (wasm): ${r.stderr}`);
    for (const kind of Object.keys(NATIVE)) checkNative(kind, ['convert', d, '--out', tmpDir('bad-out')], c);
  }
});

test('weight sets: wasm loadModel, native and ASan loaders', async () => {
  for (const c of weightCases) {
    const d = prepare(goodWs, c);
    await assert.rejects(loadModel(d), (e) => {
      assert.equal(e.code, c.code, `${c.id} (wasm): ${e.message}`);
      if (c.match) assert.match(e.message, c.match, `${c.id} (wasm)`);
      return true;
    });
    for (const kind of Object.keys(NATIVE)) checkNative(kind, ['info', d], c);
  }
});
