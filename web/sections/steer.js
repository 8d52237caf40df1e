// Steering: push one of the feature neurons the page found (city names, negation, code) up or down
// by a constant at every position while the model continues the reader's sentence — an `add`
// intervention on blocks.L.mlp.hook_post, the same as adding that much of the neuron's down_proj
// column to the residual stream.
import { $, FEATURE_TITLES, L, state } from '../core.js';
import { featureBest } from './neurons.js';

/** the feature neurons to push, once the search has found them */
export function fillSteerOptions() {
  const best = featureBest(), sel = $('steer-feature'), v = sel.value; // the page language's neurons
  sel.innerHTML = best.filter((b) => FEATURE_TITLES[b.feature]).map((b) =>
    `<option value="${b.layer}:${b.neuron}:${b.sign}" data-feature="${b.feature}">${L(FEATURE_TITLES[b.feature][0], FEATURE_TITLES[b.feature][1])} · ${L(`第 ${b.layer} 层 #${b.neuron}`, `layer ${b.layer} #${b.neuron}`)}</option>`).join('');
  if (v && [...sel.options].some((o) => o.value === v)) sel.value = v;
  $('steer-btn').disabled = !sel.options.length;
  if (!sel.options.length) $('steer-note').textContent = L('等神经元搜索完成后就可以用。', 'Available once the neuron search has finished.');
  else if (!state.steer) $('steer-note').textContent = '';
}

async function continueText(intervention) {
  const out = [];
  // stop: [] — never stop at an end-of-text token: a sentence that ends with a full stop would give nothing to compare
  for await (const t of state.model.generate(state.ids, { maxTokens: 16, stop: [], ...(intervention ? { interventions: [intervention] } : {}) })) out.push(t.text);
  return out.join('');
}

export async function runSteer() {
  const [l, j, sign] = $('steer-feature').value.split(':').map(Number), c = Number($('steer-strength').value);
  if (!state.model || !state.ids.length || !Number.isInteger(j)) return;
  $('steer-note').textContent = L('续写中…', 'continuing…');
  $('steer-before').textContent = ''; $('steer-after').textContent = '';
  const iv = { hook: `blocks.${l}.mlp.hook_post`, neurons: [j], op: 'add', value: c * sign };
  const ids = state.ids;
  const before = await continueText(null), after = await continueText(iv);
  if (state.ids !== ids) return;
  state.steer = { l, j, sign, c, before, after };
  $('steer-before').textContent = before; $('steer-after').textContent = after;
  renderSteerNote();
}

export function renderSteerNote() {
  const s = state.steer;
  if (!s) return;
  const k = String(s.c * s.sign).replace('-', '−');
  $('steer-note').textContent = L(`每个位置上把第 ${s.l} 层神经元 #${s.j} 的激活${s.c * s.sign >= 0 ? '加上' : '减去'} ${Math.abs(s.c)}（往它“喜欢”的方向是 ${s.c >= 0 ? '推高' : '压低'}），等于往残差流里加 ${k} 倍它的 down_proj 列。${s.before === s.after ? '这次续写没有变：试试更大的强度。' : '续写变了。'}`,
    `At every position, neuron #${s.j} of layer ${s.l} gets ${s.c * s.sign >= 0 ? '+' : '−'}${Math.abs(s.c)} added to its activation (${s.c >= 0 ? 'up' : 'down'} along what it fires for): the same as adding ${k} × its down_proj column to the residual stream. ${s.before === s.after ? 'The continuation did not change: try a larger strength.' : 'The continuation changed.'}`);
}

$('steer-strength').addEventListener('input', () => { $('steer-value').textContent = $('steer-strength').value; });
$('steer-btn').addEventListener('click', runSteer);
