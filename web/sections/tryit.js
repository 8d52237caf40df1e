// The reader's own sentence, the exercise and the quiz.
import { $, L, modelLangs, state } from '../core.js';
import { layerRatios, runText } from './run.js';

// ---------------------------------------------------------------- try it, exercise, quiz
$('try-run').addEventListener('click', async () => { state.koChosen = false; await runText($('try-text').value); });
$('ex-check').addEventListener('click', () => {
  if (!state.run) return;
  const ratios = layerRatios().map((r) => 100 * r).filter((r) => r > 0);
  const big = Math.max(...ratios), small = Math.min(...ratios);
  const a = Number($('ex-large').value), b = Number($('ex-small').value), ok = Math.abs(a - big) <= 0.15 && Math.abs(b - small) <= 0.15;
  state.ex = { ok, big, small };
  renderExFeedback();
});
export function renderExFeedback() {
  const fb = $('ex-feedback'), e = state.ex;
  if (!e) { fb.textContent = ''; fb.className = ''; return; }
  const { ok, big, small } = e;
  fb.className = ok ? 'right' : 'wrong';
  // the lesson's point holds for most layers; a small model's first or last MLP can be most of its layer's output
  const tail = big < 50
    ? L(`但即便最大的也远小于 100%——MLP 写的是修正。`, `and even the biggest is far below 100%: the MLP writes a correction.`)
    : L(`最大的那层超过一半，不再是小修正（小模型的首尾层常这样）；其余层才是修正。`, `the biggest is over half of its layer's output, no longer a small correction (common in a small model's first or last layer); the other layers are corrections.`);
  fb.textContent = ok
    ? L(`对！最大 ${big.toFixed(1)}%，最小 ${small.toFixed(1)}%：最大层的 MLP 占比是最小层的 ${(big / small).toFixed(1)} 倍，`, `Right! Largest ${big.toFixed(1)}%, smallest ${small.toFixed(1)}%: the biggest share is ${(big / small).toFixed(1)}× the smallest, `) + tail
    : L(`还不对。提示：数值在点击长条后显示；最大的是 ${big.toFixed(1)} 附近吗？`, `Not yet. Hint: the numbers appear when you click the bars; is the largest near ${big.toFixed(1)}?`);
}
export const QUIZ_FEEDBACK = {
  q1: { a: ['不是：矩阵乘法会混合不同特征。⊙ 只把同一位置的两个数相乘。', 'No: a matrix product mixes features. ⊙ only multiplies the two numbers in the same position.'],
    b: ['对：逐元素相乘，门控的每个特征只管自己那一路取值。', 'Right: element-wise, each gate feature scales only its own value.'],
    c: ['不是：点积会把整个向量压成一个数，MLP 需要保留 intermediate_dim 个特征。', 'No: a dot product would collapse the vector to one number; the MLP keeps intermediate_dim features.'] },
  q2: { a: ['对：MLP 的输出是加到残差流上的修正，不是替换。', 'Right: the MLP\'s output is a correction added to the stream, not a replacement.'],
    b: ['不是：残差连接只做加法，不会覆盖。', 'No: the residual connection only adds, it never overwrites.'],
    c: ['不是：残差连接只做加法，MLP 不会取代残差流。', 'No: the residual connection only adds; the MLP does not take the stream over.'] },
  q3: { a: ['不是：精度和参数个数无关。', 'No: precision has nothing to do with the number of parameters.'],
    b: ['对：三个 hidden × intermediate 的矩阵、每层一份，加起来约占三分之一。', 'Right: three hidden × intermediate matrices per layer add up to about a third.'],
    c: ['不是：每层只有一个 MLP 模块。', 'No: there is exactly one MLP block per layer.'] },
  q4: { a: ['不一定：AUC 只比较排序，不管最强的激活落在哪里。上面的特征卡片数出了已加载模型里的情况。', 'Not necessarily: AUC compares rankings and says nothing about where the strongest activations fall. The feature cards above count it for the loaded model.'],
    b: ['对：AUC 是“正例高于反例”的概率。有选择性不等于单义——上面的特征卡片数出了它最强的激活里有几次是这类 token。', 'Right: AUC is the chance that a positive scores above a negative. Selective is not monosemantic; the feature cards above count how many of its strongest activations are of the kind.'],
    c: ['不是：SwiGLU 神经元几乎从不恰好为 0，而且 AUC 不说明它在别处激活得多不多。', 'No: a SwiGLU neuron is almost never exactly zero, and AUC says nothing about how much it fires elsewhere.'] },
};
document.querySelectorAll('#quiz fieldset').forEach((fs) => {
  fs.addEventListener('change', (ev) => {
    const q = ev.target.name, v = ev.target.value, fb = fs.querySelector('.feedback');
    const right = ev.target.hasAttribute('data-correct');
    fb.className = `feedback ${right ? 'right' : 'wrong'}`;
    fb.textContent = `${right ? '✓ ' : '✗ '}${L(...QUIZ_FEEDBACK[q][v])}` + (q === 'q2' ? liveRatioNote() : '');
  });
});

/** the loaded model's own numbers, after the quiz's answer on the size of the MLP's write */
export function liveRatioNote() {
  if (!state.run) return '';
  const r = [...layerRatios()].sort((a, b) => a - b), med = r[Math.floor((r.length - 1) / 2)], over = r.filter((x) => x > 0.5).length;
  return L(` 已加载的模型：各层比例的中位数是 ${(100 * med).toFixed(0)}%，${over} 层超过 50%（见上面的长条）。`, ` The loaded model: the median layer ratio is ${(100 * med).toFixed(0)}%, and ${over} layer${over === 1 ? '' : 's'} go${over === 1 ? 'es' : ''} over 50% (see the bars above).`);
}

export function renderTryStatus() {
  if (!state.run) return;
  const n = state.ids.length, ms = state.run.timings.total_ms.toFixed(1);
  const split = state.piecesRaw.filter((p) => p.of).length;
  const known = state.entry?.kind === 'trained';
  $('try-status').textContent = L(`${n} 个 token，前向用时 ${ms} 毫秒。`, `${n} tokens, forward pass ${ms} ms.`)
    + (state.cut ? L(` 文字有 ${state.cut} 个 token，超出上下文长度：只用了前 ${n} 个。`, ` The text has ${state.cut} tokens, more than the context length: only the first ${n} are used.`) : '')
    + (split && known ? (modelLangs().includes('zh')
      ? L(` 有 ${split} 个 token 只是某个字符的一部分（字节级 token）：这个模型的词表里没有这些字符，它们被拆成了字节。图表照常计算，但模型在这些地方的预测意义不大。`,
        ` ${split} tokens are only part of a character (byte-level tokens): this model's vocabulary has no token for those characters, so they are split into bytes. The charts are computed as usual, but the model's predictions there mean little.`)
      : L(` 有 ${split} 个 token 只是某个字符的一部分（字节级 token）：这个模型只用英文训练过，中文等文字会被拆成字节，图表照常计算，但模型的预测没有意义。想看中文，请选中英双语的演示模型，或加载 Qwen3.5-0.8B 这样的真实模型。`,
        ` ${split} tokens are only part of a character (byte-level tokens): this model was trained on English only, so other scripts are split into bytes. The charts are computed as usual, but the model's predictions mean nothing here. For Chinese, pick the bilingual demo model or load a real model such as Qwen3.5-0.8B.`)) : '');
}
