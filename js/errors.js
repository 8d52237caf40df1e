// Typed errors: every failure carries a stable `code` (docs/api.md, Error codes) and a message naming the
// file / tensor / field at fault.

/** @typedef {'E_MANIFEST'|'E_SHARD_MISSING'|'E_SHARD_SIZE'|'E_SHARD_HASH'|'E_TENSOR'|'E_CONFIG'|'E_MEMORY'|'E_ABORTED'|'E_NETWORK'|'E_TOKEN'|'E_CONTEXT'|'E_CHECKPOINT'|'E_ARG'|'E_STATE'|'E_ENGINE'} ErrorCode */

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
