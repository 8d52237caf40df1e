// <section id="gated">: the gated MLP computed by hand beside the model's real numbers (the live
// walk: gate → SiLU, up, their product for one neuron at one token), and the sizes table. The
// walk's neuron and numbers are announced ('walk') for the neuron diagram.
import { $, checkNeuron, emit, escapeHtml, fillLayerPicker, fmt, guard, int, on, pieceLabel, silu, state } from '../core.js';

let chosen = false; // the reader picked a neuron: keep it across tokens and layers

export function mount() {
  on('model', () => { fillPickers(); renderSizes(); });
  on('run', () => { fillTokens(); return walk(); });
  on('unload', () => { for (const id of ['walk-gate', 'walk-silu', 'walk-up', 'walk-out']) $(id).textContent = '…'; });
  for (const id of ['walk-layer', 'walk-token']) $(id).addEventListener('change', () => { chosen = false; walk(); });
  $('walk-feature').addEventListener('change', () => { chosen = true; walk(); });
}

function fillPickers() {
  const c = state.info.config;
  fillLayerPicker($('walk-layer')).value = String(Math.floor(c.num_hidden_layers / 2)); // a new model: the walk starts mid-stack
  $('walk-feature').max = c.intermediate_size - 1;
}

function fillTokens() {
  $('walk-token').innerHTML = state.pieces.map((p, t) => `<option value="${t}">${t}: ${escapeHtml(JSON.stringify(pieceLabel(p)))}</option>`).join('');
  $('walk-token').value = String(state.pieces.length - 1);
}

function renderSizes() {
  const i = state.info, c = i.config;
  $('size-hidden').textContent = int(c.hidden_size);
  $('size-inter').textContent = int(c.intermediate_size);
  $('size-ratio').textContent = `${(c.intermediate_size / c.hidden_size).toFixed(2)}×`;
  $('size-layers').textContent = c.num_hidden_layers;
  const mlp = 3 * c.hidden_size * c.intermediate_size * c.num_hidden_layers;
  $('size-mlp-params').textContent = `${int(mlp)}`;
  $('size-mlp-params').dataset.value = mlp;
  $('size-fraction').textContent = `≈ ${(100 * mlp / i.params.total).toFixed(1)}% (${int(i.params.total)})`;
}

/** gate → SiLU, up, product for the chosen neuron at the chosen token (by default the most active
 *  neuron of that layer at that token), from one pass over the sentence up to that token */
async function walk() {
  if (!state.run) return;
  const l = Number($('walk-layer').value || 0), t = Number($('walk-token').value || 0), st = state.run.stats;
  if (document.activeElement !== $('walk-feature') && !chosen) $('walk-feature').value = st.top_idx[l][t * st.topK];
  if (!checkNeuron($('walk-feature'), $('walk-error'))) { for (const id of ['walk-gate', 'walk-silu', 'walk-up', 'walk-out']) $(id).textContent = '–'; return; }
  const j = Number($('walk-feature').value), I = state.info.config.intermediate_size;
  await guard($('walk-card'), async () => {
    const hooks = [`blocks.${l}.mlp.hook_pre`, `blocks.${l}.mlp.hook_pre_linear`, `blocks.${l}.mlp.hook_post`];
    const r = await state.model.forward(state.ids.slice(0, t + 1), { stats: false, logits: 'none', hooks });
    const [g, u, p] = hooks.map((h) => r.hooks[h][t * I + j]);
    $('walk-gate').textContent = fmt(g); $('walk-silu').textContent = fmt(silu(g)); $('walk-up').textContent = fmt(u); $('walk-out').textContent = fmt(p);
    $('walk-out').dataset.value = p;
    // the neuron diagram lights the same neuron with the same numbers
    await emit('walk', { l, t, j, g, s: silu(g), u, p, piece: pieceLabel(state.pieces[t]) });
  });
}
