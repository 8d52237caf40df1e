// An independent float64 reference of the Gemma 3 text model, written from the published
// architecture (Gemma 3 technical report; Hugging Face's Gemma3TextConfig defaults and its block
// layout). It shares no code with the engine: it reads a Hugging Face checkpoint folder itself
// (config.json + safetensors, F32/BF16/F16, one file or index-sharded) or, for the quantized
// weight types, the dequantized tensors of a converted weight set, and runs token by token with a
// growing key/value list, so it checks the engine's prefill, its sliding window and its decode.
//
//   h    = embed[id] * sqrt(hidden)
//   per layer:  a = attn(norm_in(h));   h += norm_post_attn(a)
//               m = norm_pre_ffn(h);    h += norm_post_ffn(down(gelu_tanh(gate m) * up m))
//   attn: q, k per-head RMSNorm; RoPE (rotate-half) with base rope_local_base_freq on sliding
//         layers, rope_theta (positions / linear factor) on full ones; scores / sqrt(query_pre_attn_scalar);
//         a sliding layer sees its last sliding_window positions
//   every RMSNorm scales by (1 + w); logits = embed · norm_final(h) (tied) or lm_head · ...
import fs from 'node:fs';
import path from 'node:path';
import { loadWeights } from './reference.js';

// ---- weights --------------------------------------------------------------------------------

function toF64(buf, dtype, n) {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength), out = new Float64Array(n);
  const tmp = new DataView(new ArrayBuffer(4));
  for (let i = 0; i < n; i++) {
    if (dtype === 'F32') out[i] = dv.getFloat32(4 * i, true);
    else if (dtype === 'BF16') { tmp.setUint32(0, dv.getUint16(2 * i, true) << 16); out[i] = tmp.getFloat32(0); }
    else if (dtype === 'F16') {
      const h = dv.getUint16(2 * i, true), s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
      out[i] = e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
    } else throw new Error(`gemma3 reference: dtype ${dtype}`);
  }
  return out;
}

/** The text tensors of a Hugging Face Gemma 3 folder, under their names inside the language model. */
export function weightsFromHf(dir) {
  const idx = path.join(dir, 'model.safetensors.index.json');
  const files = fs.existsSync(idx) ? [...new Set(Object.values(JSON.parse(fs.readFileSync(idx, 'utf8')).weight_map))] : ['model.safetensors'];
  const W = {};
  for (const f of files) {
    const b = fs.readFileSync(path.join(dir, f));
    const hl = Number(b.readBigUInt64LE(0)), header = JSON.parse(b.subarray(8, 8 + hl).toString('utf8'));
    for (const [name, t] of Object.entries(header)) {
      if (name === '__metadata__') continue;
      const short = name.replace(/^(model\.language_model\.|language_model\.model\.|model\.)/, '').replace(/\.weight$/, '');
      if (/vision_tower|multi_modal_projector/.test(name)) continue;
      const n = t.shape.reduce((a, c) => a * c, 1);
      W[short === 'language_model.lm_head' ? 'lm_head' : short] = toF64(b.subarray(8 + hl + t.data_offsets[0], 8 + hl + t.data_offsets[1]), t.dtype, n);
    }
  }
  return W;
}

/** Gemma3TextConfig with its defaults (the text_config of a multimodal config.json, or the manifest's config). */
export function gemma3Config(raw) {
  const c = raw.text_config ?? raw.config ?? raw;
  const H = c.hidden_size ?? 2304, L = c.num_hidden_layers ?? 26, heads = c.num_attention_heads ?? 8;
  const pattern = c.sliding_window_pattern ?? c._sliding_window_pattern ?? 6;
  const types = c.layer_types ?? Array.from({ length: L }, (_, l) => ((l + 1) % pattern ? 'sliding_attention' : 'full_attention'));
  const rp = c.rope_parameters ?? {};
  const scaling = rp.full_attention ?? c.rope_scaling ?? null;
  const factor = scaling && (scaling.rope_type ?? scaling.type) === 'linear' ? scaling.factor : 1;
  return {
    H, I: c.intermediate_size ?? 9216, L, V: c.vocab_size ?? 262208, heads, kvHeads: c.num_key_value_heads ?? 4,
    headDim: c.head_dim ?? 256, eps: c.rms_norm_eps ?? 1e-6, queryScalar: c.query_pre_attn_scalar ?? 256,
    window: c.sliding_window ?? 4096, types,
    thetaGlobal: rp.full_attention?.rope_theta ?? c.rope_theta ?? 1e6, factor,
    thetaLocal: rp.sliding_attention?.rope_theta ?? c.rope_local_base_freq ?? 1e4,
    tied: (raw.tie_word_embeddings ?? c.tie_word_embeddings) ?? true,
  };
}

// ---- math ----------------------------------------------------------------------------------

const matvec = (W, x, rows, cols) => {
  const y = new Float64Array(rows);
  for (let o = 0; o < rows; o++) { let s = 0; const b = o * cols; for (let i = 0; i < cols; i++) s += W[b + i] * x[i]; y[o] = s; }
  return y;
};
const norm2 = (x) => Math.sqrt(x.reduce((s, v) => s + v * v, 0));
/** Gemma's RMSNorm: x / rms(x) * (1 + w) */
function rmsNorm(x, w, eps) {
  const r = 1 / Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length + eps);
  return x.map((v, i) => v * r * (1 + w[i]));
}
/** the tanh GELU, 0.5 x (1 + tanh z), z = sqrt(2/pi) (x + 0.044715 x^3), written as x / (1 + e^(-2z)),
 * which is the same number without the cancellation in 1 + tanh z for negative x */
