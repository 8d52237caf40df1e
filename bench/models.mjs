// The benchmark models: weight sets generated on the spot with `mlpscope synth` into build/bench/
// (kept between runs), by preset ('qwen3.5-0.8b', 'llama-398m', ...), dtype and head dtype.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const cache = path.join(root, 'build/bench');

/** The folder of a synthetic weight set, made when missing. @param {string} preset @param {string} dtype @param {string} [embed] */
export function synth(preset, dtype, embed) {
  fs.mkdirSync(cache, { recursive: true });
  const dir = path.join(cache, `${preset}-${dtype}${embed ? '-head' + embed : ''}`);
  if (!fs.existsSync(path.join(dir, 'manifest.json')))
    execFileSync(process.execPath, [path.join(root, 'bin/mlpscope.js'), 'synth', '--config', preset, '--seed', '1', '--dtype', dtype, ...(embed ? ['--embed-dtype', embed] : []), '--out', dir], { stdio: 'pipe' });
  return dir;
}
