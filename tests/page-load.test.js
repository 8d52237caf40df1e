// The page as a whole: loading (the default model, another one, a failing one, the hub model with
// its note first), the header's engine line, languages (every live line follows a switch), the URL
// state, accessibility, a phone's viewport, offline reloads, the browser's weight cache, file://,
// and no console errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel } from '../js/index.js';
import { DEFAULT_TEXT, SHOTS, SITE, h, newPage, openPage, pageErrors, pageRatios, runSentence, seen, settledOn } from './page-harness.js';
import { ROOT } from './helpers.js';

openPage();

test('auto-run: the demo model loads in Chinese with the Chinese example, and the header says which path the engine runs', async () => {
  const p = h.page;
  assert.equal(await p.evaluate(() => document.body.dataset.ready), '1', await seen('#load-error'));
  assert.equal(await p.evaluate(() => document.body.dataset.model), 'demo');
  assert.equal(await p.inputValue('#try-text'), DEFAULT_TEXT);
  assert.equal(await p.inputValue('#fires-text'), DEFAULT_TEXT);
  const status = await seen('#engine-status');
  assert.match(status, /^int8 激活 · (单线程|\d 线程) · 上次：\d+ 个 token，\d+ token\/秒$/, status);
  assert.match(await p.getAttribute('#engine-status', 'title'), /int8 activations/);
  await p.screenshot({ path: path.join(SHOTS, 'desktop.png'), fullPage: true });
});

test('language switch: Chinese first, English on demand, and back', async () => {
  const p = h.page;
  assert.equal(await p.getAttribute('html', 'lang'), 'zh');
  assert.ok(await p.isVisible('h1 [lang=zh]'));
  await p.click('#lang-toggle');
  assert.equal(await p.getAttribute('html', 'lang'), 'en');
  assert.ok(await p.isVisible('h1 [lang=en]'));
  assert.ok(!(await p.isVisible('h1 [lang=zh]')));
  assert.equal(await p.$eval('#model-select', (s) => s.selectedOptions[0].textContent), 'mlpscope demo model (trained by this project, Chinese and English, 2.88M parameters)');
  // the example sentence follows the language (the reader has not written one): every chart reruns on it
  const EN = 'I flew from Paris to Tokyo last week. The food was not bad at all.';
  await settledOn(EN);
  assert.equal(await p.inputValue('#try-text'), EN);
  assert.ok((await p.evaluate(() => window.__mlpscope.pieces.map((x) => x.text).join(''))).includes('Paris'));
  await p.screenshot({ path: path.join(SHOTS, 'desktop-en.png'), fullPage: true });
  await p.click('#lang-toggle');
  assert.equal(await p.getAttribute('html', 'lang'), 'zh');
  await settledOn(DEFAULT_TEXT);
});

test('a language switch leaves no Chinese on screen in English, and redraws nothing it does not have to', async () => {
  const p = h.page;
  await runSentence('I flew from Paris to Tokyo last week. The food was not bad at all.');
  await p.click('#ko-btn');
  await p.waitForFunction(() => document.querySelectorAll('#ko-after li').length === 5);
  await p.click(`#bars .bar[data-layer="2"]`);
  const runs = await p.evaluate(() => document.body.dataset.runs);
  await p.click('#lang-toggle');
  const left = await p.evaluate(() => {
    const out = [];
    const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      const el = n.parentElement;
      // token pieces (the shaded sentences, <code> pieces in lists) are data, not the page's words
      if (!el || !el.getClientRects().length || el.id === 'lang-toggle' || el.closest('.tokens, textarea, #fires-out, code')) continue;
      if (/[\u4e00-\u9fff]/.test(n.textContent)) out.push(`${el.id || el.tagName}: ${n.textContent.trim().slice(0, 60)}`);
    }
    return out;
  });
  assert.deepEqual(left, []);
  assert.match(await seen('#ko-kl'), /switched off/);
  assert.match(await seen('#bar-readout'), /^Layer 2/);
  assert.match(await seen('#build-info'), /SIMD128|scalar|thread/);
  assert.equal(await p.evaluate(() => document.body.dataset.runs), runs, 'a switch runs nothing again');
  await p.click('#lang-toggle');
  assert.match(await seen('#ko-kl'), /关掉/);
  await runSentence(DEFAULT_TEXT);
});

