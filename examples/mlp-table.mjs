// How much each layer's MLP writes into the residual stream, for one sentence.
//   node examples/mlp-table.mjs WEIGHTS_DIR "Lily went to the park"
import { loadModel } from 'mlpscope';

const [dir, text = 'Lily went to the park with her mom.'] = process.argv.slice(2);
if (!dir) { console.error('usage: node examples/mlp-table.mjs WEIGHTS_DIR [TEXT]'); process.exit(2); }
const model = await loadModel(dir);
const ids = model.tokenizer.encode(text);
const { stats } = model.forward(ids);
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
console.log(`${ids.length} tokens: ${model.tokenizer.pieces(ids).map((p) => JSON.stringify(p.text)).join(' ')}\n`);
console.log('layer  mixer   |resid_pre|  |mixer out|  |mlp_out|  |resid_post|  mlp share');
for (let l = 0; l < stats.layers; l++) {
  const row = [stats.resid_pre_l2, stats.attn_out_l2, stats.mlp_out_l2, stats.resid_post_l2].map((s) => mean(s[l]).toFixed(3).padStart(11));
  console.log(`${String(l).padStart(5)}  ${stats.mixer[l].padEnd(6)} ${row.join('  ')}  ${(100 * mean(stats.mlp_ratio[l])).toFixed(1).padStart(8)}%`);
}
model.dispose();
