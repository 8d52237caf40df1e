// Picking the k best of n scored items in one pass: the top tokens of a logit vector, the places a
// neuron fires most. Shared so that every list in the package orders ties the same way. And the
// one comparison of two logit vectors the package makes (KL of their softmaxes).

/**
 * Indices 0..n-1 of the k items that rank first, best first. `before(a, b)` is true when item a
 * ranks ahead of item b; it must be a strict order (break ties, e.g. by the lower index).
 * @param {number} n @param {number} k @param {(a: number, b: number) => boolean} before
 * @returns {number[]}
 */
export function topIndices(n, k, before) {
  const best = [];
  for (let i = 0; i < n; i++) {
    if (best.length === k && !before(i, best[k - 1])) continue;
    let j = best.length < k ? best.length : k - 1;
    while (j > 0 && before(i, best[j - 1])) { best[j] = best[j - 1]; j--; }
    best[j] = i;
  }
  return best;
}

/**
 * KL(p ‖ q) in nats between the softmaxes of two logit vectors, over their first n entries
 * (default all: pass the real vocabulary size to leave padded rows out).
 * @param {ArrayLike<number>} a @param {ArrayLike<number>} b @param {number} [n]
 */
export function klDivergence(a, b, n = a.length) {
  let ma = -Infinity, mb = -Infinity;
  for (let i = 0; i < n; i++) { if (a[i] > ma) ma = a[i]; if (b[i] > mb) mb = b[i]; }
  let za = 0, zb = 0;
  for (let i = 0; i < n; i++) { za += Math.exp(a[i] - ma); zb += Math.exp(b[i] - mb); }
  const lza = Math.log(za), lzb = Math.log(zb);
  let kl = 0;
  for (let i = 0; i < n; i++) { const la = a[i] - ma - lza; kl += Math.exp(la) * (la - (b[i] - mb - lzb)); }
  return Math.max(0, kl);
}

/**
 * The summed next-token loss (nats) of ids under logits for every position ([T][V] rows of a
 * forward pass with logits 'all'): Σ_t −log softmax(row t)[ids[t + 1]] over the first n entries of
 * each row (the real vocabulary), and the number of predictions (T − 1).
 * @param {Float32Array} logits @param {ArrayLike<number>} ids @param {number} V @param {number} n
 */
export function nextTokenLoss(logits, ids, V, n) {
  let s = 0;
  for (let t = 0; t + 1 < ids.length; t++) {
    const row = logits.subarray(t * V, t * V + n);
    let mx = -Infinity; for (let i = 0; i < n; i++) if (row[i] > mx) mx = row[i];
    let z = 0; for (let i = 0; i < n; i++) z += Math.exp(row[i] - mx);
    s += mx + Math.log(z) - row[ids[t + 1]];
  }
  return { sum: s, count: Math.max(0, ids.length - 1) };
}