test('the page state (model, language, sentence, layer, neuron) round-trips through the URL', async () => {
  const p = h.page, text = 'Mei sailed from Oslo to Lima.';
  await runSentence(text);
  await p.selectOption('#corr-layer', '2');
  await p.selectOption('#fires-layer', '4');
  await p.fill('#fires-neuron', '21');
  await p.selectOption('#fires-sign', '-1');
  await p.click('#fires-run');
  await p.waitForFunction(() => /neuron=4%3A21%3A-1/.test(location.search));
  // the page's own location (Playwright's page.url() follows history.replaceState by events that
  // can lag behind under load)
  const q = await p.evaluate(() => location.search);
  assert.match(q, /[?&]text=Mei\+sailed/, q + JSON.stringify(await p.evaluate(() => [window.__mlpscope.text, window.__mlpscope.defaultText, document.querySelector("#try-text").value, document.body.dataset.runs])));
  const p2 = await newPage(h.context, q);
  try {
    await p2.waitForFunction(() => /神经元 21\b/.test(document.querySelector('#fires-top-note').innerText), null, { timeout: 120000 });
    assert.equal(await p2.inputValue('#try-text'), text);
    assert.equal(await p2.inputValue('#corr-layer'), '2');
    assert.deepEqual([await p2.inputValue('#fires-layer'), await p2.inputValue('#fires-neuron'), await p2.inputValue('#fires-sign')], ['4', '21', '-1']);
    assert.equal(await p2.getAttribute('html', 'lang'), await p.getAttribute('html', 'lang'));
    assert.deepEqual(await pageRatios(p2), await pageRatios(p));
  } finally { await p2.close(); }
  await runSentence(DEFAULT_TEXT);
});

