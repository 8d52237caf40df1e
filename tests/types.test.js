// js/index.d.ts against the code: every export of js/index.js is declared, and a TypeScript file
// using the whole public API (tests/types/usage.ts) type-checks with `tsc --strict`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as api from '../js/index.js';
import { ROOT } from './helpers.js';
import { MODEL_CALLS, TOKENIZER_CALLS, FUNCTION_CALLS } from '../js/protocol.js';

test('every export of js/index.js is declared in js/index.d.ts', () => {
  const dts = fs.readFileSync(path.join(ROOT, 'js/index.d.ts'), 'utf8');
  const declared = new Set([...dts.matchAll(/^export (?:declare )?(?:function|class|const|let|interface|type|enum) ([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]));
  const missing = Object.keys(api).filter((name) => !declared.has(name));
  assert.deepEqual(missing, [], `exported but not declared: ${missing.join(', ')}`);
});

test('the public API type-checks from TypeScript (tsc --strict on tests/types/usage.ts)', () => {
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
    '--lib', 'es2022,dom,esnext.disposable', path.join(ROOT, 'tests/types/usage.ts')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

// the parts of index.d.ts that mirror a list elsewhere are checked against that list
const dtsText = () => fs.readFileSync(path.join(ROOT, 'js/index.d.ts'), 'utf8');
const membersOf = (dts, cls) => {
  const body = dts.slice(dts.indexOf(`export class ${cls} {`)).split('\n}')[0];
  return new Set([...body.matchAll(/^  (?:async \*)?([A-Za-z]\w*)\(/gm)].map((m) => m[1]));
};

test('WorkerModel in index.d.ts declares exactly the calls of the worker protocol (js/protocol.js)', () => {
  const declared = membersOf(dtsText(), 'WorkerModel');
  const expected = new Set([...Object.keys(MODEL_CALLS), ...Object.keys(FUNCTION_CALLS), 'generate', 'dispose']);
  assert.deepEqual([...declared].sort(), [...expected].sort());
  const tok = /readonly tokenizer: \{ \[K in ([^\]]+)\]/.exec(dtsText())[1].split('|').map((x) => x.trim().replace(/'/g, ''));
  assert.deepEqual(tok.sort(), Object.keys(TOKENIZER_CALLS).sort());
});

test('HookKind in index.d.ts is the engine\'s hook table (ms_engine_info)', async () => {
  const e = await api.createEngine();
  const m = /export type HookKind = ([^;]+);/.exec(dtsText())[1];
  const kinds = [...m.matchAll(/'([^']+)'/g)].map((x) => x[1]);
  assert.deepEqual(kinds, e.info.hooks.map((h) => h.name));
});
