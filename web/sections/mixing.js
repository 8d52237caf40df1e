// "Attention mixes across tokens, the MLP does not": one attention head's pattern on the reader's
// sentence (blocks.L.attn.hook_pattern, [head][query][key]), with the share of attention that goes
// to other tokens, beside the lesson's point that the MLP computes from each token's own vector.
import { $, L, escapeHtml, pieceShort, state } from '../core.js';

/** the layer and head pickers, for the loaded model's attention layers */
export function fillAttentionPickers() {
  const c = state.info.config, mixers = state.info.mixers;
  const layers = mixers.map((m, l) => [m, l]).filter(([m]) => m !== 'linear').map(([, l]) => l);
  const ls = $('attn-layer'), hs = $('attn-head'), lv = ls.value, hv = hs.value;
  ls.innerHTML = layers.map((l) => `<option value="${l}">${l}</option>`).join('');
  if (layers.includes(Number(lv)) && lv !== '') ls.value = lv;
  hs.innerHTML = Array.from({ length: c.num_attention_heads }, (_, h) => `<option value="${h}">${h}</option>`).join('');
  if (hv !== '' && Number(hv) < c.num_attention_heads) hs.value = hv;
  $('attn-card').hidden = !layers.length;
}

/** the hook of the chosen attention layer's pattern (null: the model has no attention layer) */
export function attentionHook() {
  return $('attn-card').hidden || $('attn-layer').value === '' ? null : `blocks.${$('attn-layer').value}.attn.hook_pattern`;
}

/** the pattern of the chosen layer and head on the current sentence: from `run` when that pass
 *  captured it (the sentence's own run), else one pass asking for it (another layer chosen) */
export async function renderAttention(run = null) {
  if (!state.run || $('attn-card').hidden) return;
  const m = state.model, l = Number($('attn-layer').value), h = Number($('attn-head').value), ids = state.ids, n = ids.length;
  const name = attentionHook();
  let hook = run?.hooks?.[name];
  if (!hook) {
    $('attn-readout').textContent = L('计算中…', 'computing…');
    hook = (await m.forward(ids, { hooks: [name], stats: false, logits: 'none' })).hooks[name];
    if (state.ids !== ids || state.model !== m) return; // another sentence or model meanwhile
  }
  state.attn = { l, h, n, P: hook.subarray(h * n * n, (h + 1) * n * n) };
  drawAttention();
}

export function drawAttention() {
  const a = state.attn;
  if (!a) return;
  const { l, h, n, P } = a;
  const labels = n <= 48, pad = labels ? 90 : 12, side = 400 - pad - 4, cell = side / n;
  const cells = [];
  for (let q = 0; q < n; q++) for (let k = 0; k <= q; k++) {
    const w = P[q * n + k];
    cells.push(`<rect class="cell" x="${(pad + k * cell).toFixed(2)}" y="${(4 + q * cell).toFixed(2)}" width="${cell.toFixed(2)}" height="${cell.toFixed(2)}" fill="var(--resid)" fill-opacity="${Math.max(0.03, w).toFixed(3)}" data-q="${q}" data-k="${k}" data-w="${w}"><title>${escapeHtml(state.pieces[q])} → ${escapeHtml(state.pieces[k])}: ${(100 * w).toFixed(1)}%</title></rect>`);
  }
  const tick = (t) => escapeHtml(pieceShort(state.piecesRaw[t]).slice(0, 10));
  const ax = labels ? Array.from({ length: n }, (_, t) => `<text class="tick" x="${pad - 4}" y="${(4 + (t + 0.7) * cell).toFixed(2)}" text-anchor="end">${tick(t)}</text>` +
    `<text class="tick" x="${(pad + (t + 0.5) * cell).toFixed(2)}" y="${side + 16}" text-anchor="end" transform="rotate(-55 ${(pad + (t + 0.5) * cell).toFixed(2)} ${side + 16})">${tick(t)}</text>`).join('') : '';
  $('attn-chart').setAttribute('viewBox', `0 0 640 ${side + (labels ? 80 : 20)}`);
  $('attn-chart').innerHTML = cells.join('') + ax +
    `<text x="${pad + side + 12}" y="20" class="tick">${L(`第 ${l} 层 · 头 ${h}`, `layer ${l} · head ${h}`)}</text>` +
    `<text x="${pad + side + 12}" y="38" class="tick">${L('行：读的 token', 'row: the token that reads')}</text>` +
    `<text x="${pad + side + 12}" y="54" class="tick">${L('列：被读的 token', 'column: the token read')}</text>`;
  // how much of each token's attention goes to other tokens (the diagonal is its own)
  let other = 0;
  for (let q = 0; q < n; q++) other += 1 - P[q * n + q];
  a.otherShare = other / n;
  $('attn-readout').dataset.other = String(a.otherShare);
  const summary = L(`这个头在这句话里平均把 ${(100 * a.otherShare).toFixed(1)}% 的注意力放在别的 token 上；每一层的 MLP 从别的 token 读到的都是 0%：它只用本位置的向量计算。`,
    `On this sentence, this head puts ${(100 * a.otherShare).toFixed(1)}% of each token's attention on other tokens on average; every layer's MLP reads 0% from other tokens: it computes from the token's own vector.`);
  const show = (q) => {
    let k = 0;
    for (let j = 1; j <= q; j++) if (P[q * n + j] > P[q * n + k]) k = j;
    $('attn-readout').textContent = summary + ' ' + L(`token ${q}（${JSON.stringify(state.pieces[q])}）读得最多的是 token ${k}（${JSON.stringify(state.pieces[k])}，${(100 * P[q * n + k]).toFixed(1)}%）。`,
      `Token ${q} (${JSON.stringify(state.pieces[q])}) reads most from token ${k} (${JSON.stringify(state.pieces[k])}, ${(100 * P[q * n + k]).toFixed(1)}%).`);
    $('attn-readout').dataset.q = String(q);
  };
  for (const el of $('attn-chart').querySelectorAll('rect.cell')) el.addEventListener('click', () => show(Number(el.dataset.q)));
  show(Math.min(Number($('attn-readout').dataset.q ?? n - 1), n - 1));
}

for (const id of ['attn-layer', 'attn-head']) $(id).addEventListener('change', () => { $('attn-readout').dataset.q = ''; renderAttention(state.run); }); // another head of the same layer: no new pass
