// <section id="neurons">: the MLP drawn as neurons: x feeds two parallel branches, gate (then
// SiLU) and up, which meet at ⊙; the product goes through down_proj back to the stream's width.
// The live walk's neuron ('walk', from the gated section) is lit with its numbers. Its "go deeper"
// panel dissects that neuron: its weight class (the cosines of w_gate, w_in, w_out), its sign
// quadrant and bilinear term at the walk's token, its layer's class counts, and how far each
// layer's MLP is from bilinear on the reader's sentence (model.bilinearGap).
import { $, bi, biSvg, chartWidth, escapeHtml, fmt, guard, int, on, probeTextsInLang, setText, skipCard, state } from '../core.js';

let live = null; // the walk's neuron, as last announced
let gap = null; // { runId, result } of the bilinear gap for the reader's sentence

export function mount() {
  draw(null, null);
  on('model', () => { live = null; gap = null; draw(state.info.config, null); });
  on('walk', (w) => { live = w; draw(state.info.config, w); return anatomy(); });
  on('run', () => showGap(false));
  on('unload', () => { live = null; gap = null; for (const id of ['anatomy-cos', 'anatomy-class', 'anatomy-token', 'anatomy-counts', 'anatomy-gap', 'anatomy-gap-note']) $(id).innerHTML = ''; });
  $('deeper-anatomy').addEventListener('toggle', () => { if ($('deeper-anatomy').open) { anatomy(); showGap(false); } });
  $('anatomy-gap-run').addEventListener('click', () => showGap(true));
  $('anatomy-quad-run').addEventListener('click', () => quadrants());
  $('anatomy-lang-run').addEventListener('click', () => languageExperiment());
  on('walk', () => { $('anatomy-quads').innerHTML = ''; });
  // a new sentence: the experiments' results belonged to the old one (and perhaps another neuron)
  on('run', () => { $('anatomy-lang-out').innerHTML = ''; $('anatomy-quads').innerHTML = ''; skipCard($('anatomy-lang-card')); skipCard($('anatomy-quads')); });
}

/** the lit neuron's four (sign gate, sign up) quadrants over the probe sentences of the page's language */
async function quadrants() {
  if (!live || !state.model || !state.probes) return;
  const w = live, box = $('anatomy-quads');
  await guard(box, async () => {
    const q = await state.model.neuronQuadrants(probeTextsInLang(), { layer: w.l, neuron: w.j, k: 1, window: 2 });
    if (live !== w) return;
    box.dataset.layer = String(w.l); box.dataset.neuron = String(w.j);
    const best = q.quadrants.reduce((a, b) => (b.share > a.share ? b : a));
    box.innerHTML = q.quadrants.map((x) => `<div class="quad${x === best ? ' mine' : ''}" data-gate="${x.gate}" data-up="${x.up}" data-count="${x.count}" data-share="${x.share}">` +
      `<b>gate ${x.gate} · up ${x.up}</b><span>${bi({ zh: `${(100 * x.frequency).toFixed(1)}% 的 token，${(100 * x.share).toFixed(1)}% 的输出`, en: `${(100 * x.frequency).toFixed(1)}% of tokens, ${(100 * x.share).toFixed(1)}% of the output` })}</span>` +
      (x.top[0] ? `<code>${escapeHtml(JSON.stringify(x.top[0].piece))} ${fmt(x.top[0].activation, 2)}</code>` : '') + '</div>').join('') +
      `<p class="note">${bi({ zh: `${int(q.tokens)} 个 token：它写出的主要在 gate ${best.gate}、up ${best.up} 这一格。`, en: `${int(q.tokens)} tokens: most of what it writes comes from the gate ${best.gate}, up ${best.up} cell.` })}</p>`;
  });
}

