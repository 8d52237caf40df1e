// Activation patching on the demo model: two sentences that differ in one word; which layer and
// position carry the difference to the next-token distribution? Prints a layer × position table of
// how much of the clean answer one patched activation restores (1.00 = all of it).
//   node examples/patching.mjs [WEIGHTS_DIR] [HOOK]     (default: the demo model, hook_resid_pre)
import { loadModel, demoModelUrl } from 'mlpscope';

const [dir, hook = 'hook_resid_pre'] = process.argv.slice(2);
const model = await loadModel(dir || demoModelUrl);
const tok = model.tokenizer;
const clean = tok.encode('def main(): return x');
const corrupted = clean.slice();
const at = clean.indexOf(tok.encode(' return')[0]);
corrupted[at] = tok.encode(' print')[0]; // " return" → " print": one token differs
// the metric: how far the patched run's next-token distribution is from the clean run's (KL)
const r = model.activationPatching(clean, corrupted, { hook, metric: 'kl' });
console.log(`clean:     ${JSON.stringify(tok.decode(clean))}\ncorrupted: ${JSON.stringify(tok.decode(corrupted))}`);
console.log(`metric: KL(clean ‖ patched) of the next token: ${r.corrupted.toExponential(2)} nats unpatched`);
console.log(`restored by patching ${hook} (rows: layers; columns: positions)\n`);
const cols = r.positions.map((p) => JSON.stringify(tok.pieces(clean)[p].text).slice(0, 8).padStart(9));
console.log('layer' + cols.join(''));
r.restored.forEach((row, i) => console.log(String(r.layers[i]).padStart(5) + row.map((v) => v.toFixed(2).padStart(9)).join('')));
model.dispose();
