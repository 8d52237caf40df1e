// A gated neuron read from its weights alone: the cosines between the two vectors it reads with
// (w_gate, a row of gate_proj; w_in, a row of up_proj) and the one it writes with (w_out, a column
// of down_proj), and the input-output class they put it in (Gerstner & Schütze 2025, "Understanding
// gated neurons in transformers from their input-output functionality", arXiv 2505.17936).
//
// The neuron adds silu(w_gate·x̂)(w_in·x̂) w_out. Flipping w_in and w_out together changes nothing,
// so only sign-free combinations mean something. Each cosine is rounded to +1, 0 or −1 at the
// threshold t (|cos| > t counts as aligned); then, by cos(w_in, w_out) and whether w_out follows
// the gate (|cos(w_gate, w_out)| > t):
//   cos(in,out) +1: enrichment (out follows the gate) / conditional enrichment (it does not):
//                   the neuron adds more of the direction it reads (the second: only when the
//                   gate, reading another direction, lets it through)
//   cos(in,out) −1: depletion / conditional depletion: it takes away the direction it reads
//   cos(in,out)  0: proportional change (out is the gate's direction, scaled by w_in·x̂) /
//                   orthogonal output (out is neither: it writes something else)
// A neuron is "typical" when the rounded cos(w_gate, w_in) is the product of the other two (for
// enrichment w_gate ≈ w_in ≈ w_out up to the joint flip, for depletion w_gate ≈ w_in ≈ −w_out, for
// the conditional classes and proportional change the gate and w_in are unrelated); orthogonal
// output is always typical. The rest are counted as atypical members of their class.
import { MlpscopeError } from './errors.js';
import * as A from './args.js';

/** What these functions use of a Model (js/model.js, which calls them: no import back).
 * @typedef {{ e: any, m: number, config: any, nLayers: number, _alive(): void, _geometry?: Map<string, Record<string, Float32Array>> }} GeometryModel */

/** The six input-output classes, in the order of the `classes` codes. */
export const WEIGHT_CLASSES = Object.freeze(['enrichment', 'conditional_enrichment', 'depletion', 'conditional_depletion', 'proportional_change', 'orthogonal_output']);

const sign = (c, t) => (c > t ? 1 : c < -t ? -1 : 0);

/**
 * The class of one neuron from its three cosines: { class (a name of WEIGHT_CLASSES), code (its
 * index), atypical }.
 * @param {number} cosGateIn @param {number} cosGateOut @param {number} cosInOut @param {number} [threshold]
 */
export function weightClassOf(cosGateIn, cosGateOut, cosInOut, threshold = 0.5) {
  const gi = sign(cosGateIn, threshold), go = sign(cosGateOut, threshold), io = sign(cosInOut, threshold);
  const code = (io === 1 ? 0 : io === -1 ? 2 : 4) + (go === 0 ? 1 : 0);
  const atypical = code !== 5 && gi !== io * go;
  return { class: WEIGHT_CLASSES[code], code, atypical };
}

/** this model's per-neuron geometry of one layer, computed once per (layer, foldNorm) */
function geometryOf(model, layer, foldNorm) {
  const cache = (model._geometry ??= new Map()), key = `${layer}/${foldNorm ? 1 : 0}`;
  if (cache.has(key)) return cache.get(key);
  const e = model.e, I = model.config.intermediate_size, n = e.info.neuron_geometry.length;
  const p = e.malloc(I * n * 4);
  try {
    e.c.mlp_neuron_geometry(model.m, layer, foldNorm ? 1 : 0, p);
    const raw = e.f32.slice(p >> 2, (p >> 2) + I * n), cols = {};
    // the engine's column order is data (ms_engine_info "neuron_geometry"), not copied here
    e.info.neuron_geometry.forEach((name, c) => { cols[name] = Float32Array.from({ length: I }, (_, k) => raw[k * n + c]); });
    cache.set(key, cols);
    return cols;
  } finally { e.free(p); }
}

