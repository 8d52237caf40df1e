#!/usr/bin/env node
// Screenshots of the lesson page (build/site) as a reader meets it: desktop 1280 px and a 390 px
// phone, Chinese and English, the whole page once the live parts have run. Values that change from
// run to run (load time, tokens per second, forward-pass time) are masked, so two builds of the same
// page give the same pictures.
//   node tools/screenshots.mjs --out DIR [--compare DIR_B]   (--compare: byte-compares DIR_B's files with DIR's)
//   [--jpeg QUALITY --scale S]: JPEG files at S times the CSS pixels (docs/screenshots: --jpeg 55 --scale 0.5)
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (k) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : undefined; };
const out = opt('--out');
if (!out) { console.error('usage: node tools/screenshots.mjs --out DIR [--compare DIR_B] [--root build/site] [--only zh-desktop,...]'); process.exit(2); }
const compareWith = opt('--compare');

if (compareWith) {
  // pixel by pixel, decoded by Chromium: identical files, or the rows where two pictures differ
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage();
  let same = 0;
  const differ = [];
  for (const f of fs.readdirSync(out).filter((n) => n.endsWith('.png'))) {
    const b = path.join(compareWith, f);
    if (!fs.existsSync(b)) { differ.push(`${f} (missing in ${compareWith})`); continue; }
    const [x, y] = [fs.readFileSync(path.join(out, f)), fs.readFileSync(b)];
    if (Buffer.compare(x, y) === 0) { same++; continue; }
    const d = await page.evaluate(async ([u, v]) => {
      const load = async (src) => { const im = new Image(); im.src = src; await im.decode(); const c = new OffscreenCanvas(im.width, im.height); const g = c.getContext('2d'); g.drawImage(im, 0, 0); return { w: im.width, h: im.height, px: g.getImageData(0, 0, im.width, im.height).data }; };
      const [A, B] = [await load(u), await load(v)];
      if (A.w !== B.w || A.h !== B.h) return { size: `${A.w}x${A.h} vs ${B.w}x${B.h}` };
      let n = 0, y0 = -1, y1 = -1, x0 = A.w, x1 = -1;
      for (let i = 0; i < A.px.length; i += 4) if (A.px[i] !== B.px[i] || A.px[i + 1] !== B.px[i + 1] || A.px[i + 2] !== B.px[i + 2]) {
        n++; const yy = Math.floor(i / 4 / A.w), xx = (i / 4) % A.w; if (y0 < 0) y0 = yy; y1 = yy; x0 = Math.min(x0, xx); x1 = Math.max(x1, xx);
      }
      return { n, y0, y1, x0, x1 };
    }, [`data:image/png;base64,${x.toString('base64')}`, `data:image/png;base64,${y.toString('base64')}`]);
    if (d.n === 0) same++;
    else differ.push(`${f} (${d.size ?? `${d.n} pixels in x ${d.x0}-${d.x1}, y ${d.y0}-${d.y1}`})`);
  }
  await browser.close();
  console.log(`${same} identical, ${differ.length} differ${differ.length ? ': ' + differ.join(', ') : ''}`);
  process.exit(differ.length ? 1 : 0);
}

const VOLATILE = ['#progress', '#progress-text', '#engine-status', '#try-status', '#build-info'];
const scale = Number(opt('--scale') ?? 1), jpeg = opt('--jpeg') ? Number(opt('--jpeg')) : null;
const SIZES = { desktop: { viewport: { width: 1280, height: 900 }, deviceScaleFactor: scale }, phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: scale } };
const only = opt('--only')?.split(',');
fs.mkdirSync(out, { recursive: true });
const server = await serve({ root: path.resolve(ROOT, opt('--root') ?? 'build/site') });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-quic', '--no-first-run', '--disable-sync', '--font-render-hinting=none'] });
try {
  for (const lang of ['zh', 'en']) for (const [size, opts] of Object.entries(SIZES)) {
    const name = `${lang}-${size}`;
    if (only && !only.includes(name)) continue;
    const ctx = await browser.newContext({ ...opts, reducedMotion: 'reduce' });
    const page = await ctx.newPage();
    await page.goto(`${server.url}?lang=${lang}`);
    await page.waitForFunction(() => document.body.dataset.ready === '1' && document.body.dataset.featureCards &&
      document.querySelectorAll('#lens-table tr').length > 1 && document.querySelectorAll('#fires-top li[data-act]').length > 0 &&
      document.getElementById('story-card')?.dataset.text, null, { timeout: 300000 });
    await page.waitForTimeout(1500); // the last cards settle
    const file = `${name}.${jpeg ? 'jpg' : 'png'}`;
    await page.screenshot({ path: path.join(out, file), fullPage: true, mask: VOLATILE.map((s) => page.locator(s)), animations: 'disabled', ...(jpeg ? { type: 'jpeg', quality: jpeg } : {}) });
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    console.log(`${file}: ${height} px tall`);
    await ctx.close();
  }
} finally { await browser.close(); await server.close(); }
console.log(`(${os.cpus().length} cores; files in ${out})`);
