#!/usr/bin/env node
// The parts of js/index.d.ts that mirror the engine's tables, generated from the engine itself
// (engine.info, C's ms_engine_info): the error codes, hook kinds, activation modes, chat kinds,
// logits modes, dtypes and the statistics. They sit between the two GENERATED marker lines of
// js/index.d.ts; the rest of the file is written by hand and uses these types.
//   node tools/gen-types.mjs           rewrite the block from build/wasm/mlpscope.wasm (./build.sh wasm runs this)
//   node tools/gen-types.mjs --check   exit 1 when the file differs from what the engine lists
// tests/types.test.js fails when the committed file has drifted from the engine.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HOST_ERROR_CODES } from '../js/errors.js';

export const DTS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../js/index.d.ts');
export const BEGIN = '// ---- GENERATED from the engine\'s tables by tools/gen-types.mjs (./build.sh wasm): do not edit by hand ----';
export const END = '// ---- end of GENERATED ----';

const union = (xs) => xs.map((x) => `'${x}'`).join(' | ');
const ARRAY = { f32: 'Float32Array', i32: 'Int32Array', f64: 'Float64Array' };

/**
 * The generated block for an engine's tables.
 * @param {{hooks: {name: string}[], stats: {name: string, type: string, shape: string[], when: string, what: string}[],
 *   errors: string[], activations: string[], chat_kinds: string[], logits_modes: string[],
 *   dtypes: {name: string, short: string | null, in_files: boolean}[]}} info
 */
export function renderEngineTypes(info) {
  const files = info.dtypes.filter((d) => d.in_files);
  // per-token statistics are the Stats fields; a per-layer one (layer_ms) is a timing, reported apart
  const perToken = info.stats.filter((s) => s.shape[0] === 'layer' && s.shape[1] === 'token');
  const dims = [...new Set(info.stats.flatMap((s) => s.shape))];
  const lines = [
    BEGIN,
    '/** Error codes: the engine\'s (MS_ERROR_LIST) and those only the JS side raises (js/errors.js HOST_ERROR_CODES). */',
    `export type ErrorCode = ${union([...info.errors, ...HOST_ERROR_CODES])};`,
    '/** The hook points of a block (MS_HOOK_LIST), in forward order. */',
    `export type HookKind = ${union(info.hooks.map((h) => h.name))};`,
    '/** How q8 / q4 matrices meet their inputs (MS_ACT_LIST). */',
    `export type ActivationMode = ${union(info.activations)};`,
    '/** The chat templates the engine renders itself (MS_CHAT_LIST). */',
    `export type ChatKind = ${union(info.chat_kinds)};`,
    '/** Which logits a forward call returns (MS_LOGITS_LIST). */',
    `export type LogitsMode = ${union(info.logits_modes)};`,
    '/** The dtypes a checkpoint converts to, by short and full name (MS_DTYPE_LIST). */',
    `export type DType = ${union([...new Set(files.flatMap((d) => [d.short ?? d.name, d.name]))])};`,
    '/** The dimensions statistics are laid out in. */',
    `export type StatDim = ${union(dims)};`,
    '/** The name of a statistic (MS_STAT_LIST). */',
    `export type StatName = ${union(info.stats.map((s) => s.name))};`,
    '/** The statistics of a forward call with a value per token, one per row of the engine\'s table (MS_STAT_LIST):',
    ' *  stats.X[layer] holds the values over the other dimensions ([token], or [token × …]); the ones collected',
    ' *  only for models with Gated DeltaNet layers are optional. */',
    'export interface StatArrays {',
    ...perToken.flatMap((s) => [
      `  /** ${s.what.replace(/\*\//g, '* /')}: [${s.shape.join('][')}] */`,
      `  ${s.name}${s.when === 'always' ? '' : '?'}: ${ARRAY[s.type]}[];`,
    ]),
    '}',
    END,
  ];
  return lines.join('\n');
}

/** The text of index.d.ts with its generated block replaced by `block`. */
export function withBlock(text, block) {
  const a = text.indexOf(BEGIN), b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error(`${DTS}: the GENERATED marker lines are missing`);
  return text.slice(0, a) + block + text.slice(b + END.length);
}

/** The block as it is in the file. */
export function currentBlock(text) {
  const a = text.indexOf(BEGIN), b = text.indexOf(END);
  return a < 0 || b < a ? null : text.slice(a, b + END.length);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { createEngine } = await import('../js/wasm.js');
  const e = await createEngine();
  const text = fs.readFileSync(DTS, 'utf8'), next = withBlock(text, renderEngineTypes(e.info));
  if (process.argv.includes('--check')) {
    if (next !== text) { console.error('js/index.d.ts differs from the engine\'s tables: run node tools/gen-types.mjs'); process.exit(1); }
  } else if (next !== text) {
    fs.writeFileSync(DTS, next);
    console.log('js/index.d.ts: the engine\'s tables changed; its generated block was rewritten');
  }
}
