// An independent float64 reference for both families, written from
// ../shared/reference/qwen3.5-text-spec.md and llama2.c's run.c. It shares no code with the
// engine: its own manifest reading, dequantization, configuration defaults and math. It runs
// token by token (the recurrent definition of Gated DeltaNet), so it also checks the engine's
// chunked prefill.
import fs from 'node:fs';
import path from 'node:path';

// ---- weights --------------------------------------------------------------------------------

function f16(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** Dequantizes one tensor's bytes (docs/format.md) into a Float64Array. */
export function dequant(buf, dtype, n) {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out = new Float64Array(n);
  if (dtype === 'f32') for (let i = 0; i < n; i++) out[i] = dv.getFloat32(4 * i, true);
  else if (dtype === 'f16') for (let i = 0; i < n; i++) out[i] = f16(dv.getUint16(2 * i, true));
  else if (dtype === 'bf16') for (let i = 0; i < n; i++) { const b = new DataView(new ArrayBuffer(4)); b.setUint32(0, dv.getUint16(2 * i, true) << 16); out[i] = b.getFloat32(0); }
  else if (dtype === 'q8_0') for (let b = 0; b < n / 32; b++) {
    const d = dv.getFloat32(36 * b, true);
    for (let j = 0; j < 32; j++) out[32 * b + j] = d * dv.getInt8(36 * b + 4 + j);
  } else if (dtype === 'q4_0') for (let b = 0; b < n / 32; b++) {
    const d = dv.getFloat32(20 * b, true);
    for (let j = 0; j < 16; j++) {
      const q = dv.getUint8(20 * b + 4 + j);
      out[32 * b + j] = d * ((q & 15) - 8);
      out[32 * b + j + 16] = d * ((q >> 4) - 8);
    }
  } else throw new Error(`reference: unknown dtype ${dtype}`);
  return out;
}

export function loadWeights(dir) {
  const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const shards = man.shards.map((s) => fs.readFileSync(path.join(dir, s.file)));
  const W = {};
  for (const t of man.tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    W[t.name] = dequant(shards[t.shard].subarray(t.offset, t.offset + t.bytes), t.dtype, n);
  }
  return { man, W };
}

// ---- configuration (HF defaults, independently of the engine) --------------------------------

export function readConfig(man) {
  const c = man.config, qwen = man.family === 'qwen3_5';
  const rp = c.rope_parameters ?? {};
  const heads = c.num_attention_heads;
  const headDim = c.head_dim ?? c.hidden_size / heads;
  const prf = rp.partial_rotary_factor ?? c.partial_rotary_factor ?? (qwen ? 0.25 : 1);
  const L = c.num_hidden_layers;
  const interval = c.full_attention_interval ?? 4;
  return {
    qwen, H: c.hidden_size, I: c.intermediate_size, L, V: c.vocab_size,
    heads, kvHeads: c.num_key_value_heads ?? heads, headDim,
    rot: Math.floor(headDim * prf / 2) * 2,
    theta: rp.rope_theta ?? c.rope_theta ?? (qwen ? 1e7 : 1e4),
    eps: c.rms_norm_eps ?? (qwen ? 1e-6 : 1e-5),
    pairs: c.rope_layout === 'pairs',
    qkNorm: qwen || !!c.use_qk_norm,
    tied: c.tie_word_embeddings ?? qwen,
    types: qwen ? (c.layer_types ?? Array.from({ length: L }, (_, i) => ((i + 1) % interval ? 'linear_attention' : 'full_attention'))) : Array(L).fill('full_attention'),
    hk: c.linear_num_key_heads, hv: c.linear_num_value_heads, dk: c.linear_key_head_dim, dvh: c.linear_value_head_dim,
    K: c.linear_conv_kernel_dim ?? 4,
  };
}

// ---- math ----------------------------------------------------------------------------------

const matvec = (W, x, rows, cols) => {
  const y = new Float64Array(rows);
  for (let o = 0; o < rows; o++) { let s = 0; const b = o * cols; for (let i = 0; i < cols; i++) s += W[b + i] * x[i]; y[o] = s; }
  return y;
};
const norm2 = (x) => { let s = 0; for (const v of x) s += v * v; return Math.sqrt(s); };
const sigmoid = (x) => 1 / (1 + Math.exp(-x));
const silu = (x) => x * sigmoid(x);
const softplus = (x) => (x > 20 ? x : Math.log1p(Math.exp(x)));

/** RMSNorm; qwen3.5 norms are zero-centred (scale 1 + w), llama's plain (scale w). */
function rms(x, w, eps, centred) {
  let ss = 0;
  for (const v of x) ss += v * v;
  const r = 1 / Math.sqrt(ss / x.length + eps);
  return x.map((v, i) => v * r * (centred ? 1 + w[i] : w[i]));
}

function rope(v, pos, rot, theta, pairs) {
  const out = Float64Array.from(v);
  for (let i = 0; i < rot / 2; i++) {
    const ang = pos * theta ** (-2 * i / rot);
    const c = Math.cos(ang), s = Math.sin(ang);
    const a = pairs ? 2 * i : i, b = pairs ? 2 * i + 1 : i + rot / 2;
    out[a] = v[a] * c - v[b] * s;
    out[b] = v[b] * c + v[a] * s;
  }
  return out;
}

export class Reference {
  constructor(dir) {
    const { man, W } = loadWeights(dir);
    this.W = W;
    this.c = readConfig(man);
    this.reset();
  }

  reset() {
    const c = this.c;
    this.pos = 0;
    this.kv = c.types.map(() => ({ k: [], v: [] }));
    this.conv = c.types.map(() => Array.from({ length: c.K - 1 }, () => new Float64Array(2 * c.hk * c.dk + c.hv * c.dvh)));
    this.S = c.types.map(() => Array.from({ length: c.hv }, () => new Float64Array(c.dk * c.dvh)));
  }

  /** Neuron j of layer l's down_proj column read by the head: head · (final-norm scale ⊙ column). */
  neuronLogits(l, j) {
    const c = this.c, D = this.W[`layers.${l}.mlp.down_proj`], w = this.W.norm;
    const g = Float64Array.from({ length: c.H }, (_, h) => D[h * c.I + j] * (c.qwen ? 1 + w[h] : w[h]));
    return matvec(c.tied ? this.W.embed_tokens : this.W.lm_head, g, c.V, c.H);
  }

  /** Feeds ids one at a time; returns per-position logits (all) and statistics [layer][pos]. */
  run(ids) {
    const c = this.c;
    const st = { resid_pre_l2: [], attn_out_l2: [], resid_mid_l2: [], mlp_out_l2: [], resid_post_l2: [], mlp_ratio: [], gdn_state_norm: [], gdn_decay: [], gdn_beta: [], gdn_decay_head: [], gdn_beta_head: [], gdn_log_decay_head: [], top_idx: [] };
    for (const k in st) for (let l = 0; l < c.L; l++) st[k].push([]);
    const logits = [];
    for (const id of ids) {
      let x = this.W.embed_tokens.slice(id * c.H, (id + 1) * c.H);
      for (let l = 0; l < c.L; l++) {
        const P = `layers.${l}.`;
        st.resid_pre_l2[l].push(norm2(x));
        const xn = rms(x, this.W[P + 'input_layernorm'], c.eps, c.qwen);
        const a = c.types[l] === 'full_attention' ? this.attention(l, xn) : this.deltanet(l, xn, st);
        st.attn_out_l2[l].push(norm2(a));
        x = x.map((v, i) => v + a[i]);
        st.resid_mid_l2[l].push(norm2(x));
        const m = rms(x, this.W[P + 'post_attention_layernorm'], c.eps, c.qwen);
        const g = matvec(this.W[P + 'mlp.gate_proj'], m, c.I, c.H), u = matvec(this.W[P + 'mlp.up_proj'], m, c.I, c.H);
        const h = g.map((v, i) => silu(v) * u[i]);
        st.top_idx[l].push(Array.from(h.keys()).sort((p, q) => Math.abs(h[q]) - Math.abs(h[p]) || p - q).slice(0, 8));
        const d = matvec(this.W[P + 'mlp.down_proj'], h, c.H, c.I);
        st.mlp_out_l2[l].push(norm2(d));
        x = x.map((v, i) => v + d[i]);
        st.resid_post_l2[l].push(norm2(x));
        st.mlp_ratio[l].push(norm2(d) / norm2(x));
      }
      const xf = rms(x, this.W.norm, c.eps, c.qwen);
      logits.push(matvec(c.tied ? this.W.embed_tokens : this.W.lm_head, xf, c.V, c.H));
      this.pos++;
    }
    return { logits, stats: st, patterns: this.patterns ?? {} };
  }

  attention(l, xn) {
    const c = this.c, P = `layers.${l}.self_attn.`, hd = c.headDim, p = this.pos;
    const qAll = matvec(this.W[P + 'q_proj'], xn, c.heads * hd * (c.qwen ? 2 : 1), c.H);
    const k = matvec(this.W[P + 'k_proj'], xn, c.kvHeads * hd, c.H), v = matvec(this.W[P + 'v_proj'], xn, c.kvHeads * hd, c.H);
    const ks = [], vs = [];
    for (let j = 0; j < c.kvHeads; j++) {
      let kj = k.slice(j * hd, (j + 1) * hd);
      if (c.qkNorm) kj = rms(kj, this.W[P + 'k_norm'], c.eps, c.qwen);
      ks.push(rope(kj, p, c.rot, c.theta, c.pairs));
      vs.push(v.slice(j * hd, (j + 1) * hd));
    }
    this.kv[l].k.push(ks);
    this.kv[l].v.push(vs);
    const o = new Float64Array(c.heads * hd);
    for (let h = 0; h < c.heads; h++) {
      // Qwen3.5: q_proj rows per head are [query(hd) | gate(hd)]
      const base = c.qwen ? h * 2 * hd : h * hd;
      let q = qAll.slice(base, base + hd);
      const gate = c.qwen ? qAll.slice(base + hd, base + 2 * hd) : null;
      if (c.qkNorm) q = rms(q, this.W[P + 'q_norm'], c.eps, c.qwen);
      q = rope(q, p, c.rot, c.theta, c.pairs);
      const j = Math.floor(h / (c.heads / c.kvHeads));
      const s = this.kv[l].k.map((kt) => { let d = 0; for (let i = 0; i < hd; i++) d += q[i] * kt[j][i]; return d / Math.sqrt(hd); });
      const mx = Math.max(...s), e = s.map((z) => Math.exp(z - mx)), z = e.reduce((a, b) => a + b, 0);
      ((this.patterns ??= {})[l] ??= Array.from({ length: c.heads }, () => []))[h].push(e.map((x) => x / z)); // [layer][head][query][key]
      for (let t = 0; t < s.length; t++) for (let i = 0; i < hd; i++) o[h * hd + i] += (e[t] / z) * this.kv[l].v[t][j][i];
      if (gate) for (let i = 0; i < hd; i++) o[h * hd + i] *= sigmoid(gate[i]);
    }
    return matvec(this.W[P + 'o_proj'], o, c.H, c.heads * hd);
  }

  deltanet(l, xn, st) {
    const c = this.c, P = `layers.${l}.linear_attn.`, kd = c.hk * c.dk, vd = c.hv * c.dvh, conv = 2 * kd + vd;
    const mixed = matvec(this.W[P + 'in_proj_qkv'], xn, conv, c.H);
    const z = matvec(this.W[P + 'in_proj_z'], xn, vd, c.H);
    const b = matvec(this.W[P + 'in_proj_b'], xn, c.hv, c.H), a = matvec(this.W[P + 'in_proj_a'], xn, c.hv, c.H);
    const w = this.W[P + 'conv1d'], hist = this.conv[l];
    const y = new Float64Array(conv);
    for (let ch = 0; ch < conv; ch++) {
      let s = 0;
      for (let j = 0; j < c.K - 1; j++) s += w[ch * c.K + j] * hist[j][ch];
      s += w[ch * c.K + c.K - 1] * mixed[ch];
      y[ch] = silu(s);
    }
    hist.shift();
    hist.push(mixed);
    const l2n = (v) => { const r = 1 / Math.sqrt(v.reduce((s2, q) => s2 + q * q, 0) + 1e-6); return v.map((q) => q * r); };
    const out = new Float64Array(vd);
    const norms = [];
    let decay = 0, betaSum = 0;
    const decays = [], betas = [], logDecays = [];
    for (let h = 0; h < c.hv; h++) {
      const kh = Math.floor(h / (c.hv / c.hk));
      const q = l2n(y.slice(kh * c.dk, (kh + 1) * c.dk)).map((v) => v / Math.sqrt(c.dk));
      const k = l2n(y.slice(kd + kh * c.dk, kd + (kh + 1) * c.dk));
      const v = y.slice(2 * kd + h * c.dvh, 2 * kd + (h + 1) * c.dvh);
      const beta = sigmoid(b[h]);
      const g = -Math.exp(this.W[P + 'A_log'][h]) * softplus(a[h] + this.W[P + 'dt_bias'][h]);
      decay += Math.exp(g); betaSum += beta;
      decays.push(Math.exp(g)); betas.push(beta); logDecays.push(g);
      const S = this.S[l][h], dv = c.dvh;
      for (let i = 0; i < S.length; i++) S[i] *= Math.exp(g);
      const d = new Float64Array(dv);
      for (let j = 0; j < dv; j++) { let u = 0; for (let i = 0; i < c.dk; i++) u += S[i * dv + j] * k[i]; d[j] = beta * (v[j] - u); }
      for (let i = 0; i < c.dk; i++) for (let j = 0; j < dv; j++) S[i * dv + j] += k[i] * d[j];
      const o = new Float64Array(dv);
      for (let j = 0; j < dv; j++) { let s = 0; for (let i = 0; i < c.dk; i++) s += S[i * dv + j] * q[i]; o[j] = s; }
      norms.push(norm2(S));
      // gated RMSNorm: plain weight, then silu(z)
      let ss = 0;
      for (const t of o) ss += t * t;
      const r = 1 / Math.sqrt(ss / dv + c.eps), wn = this.W[P + 'norm'];
      for (let j = 0; j < dv; j++) out[h * dv + j] = wn[j] * o[j] * r * silu(z[h * dv + j]);
    }
    st.gdn_state_norm[l].push(norms);
    st.gdn_decay_head[l].push(decays);
    st.gdn_log_decay_head[l].push(logDecays);
    st.gdn_beta_head[l].push(betas);
    st.gdn_decay[l].push(decay / c.hv);
    st.gdn_beta[l].push(betaSum / c.hv);
    return matvec(this.W[P + 'out_proj'], out, c.H, vd);
  }
}