function checkOptions(model, opts, where) {
  const { layers, threshold = 0.5, foldNorm = true } = A.options(opts, where);
  const L = model.nLayers;
  A.intList(layers, where, 'layers');
  for (const l of layers ?? []) if (l < 0 || l >= L) throw new MlpscopeError('E_ARG', `${where}: layers: layer ${l} is not in 0..${L - 1}`);
  if (typeof threshold !== 'number' || !(threshold > 0 && threshold < 1)) throw new MlpscopeError('E_ARG', `${where}: threshold must be a number between 0 and 1 (exclusive), got ${A.show(threshold)}`);
  if (typeof foldNorm !== 'boolean') throw new MlpscopeError('E_ARG', `${where}: foldNorm must be true or false, got ${A.show(foldNorm)}`);
  return { layers: layers ? [...layers] : Array.from({ length: L }, (_, l) => l), threshold, foldNorm };
}

const median = (xs) => { const s = Float64Array.from(xs).sort(), n = s.length; return n ? (n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : NaN; };

/**
 * Every neuron of the chosen layers (default: all) in its input-output class, from the weights
 * alone: per layer the three cosines and three norms per neuron, the class code of each neuron
 * (an index into WEIGHT_CLASSES), which are atypical, the count per class and the median
 * cos(w_in, w_out). foldNorm (default true): the MLP's RMSNorm gain is multiplied into w_gate and
 * w_in first, so they are the directions of the residual stream the neuron reads (as
 * TransformerLens's fold_ln does); q8 / q4 weights are read exactly; cosines in float64.
 * @param {GeometryModel} model
 * @param {{layers?: number[], threshold?: number, foldNorm?: boolean}} [opts]
 */
export function neuronWeightClasses(model, opts) {
  const where = 'neuronWeightClasses()';
  model._alive();
  const { layers, threshold, foldNorm } = checkOptions(model, opts, where);
  const out = layers.map((layer) => {
    const g = geometryOf(model, layer, foldNorm), I = g.cos_gate_in.length;
    const classes = new Uint8Array(I), atypical = new Uint8Array(I);
    const counts = Object.fromEntries(WEIGHT_CLASSES.map((c) => [c, 0]));
    let atypicalCount = 0;
    for (let k = 0; k < I; k++) {
      const c = weightClassOf(g.cos_gate_in[k], g.cos_gate_out[k], g.cos_in_out[k], threshold);
      classes[k] = c.code; counts[c.class]++;
      if (c.atypical) { atypical[k] = 1; atypicalCount++; }
    }
    // copies: the cache stays the model's own (a caller may change them, a Worker transfers them)
    return { layer, cosGateIn: g.cos_gate_in.slice(), cosGateOut: g.cos_gate_out.slice(), cosInOut: g.cos_in_out.slice(), normGate: g.norm_gate.slice(), normIn: g.norm_in.slice(), normOut: g.norm_out.slice(),
      classes, atypical, counts, atypicalCount, medianCosInOut: median(g.cos_in_out) };
  });
  return { threshold, foldNorm, classes: WEIGHT_CLASSES, layers: out };
}

/**
 * One neuron's weight geometry and class (its layer is computed once and kept by the model).
 * @param {GeometryModel} model @param {number} layer @param {number} neuron
 * @param {{threshold?: number, foldNorm?: boolean}} [opts]
 */
export function neuronWeightClass(model, layer, neuron, opts) {
  const where = 'neuronWeightClass()';
  model._alive();
  if (!Number.isInteger(layer) || layer < 0 || layer >= model.nLayers) throw new MlpscopeError('E_ARG', `${where}: layer ${A.show(layer)} is not an integer in 0..${model.nLayers - 1}`);
  const I = model.config.intermediate_size;
  if (!Number.isInteger(neuron) || neuron < 0 || neuron >= I) throw new MlpscopeError('E_ARG', `${where}: neuron ${A.show(neuron)} is not an integer in 0..${I - 1}`);
  const { threshold, foldNorm } = checkOptions(model, { ...A.options(opts, where), layers: undefined }, where);
  const g = geometryOf(model, layer, foldNorm);
  const c = weightClassOf(g.cos_gate_in[neuron], g.cos_gate_out[neuron], g.cos_in_out[neuron], threshold);
  return { layer, neuron, threshold, foldNorm, cosGateIn: g.cos_gate_in[neuron], cosGateOut: g.cos_gate_out[neuron], cosInOut: g.cos_in_out[neuron],
    normGate: g.norm_gate[neuron], normIn: g.norm_in[neuron], normOut: g.norm_out[neuron], class: c.class, atypical: c.atypical };
}
