// <section id="neurons">: the MLP drawn as neurons: x feeds two parallel branches, gate (then
// SiLU) and up, which meet at ⊙; the product goes through down_proj back to the stream's width.
// The live walk's neuron ('walk', from the gated section) is lit with its numbers.
import { $, chartWidth, fmt, int, on, setText, state } from '../core.js';

export function mount() {
  draw(null, null);
  on('model', () => draw(state.info.config, null));
  on('walk', (live) => draw(state.info.config, live));
}

function draw(cfg, live) {
  const H = cfg ? cfg.hidden_size : 1024, I = cfg ? cfg.intermediate_size : 3584;
  // the four columns spread over the width the figure has (640 on a desktop, ~360 on a phone)
  const W = chartWidth($('neuron-svg'), 300, () => draw(cfg, live)), sx = (x) => Math.round((x * W) / 640);
  const col = (x, n, color, cy, span, r = 6) => { const ys = Array.from({ length: n }, (_, i) => cy + (i - (n - 1) / 2) * (span / Math.max(n - 1, 1))); return { x, ys, svg: ys.map((y) => `<circle cx="${x}" cy="${y}" r="${r}" fill="${color}"/>`).join('') }; };
  const inp = col(sx(60), 4, 'var(--resid)', 160, 120, 7);
  const gate = col(sx(230), 6, 'var(--gate)', 92, 90), up = col(sx(230), 6, 'var(--up)', 228, 90);
  const prod = col(sx(400), 6, 'var(--mlp)', 160, 150), out = col(sx(580), 4, 'var(--resid)', 160, 120, 7);
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
    <text x="8" y="256">x (${int(H)})</text>
    <text x="${gate.x}" y="30" text-anchor="middle" class="lab-gate">gate_proj → SiLU (${int(I)})</text>
    <text x="${up.x}" y="296" text-anchor="middle" class="lab-up">up_proj (${int(I)})</text>
    <text x="${prod.x}" y="66" text-anchor="middle">⊙ (${int(I)})</text>
    <text x="${W - 6}" y="256" text-anchor="end" class="lab-down">down_proj → ${int(H)}</text>`;
  setText($('neuron-live'), !live ? null : {
    zh: `亮起的是上面逐步计算的那个神经元（第 ${live.l} 层 #${live.j}，token ${JSON.stringify(live.piece)}）：乘积 ${fmt(live.p)} 乘上它在 down_proj 里的那一列，写回残差流。`,
    en: `Lit: the walk's neuron (layer ${live.l} #${live.j}, token ${JSON.stringify(live.piece)}): its product ${fmt(live.p)} times its down_proj column is written back into the stream.` });
}

