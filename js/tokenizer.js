// The tokenizer of a weight set, running in the engine (C): encode, decode, token strings, chat
// templates, and a streaming decoder that never emits half a UTF-8 character.
import { MlpscopeError } from './errors.js';
import { createEngine } from './wasm.js';
import { openSource } from './source.js';

const textEncoder = new TextEncoder();

export class Tokenizer {
  /** @param {import('./wasm.js').Engine} engine @param {number} ptr @param {{kind:string, eosIds:number[], vocabSize?:number}} info */
  constructor(engine, ptr, info) {
    this.e = engine;
    this.ptr = ptr;
    this.kind = info.kind;
    this.bosId = engine.c.tok_bos(ptr);
    this.eosIds = info.eosIds ?? [];
    this.vocabSize = engine.c.tok_vocab(ptr);
    // the template the engine renders itself (ChatML, Qwen3, Qwen3.5), 'none' if it knows none
    this._fastChat = engine.info.chat_kinds[engine.c.tok_chat_kind(ptr)];
    /** the weight set's own template and its token strings ({template, bos_token, eos_token}), or null */
    this.chat = info.chat?.template ? info.chat : null;
    this._jinja = null;
    this._jinjaError = null;
    /** who renders chat messages: 'jinja' (the model's own template), a kind the engine renders
     *  itself ('chatml', 'qwen3', 'qwen3.5'), or 'none' (no template: chat messages are refused) */
    this.chatTemplate = this._fastChat;
    this._scratch = engine.malloc(16);
  }

  /**
   * Prepares the model's own chat template with @huggingface/jinja (an optional dependency, loaded
   * only here): given as `jinja` (the module, for bundles and browsers), else imported by name.
   * Without it, the engine's fast path renders the templates it knows; any other template makes
   * applyChatTemplate() throw instead of guessing.
   * @param {{Template: any} | null | undefined} jinja
   */
  async prepareChat(jinja) {
    if (!this.chat) return this;
    let mod = jinja;
    if (mod === undefined) {
      const name = '@huggingface/jinja'; // not a literal: bundlers leave the optional module out
      mod = await import(/* webpackIgnore: true */ /* @vite-ignore */ name).catch(() => null);
    }
    if (!mod?.Template) {
      this._jinjaError = mod === null && jinja === null ? 'the template renderer was switched off (jinja: null)'
        : '@huggingface/jinja is not installed (npm install @huggingface/jinja) nor given as loadModel(…, {jinja})';
      return this;
    }
    try {
      this._jinja = new mod.Template(this.chat.template);
      this._jinjaModule = mod;
      this.chatTemplate = 'jinja';
    } catch (err) { this._jinjaError = `the template does not parse (${err.message})`; }
    return this;
  }

  /** @param {string} kind 'llama2c' | 'bpe-bytelevel' @param {Uint8Array} bytes */
  static load(engine, kind, bytes, info) {
    const ptr = engine.c.tok_load(kind, bytes, info.vocabSize ?? 0);
    return new Tokenizer(engine, ptr, { kind, ...info });
  }

  _alive() { if (!this.ptr) throw new MlpscopeError('E_STATE', 'the tokenizer was disposed'); }

  /**
   * @param {string} text
   * @param {{addSpecial?: boolean}} [opts] addSpecial: prepend BOS when the tokenizer uses one
   *   (special tokens written in the text, like <|im_start|>, are always recognised)
   * @returns {number[]}
   */
  encode(text, { addSpecial = true } = {}) {
    this._alive();
    if (typeof text !== 'string') throw new MlpscopeError('E_ARG', 'encode() takes a string');
    if (/(?:[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF])/.test(text))
      throw new MlpscopeError('E_TOKEN', 'text contains an unpaired surrogate (not valid Unicode)');
    const e = this.e;
    const bytes = textEncoder.encode(text);
    const cap = e.c.tok_max_ids(bytes.length);
    const ip = e.malloc(cap * 4);
    try {
      const n = e.c.tok_encode(this.ptr, bytes, addSpecial ? 1 : 0, ip, cap);
      return Array.from(e.i32.subarray(ip >> 2, (ip >> 2) + n));
    } finally { e.free(ip); }
  }