test('accessibility: axe-core finds no serious or critical violations in either language, at desktop and phone sizes', async () => {
  const p = h.page;
  await p.addScriptTag({ path: path.join(ROOT, 'node_modules/axe-core/axe.min.js') });
  const lang0 = await p.getAttribute('html', 'lang'), found = [];
  for (const size of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
    await p.setViewportSize(size);
    for (let k = 0; k < 2; k++) {
      const r = await p.evaluate(() => axe.run(document, { resultTypes: ['violations'] }));
      const lang = await p.getAttribute('html', 'lang');
      for (const v of r.violations) if (v.impact === 'serious' || v.impact === 'critical') found.push(`${size.width}px ${lang}: ${v.id} (${v.impact}) at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      await p.click('#lang-toggle');
    }
  }
  await p.setViewportSize({ width: 1280, height: 900 });
  assert.equal(await p.getAttribute('html', 'lang'), lang0);
  assert.deepEqual(found, []);
});

test('switching to the Qwen3.5-shaped model: strip, bars and layer pickers follow its hybrid stack', async () => {
  const p = await newPage(h.context);
  try {
    await p.selectOption('#model-select', 'qwen35-synth');
    await p.waitForFunction(() => document.body.dataset.model === 'qwen35-synth' && document.body.dataset.ready === '1', null, { timeout: 120000 });
    const m = await loadModel(path.join(SITE, 'weights/qwen35-synth'));
    const mixers = m.info().mixers, nLin = mixers.filter((x) => x === 'linear').length;
    m.dispose();
    assert.ok(nLin > 0 && nLin < mixers.length);
    assert.equal(await seen('#strip-mixer', p), `混合器（${mixers.length - nLin} 层注意力 / ${nLin} 层 DeltaNet）`);
    assert.deepEqual(await p.$$eval('#bars .bar', (bs) => bs.map((b) => b.dataset.mixer)), mixers);
    assert.equal(await p.$$eval('#ko-layer option', (os) => os.filter((o) => o.textContent.includes('DeltaNet')).length), nLin);
    assert.match(await seen('#features-note', p), /随机/, 'random weights are called random');
    const note = await seen('#bars-note', p);
    assert.match(note, /权重是随机的/, 'the bars of a random model are not said to show the lesson (review N6)');
    assert.doesNotMatch(note, /小修正/);
  } finally { await p.close(); }
});

test('a weight set that cannot be loaded: a typed error naming it, and the page goes back to the model it had', async () => {
  const p = await newPage(h.context);
  try {
    await p.selectOption('#model-select', 'url');
    await p.fill('#model-url', 'weights/no-such-model/');
    await p.click('#model-load');
    await p.waitForFunction(() => document.body.dataset.loadFailed === 'url' && document.body.dataset.ready === '1', null, { timeout: 120000 });
    const msg = await seen('#load-error', p);
    assert.match(msg, /no-such-model/, msg);
    assert.match(msg, /E_[A-Z_]+/, msg);
    assert.match(msg, /已换回/, msg);
    assert.equal(await p.evaluate(() => document.body.dataset.model), 'demo');
    assert.equal(await p.inputValue('#model-select'), 'demo');
    await runSentence('We visited Rome and Oslo last year.', p);
    await p.click('#lang-toggle');
    assert.match(await seen('#load-error', p), /Loading .*no-such-model.* failed .*Back to/);
  } finally { await p.close(); }
});

test('phone-sized viewport: no sideways scrolling, chart text at 11 px or more, a short header', async () => {
  const phone = await h.browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  try {
    const p = await newPage(phone);
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `no horizontal scrolling (${overflow}px)`);
    const smallest = await p.$$eval('svg text', (ts) => Math.min(...ts.filter((t) => t.getClientRects().length).map((t) => {
      const svg = t.ownerSVGElement, scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      return parseFloat(getComputedStyle(t).fontSize) * scale;
    })));
    assert.ok(smallest >= 11, `smallest chart text ${smallest.toFixed(1)} px`);
    const header = await p.$eval('header.top', (x) => x.getBoundingClientRect().height);
    assert.ok(header <= 110, `header ${header} px tall`);
    // the first screen only: a full-page picture of every panel open at 2x is slow on a busy machine
    await p.screenshot({ path: path.join(SHOTS, 'phone.png') });
  } finally { await phone.close(); }
});

test('offline: a reload with the network blocked still works (service worker + Cache API)', async () => {
  const p = h.page, want = await pageRatios();
  await p.evaluate(() => navigator.serviceWorker.ready);
  await h.context.setOffline(true);
  try {
    await p.reload();
    await p.waitForFunction(() => document.body.dataset.ready, null, { timeout: 120000 });
    assert.equal(await p.evaluate(() => document.body.dataset.ready), '1', await seen('#load-error'));
    assert.match(await seen('#progress-text'), /缓存|cache/);
    assert.equal((await pageRatios()).length, want.length);
  } finally { await h.context.setOffline(false); }
});

test('the weight cache in the browser: listCachedModels names the weight sets the page loaded, deleteCachedModel removes one', async () => {
  const r = await h.page.evaluate(async () => {
    const m = await import('./js/index.js'), man = await (await fetch('weights/demo/manifest.json')).json();
    const demoUrl = new URL('weights/demo/', location.href).href;
    const before = await m.listCachedModels();
    const demo = before.find((s) => s.url === demoUrl);
    const shard = demo?.files.find((f) => f.file === man.shards[0].file);
    const other = before.find((s) => s.url !== demoUrl);
    const removed = other ? await m.deleteCachedModel(other.url) : -1;
    const after = await m.listCachedModels();
    return { sets: before.length, shard, want: man.shards[0], removed, otherFiles: other?.files.length, afterHasOther: after.some((s) => s.url === other?.url), afterHasDemo: after.some((s) => s.url === demoUrl) };
  });
  assert.ok(r.sets >= 2, `the demo and the Qwen3.5-shaped model: ${r.sets}`);
  assert.deepEqual(r.shard, { file: r.want.file, sha256: r.want.sha256, bytes: r.want.bytes });
  assert.equal(r.removed, r.otherFiles);
  assert.equal(r.afterHasOther, false);
  assert.equal(r.afterHasDemo, true);
});

test('opened from disk (file://): the page says to serve it over HTTP, in both languages', async () => {
  const ctx = await h.browser.newContext();
  try {
    const p = await ctx.newPage();
    await p.goto('file://' + path.join(SITE, 'index.html'));
    const zh = await p.textContent('#load-error');
    assert.match(zh, /HTTP/);
    assert.match(zh, /python3 -m http\.server 8080/);
    assert.match(zh, /浏览器不允许/);
    assert.equal(await p.evaluate(() => getComputedStyle(document.querySelector('#load-error span[lang="zh"]')).display === 'none'), false, 'Chinese shown first');
  } finally { await ctx.close(); }
});

test('Qwen3.5-0.8B (Hugging Face) in the picker: a note with the download size first, then the mimicked hub model loads in the Worker and the sizes table shows its numbers', async () => {
  const { writeHfCheckpoint } = await import('./hf-writer.js');
  const { startHub } = await import('./hub-server.js');
  const { execFileSync } = await import('node:child_process');
  const { CLI, tmpDir } = await import('./helpers.js');
  const syn = tmpDir('page-hub-syn'), hf = tmpDir('page-hub-hf');
  execFileSync(process.execPath, [CLI, 'synth', '--config', path.join(ROOT, 'tests/configs/qwen35-b.json'), '--seed', '4', '--out', syn], { stdio: 'pipe' });
  writeHfCheckpoint(syn, hf, { dtype: 'BF16', shards: 3, tokenizer: true, tokenizerMinVocab: 300 });
  const hub = await startHub({ 'Qwen/Qwen3.5-0.8B': hf });
  const p = await newPage(h.context, `?hub=${encodeURIComponent(hub.url)}`);
  try {
    const before = hub.log.length;
    await p.selectOption('#model-select', 'hf-qwen3.5-0.8b');
    await p.waitForSelector('#hub-note:not([hidden])');
    assert.match(await seen('#hub-note-text', p), /1\.6 GB.*BF16.*q8.*缓存/);
    assert.equal(hub.log.length, before, 'nothing is downloaded before the reader agrees');
    await p.click('#hub-go');
    await p.waitForFunction(() => document.body.dataset.model === 'hf-qwen3.5-0.8b' && document.body.dataset.ready === '1', null, { timeout: 120000 });
    assert.ok(hub.log.some((l) => l.file?.endsWith('.safetensors') && l.range), 'the weights came from the hub with Range requests');
    const cfg = JSON.parse(fs.readFileSync(path.join(hf, 'config.json'), 'utf8')).text_config;
    await p.click('#deeper-sizes > summary'); // the sizes table sits in a "go deeper" panel
    assert.equal(await seen('#size-inter', p), cfg.intermediate_size.toLocaleString('en-US'));
    assert.equal(await seen('#size-layers', p), String(cfg.num_hidden_layers));
    assert.equal(await p.$$eval('#bars .bar', (bs) => bs.length), cfg.num_hidden_layers);
    const n = hub.log.length;
    await p.goto(`${h.server.url}?hub=${encodeURIComponent(hub.url)}&model=hf-qwen3.5-0.8b`);
    await p.waitForFunction(() => document.body.dataset.model === 'hf-qwen3.5-0.8b' && document.body.dataset.ready === '1', null, { timeout: 120000 });
    assert.ok(!hub.log.slice(n).some((l) => l.file?.endsWith('.safetensors')), 'no weight bytes fetched again');
  } finally { await p.close(); await hub.close(); }
});

test('a contents rail built from the sections (one link each, both languages)', async () => {
  const p = h.page;
  const sections = await p.$$eval('main > section[id]', (ss) => ss.filter((s) => s.querySelector('h1, h2')).map((s) => s.id));
  const links = await p.$$eval('#toc a', (as) => as.map((a) => a.getAttribute('href')));
  assert.deepEqual(links, sections.map((id) => `#${id}`));
  assert.ok(sections.length >= 10);
  await p.click('#toc a[href="#try"]');
  await p.waitForFunction(() => document.querySelector('#toc a[aria-current="true"]')?.getAttribute('href') === '#try', null, { timeout: 5000 });
  const top = await p.$eval('#try', (el) => el.getBoundingClientRect().top);
  const header = await p.$eval('header.top', (el) => el.getBoundingClientRect().bottom);
  assert.ok(top >= header - 1, `the section starts below the sticky header (${top} vs ${header})`);
});

test('no console errors', () => {
  assert.deepEqual(pageErrors(), []);
});

// The main path's prose: every rendered text of <main> outside the closed panels, the contents
// list, the charts (figures, bars), the shaded token strips and the form controls, counted at the
// issue's reading speeds (300 Chinese characters or 200 English words a minute).
function mainPathProse() {
  let cjk = 0, words = 0;
  const w = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
  for (let n = w.nextNode(); n; n = w.nextNode()) {
    const el = n.parentElement;
    if (!el || !el.getClientRects().length || el.closest('#toc, select, option, svg, button, textarea, figure, .bars, .budget, .tokens, .legend, .top-acts, [hidden]')) continue;
    const d = el.closest('details:not([open])');
    if (d && !el.closest('summary')) continue;
    if (getComputedStyle(el).display === 'none' || getComputedStyle(el).visibility === 'hidden') continue;
    cjk += (n.textContent.match(/[\u4e00-\u9fff]/g) ?? []).length;
    words += (n.textContent.match(/[A-Za-z]+/g) ?? []).length;
  }
  return { cjk, words };
}

test('the main path reads in about 8 minutes in either language (prose at 300 characters or 200 words a minute), the advanced cards folded away', async (t) => {
  const p = await newPage(h.context, '?lang=zh');
  try {
    const story = (t) => p.waitForFunction((x) => { const c = document.getElementById('story-card'); return c.dataset.state === 'ok' && c.dataset.text === x; }, t, { timeout: 180000 });
    await story('我上周从巴黎飞到');
    const zh = await p.evaluate(mainPathProse);
    await p.click('#lang-toggle');
    await story('I flew from Paris to');
    const en = await p.evaluate(mainPathProse);
    assert.ok(zh.cjk > 1000 && en.words > 800, `the count sees the page: ${JSON.stringify({ zh, en })}`);
    t.diagnostic(`main path: ${zh.cjk} Chinese characters = ${(zh.cjk / 300).toFixed(1)} min; ${en.words} English words = ${(en.words / 200).toFixed(1)} min`);
    assert.ok(zh.cjk / 300 <= 8, `Chinese main path: ${zh.cjk} characters = ${(zh.cjk / 300).toFixed(1)} minutes`);
    assert.ok(en.words / 200 <= 8, `English main path: ${en.words} words = ${(en.words / 200).toFixed(1)} minutes`);
  } finally { await p.close(); }
});

test('"go deeper" panels: closed on the main path by default, opened by ?open=, and an opened panel is written into the URL', async () => {
  const p = await newPage(h.context, '?lang=zh');
  const open = () => p.$$eval('details.deeper', (ds) => ds.filter((d) => d.open).map((d) => d.id));
  assert.deepEqual(await open(), [], 'a reader starts on the main path');
  assert.ok((await p.$$eval('details.deeper', (ds) => ds.length)) >= 6);
  await p.click('#deeper-lens > summary');
  await p.waitForFunction(() => new URLSearchParams(location.search).get('open') === 'lens');
  const q = await p.evaluate(() => location.search);
  await p.close();
  const p2 = await newPage(h.context, q);
  assert.deepEqual(await p2.$$eval('details.deeper', (ds) => ds.filter((d) => d.open).map((d) => d.id)), ['deeper-lens'], 'the link opens the same panel');
  // a glossary term's link opens the glossary panel it points into
  await p2.click('a.term');
  assert.equal(await p2.$eval('#deeper-glossary', (d) => d.open), true);
  await p2.close();
});
