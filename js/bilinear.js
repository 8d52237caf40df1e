// The bilinear view of a SwiGLU MLP (Pearce et al., ICLR 2025, "Bilinear MLPs enable weight-based
// mechanistic interpretability", arXiv 2410.08417). Near z = 0, silu(z) = z/2 + z²/4 − …, so the
// leading term of a gated neuron is (w_gate·x)(w_in·x)/2: bilinear in the stream x. Read out along
// a direction, the whole MLP's bilinear part is one quadratic form xᵀQx (src/analysis/weights.h,
// ms_mlp_interaction), and Q's eigenvectors with the largest |eigenvalue| are the input directions
// that raise (λ > 0) or lower (λ < 0) that read-out most, from the weights alone.
// bilinearGap measures how far each real MLP is from that bilinear stand-in: the same text with one
// layer's SiLU replaced by z/2 (forward's bilinearMlp), as KL and next-token loss.
import { MlpscopeError } from './errors.js';
import { klDivergence, nextTokenLoss } from './select.js';
import * as A from './args.js';

/** What these functions use of a Model (js/model.js calls them: no import back).
 * @typedef {{ e: any, m: number, config: any, nLayers: number, tokenizer: any, _alive(): void, _info: any,
 *   forward(ids: ArrayLike<number>, opts?: object): any, unembedDirection(v: ArrayLike<number>, opts?: object): any }} BilinearModel */

/** Cyclic Jacobi rotations on a dense symmetric n×n matrix (float64, row-major, destroyed):
 *  eigenvalues and the matrix of eigenvectors (column i belongs to value i). */
export function jacobiEigen(a, n) {
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0, diag = 0;
    for (let i = 0; i < n; i++) { diag += a[i * n + i] ** 2; for (let j = i + 1; j < n; j++) off += a[i * n + j] ** 2; }
    if (off <= 1e-30 * diag || off === 0) break;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) {
      const apq = a[p * n + q];
      if (apq === 0) continue;
      // the rotation that zeroes a[p][q]: tan(2θ) = 2 apq / (aqq − app)
      const theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
      const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1)), c = 1 / Math.sqrt(t * t + 1), s = t * c;
      for (let k = 0; k < n; k++) { // columns p and q
        const akp = a[k * n + p], akq = a[k * n + q];
        a[k * n + p] = c * akp - s * akq; a[k * n + q] = s * akp + c * akq;
      }
      for (let k = 0; k < n; k++) { // rows p and q
        const apk = a[p * n + k], aqk = a[q * n + k];
        a[p * n + k] = c * apk - s * aqk; a[q * n + k] = s * apk + c * aqk;
      }
      for (let k = 0; k < n; k++) {
        const vkp = v[k * n + p], vkq = v[k * n + q];
        v[k * n + p] = c * vkp - s * vkq; v[k * n + q] = s * vkp + c * vkq;
      }
    }
  }
  return { values: Float64Array.from({ length: n }, (_, i) => a[i * n + i]), vectors: v };
}

/** y = Q x for the float32 H×H matrix Q */
function matvec(Q, x, H, y) {
  for (let i = 0; i < H; i++) { let s = 0; const o = i * H; for (let j = 0; j < H; j++) s += Q[o + j] * x[j]; y[i] = s; }
  return y;
}

/**
 * The k eigenpairs of largest |value| of a symmetric H×H matrix: Lanczos with full
 * reorthogonalization (exact when it runs H steps), Ritz pairs from the small tridiagonal matrix,
 * each with its residual ‖Qv − λv‖.
 */