  /**
   * The pieces the pre-tokenizer cuts text into before BPE (after NFC). Special tokens are not
   * separated here. Tokenizers without a pre-tokenizer (llama2c) return the whole text; those on
   * the general pipeline (docs/format.md) show their pre-tokenizers' cuts alone (no normalizer;
   * text a Split removes joins the next piece).
   * @param {string} text @returns {string[]}
   */
  pretokenize(text) {
    this._alive();
    const e = this.e;
    const nfc = String(text).normalize('NFC');
    const [tp, len] = e.str(nfc);
    const ep = e.malloc(4 * (len + 1));
    try {
      const n = e.c.tok_pretokenize(this.ptr, tp, len, ep, len + 1);
      const bytes = e.u8.slice(tp, tp + len), td = new TextDecoder('utf-8', { ignoreBOM: true });
      const out = [];
      let start = 0;
      for (let k = 0; k < n; k++) { const end = e.i32[(ep >> 2) + k]; out.push(td.decode(bytes.subarray(start, end))); start = end; }
      return out;
    } finally { e.free(tp); e.free(ep); }
  }

  /** Bytes a token contributes after `prev`. */
  pieceBytes(prev, id) {
    const e = this.e;
    const out = this._scratch, buf = this._scratch + 4;
    const n = e.c.tok_piece(this.ptr, prev, id, out, buf);
    const p = e.i32[out >> 2] >>> 0;
    return e.u8.slice(p, p + n);
  }

  /**
   * How each token of `ids` reads, in one call: the characters its bytes belong to. A character
   * whose UTF-8 bytes are split over several tokens (byte-level BPE does this to most CJK
   * characters in a small vocabulary) is shown whole on each of them, with `part` / `of` saying
   * which share of it the token holds (part > 1: the token's first character began in an earlier
   * token, so dropping it from every such token gives the text back once); bytes that never complete a character are shown as
   * \xNN escapes. No piece is ever "\uFFFD" unless the text itself holds one.
   * @param {ArrayLike<number>} ids
   * @returns {{text: string, part?: number, of?: number}[]}
   */
  pieces(ids) {
    this._alive();
    const chunks = [];
    let prev = -1, total = 0;
    for (const id of ids) { const b = this.pieceBytes(prev, id); prev = id; chunks.push(b); total += b.length; }
    const all = new Uint8Array(total), owner = new Int32Array(total);
    let at = 0;
    chunks.forEach((b, t) => { all.set(b, at); owner.fill(t, at, at + b.length); at += b.length; });
    const out = chunks.map(() => ({ text: '' }));
    const hex = (x) => '\\x' + x.toString(16).toUpperCase().padStart(2, '0');
    for (let i = 0; i < total;) {
      const len = utf8Length(all, i);
      if (!len) { out[owner[i]].text += hex(all[i]); i++; continue; } // a byte that starts no valid character
      const ch = new TextDecoder('utf-8', { ignoreBOM: true }).decode(all.subarray(i, i + len)), first = owner[i], last = owner[i + len - 1];
      for (let t = first; t <= last; t++) {
        out[t].text += ch;
        // part/of: the token's first character when it began in an earlier token (part > 1),
        // else the split character that starts in this token (part 1)
        if (first !== last && (t !== first || !(out[t].part > 1))) { out[t].part = t - first + 1; out[t].of = last - first + 1; }
      }
      i += len;
    }
    return out;
  }

  /**
   * Each id as readable text, for a list of candidate tokens in one call: on its own (what
   * `pieces([id])[0].text` gives: a lone byte of a character as \xNN, never "\uFFFD"), or with
   * `after`, as it reads after those tokens: a character the context began and this token
   * finishes is shown whole, marked with its share, e.g. "但 (2/2)".
   * @param {ArrayLike<number>} ids @param {{after?: ArrayLike<number>}} [opts] @returns {string[]}
   */
  tokenTexts(ids, { after } = {}) {
    // a character is at most 4 bytes, so the last 4 tokens of the context are all it can need
    const ctx = after ? Array.from(after).slice(-4) : [];
    return Array.from(ids, (id) => {
      const p = this.pieces([...ctx, id]).at(-1);
      return p.part > 1 ? `${p.text} (${p.part}/${p.of})` : p.text;
    });
  }

  /** @param {ArrayLike<number>} ids @returns {string} */
  decode(ids) {
    const d = this.decoder();
    let s = '';
    for (const id of ids) s += d.push(id);
    return s + d.flush();
  }

  /** The token's string as the tokenizer file spells it (byte-level form for BPE, e.g. "Ġthe"). */
  idToToken(id) {
    this._alive();
    if (!(Number.isInteger(id) && id >= 0 && id < this.vocabSize)) return undefined;
    return this.e.c.tok_token_string(this.ptr, id);
  }

  /** Inverse of idToToken; undefined if the string is not a token. */
  tokenToId(token) {
    this._alive();
    const id = this.e.c.tok_token_id(this.ptr, String(token));
    return id >= 0 ? id : undefined;
  }

