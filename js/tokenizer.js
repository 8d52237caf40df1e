// The tokenizer of a weight set, running in the engine (C), with streaming decode.
import { MlpscopeError } from './errors.js';

export class Tokenizer {
  /** @param {import('./wasm.js').Engine} engine @param {number} ptr @param {{kind:string, bosId:number, eosIds:number[], vocabSize:number}} info */
  constructor(engine, ptr, info) {
    this.e = engine;
    this.ptr = ptr;
    this.kind = info.kind;
    this.bosId = info.bosId;
    this.eosIds = info.eosIds;
    this.vocabSize = info.vocabSize;
    this._scratch = engine.malloc(16);
  }

  static load(engine, kind, bytes, info) {
    const [kp] = engine.str(kind);
    const dp = engine.bytes(bytes);
    const ptr = engine.x.ms_tok_load(kp, dp, bytes.length, info.vocabSize, engine.err) >>> 0;
    engine.free(kp);
    engine.free(dp);
    engine.check(ptr);
    return new Tokenizer(engine, ptr, { kind, ...info });
  }

  /** @param {string} text @param {{addSpecial?: boolean}} [opts] @returns {number[]} */
  encode(text, { addSpecial = true } = {}) {
    if (typeof text !== 'string') throw new MlpscopeError('E_ARG', 'encode() takes a string');
    if (/[\uD800-\uDFFF]/.test(text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, '')))
      throw new MlpscopeError('E_TOKEN', 'text contains an unpaired surrogate (not valid Unicode)');
    const e = this.e;
    const [tp, len] = e.str(text);
    const cap = len + 3;
    const ip = e.malloc(cap * 4);
    try {
      const n = e.x.ms_tok_encode(this.ptr, tp, len, addSpecial ? 1 : 0, ip, cap, e.err);
      e.check(n >= 0);
      return Array.from(e.i32.subarray(ip >> 2, (ip >> 2) + n));
    } finally { e.free(tp); e.free(ip); }
  }

  /** Bytes a token contributes after `prev`. */
  pieceBytes(prev, id) {
    const e = this.e;
    const out = this._scratch, buf = this._scratch + 4;
    const n = e.x.ms_tok_piece(this.ptr, prev, id, out, buf);
    const p = e.i32[out >> 2] >>> 0;
    return e.u8.slice(p, p + n);
  }

  /** @param {ArrayLike<number>} ids @returns {string} */
  decode(ids) {
    const d = this.decoder();
    let s = '';
    for (const id of ids) s += d.push(id);
    return s + d.flush();
  }

  /** The raw piece of a token as text (bytes that are not UTF-8 show as U+FFFD). */
  idToToken(id) {
    if (!(id >= 0 && id < this.vocabSize)) return undefined;
    return new TextDecoder().decode(this.pieceBytes(-1, id));
  }

  /** Streaming decoder: push ids one by one; never emits half a UTF-8 character. */
  decoder() {
    const td = new TextDecoder('utf-8', { fatal: false });
    let prev = -1;
    return {
      push: (id) => { const b = this.pieceBytes(prev, id); prev = id; return td.decode(b, { stream: true }); },
      flush: () => td.decode(),
    };
  }

  dispose() {
    if (this.ptr) { this.e.x.ms_tok_free(this.ptr); this.e.free(this._scratch); this.ptr = 0; }
  }
}
