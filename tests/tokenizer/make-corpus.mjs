#!/usr/bin/env node
// Generates tests/tokenizer/corpus.json: a deterministic, varied corpus for checking the BPE
// tokenizer against an independent implementation. Re-run to regenerate (same seed, same file):
//   node tests/tokenizer/make-corpus.mjs > tests/tokenizer/corpus.json
let s = 0x2545f491;
const rnd = (n) => { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; return (s >>> 0) % n; };
const pick = (a) => a[rnd(a.length)];
const rep = (n, f) => Array.from({ length: n }, f);

const names = ['Lily', 'Omar', 'Mei', 'José', 'Zoë', 'Ngozi', 'Björn', 'Aiko', 'Priya', 'Łukasz', 'Siobhán', 'Kwame'];
const cities = ['Paris', 'Tokyo', 'São Paulo', 'Zürich', 'Reykjavík', 'Kraków', 'Nairobi', 'Montréal', 'Hà Nội', 'Qingdao', 'Ōsaka', 'Düsseldorf'];
const verbs = ['flew', 'drove', 'walked', "didn't fly", 'took the train', "wasn't able to travel", 'sailed'];
const en = [
  () => `I ${pick(verbs)} from ${pick(cities)} to ${pick(cities)} last ${pick(['week', 'month', 'year', 'Tuesday'])}.`,
  () => `The food was ${pick(['not bad at all', 'terrible', "n't great", 'surprisingly good', 'NOT what I ordered'])}!`,
  () => `${pick(names)} said: "We'll meet at ${rnd(12) + 1}:${String(rnd(60)).padStart(2, '0')} — don't be late."`,
  () => `It's ${pick(['raining', 'sunny', 'cold'])} in ${pick(cities)}; they've said the temperature's ${rnd(40) - 5}°C.`,
  () => `${pick(['Honestly', 'Well', 'So'])}, ${pick(names)}'s ${pick(['cat', 'idea', 'code'])} IS ${pick(['GREAT', 'weird', 'fine'])}...`,
  () => rep(3 + rnd(4), () => pick(['the', 'quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', "can't", "I'M", "you'LL", "she'D"])).join(' '),
];
const zh = ['注意力在 token 之间混合信息，却做不了逐 token 的特征计算。', 'MLP 是多层感知机的缩写。', '今天天气很好，我们去公园散步吧！',
  '残差流贯穿模型全部深度。', '他说：“这不是问题。”', '中华人民共和国成立于1949年10月1日。', '北京、上海和广州都是大城市。', '我从巴黎飞到东京。'];
