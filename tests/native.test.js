// The native C test binary (unit tests, the trainer, interventions, the converter fed from outside, llama2.c goldens natively, bad inputs), plain
// and under AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer): any report fails the
// test. The groups that read stories260K (outside the repository) are skipped without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, SHARED, tmpDir, NEEDS_STORIES } from './helpers.js';

for (const variant of ['native', 'asan']) {
  for (const [what, groups, skip] of [['units, trainer, interventions, streamed conversion, transcoders, tokenizer pipeline', ['units', 'train', 'interventions', 'convert_stream', 'transcoder', 'tokenizer'], false], ['stories260K: llama2.c goldens, bad inputs', ['llama', 'bad_inputs'], NEEDS_STORIES]]) {
    test(`C tests (${variant} build): ${what}`, { skip }, () => {
      const bin = path.join(ROOT, 'build', variant, 'ms_tests');
      const r = spawnSync(bin, [path.join(SHARED, 'models'), tmpDir(`c-${variant}`), ...groups], {
        encoding: 'utf8', env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
      });
      const out = r.stdout + r.stderr;
      assert.equal(r.status, 0, out);
      assert.match(out, /[1-9]\d* checks, 0 failed/);
      assert.doesNotMatch(out, /(AddressSanitizer|LeakSanitizer|runtime error)/, out);
    });
  }
}
