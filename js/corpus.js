// A deterministic generator of training text in the spirit of the lesson: travel between cities,
// negation, code snippets, numbers and dates, names and places, short stories. Word lists and
// templates are ours. Every generated piece can carry labelled spans (city, name, noun, negation,
// code, number) so probes for "what a neuron fires on" come from the same generator.
// The CLI's default probe set comes from here; the text files for training come from
// tools/corpus.mjs, which writes this generator's output.

export const CITIES = ('Paris Tokyo London Berlin Madrid Rome Vienna Prague Warsaw Budapest Lisbon Dublin Oslo Stockholm Helsinki Copenhagen ' +
  'Amsterdam Brussels Zurich Geneva Munich Hamburg Milan Naples Venice Florence Barcelona Seville Valencia Porto Athens Istanbul Ankara Cairo ' +
  'Nairobi Lagos Accra Dakar Casablanca Tunis Algiers Johannesburg Durban Kampala Addis Khartoum Beirut Amman Baghdad Tehran Riyadh Dubai Doha ' +
  'Muscat Karachi Lahore Delhi Mumbai Chennai Kolkata Bangalore Dhaka Kathmandu Colombo Bangkok Hanoi Saigon Manila Jakarta Singapore Kuala ' +
  'Seoul Busan Beijing Shanghai Shenzhen Guangzhou Chengdu Wuhan Xian Taipei Osaka Kyoto Nagoya Sapporo Sydney Melbourne Brisbane Perth ' +
  'Adelaide Auckland Wellington Toronto Montreal Vancouver Ottawa Calgary Chicago Boston Denver Seattle Portland Austin Dallas Houston Miami ' +
  'Atlanta Phoenix Detroit Memphis Nashville Orlando Tampa Philadelphia Baltimore Pittsburgh Cleveland Lima Quito Bogota Caracas Santiago ' +
  'Buenos Montevideo Asuncion Havana Kingston Panama Mexico Monterrey Guadalajara Tijuana Reykjavik Tallinn Riga Vilnius Minsk Kyiv Odessa ' +
  'Bucharest Sofia Belgrade Zagreb Sarajevo Skopje Tirana Ljubljana Bratislava Krakow Gdansk Leipzig Dresden Cologne Frankfurt Stuttgart ' +
  'Lyon Marseille Nice Toulouse Bordeaux Nantes Lille Glasgow Edinburgh Manchester Liverpool Leeds Bristol Cardiff Belfast Cork Bergen ' +
  'Malmo Turku Antwerp Rotterdam Utrecht Basel Bern Turin Bologna Genoa Palermo Bilbao Granada Malaga Toledo Salzburg Innsbruck Graz').split(' ');
export const COUNTRIES = ('France Japan England Germany Spain Italy Austria Poland Hungary Portugal Ireland Norway Sweden Finland Denmark ' +
  'Greece Turkey Egypt Kenya Nigeria Ghana Morocco India Nepal Thailand Vietnam Indonesia Korea China Australia Canada Brazil Peru Chile ' +
  'Argentina Mexico Iceland Estonia Latvia Romania Bulgaria Serbia Croatia Scotland Wales').split(' ');
export const NAMES = ('Lily Tom Anna Omar Mei Jose Zoe Ngozi Bjorn Aiko Priya Lukas Siobhan Kwame Sara Ben Maya Leo Nina Sam Ravi Ines ' +
  'Hugo Lena Yuki Ahmed Fatima Carlos Elena Ivan Olga Pedro Lucia Marco Giulia Jan Eva Piotr Ola Mateo Sofia Liam Emma Noah Ava Ethan Mia ' +
  'Lucas Chloe Jack Grace Amir Leila Kofi Ama Tariq Noor Kenji Hana Min Jun Wei Ling Arjun Divya Tomas Marta Felix Clara Oscar Alice ' +
  'Victor Irene Pablo Rosa Diego Ana Andre Julia Max Nora Oliver Ruby Henry Ella Jonas Frida Emil Astrid Karl Ingrid Hans Greta Paul Rita ' +
  'Simon Vera Daniel Sonia Adam Lea Rafael Alba Teo Mira David Hanna Samuel Ida Elias Alma Aaron Ruth Caleb Stella Isaac Iris Owen Luna ' +
  'Yusuf Amina Chidi Zara Dara Kai Rhea Milo Tara Abel Dina Ezra Gina Hiro Sakura Ren Yui Chen Xin Bao Lan Quang Thi Anan Malee ' +
  'Ikram Samir Layla Hassan Youssef Salma Kemal Aylin Deniz Emre Ines Joao Rui Beatriz Tiago Marisol Camila Andres Valentina Santiago ' +
  'Lautaro Florencia Ignacio Paula Tupac Inti Nayeli Itzel Xochitl Akira Kaito Mariko Sven Liv Nils Freya Aksel Tuva Ole Signe Matti ' +
  'Aino Jari Veera Ewa Kasia Bartek Zofia Petr Lenka Jiri Tereza Ondrej Dusan Mila Goran Vesna Luka Ivana Nikos Eleni Yannis Dimitra').split(' ');
