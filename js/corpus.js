// A deterministic generator of training text in the spirit of the lesson, in English and in
// Chinese (one language per document, half each): travel between cities, negation, code snippets,
// numbers and dates, names and places, short stories. Word lists and templates are ours. Every
// generated piece can carry labelled spans (city, name, noun, negation, code, number) so probes
// for "what a neuron fires on" come from the same generator, in both languages.
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

// The Chinese half: the usual Chinese names of cities (many of them the English list's), given
// names, nouns and adjectives; negation words 不 / 没 / 没有 / 并非 / 从不 / 没有人.
export const CITIES_ZH = ('巴黎 东京 伦敦 柏林 马德里 罗马 维也纳 布拉格 华沙 布达佩斯 里斯本 都柏林 奥斯陆 斯德哥尔摩 赫尔辛基 ' +
  '哥本哈根 阿姆斯特丹 布鲁塞尔 苏黎世 日内瓦 慕尼黑 汉堡 米兰 那不勒斯 威尼斯 佛罗伦萨 巴塞罗那 塞维利亚 雅典 伊斯坦布尔 开罗 ' +
  '内罗毕 拉各斯 卡萨布兰卡 约翰内斯堡 贝鲁特 德黑兰 迪拜 多哈 卡拉奇 德里 孟买 加尔各答 班加罗尔 加德满都 曼谷 河内 马尼拉 ' +
  '雅加达 新加坡 吉隆坡 首尔 釜山 北京 上海 深圳 广州 成都 武汉 西安 杭州 南京 重庆 天津 苏州 厦门 青岛 大连 哈尔滨 昆明 拉萨 ' +
  '香港 澳门 台北 大阪 京都 名古屋 札幌 悉尼 墨尔本 奥克兰 多伦多 蒙特利尔 温哥华 芝加哥 波士顿 西雅图 纽约 洛杉矶 旧金山 ' +
  '迈阿密 休斯敦 利马 圣地亚哥 波哥大 哈瓦那 墨西哥城 莫斯科 基辅 雷克雅未克 里昂 马赛 爱丁堡 曼彻斯特').split(' ');
const COUNTRIES_ZH = ('法国 日本 英国 德国 西班牙 意大利 奥地利 波兰 匈牙利 葡萄牙 爱尔兰 挪威 瑞典 芬兰 丹麦 希腊 土耳其 埃及 ' +
  '肯尼亚 尼日利亚 加纳 摩洛哥 印度 尼泊尔 泰国 越南 印度尼西亚 韩国 中国 澳大利亚 加拿大 巴西 秘鲁 智利 阿根廷 墨西哥 冰岛').split(' ');
export const NAMES_ZH = ('小明 小红 小刚 小丽 李雷 韩梅梅 王芳 张伟 刘洋 陈静 杨帆 赵磊 黄丽 周杰 吴敏 徐涛 孙悦 胡军 朱琳 高峰 ' +
  '林娜 何平 郭强 马丽 罗斌 梁晨 宋佳 郑凯 谢婷 唐宁 许晴 邓超 冯雪 曹阳 彭程 曾静 田甜 董洁 袁媛 安娜 汤姆 莉莉 艾玛 奥马尔').split(' ');
const NOUNS_ZH = ('书 蛋糕 门 河 花园 窗户 桌子 椅子 灯 歌 信 地图 钥匙 外套 帽子 自行车 船 汽车 火车 票 苹果 面包 汤 咖啡 茶 ' +
  '杯子 盘子 盒子 包 鞋 手机 钟 画 故事 狗 猫 鸟 马 鱼 树 花 石头 桥 路 房子 学校 商店 山 湖 森林 城堡 厨房 瓶子 铅笔 ' +
  '书桌 床 毯子 风筝 球').split(' ');
const PLACES_ZH = '公园 博物馆 车站 图书馆 市场 海滩 咖啡馆 酒店 机场 港口 花园 学校 办公室 面包店 剧院'.split(' ');
const ADJS_ZH = '好 坏 大 小 暖和 冷 开心 难过 安静 吵 亮 暗 旧 新 快 慢 友好 奇怪 容易 难 甜 苦 干净 脏'.split(' ');
const TIMES_ZH = ['上周', '上个月', '去年', '昨天', '星期一', '星期五', '早上', '晚上', '两天前', '去年夏天'];
const DAYS_ZH = '星期一 星期二 星期三 星期四 星期五 星期六 星期天'.split(' ');

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

/** a new piece of text and the labelled word makers for one language's lists */
function writer(r, lists) {
  const t = new Text();
  return {
    t, city: () => t.add(r.pick(lists.cities), 'city'), name: () => t.add(r.pick(lists.names), 'name'),
    noun: () => t.add(r.pick(lists.nouns), 'noun'), num: (n) => t.add(String(n), 'number'), neg: (w) => t.add(w, 'negation'),
  };
}

