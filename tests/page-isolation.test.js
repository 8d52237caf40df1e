// The page on a plain static host (no COOP/COEP headers, as GitHub Pages or python3 -m http.server
// serve it): its service worker adds the headers to the page's own responses and the page reloads
// once, cross-origin isolated, so the threaded engine runs. Without a service worker the page runs
// on one thread and says why.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../tools/serve.mjs';
import { CHROMIUM_ARGS } from './browser-harness.js';
import { ROOT } from './helpers.js';

const SITE = path.join(ROOT, 'build/site');
let server, browser;
before(async () => {
  assert.ok(fs.existsSync(path.join(SITE, 'index.html')), 'build/site is built (./build.sh site)');
  server = await serve({ root: SITE, plain: true });
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
after(async () => { await browser?.close(); await server?.close(); });

/** the page in a fresh context, counting its top-level loads; resolves once the model has loaded */
async function open(contextOptions = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...contextOptions });
  const page = await context.newPage(), errors = [];
  let loads = 0;
  page.on('load', () => { loads++; });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(server.url + '?lang=en');
  await page.waitForFunction(() => document.body.dataset.ready, null, { timeout: 120000 });
  return { context, page, errors, loads: () => loads };
}

test('the server really sends no isolation headers', async () => {
  const r = await fetch(server.url);
  assert.equal(r.headers.get('cross-origin-embedder-policy'), null);
  assert.equal(r.headers.get('cross-origin-opener-policy'), null);
});

test('on a plain static host the service worker isolates the page after one reload, and the engine runs threaded', async () => {
  const { context, page, errors, loads } = await open();
  try {
    assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), true, 'the page is cross-origin isolated');
    assert.equal(loads(), 2, 'one reload: the first load registered the service worker, the second came through it');
    const status = await page.innerText('#engine-status');
    const hw = await page.evaluate(() => navigator.hardwareConcurrency);
    if (hw > 1) assert.match(status, /\d+ threads/, `the threaded engine runs: "${status}"`);
    const why = await page.getAttribute('#build-info', 'title');
    assert.doesNotMatch(why, /not cross-origin isolated/);
    // a second visit in the same browser is isolated from its first load (the worker is in control)
    const p2 = await context.newPage();
    let loads2 = 0;
    p2.on('load', () => { loads2++; });
    await p2.goto(server.url + '?lang=en');
    await p2.waitForFunction(() => document.body.dataset.ready, null, { timeout: 120000 });
    assert.equal(await p2.evaluate(() => globalThis.crossOriginIsolated), true);
    assert.equal(loads2, 1, 'no reload on the second visit');
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});

test('without a service worker the page runs on one thread, does not reload, and says why in both languages', async () => {
  const { context, page, loads } = await open({ serviceWorkers: 'block' });
  try {
    assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), false);
    assert.equal(loads(), 1);
    assert.match(await page.innerText('#engine-status'), /1 thread/);
    assert.match(await page.innerText('#build-info'), /COOP\/COEP/);
    await page.click('#lang-toggle');
    assert.match(await page.innerText('#build-info'), /跨源隔离/);
  } finally { await context.close(); }
});
