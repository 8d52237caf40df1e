// More strings for the tokenizer comparisons (tests/tokenizers-hub.test.js), generated with a fixed
// seed on top of the committed corpus: scripts, code with indentation, emoji sequences, whitespace
// runs, digit runs, contractions in mixed case, characters few vocabularies hold (byte fallback),
// and long strings (to catch work that grows faster than the text).
let s = 0x6d2b79f5;
const rnd = (n) => { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; return (s >>> 0) % n; };
const pick = (a) => a[rnd(a.length)];

const parts = {
  en: ['The quick brown fox jumps over the lazy dog.', "I'm sure they'LL say it's FINE, won't they?", "We'd've gone if you'D asked.",
    "DON'T STOP", "o'clock", "rock'n'roll", 'e-mail: someone@example.com, https://example.org/a?b=c&d=e#f', 'Mr. O\'Neil\'s 3rd edition (2nd printing).'],
  zh: ['注意力机制把信息在词元之间传递。', '我爱北京天安门，天安门上太阳升。', '龘靐齉爩', '第一章：总则（试行）'],
  ja: ['吾輩は猫である。名前はまだ無い。', 'コンピューターサイエンス', 'ひらがなカタカナ漢字ABC123', 'ｱｲｳｴｵ'],
  ko: ['대한민국의 수도는 서울입니다.', '맞춤법 검사기', '한글 자모 ㄱㄴㄷㅏㅑ'],
  code: ['def main():\n    for i in range(3):\n        if i % 2 == 0:\n            print(f"{i=}")\n    return 0\n',
    'function f(a, b) {\n\treturn a?.b ?? [...b].map((x) => x * 2);\n}\n', '#include <stdio.h>\nint main(void) {\n  printf("%d\\n", 42);\n  return 0;\n}\n',
    '    \tmixed indentation\n\t    here', 'x+=1;y-=2;z*=3;w/=4;a<<=1;b>>=2;c&=d|e^f;', '/* comment */ // another\n#define MAX(a,b) ((a)>(b)?(a):(b))'],
  emoji: ['👨‍👩‍👧‍👦', '🏳️‍🌈', '🇩🇪🇺🇸🇯🇵', '👍🏻👍🏿', '🧑‍🚀', '❤️‍🔥', '😀😃😄😁', '#️⃣', '🫠🫡🪿'],
  ws: ['   ', '\t\t', '\n\n\n', '\r\n', 'a  b   c    d', 'trailing   ', '   leading', ' \n \n ', '\n\n\n\nx', '\u3000\u3000full width', 'nbsp\u00a0here', 'x\u2003em\u2009thin'],
  digits: ['1234567890', '3.14159265358979', '1,000,000', '٣٤٥٦', '१२३४', '２０２５年', '0x1F600', '1e-10', '12345678901234567890'],
  rare: ['नमस्ते दुनिया', 'สวัสดีครับ ภาษาไทย', 'مرحبا بالعالم', 'שלום עולם', 'გამარჯობა მსოფლიო', 'ሰላም ዓለም', 'Привет, ми́р! Ёжик',
    'й̆ц̧ӱ', 'Ελληνικά: αβγ ΑΒΓ', 'Tiếng Việt có dấu', 'ꦲꦏ꧀ꦱꦫ', 'ᠮᠣᠩᠭᠣᠯ', 'ᏣᎳᎩ', 'ⴰⵎⴰⵣⵉⵖ'],
  odd: ['\u0000nul', 'tab\u0009bell\u0007', '\u200b\u200c\u200d', '\ufeffBOM', 'a\u0301e\u0300', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '𓀀𓀁𓀂', '🀄🃏', '\ue000\uf8ff', '􏿽', '\u{10FFFD}',
    '\u2028\u2029', 'Ω≈ç√∫˜µ≤≥÷', '½¾⅓', 'ﷺ', '﷽', '\u0085next line'],
};
const keys = Object.keys(parts);

function one() {
  let out = '';
  const n = 1 + rnd(4);
  for (let i = 0; i < n; i++) out += pick(parts[pick(keys)]) + pick(['', ' ', '\n', '  ', '\t', '. ', ', ']);
  return out;
}

/** @returns {string[]} every part alone, 600 random mixtures, and a few long strings */
export function hubCorpus() {
  const out = [];
  for (const k of keys) out.push(...parts[k]);
  for (let i = 0; i < 600; i++) out.push(one());
  out.push(Array.from({ length: 200 }, one).join(''));
  out.push(' '.repeat(5000), 'a'.repeat(5000), '中'.repeat(3000), '\n'.repeat(3000), '1'.repeat(4000), '😀'.repeat(1000));
  return out;
}
