// Headless Chromium (Debian's, via playwright-core) against pages served by tools/serve.mjs.
import { chromium } from 'playwright-core';
import { serve } from '../tools/serve.mjs';
import { ROOT } from './helpers.js';

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-quic', '--no-first-run', '--disable-sync', '--disable-dev-shm-usage'];

/** Starts a server (repo root + mounts) and a browser; returns helpers and a close(). */
export async function startBrowser({ mounts = {} } = {}) {
  const server = await serve({ root: ROOT, mounts });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const errors = [];
  async function newPage(path, viewport = { width: 1280, height: 900 }) {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`${path}: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`${path}: ${e.message}`));
    await page.goto(server.url + path.replace(/^\//, ''));
    return { page, context };
  }
  return { url: server.url, browser, newPage, errors, close: async () => { await browser.close(); await server.close(); } };
}
