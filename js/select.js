// Picking the k best of n scored items in one pass: the top tokens of a logit vector, the places a
// neuron fires most. Shared so that every list in the package orders ties the same way.

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
