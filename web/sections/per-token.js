// <section id="per-token">: "attention mixes across tokens, the MLP does not": one attention
// head's pattern on the reader's sentence (blocks.L.attn.hook_pattern, [head][query][key]), with
// the share of attention that goes to other tokens, beside the lesson's point that the MLP computes
// from each token's own vector. The pattern of the chosen layer comes with the sentence's own pass.
import { $, arrowSteps, biSvg, chartWidth, escapeHtml, guard, on, pieceLabel, pieceShort, setText, cardNote, state, wantHooks } from '../core.js';

/** at most this many tokens are drawn (the last ones): a longer sentence's grid would be unreadable */
export const ATTN_MAX = 64;
let my = null; // { l, h, n, P, from } the drawn pattern
const card = () => $('attn-card');

export function mount() {
  wantHooks(() => (hook() ? [hook()] : []));
  on('model', fillPickers);
  on('run', () => show(state.run));
  on('unload', () => { my = null; $('attn-chart').innerHTML = ''; $('attn-readout').textContent = ''; });
  for (const id of ['attn-layer', 'attn-head']) $(id).addEventListener('change', () => { $('attn-readout').dataset.q = ''; show(null); });
  // up / down pick the row (the token that reads), as a tap on it does
  arrowSteps($('attn-chart').parentElement, (d) => { if (my?.showRow) my.showRow(Math.max(my.from, Math.min(my.n - 1, Number($('attn-readout').dataset.q) + d))); });
}

/** the layer and head pickers, for the loaded model's attention layers */
function fillPickers() {
  const c = state.info.config, mixers = state.info.mixers;
  const layers = mixers.map((m, l) => [m, l]).filter(([m]) => m !== 'linear').map(([, l]) => l);
  const ls = $('attn-layer'), hs = $('attn-head'), lv = ls.value, hv = hs.value;
  ls.innerHTML = layers.map((l) => `<option value="${l}">${l}</option>`).join('');
  if (layers.includes(Number(lv)) && lv !== '') ls.value = lv;
  hs.innerHTML = Array.from({ length: c.num_attention_heads }, (_, h) => `<option value="${h}">${h}</option>`).join('');
  if (hv !== '' && Number(hv) < c.num_attention_heads) hs.value = hv;
  card().hidden = !layers.length;
}

/** the hook of the chosen attention layer's pattern (null: the model has no attention layer) */
function hook() {
  return card().hidden || $('attn-layer').value === '' ? null : `blocks.${$('attn-layer').value}.attn.hook_pattern`;
}

/** the chosen layer and head on the current sentence: from `run` when that pass captured it (the
 *  sentence's own run), else one pass asking for it (another layer chosen; another head of the
 *  same layer needs none) */
async function show(run) {
  if (!state.run || card().hidden) return;
  await guard(card(), async () => {
    const m = state.model, l = Number($('attn-layer').value), h = Number($('attn-head').value), ids = state.ids, n = ids.length, name = hook();
    let P = run?.hooks?.[name] ?? (my?.l === l && my?.n === n && my.run === state.runId ? my.all : null);
    if (!P) {
      setText($('attn-readout'), { zh: '计算中…', en: 'computing…' });
      P = (await m.forward(ids, { hooks: [name], stats: false, logits: 'none' })).hooks[name];
    }
    my = { l, h, n, all: P, run: state.runId, P: P.subarray(h * n * n, (h + 1) * n * n) };
    draw();
  });
}

