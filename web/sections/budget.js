// <section id="budget">: what the gate costs: the four MLP shapes on one 12 h² scale.
import { $, bi } from '../core.js';

export const BUDGETS = {
  ffn4: { label: { zh: '经典 FFN，4×', en: 'classic FFN, 4×' }, mats: [['up', 4], ['down', 4]] },
  swiglu4: { label: { zh: 'SwiGLU，4×', en: 'SwiGLU, 4×' }, mats: [['gate', 4], ['up', 4], ['down', 4]] },
  swiglu83: { label: { zh: 'SwiGLU，8⁄3×', en: 'SwiGLU, 8⁄3×' }, mats: [['gate', 8 / 3], ['up', 8 / 3], ['down', 8 / 3]] },
  qwen: { label: { zh: 'Qwen3.5，3.5×', en: 'Qwen3.5, 3.5×' }, mats: [['gate', 3.5], ['up', 3.5], ['down', 3.5]] },
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
}

export function fmtH(r) { const t = { 4: '4 h²', 8: '8 h²', 12: '12 h²', 10.5: '10.5 h²', 3.5: '3.5 h²' }[r]; return t ?? (Math.abs(r - 8 / 3) < 1e-9 ? '8⁄3 h²' : `${r} h²`); }

/** all four configurations on one 12 h² scale, the chosen one highlighted: lengths compare across rows */
function draw() {
  const key = document.querySelector('input[name=budget]:checked').value, b = BUDGETS[key];
  const total = b.mats.reduce((a, [, r]) => a + r, 0); // in h² units
  const scale = 100 / 12;
  $('budget-bars').innerHTML = Object.entries(BUDGETS).map(([k, cfg]) => {
    let left = 0;
    const segs = cfg.mats.map(([m, r]) => { const seg = `<div class="bseg" data-mat="${m}" style="left:${left}%;width:${r * scale}%;background:${COLORS[m]}">${m}_proj ${fmtH(r)}</div>`; left += r * scale; return seg; }).join('');
    const t = cfg.mats.reduce((a, [, r]) => a + r, 0);
    return `<div class="brow${k === key ? ' sel' : ''}" data-key="${k}"><span class="blabel">${bi(cfg.label)}</span><div class="btrack" data-total="${t}"${k === key ? ' id="budget-track"' : ''}>${segs}<div class="baseline" style="left:${8 * scale}%" title="8 h²"></div></div></div>`;
  }).join('');
  const pct = Math.round((total / 8 - 1) * 100);
  $('budget-total').innerHTML = bi({ zh: `${b.label.zh}：合计 ${fmtH(total)}（虚线 = 朴素 FFN 的 8 h²）：${pct === 0 ? '与朴素模块相同' : `比朴素模块多 ${pct}%`}。`,
    en: `${b.label.en}: total ${fmtH(total)} (dashed line = the plain FFN's 8 h²): ${pct === 0 ? 'the same as the plain block' : `${pct}% more than the plain block`}.` });
}

