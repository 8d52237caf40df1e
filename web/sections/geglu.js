// <section id="geglu">: SwiGLU against GeGLU (Gemma 3's gate): the two gate curves from their
// formulas with a slider, and, in its "go deeper" panel, the loaded model's own gate inputs
// (mlp.hook_pre on the reader's sentence) read through both functions: how much of the gate's
// output would come from negative inputs under SiLU and under GELU. A Gemma-family model runs
// every other section of the page too; the button asks the header for the Gemma-3-shaped one.
import { $, bi, biSvg, chartWidth, emit, guard, on, setText, silu, skipCard, state } from '../core.js';

/** Gemma 3's gelu_pytorch_tanh, written as z · σ(2 √(2/π) (z + 0.044715 z³)) */
export const geluTanh = (z) => z / (1 + Math.exp(-2 * Math.sqrt(2 / Math.PI) * (z + 0.044715 * z ** 3)));
const GELU_MIN = { z: -0.752, v: -0.170 }, SILU_MIN = { z: -1.278, v: -0.278 };
/** at most this many tokens and layers are read (a big model's gate is wide) */
export const GEGLU_TOKENS = 64, GEGLU_LAYERS = 8;
const card = () => $('geglu-card');

export function mount() {
  $('geglu-z').addEventListener('input', render);
  render();
  on('model', () => { $('geglu-table').querySelector('tbody').innerHTML = ''; loadButton(); });
  on('run', () => live());
  $('deeper-geglu').addEventListener('toggle', () => { if ($('deeper-geglu').open) live(); });
  $('geglu-load').addEventListener('click', () => emit('want-model', 'gemma3-synth')); // the header loads it
}

function render() {
  const z = Number($('geglu-z').value), s = silu(z), g = geluTanh(z);
  $('geglu-z-out').textContent = z.toFixed(1);
  $('geglu-silu').textContent = s.toFixed(3);
  $('geglu-gelu').textContent = g.toFixed(3);
  $('geglu-open').textContent = z === 0 ? '0.500 / 0.500' : `${(s / z).toFixed(3)} / ${(g / z).toFixed(3)}`;
  draw(z);
}

function draw(z) {
  const H = 300, W = chartWidth($('geglu-svg'), H, () => draw(Number($('geglu-z').value))), x0 = 32, y0 = 20, w = W - 48, h = H - 50;
  const X = (v) => x0 + ((v + 6) / 12) * w, Y = (v) => y0 + h - ((v + 1) / 7) * h;
  const path = (f) => Array.from({ length: 241 }, (_, i) => { const v = -6 + i * 0.05; return `${i ? 'L' : 'M'}${X(v).toFixed(1)},${Y(f(v)).toFixed(1)}`; }).join('');
  $('geglu-svg').innerHTML = `<line x1="${x0}" y1="${Y(0)}" x2="${x0 + w}" y2="${Y(0)}" stroke="#999"/><line x1="${X(0)}" y1="${y0}" x2="${X(0)}" y2="${y0 + h}" stroke="#999"/>
    ${[-6, -4, -2, 0, 2, 4, 6].map((t) => `<text x="${X(t) - 6}" y="${y0 + h + 16}">${t}</text>`).join('')}
    <path d="${path(silu)}" fill="none" stroke="var(--mlp)" stroke-width="3"/>
    <path d="${path(geluTanh)}" fill="none" stroke="#2f7d6d" stroke-width="3" stroke-dasharray="7 4"/>
    <circle cx="${X(SILU_MIN.z)}" cy="${Y(SILU_MIN.v)}" r="4" fill="var(--mlp)"/><circle cx="${X(GELU_MIN.z)}" cy="${Y(GELU_MIN.v)}" r="4" fill="#2f7d6d"/>
    <text x="${Math.max(4, X(SILU_MIN.z) - 150)}" y="${Y(SILU_MIN.v) + 22}">SiLU min −0.278 @ −1.278</text>
    <text x="${Math.min(X(GELU_MIN.z) + 8, x0 + w - 180)}" y="${Y(GELU_MIN.v) + 36}">GELU min −0.170 @ −0.752</text>
    <line x1="${X(z)}" y1="${y0}" x2="${X(z)}" y2="${y0 + h}" stroke="var(--accent)"/>
    <circle cx="${X(z)}" cy="${Y(silu(z))}" r="5" fill="var(--mlp)"/><circle cx="${X(z)}" cy="${Y(geluTanh(z))}" r="5" fill="#2f7d6d"/>
    <text x="${x0 + 8}" y="${y0 + 14}" fill="var(--mlp)">${biSvg({ zh: 'SiLU（SwiGLU，Qwen3.5）', en: 'SiLU (SwiGLU, Qwen3.5)' })}</text>
    <text x="${x0 + 8}" y="${y0 + 30}" fill="#2f7d6d">${biSvg({ zh: 'GELU tanh（GeGLU，Gemma 3，虚线）', en: 'GELU tanh (GeGLU, Gemma 3, dashed)' })}</text>`;
}

