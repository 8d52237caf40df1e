// <section id="intro">: which model runs behind the page, and the forward-pass strip with its
// layer count and mixers.
import { $, int, on, setText, state } from '../core.js';

export function mount() {
  on('model', render);
}

function render() {
  const i = state.info, c = i.config, e = state.entry;
  const name = e?.label ?? { zh: e?.url ?? '', en: e?.url ?? '' };
  setText($('model-name'), { zh: `${name.zh} — ${int(i.params.total)} 个参数`, en: `${name.en} — ${int(i.params.total)} parameters` });
  $('strip-layers').textContent = `× ${c.num_hidden_layers}`;
  const nLinear = i.mixers.filter((m) => m === 'linear').length, nLocal = i.mixers.filter((m) => m === 'sliding').length;
  setText($('strip-mixer'), nLinear
    ? { zh: `混合器（${c.num_hidden_layers - nLinear} 层注意力 / ${nLinear} 层 DeltaNet）`, en: `mixer (${c.num_hidden_layers - nLinear} attention / ${nLinear} DeltaNet)` }
    : nLocal
      ? { zh: `注意力（${nLocal} 层局部 / ${c.num_hidden_layers - nLocal} 层全局）`, en: `attention (${nLocal} local / ${c.num_hidden_layers - nLocal} global)` }
      : { zh: '注意力', en: 'attention' });
}
