// The static widgets: the SiLU chart, the parameter-budget bars, the MLP drawn as neurons.
import { $, L, fmt, int, silu } from '../core.js';

// ---------------------------------------------------------------- static widgets
export function drawSilu() {
  const svg = $('silu-svg'), W = 640, H = 300, x0 = 40, y0 = 20, w = W - 60, h = H - 50;
  const X = (z) => x0 + ((z + 6) / 12) * w, Y = (v) => y0 + h - ((v + 1) / 7) * h;
  const path = (f) => Array.from({ length: 241 }, (_, i) => { const z = -6 + i * 0.05; return `${i ? 'L' : 'M'}${X(z).toFixed(1)},${Y(f(z)).toFixed(1)}`; }).join('');
  const z = Number($('silu-z').value);
  const zmin = -1.2784645, vmin = silu(zmin);
  svg.innerHTML = `<line x1="${x0}" y1="${Y(0)}" x2="${x0 + w}" y2="${Y(0)}" stroke="#999"/><line x1="${X(0)}" y1="${y0}" x2="${X(0)}" y2="${y0 + h}" stroke="#999"/>
    ${[-6, -4, -2, 0, 2, 4, 6].map((t) => `<text x="${X(t) - 6}" y="${y0 + h + 16}">${t}</text>`).join('')}
    <path d="${path((v) => Math.max(0, v))}" fill="none" stroke="#7a8597" stroke-width="2.5" stroke-dasharray="6 4"/>
    <path d="${path(silu)}" fill="none" stroke="var(--mlp)" stroke-width="3"/>
    <circle cx="${X(zmin)}" cy="${Y(vmin)}" r="4" fill="var(--fg)"/><text x="${X(zmin) - 60}" y="${Y(vmin) + 20}">min ≈ −0.278 @ z ≈ −1.278</text>
    <line x1="${X(z)}" y1="${y0}" x2="${X(z)}" y2="${y0 + h}" stroke="var(--accent)"/>
    <circle cx="${X(z)}" cy="${Y(silu(z))}" r="5" fill="var(--mlp)"/><circle cx="${X(z)}" cy="${Y(Math.max(0, z))}" r="5" fill="#7a8597"/>
    <text x="${x0 + 8}" y="${y0 + 14}" fill="var(--mlp)">SiLU</text><text x="${x0 + 8}" y="${y0 + 30}">${L('ReLU（虚线）', 'ReLU (dashed)')}</text>`;
}
export function onSilu() {
  const z = Number($('silu-z').value), s = silu(z), r = Math.max(0, z);
  $('silu-z-out').textContent = z.toFixed(1);
  $('silu-val').textContent = s.toFixed(3);
  $('relu-val').textContent = r.toFixed(3);
  $('diff-val').textContent = (s - r).toFixed(3);
  $('silu-sentence').textContent = z < 0
    ? L(`在 z = ${z.toFixed(1)}（负值）处，ReLU 硬归零为 ${r.toFixed(3)}，SiLU 仍漏过 ${s.toFixed(3)}——软门还放行一点信号。`, `At z = ${z.toFixed(1)} (negative), ReLU cuts to ${r.toFixed(3)} while SiLU still lets ${s.toFixed(3)} through: the soft gate passes a little signal.`)
    : L(`在 z = ${z.toFixed(1)} 处两者接近：SiLU = ${s.toFixed(3)}，ReLU = ${r.toFixed(3)}。`, `At z = ${z.toFixed(1)} the two are close: SiLU = ${s.toFixed(3)}, ReLU = ${r.toFixed(3)}.`);
  drawSilu();
}
$('silu-z').addEventListener('input', onSilu);