const sgn3 = (v) => `${v >= 0 ? '+' : ''}${v.toFixed(3)}`;
/** the language neurons of the probe set (the page's two languages), switched off on the reader's sentence */
async function languageExperiment() {
  if (!state.model || !state.probes || !state.run) return;
  const card = $('anatomy-lang-card'), runId = state.runId, lang = state.lang;
  await guard(card, async () => {
    // each language's probe sentences split in two: the first half finds the neurons, the second
    // (up to 20) measures the loss (a big model: 12 sentences per language, a pass each)
    const all = {}, cap = state.info.config.hidden_size >= 512 ? 12 : Infinity;
    for (const p of state.probes) if (p.lang && (all[p.lang]?.length ?? 0) < cap) (all[p.lang] ??= []).push(p.text);
    const other = Object.keys(all).find((k) => k !== lang);
    if (!all[lang] || !other || all[lang].length < 2 || all[other].length < 2) { setText($('anatomy-lang-out'), { zh: '这个模型的探针句子不够两种语言。', en: 'This model\'s probe sentences do not cover two languages.' }); return; }
    const half = (v) => Math.ceil(v.length / 2), texts = Object.fromEntries([lang, other].map((k) => [k, all[k].slice(0, half(all[k]))]));
    const sample = Object.fromEntries([lang, other].map((k) => [k, all[k].slice(half(all[k])).slice(0, 20)]));
    const r = await state.model.languageNeurons(texts, { share: 0.01 });
    const mine = r.byLang[lang] ?? [];
    if (!mine.length) { setText($('anatomy-lang-out'), { zh: '在这些句子里找不到这种语言特有的神经元。', en: 'No neuron specific to this language was found in these sentences.' }); return; }
    // the first half of the reader's first sentence, so there is something left to continue
    const first = state.text.split(/(?<=[。.!?！？])/)[0].trim() || state.text;
    const words = lang === 'zh' ? [...first] : first.split(' '), prompt = words.slice(0, Math.max(1, Math.ceil(words.length / 2))).join(lang === 'zh' ? '' : ' ');
    const sw = await state.model.languageSwitch([prompt], { neurons: mine, maxTokens: 12 });
    // the loss of the held-out sentences of each language, with them off
    const loss = await state.model.languageLoss(sample, { neurons: mine });
    if (runId !== state.runId) return;
    const p = sw.prompts[0], out = $('anatomy-lang-out');
    Object.assign(out.dataset, { neurons: String(mine.length), prompt, before: p.before.text, after: p.after.text, dloss: String(loss[lang].change), dlossOther: String(loss[other].change) });
    const q = (t) => `<code>${escapeHtml(JSON.stringify(t))}</code>`;
    const langName = { zh: { zh: '中文', en: 'Chinese' }, en: { zh: '英文', en: 'English' } }[lang];
    out.innerHTML = bi({ zh: `${mine.length} 个${langName.zh}神经元（共 ${r.neurons.length} 个语言神经元）置零。`, en: `${mine.length} ${langName.en} neurons (of ${r.neurons.length} language neurons) set to zero.` }) + '<br>' +
      `${bi({ zh: '第一句的前一半', en: 'The first half of your first sentence' })} ${q(prompt)} ${bi({ zh: '的续写，之前：', en: 'continued, before:' })} ${q(p.before.text)}<br>${bi({ zh: '之后：', en: 'after:' })} ${q(p.after.text)}<br>` +
      bi({ zh: `另外 ${sample[lang].length} 个${langName.zh}探针句子（没用来找神经元）上每个 token 的损失 ${sgn3(loss[lang].change)} nats，另一种语言的 ${sample[other].length} 个 ${sgn3(loss[other].change)}。${p.before.text === p.after.text ? '续写没变：' : ''}在这个小模型里，续写用哪种语言跟着句子本身走（靠注意力），不靠少数 MLP 神经元。`,
        en: `Loss per token on ${sample[lang].length} other ${langName.en} probe sentences (not used to find the neurons) ${sgn3(loss[lang].change)} nats, on ${sample[other].length} of the other language ${sgn3(loss[other].change)}.${p.before.text === p.after.text ? ' The continuation did not change:' : ''} in this small model the language of a continuation follows the sentence itself (through attention), not a few MLP neurons.` });
  });
}

const open = () => $('deeper-anatomy').open;

