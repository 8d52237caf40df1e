// Test shapes of a gemm kernel, derived from its edges in the engine's kernel table (engine info
// "gemm_kernels"): tests/kernels.test.js in Node and tests/relaxed.test.js in Chromium use them.
// No Node imports: the browser side loads this file as it is.

/** shapes [rows, cols, T] from a kernel's edges */
export function edgeShapes(k) {
  const up = (v, step) => Math.max(step, Math.ceil(v / step) * step);
  const around = (edges, step) => [...new Set(edges.filter((x) => x > 0).flatMap((x) => [x - step, x, x + step]).filter((x) => x >= step).map((x) => up(x, step)))];
  const rows = around([k.row_step, k.tile_rows, 2 * k.tile_rows, k.decode_rows, 2 * k.decode_rows, k.row_chunk], k.row_step);
  const cols = around([k.col_block, 2 * k.col_block, k.col_chunk, k.max_cols], k.col_step);
  const toks = around([1, k.tile_tokens, 2 * k.tile_tokens], 1);
  const base = [up(2 * k.decode_rows + k.row_step, k.row_step), up(2 * k.col_block + k.col_step, k.col_step), k.tile_tokens + 1];
  const out = [];
  for (const r of rows) out.push([r, base[1], base[2]], [r, base[1], 1]);
  for (const c of cols) out.push([base[0], c, base[2]], [base[0], c, 1]);
  for (const t of toks) out.push([base[0], base[1], t]);
  // small corners: every small row count with every token count
  for (const r of rows.filter((x) => x <= 2 * k.decode_rows + k.row_step)) for (const t of toks) out.push([r, k.col_block > 1 ? k.col_step : 3, t]);
  const seen = new Set();
  return out.filter((sh) => !seen.has(sh.join()) && seen.add(sh.join()));
}
