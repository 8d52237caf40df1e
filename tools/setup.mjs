#!/usr/bin/env node
// First step of `npm start`, `npm test` and `npm run demo`: make a fresh clone ready for them.
//   node tools/setup.mjs wasm    Node, Emscripten, then the wasm build if it is missing or stale
//   node tools/setup.mjs start   the same, then the site (the lesson page) in build/site if it is
//                                missing or older than its sources
//   node tools/setup.mjs test    the suite: also gcc, clang + libFuzzer, Chromium, CJK fonts and
//                                the npm devDependencies (npm ci when node_modules is absent or
//                                stale), then every build (./build.sh skips what is up to date)
// Missing Debian/Ubuntu packages are installed with apt-get when this runs as root (as in CI or a
// container); otherwise it prints the one command to run and stops. Node itself is never installed
// here (it is what runs this file): a Node that is too old gets a message saying what is needed.
// MLPSCOPE_AUTO_INSTALL=0 turns the apt-get step into a message even for root.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NODE_MIN = [20, 10]; // node --test --test-concurrency

/** What each command needs from the system: a check and the Debian package that satisfies it. */
const SYSTEM = {
  emcc: { check: () => onPath('emcc'), pkgs: ['emscripten'], for: ['wasm', 'start', 'test'], why: 'compiles the engine to WebAssembly' },
  gcc: { check: () => onPath('gcc') && fs.existsSync('/usr/include/stdio.h'), pkgs: ['gcc', 'libc6-dev'], for: ['test'], why: 'native builds, C tests, sanitizers' },
  clang: { check: () => onPath('clang') && libFuzzer(), pkgs: ['clang', 'libclang-rt-dev'], for: ['test'], why: 'libFuzzer targets' },
  clang16: { check: () => onPath('clang-16') && onPath('wasm-ld-16'), pkgs: ['clang-16', 'lld-16'], for: ['test'], why: 'the relaxed-SIMD kernels (a module of their own; build.sh skips them without it)' },
  chromium: { check: () => fs.existsSync('/usr/bin/chromium'), pkgs: ['chromium'], for: ['test'], why: 'page and browser tests' },
  fonts: { check: () => dpkgHas('fonts-wqy-microhei'), pkgs: ['fonts-wqy-microhei'], for: ['test'], why: 'Chinese glyphs in page screenshots' },
};

function onPath(cmd) { return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0; }
function dpkgHas(pkg) { // installed, not merely known (a removed package keeps a 'config-files' entry)
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() === 'install ok installed';
}
function libFuzzer() {
  const r = spawnSync('clang', ['-x', 'c', '-fsanitize=fuzzer', '-', '-o', '/dev/null'],
    { input: 'int LLVMFuzzerTestOneInput(const char*d,long n){(void)d;(void)n;return 0;}', stdio: ['pipe', 'ignore', 'ignore'] });
  return r.status === 0;
}
function say(msg) { process.stderr.write(`mlpscope setup: ${msg}\n`); }
function fail(msg) { say(msg); process.exit(1); }
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: ROOT, ...opts });
  if (r.status !== 0) fail(`'${[cmd, ...args].join(' ')}' failed (exit ${r.status ?? r.signal})`);
}

export function checkNode(version = process.versions.node) {
  const [maj, min] = version.split('.').map(Number);
  if (maj > NODE_MIN[0] || (maj === NODE_MIN[0] && min >= NODE_MIN[1])) return null;
  return `Node ${version} is too old: mlpscope needs Node ${NODE_MIN.join('.')} or newer (Debian 12's own nodejs package is 18). ` +
    'Install Node 20 or 22 (for example from NodeSource\'s Debian packages, or with nvm) and run the command again.';
}

/** The packages missing for `what` ('wasm' | 'start' | 'test'). */
export function missingPackages(what) {
  const missing = [];
  for (const [name, s] of Object.entries(SYSTEM)) if (s.for.includes(what) && !s.check()) missing.push({ name, ...s });
  return missing;
}

function installSystem(what) {
  const missing = missingPackages(what);
  if (!missing.length) return;
  const pkgs = missing.flatMap((m) => m.pkgs);
  const list = missing.map((m) => `${m.name} (${m.why})`).join(', ');
  const hasApt = onPath('apt-get');
  const root = process.getuid?.() === 0;
  if (hasApt && root && process.env.MLPSCOPE_AUTO_INSTALL !== '0') {
    say(`installing ${pkgs.join(' ')} with apt-get: needed for ${list}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    run('apt-get', ['update', '-q'], { env });
    run('apt-get', ['install', '-y', '-q', ...pkgs], { env });
    const still = missingPackages(what);
    if (still.length) fail(`still missing after apt-get: ${still.map((m) => m.name).join(', ')}`);
    return;
  }
  fail(`missing: ${list}.\n` + (hasApt
    ? `  Install them with:\n    sudo apt-get install -y ${pkgs.join(' ')}\n  then run the command again.`
    : `  This is not a Debian/Ubuntu system: install the equivalents of ${pkgs.join(', ')} and run the command again.`));
}

/** node_modules matches package-lock.json (every locked package installed at its locked version). */
export function nodeModulesCurrent(root = ROOT) {
  let lock;
  try { lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')); } catch { return true; }
  for (const [key, entry] of Object.entries(lock.packages ?? {})) {
    if (!key.startsWith('node_modules/') || entry.optional) continue;
    try {
      const have = JSON.parse(fs.readFileSync(path.join(root, key, 'package.json'), 'utf8')).version;
      if (have !== entry.version) return false;
    } catch { return false; }
  }
  return true;
}

/** Newest modification time of the files under `dirs` (relative to ROOT). */
function newest(dirs) {
  let t = 0;
  const walk = (p) => {
    const st = fs.statSync(p);
    if (st.isDirectory()) for (const f of fs.readdirSync(p)) walk(path.join(p, f));
    else t = Math.max(t, st.mtimeMs);
  };
  for (const d of dirs) if (fs.existsSync(path.join(ROOT, d))) walk(path.join(ROOT, d));
  return t;
}

/** The wasm builds are missing or older than the engine's sources. */
export function wasmStale() {
  const outs = ['build/wasm/mlpscope.wasm', 'build/wasm/mlpscope-mt.wasm'].map((f) => path.join(ROOT, f));
  if (!outs.every((f) => fs.existsSync(f))) return true;
  return Math.min(...outs.map((f) => fs.statSync(f).mtimeMs)) < newest(['src', 'build.sh']);
}

/** The site (build/site) is missing or older than what it is assembled from. */
export function siteStale() {
  const stamp = path.join(ROOT, 'build/site/models.json');
  if (!fs.existsSync(stamp)) return true;
  return fs.statSync(stamp).mtimeMs < newest(['web', 'js', 'build/wasm', 'weights/demo', 'tools/build-site.mjs']);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const what = process.argv[2];
  if (!['wasm', 'start', 'test'].includes(what)) fail('usage: node tools/setup.mjs wasm|start|test');
  const old = checkNode();
  if (old) fail(old);
  installSystem(what);
  if (what === 'test' && !nodeModulesCurrent()) {
    say('node_modules is missing or out of date: running npm ci');
    run('npm', ['ci', '--no-audit', '--no-fund']);
  }
  if (what !== 'test') {
    if (wasmStale()) run(path.join(ROOT, 'build.sh'), ['wasm']);
    if (what === 'start' && siteStale()) run(path.join(ROOT, 'build.sh'), ['site']);
  } else {
    run(path.join(ROOT, 'build.sh'), ['all']);
  }
}
