// <section id="silu">: SiLU against ReLU, drawn from their formulas, with a slider.
import { $, biSvg, chartWidth, setText, silu } from '../core.js';

export function mount() {
  $('silu-z').addEventListener('input', render);
  render();
}

function render() {
  const z = Number($('silu-z').value), s = silu(z), r = Math.max(0, z);
  $('silu-z-out').textContent = z.toFixed(1);
  $('silu-val').textContent = s.toFixed(3);
  $('relu-val').textContent = r.toFixed(3);
  $('diff-val').textContent = (s - r).toFixed(3);
  setText($('silu-sentence'), z < 0
    ? { zh: `在 z = ${z.toFixed(1)}（负值）处，ReLU 硬归零为 ${r.toFixed(3)}，SiLU 仍漏过 ${s.toFixed(3)}——软门还放行一点信号。`, en: `At z = ${z.toFixed(1)} (negative), ReLU cuts to ${r.toFixed(3)} while SiLU still lets ${s.toFixed(3)} through: the soft gate passes a little signal.` }
    : { zh: `在 z = ${z.toFixed(1)} 处两者接近：SiLU = ${s.toFixed(3)}，ReLU = ${r.toFixed(3)}。`, en: `At z = ${z.toFixed(1)} the two are close: SiLU = ${s.toFixed(3)}, ReLU = ${r.toFixed(3)}.` });
  draw(z);
}

function draw(z) {
  const H = 300, W = chartWidth($('silu-svg'), H, () => draw(Number($('silu-z').value))), x0 = 32, y0 = 20, w = W - 48, h = H - 50;
  const X = (v) => x0 + ((v + 6) / 12) * w, Y = (v) => y0 + h - ((v + 1) / 7) * h;
  const path = (f) => Array.from({ length: 241 }, (_, i) => { const v = -6 + i * 0.05; return `${i ? 'L' : 'M'}${X(v).toFixed(1)},${Y(f(v)).toFixed(1)}`; }).join('');
  const zmin = -1.2784645, vmin = silu(zmin);
  $('silu-svg').innerHTML = `<line x1="${x0}" y1="${Y(0)}" x2="${x0 + w}" y2="${Y(0)}" stroke="#999"/><line x1="${X(0)}" y1="${y0}" x2="${X(0)}" y2="${y0 + h}" stroke="#999"/>
    ${[-6, -4, -2, 0, 2, 4, 6].map((t) => `<text x="${X(t) - 6}" y="${y0 + h + 16}">${t}</text>`).join('')}
    <path d="${path((v) => Math.max(0, v))}" fill="none" stroke="#7a8597" stroke-width="2.5" stroke-dasharray="6 4"/>
    <path d="${path(silu)}" fill="none" stroke="var(--mlp)" stroke-width="3"/>
    <circle cx="${X(zmin)}" cy="${Y(vmin)}" r="4" fill="var(--fg)"/><text x="${Math.max(4, X(zmin) - 60)}" y="${Y(vmin) + 20}">min ≈ −0.278 @ z ≈ −1.278</text>
    <line x1="${X(z)}" y1="${y0}" x2="${X(z)}" y2="${y0 + h}" stroke="var(--accent)"/>
    <circle cx="${X(z)}" cy="${Y(silu(z))}" r="5" fill="var(--mlp)"/><circle cx="${X(z)}" cy="${Y(Math.max(0, z))}" r="5" fill="#7a8597"/>
    <text x="${x0 + 8}" y="${y0 + 14}" fill="var(--mlp)">SiLU</text><text x="${x0 + 8}" y="${y0 + 30}">${biSvg({ zh: 'ReLU（虚线）', en: 'ReLU (dashed)' })}</text>`;
}