export const geluTanh = (x) => x / (1 + Math.exp(-2 * Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
/** rotate-half RoPE over the whole head */
function rope(v, pos, theta) {
  const d = v.length, half = d / 2, out = Float64Array.from(v);
  for (let i = 0; i < half; i++) {
    const ang = pos * theta ** (-2 * i / d), c = Math.cos(ang), s = Math.sin(ang);
    out[i] = v[i] * c - v[i + half] * s;
    out[i + half] = v[i + half] * c + v[i] * s;
  }
  return out;
}

export class Gemma3Reference {
  /** @param {{config: object, W: Record<string, Float64Array>}} src */
  constructor({ config, W }) {
    this.c = gemma3Config(config);
    this.W = W;
    this.reset();
  }
  /** a Hugging Face folder */
  static fromHf(dir) {
    return new Gemma3Reference({ config: JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')), W: weightsFromHf(dir) });
  }
  /** a converted weight set (any weight type, dequantized) */
  static fromManifest(dir) {
    const { man, W } = loadWeights(dir);
    return new Gemma3Reference({ config: man.config, W });
  }

  reset() { this.pos = 0; this.kv = this.c.types.map(() => ({ k: [], v: [] })); this.patterns = {}; }

  /** Feeds ids one at a time; per-position logits and [layer][pos] norms of what each part adds. */
  run(ids) {
    const c = this.c, W = this.W;
    const st = { resid_pre_l2: [], attn_out_l2: [], resid_mid_l2: [], mlp_out_l2: [], resid_post_l2: [], neurons: [] };
    for (const k in st) for (let l = 0; l < c.L; l++) st[k].push([]);
    const logits = [];
    for (const id of ids) {
      let x = W.embed_tokens.slice(id * c.H, (id + 1) * c.H).map((v) => v * Math.sqrt(c.H));
      for (let l = 0; l < c.L; l++) {
        const P = `layers.${l}.`;
        st.resid_pre_l2[l].push(norm2(x));
        const a = rmsNorm(this.attention(l, rmsNorm(x, W[P + 'input_layernorm'], c.eps)), W[P + 'post_attention_layernorm'], c.eps);
        st.attn_out_l2[l].push(norm2(a));
        x = x.map((v, i) => v + a[i]);
        st.resid_mid_l2[l].push(norm2(x));
        const m = rmsNorm(x, W[P + 'pre_feedforward_layernorm'], c.eps);
        const g = matvec(W[P + 'mlp.gate_proj'], m, c.I, c.H), u = matvec(W[P + 'mlp.up_proj'], m, c.I, c.H);
        const h = g.map((v, i) => geluTanh(v) * u[i]);
        st.neurons[l].push(h);
        const d = rmsNorm(matvec(W[P + 'mlp.down_proj'], h, c.H, c.I), W[P + 'post_feedforward_layernorm'], c.eps);
        st.mlp_out_l2[l].push(norm2(d));
        x = x.map((v, i) => v + d[i]);
        st.resid_post_l2[l].push(norm2(x));
      }
      logits.push(matvec(c.tied ? W.embed_tokens : W.lm_head, rmsNorm(x, W.norm, c.eps), c.V, c.H));
      this.pos++;
    }
    return { logits, stats: st, patterns: this.patterns };
  }

  attention(l, xn) {
    const c = this.c, W = this.W, P = `layers.${l}.self_attn.`, hd = c.headDim, p = this.pos;
    const local = c.types[l] === 'sliding_attention';
    const theta = local ? c.thetaLocal : c.thetaGlobal, rpos = local ? p : p / c.factor;
    const q = matvec(W[P + 'q_proj'], xn, c.heads * hd, c.H), k = matvec(W[P + 'k_proj'], xn, c.kvHeads * hd, c.H), v = matvec(W[P + 'v_proj'], xn, c.kvHeads * hd, c.H);
    const ks = [], vs = [];
    for (let j = 0; j < c.kvHeads; j++) {
      ks.push(rope(rmsNorm(k.slice(j * hd, (j + 1) * hd), W[P + 'k_norm'], c.eps), rpos, theta));
      vs.push(v.slice(j * hd, (j + 1) * hd));
    }
    this.kv[l].k.push(ks);
    this.kv[l].v.push(vs);
    const first = local ? Math.max(0, p - c.window + 1) : 0;
    const o = new Float64Array(c.heads * hd);
    for (let h = 0; h < c.heads; h++) {
      const qh = rope(rmsNorm(q.slice(h * hd, (h + 1) * hd), W[P + 'q_norm'], c.eps), rpos, theta);
      const j = Math.floor(h / (c.heads / c.kvHeads));
      const s = [];
      for (let t = first; t <= p; t++) { let d = 0; for (let i = 0; i < hd; i++) d += qh[i] * this.kv[l].k[t][j][i]; s.push(d / Math.sqrt(c.queryScalar)); }
      const mx = Math.max(...s), e = s.map((z) => Math.exp(z - mx)), z = e.reduce((a2, b) => a2 + b, 0);
      ((this.patterns[l] ??= Array.from({ length: c.heads }, () => []))[h]).push([...Array(first).fill(0), ...e.map((w) => w / z)]);
      for (let t = first; t <= p; t++) for (let i = 0; i < hd; i++) o[h * hd + i] += (e[t - first] / z) * this.kv[l].v[t][j][i];
    }
    return matvec(W[P + 'o_proj'], o, c.H, c.heads * hd);
  }
}
