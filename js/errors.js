// Typed errors: every failure carries a stable `code` (docs/api.md, Error codes) and a message naming the
// file / tensor / field at fault.

/** The codes only the JS side raises, beside the engine's own (engine.info.errors, C's
 * MS_ERROR_LIST): E_ENGINE, the engine's .wasm is missing (there is no engine to ask). js/index.d.ts's
 * ErrorCode is generated from both lists (tools/gen-types.mjs). */
export const HOST_ERROR_CODES = ['E_ENGINE'];

/** @typedef {string} ErrorCode one of engine.info.errors or HOST_ERROR_CODES (js/index.d.ts, ErrorCode) */

export class MlpscopeError extends Error {
  /** @param {ErrorCode} code @param {string} message @param {object} [details] */
  constructor(code, message, details) {
    super(`${code}: ${message}`);
    // an abort is named as the platform names it (DOMException's 'AbortError'), so the usual
    // `err.name === 'AbortError'` check works; the code stays E_ABORTED
    this.name = code === 'E_ABORTED' ? 'AbortError' : 'MlpscopeError';
    /** @type {ErrorCode} */
    this.code = code;
    this.details = details;
  }
}

/** @param {ErrorCode} code @param {string} message @param {object} [details] */
export function fail(code, message, details) {
  throw new MlpscopeError(code, message, details);
}
