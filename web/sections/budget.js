// <section id="budget">: what the gate costs: the MLP shapes on one 12 h² scale, and the real
// models' parameters from their configs (sizes.json, written by tools/build-site.mjs with the
// engine's configSummary).
import { $, bi, int } from '../core.js';

export const BUDGETS = {
  ffn4: { label: { zh: '经典 FFN，4×', en: 'classic FFN, 4×' }, mats: [['up', 4], ['down', 4]] },
  swiglu4: { label: { zh: 'SwiGLU，4×', en: 'SwiGLU, 4×' }, mats: [['gate', 4], ['up', 4], ['down', 4]] },
  swiglu83: { label: { zh: 'SwiGLU，8⁄3×', en: 'SwiGLU, 8⁄3×' }, mats: [['gate', 8 / 3], ['up', 8 / 3], ['down', 8 / 3]] },
  qwen: { label: { zh: 'Qwen3.5，3.5×', en: 'Qwen3.5, 3.5×' }, mats: [['gate', 3.5], ['up', 3.5], ['down', 3.5]] },
  gemma: { label: { zh: 'Gemma 3 270M，3.2×', en: 'Gemma 3 270M, 3.2×' }, mats: [['gate', 3.2], ['up', 3.2], ['down', 3.2]] },
};
const COLORS = { gate: 'var(--gate)', up: 'var(--up)', down: 'var(--down)' };

export function mount() {
  document.querySelectorAll('input[name=budget]').forEach((el) => el.addEventListener('change', draw));
  $('budget-toggle').addEventListener('click', () => {
    const keys = Object.keys(BUDGETS), cur = document.querySelector('input[name=budget]:checked').value;
    $(`budget-${keys[(keys.indexOf(cur) + 1) % keys.length]}`).checked = true;
    draw();
  });
  draw();
  sizes();
}

/** the sizes table: one column per model, rows computed from its config */
async function sizes() {
  let list;
  try { list = (await (await fetch('sizes.json')).json()).sizes; } catch { list = null; }
  const body = $('budget-sizes').querySelector('tbody');
  if (!list?.length) { $('budget-sizes').hidden = true; return; }
  const M = (n) => `${(n / 1e6).toFixed(1)} M`;
  const pct = (a, b) => `${Math.round((100 * a) / b)}%`;
  const rows = [
    [{ zh: '模型', en: 'model' }, (m) => m.name, 'th'],
    [{ zh: '门的激活函数', en: 'gate activation' }, (m) => m.activation],
    [{ zh: '隐藏维度 h', en: 'hidden size h' }, (m) => int(m.hidden)],
    [{ zh: 'MLP 中间维度', en: 'MLP width' }, (m) => `${int(m.intermediate)} (${+(m.intermediate / m.hidden).toFixed(2)}× h)`],
    [{ zh: '层数', en: 'layers' }, (m) => int(m.layers)],
    [{ zh: '每层 MLP 参数（3 · h · 中间维度）', en: 'MLP parameters per layer (3 · h · width)' }, (m) => M(m.params.mlp_per_layer)],
    [{ zh: '全部 MLP', en: 'all MLPs' }, (m) => `${M(m.params.mlp)} (${pct(m.params.mlp, m.params.total)})`],
    [{ zh: '嵌入（词表 × h）', en: 'embedding (vocabulary × h)' }, (m) => `${M(m.params.embedding)} (${pct(m.params.embedding, m.params.total)})`],
    [{ zh: '注意力 / DeltaNet 混合器', en: 'attention / DeltaNet mixers' }, (m) => M(m.params.mixer)],
    [{ zh: '合计', en: 'total' }, (m) => M(m.params.total)],
  ];
  body.innerHTML = rows.map(([label, f, tag = 'td']) => `<tr><th scope="row">${bi(label)}</th>${list.map((m) => `<${tag} data-model="${m.id}">${f(m)}</${tag}>`).join('')}</tr>`).join('');
}

/** a sum of widths such as 3 × 3.2, without the float's tail (9.6, not 9.600000000000001) */
const round = (x) => Math.round(x * 1e9) / 1e9;

export function fmtH(r) { const t = { 4: '4 h²', 8: '8 h²', 12: '12 h²', 10.5: '10.5 h²', 3.5: '3.5 h²' }[r]; return t ?? (Math.abs(r - 8 / 3) < 1e-9 ? '8⁄3 h²' : `${r} h²`); }

/** all four configurations on one 12 h² scale, the chosen one highlighted: lengths compare across rows */
function draw() {
  const key = document.querySelector('input[name=budget]:checked').value, b = BUDGETS[key];
  const total = round(b.mats.reduce((a, [, r]) => a + r, 0)); // in h² units
  const scale = 100 / 12;
  $('budget-bars').innerHTML = Object.entries(BUDGETS).map(([k, cfg]) => {
    let left = 0;
    const segs = cfg.mats.map(([m, r]) => { const seg = `<div class="bseg" data-mat="${m}" style="left:${left}%;width:${r * scale}%;background:${COLORS[m]}">${m}_proj ${fmtH(r)}</div>`; left += r * scale; return seg; }).join('');
    const t = round(cfg.mats.reduce((a, [, r]) => a + r, 0));
    return `<div class="brow${k === key ? ' sel' : ''}" data-key="${k}"><span class="blabel">${bi(cfg.label)}</span><div class="btrack" data-total="${t}"${k === key ? ' id="budget-track"' : ''}>${segs}<div class="baseline" style="left:${8 * scale}%" title="8 h²"></div></div></div>`;
  }).join('');
  const pct = Math.round((total / 8 - 1) * 100);
  $('budget-total').innerHTML = bi({ zh: `${b.label.zh}：合计 ${fmtH(total)}（虚线 = 朴素 FFN 的 8 h²）：${pct === 0 ? '与朴素模块相同' : `比朴素模块多 ${pct}%`}。`,
    en: `${b.label.en}: total ${fmtH(total)} (dashed line = the plain FFN's 8 h²): ${pct === 0 ? 'the same as the plain block' : `${pct}% more than the plain block`}.` });
}

