// Relaxed SIMD (js/relaxed.js; the tiles in src/kernels/wasm/gemm_qx4_relaxed.c, a module of their
// own built by clang-16): where a runtime has it and computes what a kernel level needs, the
// relaxed kernels equal their scalar twin and the SIMD128 kernel bit for bit, and a model's logits
// do not change; where it has not, nothing is linked and the model says why. Run in Node as it
// starts (no relaxed SIMD in Node 20), in a Node with relaxed SIMD switched on (flags), and in
// Chromium (on by default; the unsigned-byte level where the CPU has AVX-VNNI).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel } from '../js/index.js';
import { relaxedSupport } from '../js/relaxed.js';
import { ROOT, CLI, DEMO, tmpDir } from './helpers.js';
import { startBrowser } from './browser-harness.js';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const FLAGS = ['--experimental-wasm-relaxed-simd', '--no-liftoff'];
const built = ['mlpscope-relaxed.wasm', 'mlpscope-relaxed-mt.wasm'].every((f) => fs.existsSync(path.join(ROOT, 'build/wasm', f)));
const NOT_BUILT = !built && 'the relaxed-SIMD module is not built (build.sh needs clang-16 and wasm-ld-16: apt-get install clang-16 lld-16)';
// a small synthetic Qwen3.5 (attention and Gated DeltaNet layers), q8, beside the trained demo model
const synth = tmpDir('relaxed-synth');
execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-threads.json'), '--seed', '7', '--dtype', 'q8', '--out', synth], { stdio: 'pipe' });
// and the same shapes with q4 layers (a q8 head): the q4 kernel's prefill and decode tiles
const synth4 = tmpDir('relaxed-synth-q4');
execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-threads.json'), '--seed', '7', '--dtype', 'q4', '--embed-dtype', 'q8', '--out', synth4], { stdio: 'pipe' });

