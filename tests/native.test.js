// The native C test binary (unit tests, llama2.c goldens natively, bad inputs), plain and under
// AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer): any report fails the test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, SHARED, tmpDir } from './helpers.js';

for (const variant of ['native', 'asan']) {
  test(`C tests (${variant} build)`, () => {
    const bin = path.join(ROOT, 'build', variant, 'ms_tests');
    const r = spawnSync(bin, [path.join(SHARED, 'models'), tmpDir(`c-${variant}`)], {
      encoding: 'utf8', env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
    });
    const out = r.stdout + r.stderr;
    assert.equal(r.status, 0, out);
    assert.match(out, /\d+ checks, 0 failed/);
    assert.doesNotMatch(out, /(AddressSanitizer|LeakSanitizer|runtime error)/, out);
  });
}
