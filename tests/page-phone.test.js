// The page on a 390 px phone, in both languages, with every "go deeper" panel open: nothing is wider
// than the screen (no sideways scroll anywhere, also after a knock-out readout, N3), every chart is
// drawn at the width it gets with its labels inside it, and chart text is at least 11 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../tools/serve.mjs';
import { CHROMIUM_ARGS } from './browser-harness.js';
import { SHOTS, SITE } from './page-harness.js';

let server, browser;
before(async () => {
  server = await serve({ root: SITE });
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
after(async () => { await browser?.close(); await server?.close(); });

/** what sticks out: elements past the viewport's edges, charts wider than their box, labels outside their chart, small chart text */
const audit = (p) => p.evaluate(() => {
  const vw = document.documentElement.clientWidth, out = { vw, docWidth: document.documentElement.scrollWidth, wide: [], charts: [], small: [] };
  const name = (el) => `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${typeof el.className === 'string' && el.className ? '.' + el.className.split(' ')[0] : ''}`;
  for (const el of document.querySelectorAll('main *, header *')) {
    if (el.closest('.skip, .sr')) continue;
    const b = el.getBoundingClientRect();
    if (!b.width || !b.height) continue;
    if (b.right > vw + 0.5 || b.left < -0.5) out.wide.push(`${name(el)} ${Math.round(b.left)}..${Math.round(b.right)}`);
    const cs = getComputedStyle(el);
    if (/auto|scroll/.test(cs.overflowX) && el.scrollWidth > el.clientWidth + 1) out.wide.push(`${name(el)} scrolls sideways (${el.clientWidth} < ${el.scrollWidth})`);
  }
  for (const svg of document.querySelectorAll('main svg')) {
    const sb = svg.getBoundingClientRect();
    if (!sb.width) continue;
    out.charts.push({ id: svg.id, width: Math.round(sb.width), texts: svg.querySelectorAll('text').length });
    for (const t of svg.querySelectorAll('text')) {
      const b = t.getBoundingClientRect();
      if (!b.width) continue;
      if (b.left < sb.left - 1 || b.right > sb.right + 1) out.wide.push(`${svg.id}: label "${t.textContent.slice(0, 20)}" ${Math.round(b.left)}..${Math.round(b.right)} outside ${Math.round(sb.left)}..${Math.round(sb.right)}`);
      const size = parseFloat(getComputedStyle(t).fontSize) * (sb.width / svg.viewBox.baseVal.width);
      if (size < 10.95) out.small.push(`${svg.id}: "${t.textContent.slice(0, 20)}" at ${size.toFixed(1)} px`);
    }
  }
  return out;
});

for (const lang of ['zh', 'en']) {
  test(`390 px phone, ${lang}: nothing wider than the screen, every chart drawn at its width with its labels inside, chart text >= 11 px`, async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const p = await context.newPage();
    const errors = [];
    p.on('pageerror', (e) => errors.push(e.message));
    await p.goto(`${server.url}?lang=${lang}&open=all`);
    await p.waitForFunction(() => document.body.dataset.ready, null, { timeout: 180000 });
    await p.waitForFunction(() => document.getElementById('story-card').dataset.text && document.body.dataset.featureCards, null, { timeout: 180000 });
    // a knock-out, and a tap on one of its tokens (the readout once widened the page to 859 px)
    await p.check('#ko-whole');
    await p.click('#ko-btn');
    await p.waitForSelector('#ko-tokens .tok', { timeout: 60000 });
    await p.tap('#ko-tokens .tok');
    await p.waitForFunction(() => document.getElementById('ko-read').textContent.length > 0);
    const a = await audit(p);
    await p.screenshot({ path: path.join(SHOTS, `phone-${lang}.png`), fullPage: true });
    assert.equal(a.docWidth, a.vw, `the page is ${a.docWidth} px wide on a ${a.vw} px screen`);
    assert.deepEqual(a.wide, [], 'nothing sticks out or scrolls sideways');
    assert.deepEqual(a.small, [], 'chart text is at least 11 px');
    const ids = a.charts.map((c) => c.id).sort();
    for (const id of ['attn-chart', 'fires-hist', 'layer-chart', 'neuron-svg', 'silu-svg']) assert.ok(ids.includes(id), `${id} is drawn (${ids})`);
    for (const c of a.charts) assert.ok(c.width <= a.vw && c.texts > 0, `${c.id}: ${c.width} px, ${c.texts} labels`);
    assert.deepEqual(errors, []);
    await context.close();
  });
}
