// Every example prints text a person can read, on a Chinese and an English input: no "\uFFFD", no
// byte-level vocabulary spellings (the GPT-2 byte alphabet: "Ġ", "å¥¥åħĭåħ°" for 奥克兰), and the
// Chinese input's own characters come back whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './helpers.js';

const DEMO = path.join(ROOT, 'weights/demo');
const run = (name, ...args) => execFileSync(process.execPath, [path.join(ROOT, 'examples', name), ...args], { encoding: 'utf8', maxBuffer: 1 << 24 });
// U+0080–U+017F: what UTF-8 bytes look like when a byte-level BPE piece is printed as it is spelled
const readable = (out, what) => {
  assert.ok(!out.includes('\uFFFD'), `${what}: "\uFFFD" in\n${out}`);
  const bad = out.match(/[\u0080-\u017F]+/g);
  assert.equal(bad, null, `${what}: vocabulary spellings ${bad} in\n${out}`);
};
const INPUTS = { zh: '我上周从巴黎飞到', en: 'I flew from Paris to' };

for (const [lang, text] of Object.entries(INPUTS)) {
  test(`the examples on the demo model print readable text (${lang}: ${text})`, () => {
    const ko = run('knockout.mjs', DEMO, text, '3');
    readable(ko, 'knockout');
    assert.match(ko, /^before: "[^"]+" \d/m);
    if (lang === 'zh') assert.match(ko, /"[\u4e00-\u9fff]+" \d/, 'Chinese candidates print as characters');
    const table = run('mlp-table.mjs', DEMO, text);
    readable(table, 'mlp-table');
    assert.ok(table.includes(lang === 'zh' ? '"巴黎"' : '" flew"'), table);
    readable(run('generate.mjs', DEMO, text), 'generate');
    readable(run('neuron.mjs', DEMO, '3', '249'), 'neuron');
  });
}
test('patching prints readable column heads', () => readable(run('patching.mjs'), 'patching'));
