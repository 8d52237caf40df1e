// <section id="takeaways">: the exercise (checked against the live numbers) and the quiz (its
// feedback quotes the loaded model where it can).
import { $, bi, layerRatios, on, setText, state } from '../core.js';

const QUIZ_FEEDBACK = {
  q1: { a: { zh: '不是：矩阵乘法会混合不同特征。⊙ 只把同一位置的两个数相乘。', en: 'No: a matrix product mixes features. ⊙ only multiplies the two numbers in the same position.' },
    b: { zh: '对：逐元素相乘，门控的每个特征只管自己那一路取值。', en: 'Right: element-wise, each gate feature scales only its own value.' },
    c: { zh: '不是：点积会把整个向量压成一个数，MLP 需要保留 intermediate_dim 个特征。', en: 'No: a dot product would collapse the vector to one number; the MLP keeps intermediate_dim features.' } },
  q2: { a: { zh: '对：MLP 的输出是加到残差流上的修正，不是替换。', en: 'Right: the MLP\'s output is a correction added to the stream, not a replacement.' },
    b: { zh: '不是：残差连接只做加法，不会覆盖。', en: 'No: the residual connection only adds, it never overwrites.' },
    c: { zh: '不是：残差连接只做加法，MLP 不会取代残差流。', en: 'No: the residual connection only adds; the MLP does not take the stream over.' } },
  q3: { a: { zh: '不是：精度和参数个数无关。', en: 'No: precision has nothing to do with the number of parameters.' },
    b: { zh: '对：三个 hidden × intermediate 的矩阵、每层一份，加起来约占三分之一。', en: 'Right: three hidden × intermediate matrices per layer add up to about a third.' },
    c: { zh: '不是：每层只有一个 MLP 模块。', en: 'No: there is exactly one MLP block per layer.' } },
  q4: { a: { zh: '不一定：AUC 只比较排序，不管最强的激活落在哪里。上面的特征卡片数出了已加载模型里的情况。', en: 'Not necessarily: AUC compares rankings and says nothing about where the strongest activations fall. The feature cards above count it for the loaded model.' },
    b: { zh: '对：AUC 是“正例高于反例”的概率。有选择性不等于单义——上面的特征卡片数出了它最强的激活里有几次是这类 token。', en: 'Right: AUC is the chance that a positive scores above a negative. Selective is not monosemantic; the feature cards above count how many of its strongest activations are of the kind.' },
    c: { zh: '不是：SwiGLU 神经元几乎从不恰好为 0，而且 AUC 不说明它在别处激活得多不多。', en: 'No: a SwiGLU neuron is almost never exactly zero, and AUC says nothing about how much it fires elsewhere.' } },
};
let ex = null; // the exercise's answer: it belongs to the text it was checked on

export function mount() {
  $('ex-check').addEventListener('click', check);
  document.querySelectorAll('#quiz fieldset').forEach((fs) => fs.addEventListener('change', (ev) => answer(fs, ev.target)));
  on('run', () => {
    ex = null; renderEx();
    // an answered quiz question quotes the live numbers: those of this text now
    document.querySelectorAll('#quiz input:checked').forEach((el) => answer(el.closest('fieldset'), el));
  });
}

function check() {
  if (!state.run) return;
  const ratios = layerRatios().map((r) => 100 * r).filter((r) => r > 0);
  const big = Math.max(...ratios), small = Math.min(...ratios);
  const a = Number($('ex-large').value), b = Number($('ex-small').value);
  ex = { ok: Math.abs(a - big) <= 0.15 && Math.abs(b - small) <= 0.15, big, small };
  renderEx();
}
function renderEx() {
  const fb = $('ex-feedback');
  if (!ex) { fb.textContent = ''; fb.className = ''; return; }
  const { ok, big, small } = ex;
  fb.className = ok ? 'right' : 'wrong';
  // the lesson's point holds for most layers; a small model's first or last MLP can be most of its layer's output
  const tail = big < 50
    ? { zh: '但即便最大的也远小于 100%——MLP 写的是修正。', en: 'and even the biggest is far below 100%: the MLP writes a correction.' }
    : { zh: '最大的那层超过一半，不再是小修正（小模型的首尾层常这样）；其余层才是修正。', en: 'the biggest is over half of its layer\'s output, no longer a small correction (common in a small model\'s first or last layer); the other layers are corrections.' };
  setText(fb, ok
    ? { zh: `对！最大 ${big.toFixed(1)}%，最小 ${small.toFixed(1)}%：最大层的 MLP 占比是最小层的 ${(big / small).toFixed(1)} 倍，` + tail.zh, en: `Right! Largest ${big.toFixed(1)}%, smallest ${small.toFixed(1)}%: the biggest share is ${(big / small).toFixed(1)}× the smallest, ` + tail.en }
    : { zh: `还不对。提示：数值在点击长条后显示；最大的是 ${big.toFixed(1)} 附近吗？`, en: `Not yet. Hint: the numbers appear when you click the bars; is the largest near ${big.toFixed(1)}?` });
}

function answer(fs, input) {
  const q = input.name, v = input.value, fb = fs.querySelector('.feedback'), right = input.hasAttribute('data-correct');
  fb.className = `feedback ${right ? 'right' : 'wrong'}`;
  const f = QUIZ_FEEDBACK[q][v], live = q === 'q2' ? liveRatioNote() : { zh: '', en: '' };
  fb.innerHTML = bi({ zh: `${right ? '✓ ' : '✗ '}${f.zh}${live.zh}`, en: `${right ? '✓ ' : '✗ '}${f.en}${live.en}` });
}

/** the loaded model's own numbers, after the quiz's answer on the size of the MLP's write */
function liveRatioNote() {
  if (!state.run) return { zh: '', en: '' };
  const r = [...layerRatios()].sort((a, b) => a - b), med = (100 * r[Math.floor((r.length - 1) / 2)]).toFixed(0), over = r.filter((x) => x > 0.5).length;
  return { zh: ` 已加载的模型：各层比例的中位数是 ${med}%，${over} 层超过 50%（见上面的长条）。`, en: ` The loaded model: the median layer ratio is ${med}%, and ${over} layer${over === 1 ? '' : 's'} go${over === 1 ? 'es' : ''} over 50% (see the bars above).` };
}
