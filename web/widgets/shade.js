// Tokens shaded by a value (a neuron's activation, a KL): the shade's contrast with the text on it,
// and the chips themselves. Used by several sections; imports only the page's core.
import { escapeHtml, pieceHtml, pieceLabel, pieceShort, state } from '../core.js';

/** contrast of white and of the page's dark text on the shade at `alpha` over white (WCAG ratios) */
export function shadeContrast(alpha) {
  const lin = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  const lum = (rgb) => 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2]);
  const L0 = lum([36, 87, 197].map((c) => 255 + (c - 255) * alpha)), dark = lum([29, 35, 43]);
  return { white: 1.05 / (L0 + 0.05), dark: (L0 + 0.05) / (dark + 0.05) };
}
/** Around the middle of the shade scale neither white nor dark text reaches 4.5:1 (for any shade
 *  colour: the two ratios multiply to about 16). Alphas in that band snap to its nearer edge. */
export const SHADE_BAND = (() => {
  const bad = Array.from({ length: 101 }, (_, i) => i / 100).filter((a) => { const c = shadeContrast(a); return Math.max(c.white, c.dark) < 4.6; });
  return bad.length ? [bad[0] - 0.01, bad.at(-1) + 0.01] : null;
})();
export function shadeAlpha(alpha) {
  if (!SHADE_BAND || alpha <= SHADE_BAND[0] || alpha >= SHADE_BAND[1]) return alpha;
  return alpha < (SHADE_BAND[0] + SHADE_BAND[1]) / 2 ? SHADE_BAND[0] : SHADE_BAND[1];
}
export function textOn(alpha) { const c = shadeContrast(alpha); return c.white > c.dark ? '#fff' : '#1d232b'; }

/** Each token of `ids` shaded by its value (positive values darker, scaled to the largest |value|);
 *  a character split over several tokens shows once, on the token where it starts. `raw`: the
 *  tokens' pieces when the caller has them (else one call for them). Returns the pieces' labels. */
export async function shadeTokens(el, ids, values, raw = null) {
  const mx = Math.max(1e-6, ...values.map(Math.abs));
  raw ??= await state.model.tokenizer.pieces(ids);
  const pieces = raw.map(pieceLabel), parts = [];
  for (let t = 0; t < ids.length; t++) {
    const a = values[t], alpha = shadeAlpha(Math.max(0, a) / mx); // readable text on every shade
    parts.push(`<span class="tok${raw[t].of ? ' split' : ''}" data-act="${a}" title="${escapeHtml(pieces[t])}: ${a.toFixed(3)}" style="background:rgba(var(--shade),${alpha.toFixed(2)});color:${textOn(alpha)}">${pieceHtml(pieceShort(raw[t]))}</span>`);
  }
  el.innerHTML = parts.join('');
  return pieces;
}
