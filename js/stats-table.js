// The per-layer statistics of a run as `mlpscope run` prints them: one column (and one JSON entry)
// per statistic the engine lists (engine.info.stats) that has a value per token, so a statistic
// added to the engine's table (MS_STAT_LIST) is printed with no change here.

/**
 * The statistics with a value per token (shape [layer][token], or with more dimensions other than
 * top_k: per head), in the engine's order, that this run has; layer_ms and the top-k neuron lists
 * are not among them.
 * @param {{stats: {name: string, shape: string[], when: string}[]}} info the engine's tables
 * @param {Record<string, any>} st a run's statistics (forward()'s or generate()'s `stats`)
 */
export function perTokenStats(info, st) {
  return info.stats.filter((d) => d.shape[0] === 'layer' && d.shape[1] === 'token' && !d.shape.includes('top_k') && Array.isArray(st[d.name]));
}

/** The column name of a statistic: its name without the `_l2` of the norms. */
const heading = (name) => name.replace(/_l2$/, '');

/**
 * The table's lines: per layer its mixer, the mean of every per-token statistic over the tokens
 * (and heads), '-' where a statistic does not apply to the layer's mixer (`when: 'gdn'` in an
 * attention layer), and the layer's time over all passes.
 * @param {{stats: {name: string, shape: string[], when: string}[]}} info
 * @param {Record<string, any>} st @param {ArrayLike<number>[]} layerMs [layer][pass] ms
 * @returns {string[]}
 */
export function statsTable(info, st, layerMs) {
  const cols = perTokenStats(info, st).map((d) => ({ d, head: heading(d.name), width: Math.max(8, heading(d.name).length) + 2 }));
  const mean = (r) => { let s = 0; for (let i = 0; i < r.length; i++) s += r[i]; return r.length ? s / r.length : 0; };
  const sum = (r) => { let s = 0; for (let i = 0; i < r.length; i++) s += r[i]; return s; };
  const lines = ['layer  mixer ' + cols.map((c) => c.head.padStart(c.width)).join('') + 'ms'.padStart(9)];
  for (let l = 0; l < st.layers; l++) {
    const cells = cols.map(({ d, width }) => (d.when === 'gdn' && st.mixer[l] !== 'linear' ? '-' : mean(st[d.name][l]).toFixed(3)).padStart(width));
    lines.push(`${String(l).padStart(5)}  ${st.mixer[l].padEnd(6)}${cells.join('')}${sum(layerMs[l]).toFixed(2).padStart(9)}`);
  }
  return lines;
}

/**
 * The same statistics for --json: name -> [layer][value] (every token's value, and every head's
 * for per-head statistics), as plain arrays.
 * @param {{stats: {name: string, shape: string[], when: string}[]}} info @param {Record<string, any>} st
 */
export function statsJson(info, st) {
  return Object.fromEntries(perTokenStats(info, st).map((d) => [d.name, st[d.name].map((r) => Array.from(r))]));
}
