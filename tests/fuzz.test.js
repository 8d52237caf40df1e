// Short libFuzzer runs of every target (ASan + UBSan + LeakSanitizer): any crash, leak or
// sanitizer report fails. Longer runs: fuzz/README.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.js';

const SECONDS = Number(process.env.MLPSCOPE_FUZZ_SECONDS ?? 12);
const built = fs.existsSync(path.join(ROOT, 'build/fuzz/json'));
test(`fuzz smoke run: every target for ${SECONDS} s`, { skip: built ? false : 'clang/libFuzzer not installed (apt-get install clang libclang-rt-14-dev)', timeout: 600000 }, () => {
  const r = spawnSync('bash', [path.join(ROOT, 'fuzz/run.sh'), String(SECONDS)], { encoding: 'utf8' });
  const out = r.stdout + r.stderr;
  console.log(out.trim().split('\n').map((l) => `# ${l}`).join('\n'));
  assert.equal(r.status, 0, out);
  assert.equal((out.match(/^ok /gm) ?? []).length, 12, out);
});