const ja = ['東京は日本の首都です。', 'カタカナとひらがなを混ぜて書きます。', 'ラーメンを食べたい！', '今日は２０２４年５月３日です。', 'ｶﾀｶﾅ（半角）も使います。'];
const ar = ['مرحبا بالعالم', 'السَّلَامُ عَلَيْكُمْ', 'اللغة العربية جميلة جداً.', 'رقم ١٢٣٤٥٦ في النص', 'كتبَ الطالبُ الدرسَ'];
const ko = ['안녕하세요', '한국어 문장입니다.', '\u1100\u1161\u1102\u1161\u1103\u1161', '\u1112\u1161\u11AB\u1100\u1173\u11AF']; // incl. conjoining jamo
const emoji = ['😀', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇯🇵🇫🇷', '1️⃣', '❤️', '🧑🏿‍💻', '🐈‍⬛', '👩🏼‍🦰', '✈️', '🔥🔥🔥'];
const code = [
  'for i in range(10):\n    print(i)', 'def f(x: int) -> int:\n\treturn x ** 2  # square', 'const add = (a, b) => a + b;',
  'if (x != NULL && *p++ == \'\\0\') { return -1; }', 'fn main() { let v: Vec<u8> = vec![1, 2, 3]; }', 'SELECT name, COUNT(*) FROM users WHERE age >= 18 GROUP BY name;',
  '<div class="note">Hello &amp; welcome</div>', 'echo "$HOME" | grep -v \'^#\' > out.txt 2>&1', 'x = {"a": [1, 2.5e-3, null], "b": true}',
  '#include <stdio.h>\nint main(void){printf("%d\\n", 42);}', 'public static void main(String[] args) {}', '    while True:\n        pass\n\n\n',
];
const numbers = () => pick([`${rnd(100000)}`, `${rnd(1000)}.${rnd(1000)}`, `$${rnd(5000)}.${String(rnd(100)).padStart(2, '0')}`, `${rnd(28) + 1}/${rnd(12) + 1}/20${rnd(30)}`,
  `2024-0${rnd(9) + 1}-1${rnd(9)}T12:${rnd(6)}0:00Z`, `+1 (555) ${rnd(900) + 100}-${rnd(9000) + 1000}`, `${rnd(100)}%`, `3.14159265358979`, `1,234,567`, `0x${rnd(65535).toString(16)}`, `€${rnd(99)},${rnd(99)}`]);
const ws = () => pick([' ', '  ', '   ', '\t', '\n', '\n\n', '\r\n', ' \n ', '\u00a0', '\u3000', '\u2003', ' \t \n\n  ', '\n   \n']);
const marks = ['cafe\u0301', 'e\u0301cole', 'n\u0303', 'A\u030a', 'a\u0308\u0301', 'q\u0307\u0323', 'नमस्ते दुनिया', 'हिन्दी', 'ภาษาไทย', 'สวัสดีครับ',
  'שָׁלוֹם', 'Tiếng Việt', 'ệ', 'x\u0300\u0301\u0302', 'o\u0328\u0304', '\u0301start', 'Z\u0335\u0321a\u0336l\u0337g\u0338o\u0334'];
const odd = ['\ue000\ue001', '\ufdd0', '\u{10ffff}', '\u{1d400}\u{1d401}\u{1d7d8}', 'a\u200bb', 'x\ufe0fy', '\u200e\u200f', '\u0001\u0002\u001f', '\u{1f600}\u{e0067}', 'ﬁ ligature', 'Ⅻ', '½ ¾', '①②', '™ ® ©', '\u2028\u2029', 'ℌ𝔢𝔩𝔩𝔬', 'ß ẞ ſ', "'S 'T 'RE 'Ve 'ſ"];
const specials = ['<|im_start|>', '<|im_end|>', '<|endoftext|>', '<think>', '</think>', '<tool_call>'];

const out = [];
for (let i = 0; i < 320; i++) out.push(pick(en)());
for (let i = 0; i < 200; i++) out.push(rep(1 + rnd(3), () => pick(zh)).join(pick(['', ' ', '\n'])));
for (let i = 0; i < 120; i++) out.push(rep(1 + rnd(2), () => pick(ja)).join(''));
for (let i = 0; i < 120; i++) out.push(rep(1 + rnd(2), () => pick(ar)).join(' '));
for (let i = 0; i < 80; i++) out.push(rep(1 + rnd(3), () => pick(ko)).join(' '));
for (let i = 0; i < 150; i++) out.push(rep(1 + rnd(4), () => pick(emoji)).join(pick(['', ' ', ' and '])) + pick(['', ' ok', '!']));
for (let i = 0; i < 220; i++) out.push(rep(1 + rnd(2), () => pick(code)).join('\n'));
for (let i = 0; i < 150; i++) out.push(rep(1 + rnd(4), numbers).join(pick([' ', ', ', '-', ''])));
for (let i = 0; i < 150; i++) out.push(rep(2 + rnd(4), () => pick([ws(), pick(['word', 'x', '.', '1'])])).join(''));
for (let i = 0; i < 180; i++) out.push(rep(1 + rnd(3), () => pick(marks)).join(pick([' ', '', '\n'])));
for (let i = 0; i < 60; i++) out.push(`${pick(specials)}${pick(['user', 'assistant'])}\n${pick(en)()}${pick(specials)}${pick(['', '\n'])}`);
for (let i = 0; i < 150; i++) out.push(rep(1 + rnd(3), () => pick(odd)).join(pick(['', ' '])));
const all = [en, zh, ja, ar, ko, emoji, code, marks, odd, specials];
for (let i = 0; i < 220; i++) out.push(rep(3 + rnd(6), () => { const g = pick(all); return typeof g[0] === 'function' ? pick(g)() : pick(g); }).join(pick(['', ' ', '\n', ws()])));
process.stdout.write(JSON.stringify({ note: 'generated by tests/tokenizer/make-corpus.mjs; do not edit', strings: out }, null, 0) + '\n');
