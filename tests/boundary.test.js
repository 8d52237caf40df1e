// The wasm boundary is described once per side: src/api/api.c (+ api_test.c in the test builds)
// exports, js/wasm.js's ABI table binds. Both lists must be the same, so nothing is called by a
// name the module lacks and nothing exported goes unbound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ABI, TEST_ABI } from '../js/wasm.js';
import { createEngine, loadModel } from '../js/index.js';
import { ROOT, DEMO } from './helpers.js';

const RUNTIME = new Set(['memory', '_initialize', '__indirect_function_table', 'stackSave', 'stackRestore', 'stackAlloc',
  'emscripten_stack_get_current', '__errno_location', 'emscripten_stack_init', 'emscripten_stack_get_free', 'emscripten_stack_get_base',
  'emscripten_stack_get_end', '_emscripten_stack_restore', '_emscripten_stack_alloc', 'fflush', '__wasm_call_ctors']);
const ours = (file) => WebAssembly.Module.exports(new WebAssembly.Module(fs.readFileSync(path.join(ROOT, 'build/wasm', file))))
  .map((e) => e.name).filter((n) => !RUNTIME.has(n)).map((n) => n.replace(/^ms_/, '')).sort();

for (const [file, table] of [['mlpscope.wasm', ABI], ['mlpscope-mt.wasm', ABI], ['mlpscope-test.wasm', { ...ABI, ...TEST_ABI }], ['mlpscope-mt-test.wasm', { ...ABI, ...TEST_ABI }]])
  test(`${file} exports exactly the ABI table's functions`, () => assert.deepEqual(ours(file), Object.keys(table).sort()));

test('the engine lists its hooks, statistics, errors and activation modes; forward() returns exactly the listed statistics', async () => {
  const e = await createEngine();
  assert.deepEqual(e.info.activations, ['plain', 'int8', 'exact']);
  assert.ok(e.info.errors.includes('E_TOKEN') && e.info.errors.includes('E_ARG'));
  assert.deepEqual(e.info.interventions, e.info.hooks.map((h) => h.name), 'every hook point can be changed');
  assert.deepEqual(e.info.intervention_ops, ['scale', 'set', 'add']);
  const model = await loadModel(DEMO, { engine: e });
  try {
    const r = model.forward([1, 2, 3], { topK: 4 });
    const always = e.info.stats.filter((s) => s.when === 'always' && s.name !== 'layer_ms').map((s) => s.name);
    for (const name of always) assert.equal(r.stats[name].length, model.nLayers, name);
    for (const s of e.info.stats.filter((x) => x.shape.length === 3 && x.when === 'always'))
      assert.equal(r.stats[s.name][0].length, 3 * 4, `${s.name}: [token][top_k] per layer`);
    assert.equal(r.timings.layer_ms.length, model.nLayers);
    assert.deepEqual(model.hookNames().slice(0, e.info.hooks.length), e.info.hooks.map((h) => `blocks.0.${h.name}`));
    assert.equal(model.hookNames().length, model.nLayers * e.info.hooks.length);
  } finally { model.dispose(); }
});

test('validation lives in the engine: bad hooks, interventions, lens positions and DeltaNet chunks are typed errors from C', async () => {
  const model = await loadModel(DEMO, { threads: 1 });
  try {
    const err = (f, re) => assert.throws(f, (x) => x.code === 'E_ARG' && re.test(x.message), String(re));
    err(() => model.forward([1, 2], { hooks: ['blocks.0.hook_nothing'] }), /unknown hook "blocks\.0\.hook_nothing" \(expected blocks\.\{layer\}\.hook_resid_pre\|/);
    err(() => model.forward([1, 2], { hooks: ['blocks.99.hook_mlp_out'] }), /layer 99 does not exist \(the model has 11\)/);
    err(() => model.forward([1, 2], { interventions: [{ layer: 0, hook: 'hook_nothing', scale: 0 }] }), /intervention on "hook_nothing": not a hook point/);
    err(() => model.forward([1, 2], { interventions: [{ layer: 0, hook: 'mlp.hook_post', neurons: [1 << 20], scale: 0 }] }), /blocks\.0\.mlp\.hook_post: neuron 1048576 outside/);
    const H = model.config.hidden_size;
    err(() => model.forward([1, 2], { interventions: [{ hook: 'blocks.2.hook_resid_mid', op: 'add', dims: [H], value: 1 }] }), new RegExp(`blocks\\.2\\.hook_resid_mid: dimension ${H} outside \\[0, ${H}\\)`));
    err(() => model.forward([1, 2], { interventions: [{ hook: 'blocks.2.hook_resid_mid', op: 'add', vector: [1, 2] }] }), new RegExp(`a vector of 2 values for ${H} components`));
    err(() => model.forward([1, 2], { interventions: [{ hook: 'blocks.2.hook_mlp_out', op: 'set', value: NaN }] }), /value is not a finite number/);
    err(() => model.forward([1, 2], { interventions: [{ hook: 'blocks.2.hook_mlp_out', op: 'set', positions: [1e6] }] }), /position 1000000 outside the context/);
    err(() => model.forward([1, 2], { logitLens: { positions: [5] } }), /logitLens position 5 outside \[0, 2\)/);
    err(() => model.setDeltaNetMode({ chunk: 65 }), /DeltaNet chunk 65 is outside \[1, 64\]/);
    assert.throws(() => model.forward([1, 1e6]), (x) => x.code === 'E_TOKEN' && /token id 1000000 at position 1/.test(x.message));
    // the same hook asked twice is captured once and returned under its name
    const r = model.forward([1, 2], { hooks: ['blocks.1.hook_mlp_out', 'blocks.1.hook_mlp_out'] });
    assert.equal(r.hooks['blocks.1.hook_mlp_out'].length, 2 * model.config.hidden_size);
  } finally { model.dispose(); }
});
