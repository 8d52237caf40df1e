// The lesson page (build/site) in headless Chromium, shared by the tests/page-*.test.js files, one
// per section of the page: a server, a browser, a page opened on the default model and run, the
// demo model in Node to recompute what the page shows, and the page's console errors.
import { before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../tools/serve.mjs';
import { loadModel } from '../js/index.js';
import { CHROMIUM_ARGS } from './browser-harness.js';
import { ROOT } from './helpers.js';

export const SITE = path.join(ROOT, 'build/site');
export const SHOTS = path.join(ROOT, 'tests/out/screenshots');
/** the page opens in Chinese, with a Chinese example (the demo model learned both languages) */
export const DEFAULT_TEXT = '我上周从巴黎飞到东京。饭菜一点也不好。';
export const probes = () => JSON.parse(fs.readFileSync(path.join(SITE, 'probes.json'), 'utf8')).probes;

/** `h.page` (opened and run before the file's tests), `h.context`, `h.browser`, `h.server`, `h.errors` */
export const h = { server: null, browser: null, context: null, page: null, errors: [] };

/** Opens the page once for the test file that imports this (the default model, loaded and run). */
/** `query` defaults to every "go deeper" panel open (?open=all): the tests read and click the cards
 *  inside them, as a reader who opens a panel does; tests/page-load checks the closed default. */
export function openPage({ viewport = { width: 1280, height: 900 }, query = '?open=all' } = {}) {
  before(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    h.server = await serve({ root: SITE });
    h.browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
    h.context = await h.browser.newContext({ viewport });
    h.page = await newPage(h.context, query);
  });
  after(async () => { await h.browser?.close(); await h.server?.close(); demoModel?.dispose(); demoModel = null; });
}

/** a page of the site in `context`, its errors collected in h.errors, once it is ready */
export async function newPage(context, query = '?open=all') {
  const p = await context.newPage();
  p.on('console', (m) => { if (m.type() === 'error') h.errors.push(m.text()); });
  p.on('pageerror', (e) => h.errors.push(e.message));
  await p.goto(h.server.url + query);
  await p.waitForFunction(() => document.body.dataset.ready, null, { timeout: 120000 });
  return p;
}

/** the text of an element as the reader sees it (the page's language only) */
export const seen = (sel, p = h.page) => p.innerText(sel);

/** runs the reader's sentence and waits until the page has run it */
export async function runSentence(text, p = h.page) {
  await p.fill('#try-text', text);
  await p.click('#try-run');
  await settledOn(text, p);
}
/** Waits until the page shows `text`: the last run that started is this text and every section
 *  has answered it (an earlier run finishing meanwhile, such as a language switch's example, does
 *  not count), and no card is still busy (or it says it could not update). */
export async function settledOn(text, p = h.page) {
  await p.waitForFunction((t) => {
    const s = window.__mlpscope;
    return s.text === t && document.body.dataset.settled === String(s.runId)
      && [...document.querySelectorAll('[data-state]')].every((c) => c.dataset.state !== 'busy');
  }, text, { timeout: 120000 });
}

/** The page's demo model, in this process: every number the page shows is recomputed with it. */
let demoModel = null;
export const demo = async () => (demoModel ??= await loadModel(path.join(SITE, 'weights/demo')));

/** what the page should show: the same model, in-process, on the same text */
export async function expected(text) {
  const m = await demo();
  const r = m.forward(m.tokenizer.encode(text));
  const ratios = r.stats.mlp_ratio.map((row) => row.reduce((a, b) => a + b, 0) / row.length);
  return { ratios, info: m.info(), mlpOut: r.stats.mlp_out_l2, post: r.stats.resid_post_l2 };
}
export const pageRatios = (p = h.page) => p.$$eval('#bars .bar', (bs) => bs.map((b) => Number(b.dataset.ratio)));
/** console errors other than the network's own (offline tests) */
export const pageErrors = () => h.errors.filter((e) => !/ERR_INTERNET_DISCONNECTED|net::ERR/.test(e));