  /**
   * Renders messages with the model's chat template: the template itself through
   * @huggingface/jinja when it is there (`chatTemplate === 'jinja'`), else the engine's own
   * rendering of the kinds it knows (ChatML; Qwen3 and Qwen3.5 with their thinking switch:
   * Qwen3.5-0.8B's default pre-fills an empty think block). A template neither can render, or a
   * weight set without one, is an E_TOKEN error, never a guessed prompt.
   * @param {{role: string, content: string}[]} messages
   * @param {{addGenerationPrompt?: boolean, enableThinking?: boolean}} [opts]
   */
  applyChatTemplate(messages, { addGenerationPrompt = true, enableThinking } = {}) {
    this._alive();
    const e = this.e;
    if (!Array.isArray(messages)) throw new MlpscopeError('E_ARG', 'messages must be an array of {role, content}');
    messages.forEach((m, i) => {
      if (typeof m?.role !== 'string' || typeof m?.content !== 'string') throw new MlpscopeError('E_ARG', `messages[${i}]: needs string role and content`);
    });
    if (this._jinja) {
      const vars = { messages, add_generation_prompt: !!addGenerationPrompt, bos_token: this.chat.bos_token ?? '', eos_token: this.chat.eos_token ?? '' };
      if (enableThinking !== undefined) vars.enable_thinking = !!enableThinking;
      try { return renderBounded(this._jinjaModule, this._jinja, vars); } catch (err) { throw new MlpscopeError('E_TOKEN', `chat template: ${err.message}`); }
    }
    if (this._fastChat === 'none') {
      throw new MlpscopeError('E_TOKEN', this.chat
        ? `this model's chat template is not one the engine renders itself, and ${this._jinjaError ?? 'it was not prepared'}: it cannot be rendered (pass text instead of messages, or install the renderer)`
        : 'this weight set has no chat template (a base model, not a chat model): pass text instead of messages');
    }
    const lp = e.malloc(8);
    try {
      const p = e.c.tok_chat(this.ptr, JSON.stringify(messages), addGenerationPrompt ? 1 : 0, enableThinking === undefined ? -1 : enableThinking ? 1 : 0, lp);
      const s = new TextDecoder('utf-8', { ignoreBOM: true }).decode(e.u8.slice(p, p + e.i32[lp >> 2]));
      e.free(p);
      return s;
    } finally { e.free(lp); }
  }

  /** Streaming decoder: push ids one by one; never emits half a UTF-8 character. */
  decoder() {
    const td = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
    let prev = -1;
    return {
      push: (id) => { const b = this.pieceBytes(prev, id); prev = id; return td.decode(b, { stream: true }); },
      flush: () => td.decode(),
    };
  }

  [Symbol.dispose ?? Symbol.for('Symbol.dispose')]() { this.dispose(); }

  dispose() {
    if (this.ptr) { this.e.c.tok_free(this.ptr); this.e.free(this._scratch); this.ptr = 0; }
  }
}

/** The byte length of the valid UTF-8 character starting at b[i], or 0 when none starts there. */
function utf8Length(b, i) {
  const c = b[i];
  const n = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
  if (!n || i + n > b.length) return 0;
  for (let k = 1; k < n; k++) if ((b[i + k] & 0xc0) !== 0x80) return 0;
  const second = b[i + 1];
  if ((c === 0xe0 && second < 0xa0) || (c === 0xed && second >= 0xa0) || (c === 0xf0 && second < 0x90) || (c === 0xf4 && second >= 0x90)) return 0;
  return n;
}

/**
 * Loads only a tokenizer: from a weight set (its manifest's tokenizer) or from a bare Hugging
 * Face folder with tokenizer.json (+ tokenizer_config.json, chat_template.jinja), converted in memory.
 * @param {string|URL} source
 * @param {{engine?: import('./wasm.js').Engine, jinja?: {Template: any} | null}} [opts] jinja: the
 *   @huggingface/jinja module for the model's own chat template (imported by name when not given;
 *   null: do not use it)
 */
