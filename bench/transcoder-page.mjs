#!/usr/bin/env node
// Transcoder training in the lesson page (Debian's Chromium over build/site): the page's model, in
// its Worker (threaded when the page is cross-origin isolated, as tools/serve.mjs serves it), trains
// every layer with the defaults of `mlpscope transcoder train` (js/transcoder.js TRANSCODER_DEFAULTS)
// and scores it; prints the time, the rate and the per-layer held-out scores. The room on the page
// (web/sections/transcoder.js) trains one layer; this is the whole set, as issue #49 asks.
//   node bench/transcoder-page.mjs [--tokens N] [--layers 0,3]
import { chromium } from 'playwright-core';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../tools/serve.mjs';
import { TRANSCODER_DEFAULTS } from '../js/transcoder.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const opts = { tokens: Number(opt('--tokens', TRANSCODER_DEFAULTS.tokens)), ...(opt('--layers') ? { layers: opt('--layers').split(',').map(Number) } : {}) };
const server = await serve({ root: path.join(ROOT, 'build/site') });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
try {
  const p = await browser.newPage();
  await p.goto(server.url);
  await p.waitForFunction(() => document.body.dataset.ready && window.__mlpscope?.model, null, { timeout: 300000 });
  const r = await p.evaluate(async (o) => {
    const s = window.__mlpscope, t0 = performance.now();
    const res = await s.model.trainTranscoders(o);
    return { seconds: (performance.now() - t0) / 1000, trainSeconds: res.trainSeconds, scoreSeconds: res.scoreSeconds, tokensPerSecond: res.tokensPerSecond, threads: res.threads, layers: res.layers, scores: res.scores, build: s.info?.build?.why ?? '' };
  }, opts);
  console.log(`Chromium ${browser.version()}, the page's Worker (${r.threads} thread${r.threads > 1 ? 's' : ''}; ${r.build}): ${r.layers.length} layers, ${opts.tokens} tokens: ` +
    `training ${r.trainSeconds.toFixed(1)} s (${r.tokensPerSecond.toFixed(0)} tok/s), scoring ${r.scoreSeconds.toFixed(1)} s, ${(r.seconds / 60).toFixed(1)} min in all`);
  console.log('\n| layer | FVU | L0 | dead | KL (replaced) |\n|---|---|---|---|---|');
  for (const l of r.scores.layers) console.log(`| ${l.layer} | ${l.fvu?.toFixed(3)} | ${l.l0?.toFixed(1)} | ${l.dead?.toFixed(3)} | ${l.kl?.toFixed(4)} |`);
} finally { await browser.close(); await server.close(); }
