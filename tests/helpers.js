// Shared test helpers: paths, a converted stories260K weight set, tolerances.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SHARED = process.env.MLPSCOPE_SHARED ?? path.resolve(ROOT, '../shared');
export const STORIES = path.join(SHARED, 'models/stories260K');
export const CLI = path.join(ROOT, 'bin/mlpscope.js');

// Every folder a test makes is removed when its test process exits (node --test runs each file in
// a process of its own); MLPSCOPE_KEEP_TMP=1 keeps them for a post-mortem.
const made = [];
process.on('exit', () => {
  if (process.env.MLPSCOPE_KEEP_TMP === '1') return;
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
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