export async function loadTokenizer(source, { engine, jinja } = {}) {
  const src = await openSource(source);
  const e = engine ?? await createEngine();
  let manifestText = null;
  try { manifestText = await src.text('manifest.json'); } catch (err) { if (err.code !== 'E_MANIFEST') throw err; }
  if (manifestText !== null) {
    // the engine reads the manifest (as for a model, without allocating one)
    const m = e.c.model_create(manifestText, 0, 0);
    const t = e.c.model_info(m).tokenizer;
    e.c.model_destroy(m);
    if (!t.kind || t.kind === 'none') throw new MlpscopeError('E_TOKEN', `${src.name}: the weight set has no tokenizer`);
    const bytes = await src.bytes(t.file);
    return Tokenizer.load(e, t.kind, bytes, { vocabSize: t.vocab_size, eosIds: t.eos_token_ids, chat: t.chat }).prepareChat(jinja);
  }
  let tj;
  try { tj = await src.bytes('tokenizer.json'); } catch { throw new MlpscopeError('E_TOKEN', `${src.name}: neither manifest.json nor tokenizer.json found`); }
  let cj = new Uint8Array(0);
  try { cj = await src.bytes('tokenizer_config.json'); } catch { /* optional */ }
  const lp = e.malloc(8);
  try {
    const p = e.c.tok_import(tj, cj, lp);
    const bytes = e.u8.slice(p, p + e.i32[lp >> 2]);
    e.free(p);
    let eos = [];
    try {
      const g = JSON.parse(await src.text('generation_config.json'));
      eos = [].concat(g.eos_token_id ?? []);
    } catch { /* optional */ }
    return Tokenizer.load(e, 'bpe-bytelevel', bytes, { eosIds: eos, chat: await chatOfFolder(e, src, cj) }).prepareChat(jinja);
  } finally { e.free(lp); }
}

/** A Hugging Face folder's chat template ({template, bos_token, eos_token} or null), as the
 * converter keeps it (the engine reads the files: ms_tok_chat_info). */
async function chatOfFolder(e, src, configBytes) {
  let template = new Uint8Array(0);
  try { template = await src.bytes('chat_template.jinja'); } catch { /* older checkpoints keep it in tokenizer_config.json */ }
  return JSON.parse(e.c.tok_chat_info(configBytes, template));
}

/**
 * How much work a chat template may do: a template is code from the model's repository, and one
 * that loops for ever, or renders gigabytes, must end in an error instead of freezing the page or
 * the worker. Counted in template-node evaluations (a real chat template on a long conversation
 * takes tens of thousands) and in characters of any value it makes; `range()` is capped likewise.
 */
export const CHAT_TEMPLATE_LIMITS = Object.freeze({ steps: 2_000_000, chars: 4 << 20, range: 100_000 });

/**
 * Renders with @huggingface/jinja inside those limits: its interpreter's evaluate() is wrapped for
 * the length of this (synchronous) call, counting every node, checking the size of what it returns,
 * and checking the arguments of every range() call before it runs; so is renderBlock(). A renderer without that
 * interpreter (another module passed as `jinja`) runs as it is.
 */
function renderBounded(mod, template, vars, limits = CHAT_TEMPLATE_LIMITS) {
  const proto = mod?.Interpreter?.prototype;
  if (!proto || typeof proto.evaluate !== 'function') return template.render(vars);
  const evaluate = proto.evaluate;
  let steps = 0;
  proto.evaluate = function bounded(node, env) {
    if (++steps > limits.steps) throw new Error(`stopped after ${limits.steps} steps: the template loops far longer than a chat prompt needs`);
    if (node?.type === 'CallExpression' && node.callee?.type === 'Identifier' && node.callee.value === 'range') {
      const a = node.args.map((x) => evaluate.call(this, x, env).value);
      const [start, stop, step = 1] = a.length === 1 ? [0, a[0]] : a;
      const n = Number.isFinite(start) && Number.isFinite(stop) && Number.isFinite(step) && step ? Math.ceil((stop - start) / step) : 0;
      if (n > limits.range) throw new Error(`range() of ${n} numbers: more than the ${limits.range} a chat template may make`);
    }
    const v = evaluate.call(this, node, env);
    if (typeof v?.value === 'string' && v.value.length > limits.chars) throw new Error(`a value grew past ${limits.chars} characters: far longer than a chat prompt`);
    return v;
  };
  // the library renders blocks (literal text, if, for, set) without evaluate(): counted here too,
  // one step per statement of each pass through a block
  const renderBlock = proto.renderBlock;
  if (typeof renderBlock === 'function') proto.renderBlock = function boundedBlock(statements, env) {
    steps += Math.max(1, statements?.length ?? 0);
    if (steps > limits.steps) throw new Error(`stopped after ${limits.steps} steps: the template loops far longer than a chat prompt needs`);
    const out = renderBlock.call(this, statements, env);
    if (typeof out === 'string' && out.length > limits.chars) throw new Error(`its text grew past ${limits.chars} characters: far longer than a chat prompt`);
    return out;
  };
  try { return template.render(vars); } finally { proto.evaluate = evaluate; if (renderBlock) proto.renderBlock = renderBlock; }
}