/** what each input-output class means, in a sentence (js/geometry.js) */
const CLASS_TEXT = {
  enrichment: { zh: '增强型：w_in 和 w_out 同向，门也读同一个方向——它把读到的方向再加强一些。', en: 'enrichment: w_in and w_out point the same way and the gate reads that direction too: it adds more of what it reads.' },
  conditional_enrichment: { zh: '条件增强型：w_in 和 w_out 同向，但门读的是另一个方向——由门决定什么时候加强。', en: 'conditional enrichment: w_in and w_out point the same way, but the gate reads another direction and decides when.' },
  depletion: { zh: '削弱型：w_out 与 w_in 反向，门也读同一个方向——它抹掉读到的方向。', en: 'depletion: w_out points against w_in and the gate reads that direction too: it takes away what it reads.' },
  conditional_depletion: { zh: '条件削弱型：w_out 与 w_in 反向，但门读的是另一个方向——由门决定什么时候削弱。', en: 'conditional depletion: w_out points against w_in, but the gate reads another direction and decides when.' },
  proportional_change: { zh: '比例型：写出的是门自己读的方向，大小随 w_in 读到的量变化。', en: 'proportional change: it writes the gate\'s own direction, scaled by what w_in reads.' },
  orthogonal_output: { zh: '正交输出：写出的方向和读入的两个方向都不相近——它把信息写到别的方向上。', en: 'orthogonal output: it writes a direction close to neither of the two it reads: it moves information elsewhere.' },
};
const CLASS_SHORT = { enrichment: { zh: '增强', en: 'enrichment' }, conditional_enrichment: { zh: '条件增强', en: 'conditional enrichment' }, depletion: { zh: '削弱', en: 'depletion' },
  conditional_depletion: { zh: '条件削弱', en: 'conditional depletion' }, proportional_change: { zh: '比例', en: 'proportional change' }, orthogonal_output: { zh: '正交输出', en: 'orthogonal output' } };

/** the walk's neuron from its weights and at the walk's token, and its layer's class counts */
async function anatomy() {
  if (!live || !open() || !state.model) return;
  const w = live, card = $('anatomy-card');
  await guard(card, async () => {
    const r = await state.model.neuronWeightClasses({ layers: [w.l] }), L = r.layers[0];
    if (live !== w) return; // a newer neuron took over
    const cls = r.classes[L.classes[w.j]], atypical = L.atypical[w.j] === 1;
    const cos = [['cos(w_gate, w_in)', L.cosGateIn[w.j]], ['cos(w_gate, w_out)', L.cosGateOut[w.j]], ['cos(w_in, w_out)', L.cosInOut[w.j]]];
    setText($('anatomy-h'), { zh: `第 ${w.l} 层 #${w.j}（上图亮起的神经元）`, en: `Layer ${w.l} #${w.j} (the neuron lit above)` });
    card.dataset.layer = String(w.l); card.dataset.neuron = String(w.j);
    // three cosines on a -1..1 scale, the threshold ±0.5 marked
    $('anatomy-cos').innerHTML = cos.map(([name, v]) => `<div class="cos-row" data-v="${v}"><code>${name}</code><span class="cos-track"><span class="cos-mark" style="left:25%"></span><span class="cos-mark" style="left:75%"></span>` +
      `<span class="cos-bar ${v >= 0 ? 'pos' : 'neg'}" style="${v >= 0 ? 'left:50%' : `left:${(50 + 50 * v).toFixed(2)}%`};width:${(50 * Math.abs(v)).toFixed(2)}%"></span></span><b>${fmt(v, 2)}</b></div>`).join('');
    $('anatomy-class').dataset.class = cls;
    $('anatomy-class').innerHTML = bi({ zh: `类别：${CLASS_TEXT[cls].zh}${atypical ? '（非典型：门与 w_in 的关系和这一类的原型不同）' : ''}`, en: `Class: ${CLASS_TEXT[cls].en}${atypical ? ' (atypical: its gate and w_in relate unlike the class\'s prototype)' : ''}` });
    // at the walk's token: the sign quadrant, and the real output against the bilinear term
    const b = 0.5 * w.g * w.u, sg = w.g >= 0 ? '+' : '−', su = w.u >= 0 ? '+' : '−', off = w.p !== 0 ? Math.abs(w.p - b) / Math.abs(w.p) : 0;
    Object.assign($('anatomy-token').dataset, { g: String(w.g), u: String(w.u), p: String(w.p), b: String(b) });
    setText($('anatomy-token'), {
      zh: `在 token ${JSON.stringify(w.piece)} 上：门 ${sg}、up ${su} 象限（gate = ${fmt(w.g, 2)}，up = ${fmt(w.u, 2)}）。真实输出 silu(gate)·up = ${fmt(w.p)}，双线性近似 ½·gate·up = ${fmt(b)}，相差 ${(100 * off).toFixed(0)}%。${w.g < 0 ? '门为负时 SiLU 只放过一小部分并且翻了号，近似也就不准。' : w.g > 2 ? '门很大时 silu(z) ≈ z，比 z/2 大一倍。' : ''}`,
      en: `At token ${JSON.stringify(w.piece)}: the gate ${sg}, up ${su} quadrant (gate = ${fmt(w.g, 2)}, up = ${fmt(w.u, 2)}). The real output silu(gate)·up = ${fmt(w.p)}, the bilinear term ½·gate·up = ${fmt(b)}, ${(100 * off).toFixed(0)}% apart.${w.g < 0 ? ' With a negative gate SiLU lets only a small, sign-flipped part through, so the term is far off.' : w.g > 2 ? ' With a large gate silu(z) ≈ z, twice z/2.' : ''}` });
    drawCounts(r.classes, L, w.l, cls);
  });
}

