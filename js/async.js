// Waiting, retrying and running jobs a few at a time, with an AbortSignal: the helpers every
// loading path shares (js/weightset.js, js/hub.js, js/loader.js).
import { MlpscopeError } from './errors.js';

/** Resolves after `ms`, or rejects with E_ABORTED as soon as `signal` aborts. */
export const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const onAbort = () => { clearTimeout(t); reject(new MlpscopeError('E_ABORTED', 'aborted while waiting to retry')); };
  const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
  signal?.addEventListener('abort', onAbort, { once: true });
});

/**
 * Runs fn, retrying transient failures (errors marked `retryable`: E_NETWORK from 5xx / transport
 * errors) up to `retries` times, waiting delayMs, 2 delayMs, 4 delayMs, ... between attempts.
 * @template T @param {() => Promise<T>} fn @param {number} retries @param {number} delayMs @param {AbortSignal} [signal]
 * @returns {Promise<T>}
 */
export async function withRetry(fn, retries, delayMs, signal) {
  for (let attempt = 0; ; attempt++) {
    try { return await fn(); } catch (err) {
      if (!err?.retryable || attempt >= retries) throw err;
      await sleep(delayMs * 2 ** attempt, signal);
    }
  }
}

/**
 * Runs `job(k, signal)` for k = 0..n-1, `parallel` at a time. The jobs share one signal that
 * aborts when the caller's `signal` does or at the first failure: then the others take no new work,
 * all are waited for (none may write into freed memory afterwards), and the first failure is thrown
 * (an abort of the caller's `signal` as E_ABORTED naming `name`).
 * @param {number} n @param {number} parallel @param {AbortSignal | undefined} signal @param {string} name
 * @param {(k: number, signal: AbortSignal) => Promise<void>} job
 */
export async function eachConcurrently(n, parallel, signal, name, job) {
  const inner = new AbortController();
  const onAbort = () => inner.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) inner.abort();
  let next = 0, failed = null;
  const worker = async () => {
    while (next < n && !failed) {
      const k = next++;
      try { await job(k, inner.signal); } catch (err) {
        if (!failed) { failed = signal?.aborted ? new MlpscopeError('E_ABORTED', `loading ${name} was aborted`) : err; inner.abort(); }
        throw err;
      }
    }
  };
  try {
    const results = await Promise.allSettled(Array.from({ length: Math.min(parallel, n) }, worker));
    if (failed) throw failed;
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  } finally { signal?.removeEventListener('abort', onAbort); }
}
