// A continuation as a reader should see it: greedy, stopping at the end of text (never printing a
// control token such as <|endoftext|>), and a byte sequence that is not a character shown as ▯,
// never as "�". Each token is one whole forward pass over the prompt and what came so far (with the
// intervention at every position, as generate() steers): each call stands alone, so the page's other
// sections can use the model between two tokens.
import { bi, escapeHtml } from '../core.js';

/** @param {any} model (a WorkerModel) @param {number[]} ids @param {object | null} intervention
 *  @returns {Promise<{text: string, ended: boolean, ids: number[]}>} ended: the model wrote its end of text */
export async function continuation(model, ids, intervention, maxTokens = 12) {
  const eos = new Set(model.tokenizer?.eosIds ?? []), out = [], ctx = model.contextLength;
  let ended = false;
  while (out.length < maxTokens && ids.length + out.length < ctx) {
    const r = await model.forward([...ids, ...out], { stats: false, logits: 'last', ...(intervention ? { interventions: [intervention] } : {}) });
    let best = 0;
    for (let i = 1; i < r.logits.length; i++) if (r.logits[i] > r.logits[best]) best = i;
    if (eos.has(best)) { ended = true; break; }
    out.push(best);
  }
  return { text: readable(out.length ? await model.tokenizer.decode(out) : ''), ended, ids: out };
}

/** A continuation as HTML: its text, or, when it is only spaces (a push can drive a small model
 *  there), how many; ∎ when the model wrote its end of text. */
export function continuationHtml(g) {
  const body = g.text.trim() || !g.text ? escapeHtml(g.text) : bi({ zh: `（${g.text.length} 个空格）`, en: `(${g.text.length} spaces)` });
  return body + (g.ended ? ' ∎' : '');
}

/** text without replacement characters or control characters (a newline stays, as ⏎) */
export function readable(s) {
  return s.replace(/\uFFFD/g, '▯').replace(/\n/g, '⏎').replace(/[\u0000-\u0008\u000B-\u001F\u007F]/g, '');
}