function sentence(r) {
  const { t, city, name, noun, num, neg } = writer(r, { cities: CITIES, names: NAMES, nouns: NOUNS });
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

function sentenceZh(r) {
  const { t, city, name, noun, num, neg } = writer(r, { cities: CITIES_ZH, names: NAMES_ZH, nouns: NOUNS_ZH });
  switch (r.int(22)) {
    case 0: t.add('我' + r.pick(TIMES_ZH) + '从'); city(); t.add('飞到'); city(); t.add('。'); break;
    case 1: name(); t.add(`${r.int(12) + 1}月开车从`); city(); t.add('去'); city(); t.add('。'); break;
    case 2: t.add('从'); city(); t.add('开往'); city(); t.add('的火车'); num(r.int(12) + 1); t.add('点' + r.pick(['整', '十五分', '半', '四十五分']) + '到站。'); break;
    case 3: name(); t.add('住在'); city(); t.add('，在' + r.pick(PLACES_ZH) + '附近。'); break;
    case 4: t.add('我们' + r.pick(TIMES_ZH) + '去了'); city(); t.add('和'); city(); t.add('。'); break;
    case 5: t.add('饭菜'); if (r.chance(0.6)) { if (r.chance(0.4)) t.add('一点也'); neg('不'); } else t.add('很'); t.add(r.pick(ADJS_ZH) + '。'); break;
    case 6: name(); neg('不'); t.add('喜欢这个'); noun(); t.add('。'); break;
    case 7: t.add('那天'); if (r.chance(0.5)) neg('并不'); else t.add('很'); t.add(r.pick(ADJS_ZH) + '，那个'); noun(); t.add('也很' + r.pick(ADJS_ZH) + '。'); break;
    case 8: t.add(r.pick(PLACES_ZH) + '里'); neg('没有'); noun(); t.add('。'); break;
    case 9: t.add('我'); neg('从不'); t.add('在' + r.pick(DAYS_ZH) + '去'); city(); t.add('。'); break;
    case 10: neg('没有人'); t.add('在' + r.pick(PLACES_ZH) + '附近看见那个'); noun(); t.add('。'); break;
    case 11: t.add('这个'); noun(); neg('并非'); t.add(r.pick(ADJS_ZH) + '，而是' + r.pick(ADJS_ZH) + '。'); break;
    case 12: name(); neg('不'); t.add('想离开'); city(); t.add('。'); break;
    case 13: { const a = r.int(50), b = r.int(50); num(a); t.add('加'); num(b); t.add('等于'); num(a + b); t.add('。'); break; }
    case 14: num(1990 + r.int(40)); t.add('年'); num(r.int(12) + 1); t.add('月'); num(r.int(28) + 1); t.add('日，'); name(); t.add('花'); num(r.int(90) + 5); t.add('元买了一个'); noun(); t.add('。'); break;
    case 15: city(); t.add('的会议'); num(r.int(12) + 1); t.add('点开始，'); num(r.int(12) + 1); t.add('点结束。'); break;
    case 16: name(); t.add('在'); city(); t.add('的' + r.pick(PLACES_ZH) + '遇见了'); name(); t.add('。'); break;
    case 17: name(); t.add('把'); noun(); t.add('送给了'); name(); t.add('。'); break;
    case 18: noun(); t.add('很' + r.pick(ADJS_ZH) + '，'); noun(); t.add('也很' + r.pick(ADJS_ZH) + '。'); break;
    case 19: city(); t.add('是' + r.pick(COUNTRIES_ZH) + '的一座城市。'); break;
    case 20: t.add('去'); city(); t.add('旅行之后，'); name(); t.add('很' + r.pick(['累', '开心', '饿', '安静']) + '。'); break;
    default: name(); neg('没'); t.add('去'); city(); t.add('，因为');
      if (r.chance(0.4)) { neg('没有'); t.add('票。'); } else t.add(r.pick(['下雨了。', '太累了。'])); break;
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

function codePiece(r, zh) {
  const t = new Text();
  if (zh) t.add(r.pick(['试试这个循环：', '代码如下：', '运行这段：', '程序是：', `${r.pick(NAMES_ZH)}写道：`, '例如：']));
  else t.add(r.pick(['Try this loop: ', 'Here is the code: ', 'Run this: ', 'The program is: ', `${r.pick(NAMES)} wrote: `, 'Example: ']));
  t.add(codeSnippet(r), 'code');
  if (r.chance(0.5)) {
    t.add(zh ? r.pick(['\n它会打印这些数字。', '\n就这些。', '\n它能运行。', '\n错误已经修好了。'])
      : r.pick(['\nIt prints the numbers.', '\nThat is all.', '\nIt works.', '\nThe bug was fixed.']));
  }
  return t;
}

/**
 * One document: a few sentences, sometimes with code; English or Chinese (half each) unless
 * `lang` ('en' | 'zh') says which.
 */
export function document(r, lang) {
  const t = new Text();
  const zh = lang ? lang === 'zh' : r.chance(0.5);
  const n = 1 + r.int(5);
  let prevCode = false;
  for (let k = 0; k < n; k++) {
    const isCode = r.chance(0.18);
    const p = isCode ? codePiece(r, zh) : zh ? sentenceZh(r) : sentence(r);
    if (k) t.add(prevCode || isCode ? '\n' : zh ? '' : ' ');
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

/**
 * Labelled documents ({text, spans}) for feature search: both languages, or only `lang`
 * ('en' | 'zh'); each carries its language as `lang`.
 */
export function probes(seed, count, lang) {
  const r = rng(seed);
  return Array.from({ length: count }, () => {
    const d = document(r, lang);
    return { text: d.s, spans: d.spans, lang: /[\u4e00-\u9fff]/.test(d.s) ? 'zh' : 'en' };
  });
}