export const BUDGETS = {
  ffn4: { label: ['经典 FFN，4×', 'classic FFN, 4×'], mats: [['up', 4], ['down', 4]] },
  swiglu4: { label: ['SwiGLU，4×', 'SwiGLU, 4×'], mats: [['gate', 4], ['up', 4], ['down', 4]] },
  swiglu83: { label: ['SwiGLU，8⁄3×', 'SwiGLU, 8⁄3×'], mats: [['gate', 8 / 3], ['up', 8 / 3], ['down', 8 / 3]] },
  qwen: { label: ['Qwen3.5，3.5×', 'Qwen3.5, 3.5×'], mats: [['gate', 3.5], ['up', 3.5], ['down', 3.5]] },
};
export const COLORS = { gate: 'var(--gate)', up: 'var(--up)', down: 'var(--down)' };
export function drawBudget() {
  // all four configurations on one 12 h² scale, the chosen one highlighted: lengths compare across rows
  const key = document.querySelector('input[name=budget]:checked').value, b = BUDGETS[key];
  const total = b.mats.reduce((a, [, r]) => a + r, 0); // in h² units
  const scale = 100 / 12;
  $('budget-bars').innerHTML = Object.entries(BUDGETS).map(([k, cfg]) => {
    let left = 0;
    const segs = cfg.mats.map(([m, r]) => { const seg = `<div class="bseg" data-mat="${m}" style="left:${left}%;width:${r * scale}%;background:${COLORS[m]}">${m}_proj ${fmtH(r)}</div>`; left += r * scale; return seg; }).join('');
    const t = cfg.mats.reduce((a, [, r]) => a + r, 0);
    return `<div class="brow${k === key ? ' sel' : ''}" data-key="${k}"><span class="blabel">${L(...cfg.label)}</span><div class="btrack" data-total="${t}"${k === key ? ' id="budget-track"' : ''}>${segs}<div class="baseline" style="left:${8 * scale}%" title="8 h²"></div></div></div>`;
  }).join('');
  const pct = Math.round((total / 8 - 1) * 100);
  $('budget-total').textContent = L(`${L(...b.label)}：合计 ${fmtH(total)}（虚线 = 朴素 FFN 的 8 h²）：${pct === 0 ? '与朴素模块相同' : `比朴素模块多 ${pct}%`}。`, `${L(...b.label)}: total ${fmtH(total)} (dashed line = the plain FFN's 8 h²): ${pct === 0 ? 'the same as the plain block' : `${pct}% more than the plain block`}.`);
}
export function fmtH(r) { const t = { 4: '4 h²', 8: '8 h²', 12: '12 h²', 10.5: '10.5 h²', 3.5: '3.5 h²' }[r]; return t ?? (Math.abs(r - 8 / 3) < 1e-9 ? '8⁄3 h²' : `${r} h²`); }
document.querySelectorAll('input[name=budget]').forEach((el) => el.addEventListener('change', drawBudget));
$('budget-toggle').addEventListener('click', () => {
  const keys = Object.keys(BUDGETS), cur = document.querySelector('input[name=budget]:checked').value;
  $(`budget-${keys[(keys.indexOf(cur) + 1) % keys.length]}`).checked = true;
  drawBudget();
});

/** The MLP as neurons: x feeds two parallel branches, gate (then SiLU) and up, which meet at ⊙;
 *  the product goes through down back to the stream's width. With `live` (the live walk's layer,
 *  token and neuron, with its values), one neuron's path is lit and carries those numbers. */