/** the six classes in the walk's layer: one bar each (rows, so that a phone has room for the
 *  names), the neuron's own class marked */
function drawCounts(names, L, l, mine) {
  const n = L.classes.length, max = Math.max(...names.map((c) => L.counts[c]), 1);
  setText($('anatomy-counts-h'), { zh: `第 ${l} 层 ${int(n)} 个神经元的类别（cos(w_in, w_out) 的中位数 ${fmt(L.medianCosInOut, 3)}）`, en: `The classes of layer ${l}'s ${int(n)} neurons (median cos(w_in, w_out) ${fmt(L.medianCosInOut, 3)})` });
  $('anatomy-counts').innerHTML = names.map((c) => `<div class="cos-row cls${c === mine ? ' mine' : ''}" data-class="${c}" data-count="${L.counts[c]}"><span>${bi(CLASS_SHORT[c])}</span>` +
    `<span class="cos-track"><span class="cos-bar ${c === mine ? 'neg' : 'pos'}" style="left:0;width:${(100 * L.counts[c] / max).toFixed(2)}%"></span></span><b>${L.counts[c]}</b></div>`).join('');
}

/** KL(real ‖ bilinear) per layer on the reader's sentence: on small models when the panel opens,
 *  on big ones (a pass per layer) when asked */
async function showGap(asked) {
  if (!open() || !state.run || !state.model) return;
  const big = state.info.config.hidden_size >= 512;
  $('anatomy-gap-run').hidden = !big;
  if (gap?.runId === state.runId) { drawGap(gap.result); return; }
  $('anatomy-gap').innerHTML = '';
  if (big && !asked) { setText($('anatomy-gap-note'), { zh: '这个模型较大：点“计算”开始。', en: 'This model is large: press “Compute” to start.' }); return; }
  const runId = state.runId;
  await guard($('anatomy-gap-card'), async () => {
    const result = await state.model.bilinearGap(Array.from(state.ids));
    if (runId !== state.runId) return;
    gap = { runId, result };
    drawGap(result);
  });
}

function drawGap(g) {
  const L = g.layers.length, W = chartWidth($('anatomy-gap'), 170, () => drawGap(g)), bw = (W - 20) / L, max = Math.max(...g.layers.map((x) => x.kl), 1e-9);
  $('anatomy-gap').innerHTML = g.layers.map((x, i) => {
    const h = (110 * x.kl) / max, cx = 10 + i * bw;
    return `<g data-layer="${x.layer}" data-kl="${x.kl}" data-dloss="${x.dLoss}"><rect x="${(cx + 3).toFixed(1)}" y="${(128 - h).toFixed(1)}" width="${(bw - 6).toFixed(1)}" height="${Math.max(h, 0.5).toFixed(1)}" fill="var(--gate)"><title>${x.kl.toFixed(4)}</title></rect>` +
      `<text x="${(cx + bw / 2).toFixed(1)}" y="146" text-anchor="middle" class="tick">${x.layer}</text></g>`;
  }).join('') + `<text x="10" y="166" class="tick">${biSvg({ zh: '层（条高：KL，单位 nats）', en: 'layer (bar height: KL in nats)' })}</text>`;
  const sorted = [...g.layers].sort((a, b) => a.kl - b.kl), near = sorted[0], far = sorted.at(-1);
  $('anatomy-gap-note').dataset.far = String(far.layer);
  setText($('anatomy-gap-note'), {
    zh: `最接近双线性的是第 ${near.layer} 层（KL ${near.kl.toFixed(4)}），最离不开门的是第 ${far.layer} 层（KL ${far.kl.toFixed(3)}，下一个 token 的损失 ${far.dLoss >= 0 ? '+' : ''}${far.dLoss.toFixed(3)}）。所有层一起换掉：KL ${g.all.kl.toFixed(2)}。`,
    en: `Closest to bilinear: layer ${near.layer} (KL ${near.kl.toFixed(4)}); the one that needs its gate most: layer ${far.layer} (KL ${far.kl.toFixed(3)}, next-token loss ${far.dLoss >= 0 ? '+' : ''}${far.dLoss.toFixed(3)}). All layers replaced at once: KL ${g.all.kl.toFixed(2)}.` });
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