const isGelu = () => state.info?.config?.hidden_activation === 'gelu_pytorch_tanh';
let models = null;
async function gemmaEntry() {
  try { models ??= (await (await fetch('models.json')).json()).models; } catch { models = []; }
  return models.find((m) => m.id === 'gemma3-synth') ?? null;
}
async function loadButton() {
  const entry = await gemmaEntry();
  $('geglu-load').hidden = !entry || isGelu();
}

/** The model's gate inputs (mlp.hook_pre) on the sentence's first GEGLU_TOKENS tokens, at up to
 *  GEGLU_LAYERS layers spread over the stack, read through both gate functions: per layer, the
 *  share of inputs above 0 and the share of each function's |output| that comes from inputs below 0. */
async function live() {
  if (!$('deeper-geglu').open || !state.model || !state.run) return;
  const L = state.info.config.num_hidden_layers, I = state.info.config.intermediate_size;
  const ids = Array.from(state.ids).slice(0, GEGLU_TOKENS), T = ids.length;
  if (!T) { skipCard(card()); return; }
  const layers = L <= GEGLU_LAYERS ? [...Array(L).keys()] : Array.from({ length: GEGLU_LAYERS }, (_, k) => Math.round((k * (L - 1)) / (GEGLU_LAYERS - 1)));
  await guard(card(), async () => {
    const hooks = layers.map((l) => `blocks.${l}.mlp.hook_pre`);
    const r = await state.model.forward(ids, { hooks, stats: false, logits: 'none' });
    const rows = layers.map((l) => {
      const z = r.hooks[`blocks.${l}.mlp.hook_pre`];
      let pos = 0, sNeg = 0, sAll = 0, gNeg = 0, gAll = 0;
      for (let i = 0; i < T * I; i++) {
        const v = z[i], s = Math.abs(silu(v)), g = Math.abs(geluTanh(v));
        sAll += s; gAll += g;
        if (v > 0) pos++; else { sNeg += s; gNeg += g; }
      }
      return { l, open: pos / (T * I), silu: sAll ? sNeg / sAll : 0, gelu: gAll ? gNeg / gAll : 0 };
    });
    const own = isGelu() ? 'gelu' : 'silu';
    setText($('geglu-model'), own === 'gelu'
      ? { zh: `这个模型（${state.info.family}）的门是 GELU（tanh 近似）：GeGLU。下表把它自己的门输入分别送进两种函数。`, en: `This model (${state.info.family}) gates with GELU (tanh approximation): GeGLU. The table reads its own gate inputs through both functions.` }
      : { zh: `这个模型（${state.info.family}）的门是 SiLU：SwiGLU。下表把它自己的门输入分别送进两种函数。`, en: `This model (${state.info.family}) gates with SiLU: SwiGLU. The table reads its own gate inputs through both functions.` });
    const pct = (x) => `${(100 * x).toFixed(1)}%`;
    const mark = (k) => (k === own ? ' class="own"' : '');
    $('geglu-table').querySelector('thead').innerHTML = `<tr><th scope="col">${bi({ zh: '层', en: 'layer' })}</th><th scope="col">z &gt; 0</th>` +
      `<th scope="col"${mark('silu')}>${bi({ zh: 'SiLU：来自 z < 0', en: 'SiLU: from z < 0' })}</th><th scope="col"${mark('gelu')}>${bi({ zh: 'GELU：来自 z < 0', en: 'GELU: from z < 0' })}</th></tr>`;
    $('geglu-table').querySelector('tbody').innerHTML = rows.map((q) => `<tr data-layer="${q.l}" data-open="${q.open}" data-silu="${q.silu}" data-gelu="${q.gelu}"><th scope="row">${q.l}</th><td>${pct(q.open)}</td><td${mark('silu')}>${pct(q.silu)}</td><td${mark('gelu')}>${pct(q.gelu)}</td></tr>`).join('');
    const mean = (k) => rows.reduce((a, q) => a + q[k], 0) / rows.length;
    setText($('geglu-note'), {
      zh: `在前 ${T} 个 token 上：平均 ${pct(mean('open'))} 的门输入为正。同样的输入，SiLU 有 ${pct(mean('silu'))} 的输出来自负输入，GELU 只有 ${pct(mean('gelu'))}：GELU 的开关对负输入关得更紧。${state.entry?.kind === 'random' ? '（权重是随机的：门输入大致对称分布在 0 两侧。）' : ''}`,
      en: `Over the first ${T} tokens: ${pct(mean('open'))} of the gate inputs are positive on average. On these same inputs ${pct(mean('silu'))} of SiLU's output comes from negative inputs, and only ${pct(mean('gelu'))} of GELU's: GELU's switch shuts more tightly below zero.${state.entry?.kind === 'random' ? ' (Random weights: the gate inputs sit roughly symmetrically around 0.)' : ''}`,
    });
    loadButton();
  });
}