export function drawNeurons(cfg, live = null) {
  const H = cfg ? cfg.hidden_size : 1024, I = cfg ? cfg.intermediate_size : 3584;
  const col = (x, n, color, cy, span, r = 6) => { const ys = Array.from({ length: n }, (_, i) => cy + (i - (n - 1) / 2) * (span / Math.max(n - 1, 1))); return { x, ys, svg: ys.map((y) => `<circle cx="${x}" cy="${y}" r="${r}" fill="${color}"/>`).join('') }; };
  const inp = col(60, 4, 'var(--resid)', 160, 120, 7);
  const gate = col(230, 6, 'var(--gate)', 92, 90), up = col(230, 6, 'var(--up)', 228, 90);
  const prod = col(400, 6, 'var(--mlp)', 160, 150), out = col(580, 4, 'var(--resid)', 160, 120, 7);
  const lines = (a, b, c, o = '.22') => a.ys.flatMap((y1) => b.ys.map((y2) => `<line x1="${a.x}" y1="${y1}" x2="${b.x}" y2="${y2}" stroke="${c}" stroke-opacity="${o}"/>`)).join('');
  // neuron i of gate and neuron i of up meet in product i: one line each, no mixing
  const pair = prod.ys.map((y, i) => `<line x1="${gate.x}" y1="${gate.ys[i]}" x2="${prod.x}" y2="${y}" stroke="var(--gate)" stroke-opacity=".7"/><line x1="${up.x}" y1="${up.ys[i]}" x2="${prod.x}" y2="${y}" stroke="var(--up)" stroke-opacity=".7"/>`).join('');
  let lit = '';
  if (live) {
    // the lit neuron (drawn third of six): its two branch values, their product, its write
    const k = 2, gy = gate.ys[k], uy = up.ys[k], py = prod.ys[k], f = (x) => fmt(x, 2);
    lit = `<g class="lit" data-neuron="${live.j}">` +
      inp.ys.map((y) => `<line x1="${inp.x}" y1="${y}" x2="${gate.x}" y2="${gy}" stroke="var(--gate)" stroke-width="2"/><line x1="${inp.x}" y1="${y}" x2="${up.x}" y2="${uy}" stroke="var(--up)" stroke-width="2"/>`).join('') +
      `<line x1="${gate.x}" y1="${gy}" x2="${prod.x}" y2="${py}" stroke="var(--gate)" stroke-width="3"/><line x1="${up.x}" y1="${uy}" x2="${prod.x}" y2="${py}" stroke="var(--up)" stroke-width="3"/>` +
      out.ys.map((y) => `<line x1="${prod.x}" y1="${py}" x2="${out.x}" y2="${y}" stroke="var(--down)" stroke-width="2"/>`).join('') +
      `<circle cx="${gate.x}" cy="${gy}" r="10" fill="var(--gate)"/><circle cx="${up.x}" cy="${uy}" r="10" fill="var(--up)"/><circle cx="${prod.x}" cy="${py}" r="10" fill="var(--mlp)"/>` +
      `<text class="val" x="${gate.x + 14}" y="${gy - 8}" data-v="${live.g}">${f(live.g)} → ${f(live.s)}</text>` +
      `<text class="val" x="${up.x + 14}" y="${uy + 18}" data-v="${live.u}">${f(live.u)}</text>` +
      `<text class="val" x="${prod.x + 14}" y="${py - 8}" data-v="${live.p}">#${live.j}: ${f(live.p)}</text></g>`;
  }
  $('neuron-svg').innerHTML = `${lines(inp, gate, 'var(--gate)')}${lines(inp, up, 'var(--up)')}${pair}${lines(prod, out, 'var(--down)')}${inp.svg}${gate.svg}${up.svg}${prod.svg}${out.svg}${lit}
    <text x="16" y="240">x (${int(H)})</text>
    <text x="176" y="30" fill="var(--gate)">gate_proj → SiLU (${int(I)})</text>
    <text x="196" y="296" fill="var(--up)">up_proj (${int(I)})</text>
    <text x="372" y="66">⊙ (${int(I)})</text>
    <text x="452" y="240" fill="var(--down)">down_proj → ${int(H)}</text>`;
  $('neuron-live').textContent = !live ? '' : L(
    `亮起的是第 ${live.l} 层的神经元 #${live.j}，在 token ${JSON.stringify(live.piece)} 上（与上面的逐步计算同一个）：gate ${fmt(live.g)}，经 SiLU 得 ${fmt(live.s)}；up ${fmt(live.u)}；两者相乘 ${fmt(live.p)}，这个数乘上它在 down_proj 里的那一列，写回残差流。`,
    `Lit: neuron #${live.j} of layer ${live.l} at token ${JSON.stringify(live.piece)} (the same as the walk above): gate ${fmt(live.g)}, through SiLU ${fmt(live.s)}; up ${fmt(live.u)}; their product ${fmt(live.p)}, which times its column of down_proj is written back into the stream.`);
}
