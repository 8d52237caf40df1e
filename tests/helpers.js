// Shared test helpers: paths, a converted stories260K weight set, tolerances.
import { execFileSync } from 'node:child_process';
import { after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SHARED = process.env.MLPSCOPE_SHARED ?? path.resolve(ROOT, '../shared');
export const STORIES = path.join(SHARED, 'models/stories260K');
export const CLI = path.join(ROOT, 'bin/mlpscope.js');
/** The demo model committed in the repository (llama family, trained, byte-level BPE). */
export const DEMO = path.join(ROOT, 'weights/demo');

// llama2.c's stories260K and its goldens are not part of the repository (they sit in the
// project's shared folder beside a maintainer's checkout). Tests that compare against them run
// when the files are there and are skipped, with this reason, when they are not; everything else
// runs on what the repository has (the demo model, synthetic models, the float64 reference).
export const HAVE_STORIES = ['stories260K.bin', 'tok512.bin', 'golden.json'].every((f) => fs.existsSync(path.join(STORIES, f)));
/** `false` when stories260K is there, else the reason to give `test(..., { skip })`. */
export const NEEDS_STORIES = HAVE_STORIES ? false
  : `llama2.c's stories260K and its goldens are not in the repository and were not found at ${STORIES} (MLPSCOPE_SHARED names the folder holding models/stories260K)`;
/** The lesson text (Chinese), outside the repository like stories260K. */
export const LESSON = path.join(SHARED, 'reference/lesson-swiglu-mlp.zh.txt');
export const NEEDS_LESSON = fs.existsSync(LESSON) ? false
  : `the lesson text is not in the repository and was not found at ${LESSON} (MLPSCOPE_SHARED names the folder holding reference/)`;

// The user's home is left alone: every test process (and every command it starts) gets an empty
// home of its own, and after its tests a check that nothing wrote the default cache there
// (~/.cache/mlpscope, where `loadModel('hf:…')` and `mlpscope run hf:…` keep converted checkpoints):
// tests name a temporary cacheDir for everything they cache. MLPSCOPE_TEST_KEEP_HOME=1 keeps the
// real home (to debug a test that needs it).
export const TEST_HOME = process.env.MLPSCOPE_TEST_KEEP_HOME === '1' ? os.homedir() : fs.mkdtempSync(path.join(os.tmpdir(), 'mlpscope-home-'));
if (process.env.MLPSCOPE_TEST_KEEP_HOME !== '1') {
  process.env.HOME = TEST_HOME;
  process.env.XDG_CACHE_HOME = path.join(TEST_HOME, '.cache');
  delete process.env.MLPSCOPE_CACHE;
  after(() => {
    const cache = path.join(TEST_HOME, '.cache', 'mlpscope');
    const found = fs.existsSync(cache) ? fs.readdirSync(cache, { recursive: true }).slice(0, 5) : null;
    assert.equal(found, null, `a test wrote the default cache under the home folder (${cache}): ${found?.join(', ')}`);
  });
}

// Every folder a test makes is removed when its test process exits (node --test runs each file in
// a process of its own); MLPSCOPE_KEEP_TMP=1 keeps them for a post-mortem.
const made = [];
process.on('exit', () => {
  if (process.env.MLPSCOPE_KEEP_TMP === '1') return;
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
  if (process.env.MLPSCOPE_TEST_KEEP_HOME !== '1') fs.rmSync(TEST_HOME, { recursive: true, force: true });
});

export function tmpDir(tag) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `mlpscope-${tag}-`));
  made.push(d);
  return d;
}

/** Converts stories260K with the CLI (wasm converter) into a fresh folder; returns the folder. */
export function convertStories(dtype = 'f32') {
  const out = tmpDir(`s260-${dtype}`);
  execFileSync(process.execPath, [CLI, 'convert', path.join(STORIES, 'stories260K.bin'), path.join(STORIES, 'tok512.bin'),
    '--out', out, '--dtype', dtype], { stdio: 'pipe' });
  return out;
}

export function golden() {
  return JSON.parse(fs.readFileSync(path.join(STORIES, 'golden.json'), 'utf8'));
}

export function maxRel(a, b, floor = 1e-6) {
  let w = 0;
  for (let i = 0; i < a.length; i++) w = Math.max(w, Math.abs(a[i] - b[i]) / Math.max(Math.abs(b[i]), floor));
  return w;
}