export function topEigen(Q, H, k) {
  const m = Math.min(H, Math.max(4 * k + 40, 60));
  const qs = [], alpha = [], beta = [];
  let q = Float64Array.from({ length: H }, (_, i) => 1 + ((i * 7919) % 13) / 13); // fixed, not orthogonal to anything in particular
  let nq = Math.hypot(...q); q = q.map((x) => x / nq);
  const w = new Float64Array(H);
  for (let j = 0; j < m; j++) {
    qs.push(q);
    matvec(Q, q, H, w);
    let a = 0; for (let i = 0; i < H; i++) a += q[i] * w[i];
    alpha.push(a);
    for (let pass = 0; pass < 2; pass++) // full reorthogonalization, twice
      for (const p of qs) { let d = 0; for (let i = 0; i < H; i++) d += p[i] * w[i]; for (let i = 0; i < H; i++) w[i] -= d * p[i]; }
    const b = Math.hypot(...w);
    if (j === m - 1 || b <= 1e-12 * (Math.abs(a) + (beta.at(-1) ?? 0) + 1e-300)) break; // done, or an invariant subspace
    beta.push(b);
    q = w.map((x) => x / b);
  }
  const n = alpha.length, T = new Float64Array(n * n);
  for (let i = 0; i < n; i++) { T[i * n + i] = alpha[i]; if (i + 1 < n) T[i * n + i + 1] = T[(i + 1) * n + i] = beta[i]; }
  const { values, vectors } = jacobiEigen(T, n);
  const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => Math.abs(values[y]) - Math.abs(values[x]) || x - y).slice(0, k);
  const y = new Float64Array(H);
  return order.map((i) => {
    const v = new Float64Array(H);
    for (let j = 0; j < n; j++) { const c = vectors[j * n + i]; for (let h = 0; h < H; h++) v[h] += c * qs[j][h]; }
    const nv = Math.hypot(...v); for (let h = 0; h < H; h++) v[h] /= nv;
    // a fixed sign: the largest component positive
    let big = 0; for (let h = 1; h < H; h++) if (Math.abs(v[h]) > Math.abs(v[big])) big = h;
    if (v[big] < 0) for (let h = 0; h < H; h++) v[h] = -v[h];
    matvec(Q, v, H, y);
    let r = 0; for (let h = 0; h < H; h++) r += (y[h] - values[i] * v[h]) ** 2;
    return { value: values[i], vector: Float32Array.from(v), residual: Math.sqrt(r) };
  });
}

const where = 'bilinearView()';

/**
 * The bilinear view of layer `layer`'s MLP read out along one of: `token` (its unembedding through
 * the final norm's gain: the MLP's direct effect on that logit), `direction` (any hidden-size
 * vector, e.g. a feature) or `neuron` (that neuron alone). Returns the interaction matrix Q
 * (hidden × hidden, row-major: read-out ≈ x̂ᵀQx̂ with SiLU replaced by z/2), up to k eigenpairs of
 * largest |value| (fewer when Q has a lower rank: one neuron alone gives at most 2 that are not 0) (each direction read by the head: the tokens at both ends), ‖Q‖²_F = Σλ², the
 * trace Σλ and the share of Σλ² the k pairs hold.
 * @param {BilinearModel} model
 * @param {{layer: number, token?: number, direction?: ArrayLike<number>, neuron?: number, k?: number, foldNorm?: boolean, tokens?: number}} opts
 */
