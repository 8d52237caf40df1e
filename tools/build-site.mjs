#!/usr/bin/env node
// Assembles the static site (the lesson page) into build/site: the page (web/), the package's JS
// and wasm at the same relative places, the model list, the probe sentences, and the weight sets:
// the committed demo model, llama2.c's stories260K when a copy is found (MLPSCOPE_SHARED/models, by
// default the folder `shared` beside the checkout; optional), and small synthetic Qwen3.5- and
// Gemma-3-shaped models (random weights, the demo tokenizer) made on the spot; sizes.json holds the
// real models' parameter counts computed from their configs. Any static host can serve the folder.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { probes } from '../js/corpus.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'build/site');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(path.join(out, 'build/wasm'), { recursive: true });
fs.cpSync(path.join(root, 'web'), out, { recursive: true });
// the page imports the package by name; in the site the package's js/ sits beside the page
const html = fs.readFileSync(path.join(out, 'index.html'), 'utf8'), mapped = html.replace('"mlpscope": "../js/index.js"', '"mlpscope": "./js/index.js"');
if (mapped === html) throw new Error('web/index.html: the import map for "mlpscope" is missing');
fs.writeFileSync(path.join(out, 'index.html'), mapped);
fs.cpSync(path.join(root, 'js'), path.join(out, 'js'), { recursive: true });
for (const f of ['mlpscope.wasm', 'mlpscope-mt.wasm']) fs.copyFileSync(path.join(root, 'build/wasm', f), path.join(out, 'build/wasm', f));
// the relaxed-SIMD tiles, when built (clang-16): the page links them in where the browser runs them right
for (const f of ['mlpscope-relaxed.wasm', 'mlpscope-relaxed-mt.wasm']) {
  if (fs.existsSync(path.join(root, 'build/wasm', f))) fs.copyFileSync(path.join(root, 'build/wasm', f), path.join(out, 'build/wasm', f));
  else fs.rmSync(path.join(out, 'build/wasm', f), { force: true });
}
const models = [];
const W = path.join(out, 'weights');
fs.mkdirSync(W, { recursive: true });
if (fs.existsSync(path.join(root, 'weights/demo/manifest.json'))) {
  fs.mkdirSync(path.join(W, 'demo'));
  for (const f of fs.readdirSync(path.join(root, 'weights/demo'))) if (/\.(json|bin|msbpe)$/.test(f) && f !== 'summary.json') fs.copyFileSync(path.join(root, 'weights/demo', f), path.join(W, 'demo', f));
  const params = (JSON.parse(fs.readFileSync(path.join(root, 'weights/demo/summary.json'))).params / 1e6).toFixed(2);
  models.push({ id: 'demo', url: 'weights/demo/', kind: 'trained', languages: ['zh', 'en'],
    label: { zh: `mlpscope 演示模型（本项目训练，中英双语，${params}M 参数）`, en: `mlpscope demo model (trained by this project, Chinese and English, ${params}M parameters)` } });
}
const cli = path.join(root, 'bin/mlpscope.js');
const stories = path.join(process.env.MLPSCOPE_SHARED ?? path.join(root, '../shared'), 'models/stories260K');
if (fs.existsSync(path.join(stories, 'stories260K.bin'))) {
  execFileSync(process.execPath, [cli, 'convert', path.join(stories, 'stories260K.bin'), path.join(stories, 'tok512.bin'), '--out', path.join(W, 'stories260K')], { stdio: 'pipe' });
  models.push({ id: 'stories260K', url: 'weights/stories260K/', kind: 'trained', languages: ['en'], label: { zh: 'stories260K（TinyStories，Llama 架构）', en: 'stories260K (TinyStories, Llama architecture)' } });
}
if (models.some((m) => m.id === 'demo')) {
  const demoVocab = JSON.parse(fs.readFileSync(path.join(root, 'weights/demo/manifest.json'))).config.vocab_size;
  const demo = JSON.parse(fs.readFileSync(path.join(W, 'demo/manifest.json')));
  /** a random-weight model of this config (q8), with the demo tokenizer, added to the picker */
  const synthModel = (id, cfg, label) => {
    const cfgFile = path.join(out, 'synth-config.json'), dir = path.join(W, id);
    fs.writeFileSync(cfgFile, JSON.stringify(cfg));
    execFileSync(process.execPath, [cli, 'synth', '--config', cfgFile, '--seed', '7', '--dtype', 'q8', '--out', dir], { stdio: 'pipe' });
    fs.rmSync(cfgFile);
    const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json')));
    fs.copyFileSync(path.join(W, 'demo', demo.tokenizer.file), path.join(dir, demo.tokenizer.file));
    man.tokenizer = demo.tokenizer;
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(man, null, 1));
    models.push({ id, url: `weights/${id}/`, kind: 'random', label });
  };
  // Qwen3.5 hybrid layout (Gated DeltaNet + gated attention)
  synthModel('qwen35-synth', { family: 'qwen3_5', config: { hidden_size: 128, intermediate_size: 448, num_hidden_layers: 8, vocab_size: demoVocab, num_attention_heads: 4, num_key_value_heads: 2,
    head_dim: 64, linear_num_key_heads: 4, linear_num_value_heads: 4, linear_key_head_dim: 32, linear_value_head_dim: 32, full_attention_interval: 4, max_position_embeddings: 512 } },
  { zh: 'Qwen3.5 结构的小模型（随机权重）', en: 'a small Qwen3.5-shaped model (random weights)' });
  // Gemma 3 layout (GeGLU, norms around both sublayers, five local layers to one global): the
  // page's SwiGLU-vs-GeGLU section runs on it
  synthModel('gemma3-synth', { family: 'gemma3', config: { hidden_size: 128, intermediate_size: 512, num_hidden_layers: 6, vocab_size: demoVocab, num_attention_heads: 4,
    num_key_value_heads: 1, head_dim: 64, query_pre_attn_scalar: 64, sliding_window: 16, sliding_window_pattern: 6, max_position_embeddings: 512 } },
  { zh: 'Gemma 3 结构的小模型（GeGLU，随机权重）', en: 'a small Gemma-3-shaped model (GeGLU, random weights)' });
}
// the real models' sizes from their configs (no weights): the budget section's table
const { configSummary } = await import('../js/config.js');
const sizes = [];
for (const [id, name] of [['qwen3.5-0.8b', 'Qwen3.5-0.8B'], ['gemma3-270m', 'Gemma 3 270M']]) {
  const s = await configSummary(id);
  sizes.push({ id, name, family: s.family, hidden: s.config.hidden_size, intermediate: s.config.intermediate_size, layers: s.config.num_hidden_layers,
    vocab: s.config.vocab_size, activation: s.family === 'gemma3' ? 'GELU (tanh)' : 'SiLU', params: s.params });
}
fs.writeFileSync(path.join(out, 'sizes.json'), JSON.stringify({ sizes }, null, 1));
// pin each manifest by its sha256, so the page verifies the root of every shard hash as well
const { createHash } = await import('node:crypto');
for (const m of models) m.manifestSha256 = createHash('sha256').update(fs.readFileSync(path.join(out, m.url, 'manifest.json'))).digest('hex');
fs.writeFileSync(path.join(out, 'models.json'), JSON.stringify({ models }, null, 1));
// held-out probe sentences (the generator's labelled spans), seed 9: never seen in training (seed 1)
fs.writeFileSync(path.join(out, 'probes.json'), JSON.stringify({ seed: 9, probes: probes(9, 160) }));
// the service worker's offline list: every file of the site but the weights and the worker itself
const siteFiles = (dir) => fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
  const p = path.join(dir, d.name);
  return d.isDirectory() ? siteFiles(p) : [path.relative(out, p).split(path.sep).join('/')];
});
const shell = ['./', ...siteFiles(out).filter((f) => !f.startsWith('weights/') && f !== 'sw.js' && f !== 'README.md').sort()];
const swFile = path.join(out, 'sw.js'), sw = fs.readFileSync(swFile, 'utf8');
if (!sw.includes("const SHELL = ['./'];")) throw new Error('web/sw.js: the SHELL line to fill in is missing');
fs.writeFileSync(swFile, sw.replace("const SHELL = ['./'];", `const SHELL = ${JSON.stringify(shell)};`));
console.log(`site assembled in ${path.relative(process.cwd(), out) || '.'}: ${models.map((m) => m.id).join(', ')}`);