export const NOUNS = ('book cake door river garden window table chair lamp song letter map key coat hat bike boat car train ticket ' +
  'apple bread soup coffee tea cup plate box bag shoe phone clock picture story dog cat bird horse fish tree flower stone bridge road ' +
  'house school shop market park beach hill lake forest castle museum station library kitchen bottle pencil desk bed blanket kite ball').split(' ');
const PLACES = 'park museum station library market beach cafe hotel airport harbor garden school office bakery theater'.split(' ');
const ADJS = 'good bad big small warm cold happy sad quiet loud bright dark old new fast slow kind strange easy hard sweet bitter clean dirty'.split(' ');
const TIMES = ['last week', 'last month', 'last year', 'yesterday', 'on Monday', 'on Friday', 'in the morning', 'at night', 'two days ago', 'last summer'];
const MONTHS = 'January February March April May June July August September October November December'.split(' ');
const DAYS = 'Monday Tuesday Wednesday Thursday Friday Saturday Sunday'.split(' ');
const FNAMES = 'add scale square total count clamp double mean area swap'.split(' ');
const VARS = 'x y n i j k total count value item'.split(' ');

/** xorshift32; the same seed gives the same corpus everywhere */
export function rng(seed) {
  let s = (seed >>> 0) || 0x9e3779b9;
  const next = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s; };
  return { int: (n) => next() % n, pick: (a) => a[next() % a.length], chance: (p) => next() / 4294967296 < p };
}

/** A piece of text with labelled spans; pieces concatenate with spans shifted. */
class Text {
  constructor() { this.s = ''; this.spans = []; }
  add(str, label) { if (label) this.spans.push({ start: this.s.length, end: this.s.length + str.length, label }); this.s += str; return this; }
}