export function bilinearView(model, opts) {
  model._alive();
  const { layer, token, direction, neuron, k = 8, foldNorm = true, tokens = 5 } = A.options(opts, where);
  const e = model.e, H = model.config.hidden_size, I = model.config.intermediate_size, L = model.nLayers;
  if (!Number.isInteger(layer) || layer < 0 || layer >= L) throw new MlpscopeError('E_ARG', `${where}: layer ${A.show(layer)} is not an integer in 0..${L - 1}`);
  const given = [token, direction, neuron].filter((x) => x !== undefined).length;
  if (given !== 1) throw new MlpscopeError('E_ARG', `${where}: give exactly one of token, direction or neuron (got ${given})`);
  if (!Number.isInteger(k) || k < 1 || k > H) throw new MlpscopeError('E_ARG', `${where}: k ${A.show(k)} is not an integer in 1..${H}`);
  if (typeof foldNorm !== 'boolean') throw new MlpscopeError('E_ARG', `${where}: foldNorm must be true or false, got ${A.show(foldNorm)}`);
  if (!Number.isInteger(tokens) || tokens < 1) throw new MlpscopeError('E_ARG', `${where}: tokens ${A.show(tokens)} is not a positive integer`);
  const V = model.config.vocab_size;
  if (token !== undefined && !(Number.isInteger(token) && token >= 0 && token < V)) throw new MlpscopeError('E_ARG', `${where}: token ${A.show(token)} is not an id in 0..${V - 1}`);
  if (neuron !== undefined && !(Number.isInteger(neuron) && neuron >= 0 && neuron < I)) throw new MlpscopeError('E_ARG', `${where}: neuron ${A.show(neuron)} is not an integer in 0..${I - 1}`);
  if (direction !== undefined) {
    A.list(direction, where, 'direction');
    if (direction.length !== H) throw new MlpscopeError('E_ARG', `${where}: the direction has ${direction.length} values, the model's hidden size is ${H}`);
    for (let i = 0; i < H; i++) if (!Number.isFinite(direction[i])) throw new MlpscopeError('E_ARG', `${where}: the direction's value ${i} is ${A.show(direction[i])}, not a finite number`);
  }
  let up = 0, cp = 0, qp = 0;
  try {
    up = e.malloc(H * 4); cp = e.malloc(I * 4); qp = e.malloc(H * H * 4);
    // the read-out weight of every neuron: c = downᵀ u (one-hot for a neuron alone)
    if (neuron !== undefined) { e.f32.fill(0, cp >> 2, (cp >> 2) + I); e.f32[(cp >> 2) + neuron] = 1; }
    else {
      if (token !== undefined) e.c.head_readout(model.m, token, -1, up);
      else e.f32.set(Float32Array.from(direction), up >> 2);
      e.c.mlp_down_readout(model.m, layer, up, cp);
    }
    const c = e.f32.slice(cp >> 2, (cp >> 2) + I);
    e.c.mlp_interaction(model.m, layer, cp, foldNorm ? 1 : 0, qp);
    const Q = e.f32.slice(qp >> 2, (qp >> 2) + H * H);
    let fro = 0, trace = 0;
    for (let i = 0; i < H; i++) { trace += Q[i * H + i]; for (let j = 0; j < H; j++) fro += Q[i * H + j] ** 2; }
    const pairs = topEigen(Q, H, k).map((p) => {
      const u = model.unembedDirection(p.vector, { k: tokens });
      return { ...p, promoted: u.promoted, suppressed: u.suppressed };
    });
    const held = pairs.reduce((a, p) => a + p.value ** 2, 0);
    return { layer, source: token !== undefined ? 'token' : neuron !== undefined ? 'neuron' : 'direction', token, neuron, foldNorm,
      readout: c, Q, eigen: pairs, frobenius2: fro, trace, explained: fro > 0 ? held / fro : 0 };
  } finally { e.free(up); e.free(cp); e.free(qp); }
}

/**
 * How far each MLP is from its bilinear stand-in on a text: for each of `layers` (default all)
 * the text is run again with that layer's SiLU replaced by z/2 (and once with all of them), and
 * compared with the real pass: mean KL(real ‖ bilinear) over the positions, in nats, and the
 * change of the mean next-token loss.
 * @param {BilinearModel} model @param {string | ArrayLike<number>} input text (with a tokenizer) or ids
 * @param {{layers?: number[]}} [opts]
 */
export function bilinearGap(model, input, opts) {
  const w = 'bilinearGap()';
  model._alive();
  const { layers } = A.options(opts, w);
  A.intList(layers, w, 'layers');
  const L = model.nLayers;
  for (const l of layers ?? []) if (l < 0 || l >= L) throw new MlpscopeError('E_ARG', `${w}: layers: layer ${l} is not in 0..${L - 1}`);
  let ids;
  if (typeof input === 'string') {
    if (!model.tokenizer) throw new MlpscopeError('E_TOKEN', `${w}: this model has no tokenizer: give token ids`);
    ids = model.tokenizer.encode(input);
  } else ids = Array.from(A.ids(input, w, 'input'));
  if (ids.length < 2) throw new MlpscopeError('E_ARG', `${w}: the text has ${ids.length} token(s): at least 2 are needed (a next token to predict)`);
  const V = model.config.vocab_size, n = model.tokenizer?.vocabSize || model._info.tokenizer?.vocab_size || V, T = ids.length;
  const nll = (lg) => nextTokenLoss(lg, ids, V, n).sum / (T - 1); // mean over positions 0..T-2
  const run = (bilinearMlp) => model.forward(ids, { stats: false, logits: 'all', bilinearMlp }).logits;
  const clean = run([]), loss = nll(clean);
  const compare = (lg) => {
    let kl = 0;
    for (let t = 0; t < T; t++) kl += klDivergence(clean.subarray(t * V, (t + 1) * V), lg.subarray(t * V, (t + 1) * V), n);
    return { kl: kl / T, dLoss: nll(lg) - loss };
  };
  const which = layers ? [...layers] : Array.from({ length: L }, (_, l) => l);
  return { tokens: T, loss, layers: which.map((layer) => ({ layer, ...compare(run([layer])) })), all: compare(run(which)) };
}
