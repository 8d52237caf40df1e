#!/usr/bin/env node
// How long the lesson page takes until its feature cards show, on a first visit (the feature
// search runs) and a second one (the cards come from the browser's storage), in Debian's Chromium
// over build/site served by tools/serve.mjs. The tests check the structural fact (a second visit
// runs no search); the time lives here.   node bench/page.mjs [--rounds 3]
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../tools/serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1] || 3);
const server = await serve({ root: path.join(ROOT, 'build/site') });
const rows = [];
try {
  for (let r = 0; r < rounds; r++) {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'mlpscope-bench-page-'));
    const ctx = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', viewport: { width: 1280, height: 900 },
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-quic', '--no-first-run', '--disable-sync'],
    });
    try {
      for (const visit of ['first', 'second']) {
        const p = await ctx.newPage();
        const t0 = Date.now();
        await p.goto(server.url);
        await p.waitForFunction(() => document.querySelector('#feature-city')?.dataset.auc, null, { timeout: 300000 });
        const ms = Date.now() - t0;
        rows.push({ round: r + 1, visit, ms, from: await p.evaluate(() => document.body.dataset.featuresFrom), build: await p.evaluate(() => window.__mlpscope?.info?.build?.why ?? '') });
        await p.close();
      }
    } finally { await ctx.close(); fs.rmSync(profile, { recursive: true, force: true }); }
  }
} finally { await server.close(); }
console.log(`| round | visit | feature cards after (ms) | cards from | engine |\n|---|---|---|---|---|`);
for (const x of rows) console.log(`| ${x.round} | ${x.visit} | ${x.ms} | ${x.from} | ${x.build} |`);
const med = (v) => { const s = [...v].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
for (const visit of ['first', 'second']) console.log(`median ${visit} visit: ${med(rows.filter((x) => x.visit === visit).map((x) => x.ms))} ms`);
console.log(`(${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(2)} at the end; Chromium ${process.env.CHROMIUM ?? '/usr/bin/chromium'})`);