function sentence(r) {
  const t = new Text();
  const city = () => t.add(r.pick(CITIES), 'city');
  const name = () => t.add(r.pick(NAMES), 'name');
  const noun = () => t.add(r.pick(NOUNS), 'noun');
  const num = (n) => t.add(String(n), 'number');
  const neg = (w) => t.add(w, 'negation');
  switch (r.int(22)) {
    case 0: t.add('I flew from '); city(); t.add(' to '); city(); t.add(' ' + r.pick(TIMES) + '.'); break;
    case 1: name(); t.add(' drove from '); city(); t.add(' to '); city(); t.add(' in ' + r.pick(MONTHS) + '.'); break;
    case 2: t.add('The train from '); city(); t.add(' arrives in '); city(); t.add(' at '); num(r.int(12) + 1); t.add(':' + r.pick(['00', '15', '30', '45']) + '.'); break;
    case 3: name(); t.add(' lives in '); city(); t.add(', near the ' + r.pick(PLACES) + '.'); break;
    case 4: t.add('We visited '); city(); t.add(' and '); city(); t.add(' ' + r.pick(TIMES) + '.'); break;
    case 5: t.add('The food was '); if (r.chance(0.6)) { neg('not'); t.add(' '); } t.add(r.pick(ADJS) + (r.chance(0.4) ? ' at all' : '') + '.'); break;
    case 6: name(); t.add(' did '); neg('not'); t.add(' like the '); noun(); t.add('.'); break;
    case 7: t.add('It '); if (r.chance(0.5)) neg("wasn't"); else t.add('was'); t.add(' ' + r.pick(ADJS) + ', and the '); noun(); t.add(' was ' + r.pick(ADJS) + '.'); break;
    case 8: t.add('There is '); neg('no'); t.add(' '); noun(); t.add(' in the ' + r.pick(PLACES) + '.'); break;
    case 9: t.add('I '); neg('never'); t.add(' go to '); city(); t.add(' on ' + r.pick(DAYS) + '.'); break;
    case 10: neg('Nobody'); t.add(' saw the '); noun(); t.add(' near the ' + r.pick(PLACES) + '.'); break;
    case 11: t.add('The '); noun(); t.add(' is '); neg('not'); t.add(' ' + r.pick(ADJS) + ', it is ' + r.pick(ADJS) + '.'); break;
    case 12: name(); t.add(" doesn't"); t.spans.push({ start: t.s.length - 6, end: t.s.length, label: 'negation' }); t.add(' want to leave '); city(); t.add('.'); break;
    case 13: { const a = r.int(50), b = r.int(50); num(a); t.add(' plus '); num(b); t.add(' is '); num(a + b); t.add('.'); break; }
    case 14: t.add('On ' + r.pick(MONTHS) + ' '); num(r.int(28) + 1); t.add(', '); num(1990 + r.int(40)); t.add(', '); name(); t.add(' bought a '); noun(); t.add(' for '); num(r.int(90) + 5); t.add(' dollars.'); break;
    case 15: t.add('The meeting in '); city(); t.add(' starts at '); num(r.int(12) + 1); t.add(' and ends at '); num(r.int(12) + 1); t.add('.'); break;
    case 16: name(); t.add(' met '); name(); t.add(' at the ' + r.pick(PLACES) + ' in '); city(); t.add('.'); break;
    case 17: name(); t.add(' gave the '); noun(); t.add(' to '); name(); t.add('.'); break;
    case 18: t.add('The '); noun(); t.add(' is ' + r.pick(ADJS) + ' and the '); noun(); t.add(' is ' + r.pick(ADJS) + '.'); break;
    case 19: city(); t.add(' is a city in ' + r.pick(COUNTRIES) + '.'); break;
    case 20: t.add('After the trip to '); city(); t.add(', '); name(); t.add(' was ' + r.pick(['tired', 'happy', 'hungry', 'quiet']) + '.'); break;
    default: t.add('The ' + r.pick(ADJS) + ' '); noun(); t.add(' was on the '); noun(); t.add('.'); break;
  }
  return t;
}

function codeSnippet(r) {
  const n = r.int(20) + 1, v = r.pick(VARS), f = r.pick(FNAMES);
  switch (r.int(8)) {
    case 0: return `for ${v} in range(${n}):\n    print(${v})`;
    case 1: return `def ${f}(${v}):\n    return ${v} * ${n}`;
    case 2: return `if ${v} > ${n}:\n    ${v} = ${v} - 1`;
    case 3: return `while ${v} < ${n}:\n    ${v} += 1`;
    case 4: return `const ${v} = [${n}, ${n + 1}, ${n + 2}];`;
    case 5: return `for (let ${v} = 0; ${v} < ${n}; ${v}++) {\n  sum += ${v};\n}`;
    case 6: return `${v} = ${f}(${n})\nprint(${v})`;
    default: return `return ${v} + ${n};`;
  }
}

function codePiece(r) {
  const t = new Text();
  t.add(r.pick(['Try this loop: ', 'Here is the code: ', 'Run this: ', 'The program is: ', `${r.pick(NAMES)} wrote: `, 'Example: ']));
  t.add(codeSnippet(r), 'code');
  if (r.chance(0.5)) t.add(r.pick(['\nIt prints the numbers.', '\nThat is all.', '\nIt works.', '\nThe bug was fixed.']));
  return t;
}

/** One document: a few sentences, sometimes with code. */
export function document(r) {
  const t = new Text();
  const n = 1 + r.int(5);
  let prevCode = false;
  for (let k = 0; k < n; k++) {
    const isCode = r.chance(0.18);
    const p = isCode ? codePiece(r) : sentence(r);
    if (k) t.add(prevCode || isCode ? '\n' : ' ');
    prevCode = isCode;
    const off = t.s.length;
    t.s += p.s;
    for (const sp of p.spans) t.spans.push({ ...sp, start: sp.start + off, end: sp.end + off });
  }
  return t;
}

export function corpus(seed, docs) {
  const r = rng(seed);
  return Array.from({ length: docs }, () => document(r).s);
}

export function probes(seed, count) {
  const r = rng(seed);
  return Array.from({ length: count }, () => { const d = document(r); return { text: d.s, spans: d.spans }; });
}