function draw() {
  const { l, h, n, P } = my;
  const from = Math.max(0, n - ATTN_MAX), shown = n - from; // the last ATTN_MAX tokens
  // the grid takes what the width allows (at most 400 px with its labels); the key goes to its
  // right when there is room, else under it; a label every `step` rows keeps them apart
  const W0 = Math.min(640, Math.max(240, ($('attn-chart').parentElement?.clientWidth || 640) - 2));
  const pad = 72, side = Math.min(400, W0) - pad - 4, cell = side / shown, step = Math.max(1, Math.ceil(11 / cell));
  const keyRight = W0 - (pad + side) >= 170, keyY = keyRight ? 20 : side + 62;
  const H = Math.ceil(side + 60 + (keyRight ? 0 : 58));
  chartWidth($('attn-chart'), H, draw);
  my.from = from;
  const cells = [];
  const pieces = state.pieces.map(pieceLabel);
  for (let q = from; q < n; q++) for (let k = from; k <= q; k++) {
    const w = P[q * n + k];
    cells.push(`<rect class="cell" x="${(pad + (k - from) * cell).toFixed(2)}" y="${(4 + (q - from) * cell).toFixed(2)}" width="${cell.toFixed(2)}" height="${cell.toFixed(2)}" fill="var(--resid)" fill-opacity="${Math.max(0.03, w).toFixed(3)}" data-q="${q}" data-k="${k}" data-w="${w}"><title>${escapeHtml(pieces[q])} → ${escapeHtml(pieces[k])}: ${(100 * w).toFixed(1)}%</title></rect>`);
  }
  const tick = (t) => escapeHtml(pieceShort(state.pieces[t]).slice(0, 8));
  const ax = Array.from({ length: shown }, (_, i) => i).filter((i) => (shown - 1 - i) % step === 0).map((i) => { const t = from + i, x = (pad + (i + 0.5) * cell).toFixed(2);
    return `<text class="tick" x="${pad - 4}" y="${(4 + (i + 0.5) * cell + 4).toFixed(2)}" text-anchor="end">${tick(t)}</text>` +
      `<text class="tick" x="${x}" y="${side + 16}" text-anchor="end" transform="rotate(-55 ${x} ${side + 16})">${tick(t)}</text>`; }).join('');
  const kx = keyRight ? pad + side + 12 : 8;
  $('attn-chart').innerHTML = cells.join('') + ax +
    `<rect class="row-sel" x="${pad}" y="0" width="${side}" height="${cell}" fill="none" stroke="var(--fg)" stroke-width="1.5" visibility="hidden"/>` +
    `<text x="${kx}" y="${keyY}" class="tick">${biSvg({ zh: `第 ${l} 层 · 头 ${h}`, en: `layer ${l} · head ${h}` })}</text>` +
    `<text x="${kx}" y="${keyY + 18}" class="tick">${biSvg({ zh: '行：读的 token', en: 'row: the token that reads' })}</text>` +
    `<text x="${kx}" y="${keyY + 34}" class="tick">${biSvg({ zh: '列：被读的 token', en: 'column: the token read' })}</text>`;
  cardNote(card(), from ? { zh: `句子有 ${n} 个 token：图里只画最后 ${ATTN_MAX} 个（比例仍按整句计算）。`, en: `The sentence has ${n} tokens: the grid shows the last ${ATTN_MAX} (the share is still computed over all of them).` } : null);
  // how much of each token's attention goes to other tokens (the diagonal is its own)
  let other = 0;
  for (let q = 0; q < n; q++) other += 1 - P[q * n + q];
  my.otherShare = other / n;
  $('attn-readout').dataset.other = String(my.otherShare);
  const pct = (100 * my.otherShare).toFixed(1);
  const showRow = (q) => {
    let k = 0;
    for (let j = 1; j <= q; j++) if (P[q * n + j] > P[q * n + k]) k = j;
    const w = (100 * P[q * n + k]).toFixed(1), a = JSON.stringify(pieces[q]), b = JSON.stringify(pieces[k]);
    setText($('attn-readout'), {
      zh: `这个头在这句话里平均把 ${pct}% 的注意力放在别的 token 上；每一层的 MLP 从别的 token 读到的都是 0%：它只用本位置的向量计算。 token ${q}（${a}）读得最多的是 token ${k}（${b}，${w}%）。`,
      en: `On this sentence, this head puts ${pct}% of each token's attention on other tokens on average; every layer's MLP reads 0% from other tokens: it computes from the token's own vector. Token ${q} (${a}) reads most from token ${k} (${b}, ${w}%).` });
    $('attn-readout').dataset.q = String(q);
    const sel = $('attn-chart').querySelector('rect.row-sel');
    sel.setAttribute('y', (4 + (q - from) * cell).toFixed(2)); sel.setAttribute('visibility', 'visible');
  };
  my.showRow = showRow;
  for (const el of $('attn-chart').querySelectorAll('rect.cell')) el.addEventListener('click', () => showRow(Number(el.dataset.q)));
  const q0 = Number($('attn-readout').dataset.q);
  showRow(Number.isInteger(q0) && $('attn-readout').dataset.q !== '' ? Math.min(q0, n - 1) : n - 1);
}