/** Runs tests/relaxed-compare.js in a child Node with `flags`; returns what it printed (JSON). */
function childNode(flags, script) {
  const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 300000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

test('Node as it starts: relaxed SIMD is not linked, the model says why, and asking for it is a typed error', async () => {
  const sup = relaxedSupport();
  if (NODE_MAJOR === 20) {
    assert.equal(sup.ok, false);
    assert.match(sup.why, /--experimental-wasm-relaxed-simd --no-liftoff/);
  }
  const m = await loadModel(DEMO, { cache: false, threads: 1 });
  const r = m.info().build.relaxedSimd;
  m.dispose();
  if (!sup.ok) {
    assert.equal(r.used, false);
    assert.equal(r.isa, 'simd128');
    assert.ok(r.why.includes(sup.why), r.why);
    await assert.rejects(loadModel(DEMO, { cache: false, threads: 1, relaxedSimd: true }), (err) => err.code === 'E_ARG' && err.message.includes(sup.why));
  }
  await assert.rejects(loadModel(DEMO, { cache: false, relaxedSimd: 'fast' }), (err) => err.code === 'E_ARG' && /relaxedSimd/.test(err.message));
});

test('Node 20 with relaxed SIMD but its first-tier compiler on: the known answer catches the wrong dot product, nothing is linked',
  { skip: NODE_MAJOR !== 20 && `the first-tier bug checked here is Node 20's (this is Node ${process.versions.node})` }, () => {
    const got = childNode(['--experimental-wasm-relaxed-simd'], `
      import { relaxedSupport } from './js/relaxed.js';
      import { createEngine } from './js/index.js';
      const e = await createEngine();
      console.log(JSON.stringify({ sup: relaxedSupport(), linked: e.relaxed.linked }));`);
    assert.equal(got.sup.ok, false);
    assert.match(got.sup.why, /wrongly.*--no-liftoff/);
    assert.equal(got.linked, false);
  });

test('Node with relaxed SIMD on (flags): every relaxed kernel it runs right equals its scalar twin (tests/kernels.test.js)', { skip: NOT_BUILT }, () => {
  // (without NODE_TEST_CONTEXT, which would make the child report to this runner instead of stdout)
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const r = spawnSync(process.execPath, [...FLAGS, '--test', '--test-reporter=tap', 'tests/kernels.test.js'], { cwd: ROOT, encoding: 'utf8', env: { ...env, MLPSCOPE_TEST_RELAXED: '1' }, timeout: 600000 });
  assert.equal(r.status, 0, r.stdout.slice(-3000) + r.stderr);
  assert.match(r.stdout, /ok \d+ - ms_gemm_q8_0x4w_i8a_4x4_relaxed: shapes from its edges/);
  assert.match(r.stdout, /ok \d+ - ms_gemm_q4_0x4w_i8a_4x8_relaxed: shapes from its edges/);
  assert.match(r.stdout, /# fail 0/);
});

test('Node with relaxed SIMD on (flags): models give the same logits bit for bit with relaxed kernels, prefill and decode, 1 and 2 threads', { skip: NOT_BUILT }, () => {
  const got = childNode(FLAGS, `
    import { loadModel } from './js/index.js';
    import { compareModels } from './tests/relaxed-compare.js';
    console.log(JSON.stringify(await compareModels(loadModel, ${JSON.stringify([DEMO, synth, synth4])}, ['relaxed', 'auto'], [1, 2])));`);
  assert.equal(got.length, 12);
  for (const r of got) {
    assert.ok(r.same, `${r.src}, ${r.threads} thread(s), relaxedSimd ${r.relaxedSimd} (${r.kernels}): logits differ`);
    assert.ok(r.values > 1000);
    if (r.relaxedSimd === 'relaxed') assert.equal(r.kernels, 'wasm-simd128+relaxed');
    else assert.ok(r.why.length > 10, r.why); // 'auto': chosen by timing; the why names the ratio
  }
  // a model whose weights are mostly q4 is timed on a q4 matrix, prefill and a lone token
  for (const r of got.filter((x) => x.src === synth4 && x.relaxedSimd === 'auto')) assert.match(r.why, /x for 16 tokens, [\d.]+x for one\) on layers\./, r.why);
});

let h;
before(async () => { if (built) h = await startBrowser({ mounts: { '/w/demo': DEMO, '/w/synth': synth, '/w/synth4': synth4 } }); });
after(async () => { await h?.close(); });

test('Chromium: the relaxed kernels this CPU runs right equal their scalar twin and SIMD128 on shapes from their edges, and models give the same logits', { skip: NOT_BUILT }, async (t) => {
  const { page } = await h.newPage('/tests/browser/api.html');
  await page.waitForFunction(() => window.mlpscope);
  const r = await page.evaluate(async () => {
    const { createEngine, loadModel } = window.mlpscope;
    const { compareKernels, compareModels } = await import('/tests/relaxed-compare.js');
    const e = await createEngine({ build: 'test', relaxedSimd: true });
    const kernels = compareKernels(e);
    const settings = Object.entries(e.relaxed.levels).filter(([, ok]) => ok).map(([k]) => k);
    return { crossOriginIsolated, relaxed: e.relaxed, kernels, models: await compareModels(loadModel, ['/w/demo/', '/w/synth/', '/w/synth4/'], [...settings, 'auto'], [1, 2]) };
  });
  t.diagnostic(`Chromium: ${r.relaxed.why}`);
  assert.equal(r.relaxed.linked, true, r.relaxed.why);
  assert.equal(r.relaxed.levels.relaxed, true, 'Chromium runs the specified relaxed dot right');
  // the level 'relaxed' has the q8 p/n tile and the q4 tiles; 'relaxedu8' adds the unsigned-weight q8 tile
  assert.deepEqual(r.kernels.map((k) => k.kernel).sort(), ['ms_gemm_q4_0x4w_i8a_4x8_relaxed', 'ms_gemm_q8_0x4w_i8a_4x4_relaxed', ...(r.relaxed.levels.relaxedu8 ? ['ms_gemm_q8_0x4w_i8a_4x8_relaxedu8'] : [])]);
  for (const k of r.kernels) {
    assert.ok(k.shapes >= 20, `${k.kernel}: ${k.shapes} shapes`);
    assert.deepEqual(k.differ, [], `${k.kernel} against ${k.twin} and ${k.simd}`);
  }
  assert.ok(r.crossOriginIsolated, 'the test server isolates the page, so 2 threads run');
  for (const m of r.models) {
    assert.ok(m.same, `${m.src}, ${m.threads} thread(s), relaxedSimd ${m.relaxedSimd} (${m.kernels}): logits differ`);
    if (m.relaxedSimd !== 'auto') assert.equal(m.kernels, `wasm-simd128+${m.relaxedSimd}`);
    if (m.src === '/w/synth4/' && m.relaxedSimd === 'auto') assert.match(m.why, /x for 16 tokens, [\d.]+x for one\) on layers\./, m.why);
  }
  assert.ok(r.models.some((m) => m.threads === 2));
});
