// js/index.d.ts against the code: every export of js/index.js is declared, and a TypeScript file
// using the whole public API (tests/types/usage.ts) type-checks with `tsc --strict`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as api from '../js/index.js';
import { ROOT } from './helpers.js';

test('every export of js/index.js is declared in js/index.d.ts', () => {
  const dts = fs.readFileSync(path.join(ROOT, 'js/index.d.ts'), 'utf8');
  const declared = new Set([...dts.matchAll(/^export (?:declare )?(?:function|class|const|let|interface|type|enum) ([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]));
  const missing = Object.keys(api).filter((name) => !declared.has(name));
  assert.deepEqual(missing, [], `exported but not declared: ${missing.join(', ')}`);
});

test('the public API type-checks from TypeScript (tsc --strict on tests/types/usage.ts)', () => {
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
    '--lib', 'es2022,dom', path.join(ROOT, 'tests/types/usage.ts')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
