// Progress lines for the command line and the benchmarks (Node only: they write to stderr).
import { fmtBytes } from './format.js';

/**
 * A progress line on stderr when it is a terminal (MLPSCOPE_PROGRESS=1 forces it, =0 turns it
 * off): done / total, rate and time left, redrawn at most 10 times a second.
 * @param {string} what @param {{bytes?: boolean, unit?: string}} [o]
 * @returns {((done: number, total: number) => void) | undefined}
 */
export function progressLine(what, { bytes = false, unit = '' } = {}) {
  const env = process.env.MLPSCOPE_PROGRESS;
  if (env === '0' || (env !== '1' && !process.stderr.isTTY)) return undefined;
  const t0 = performance.now();
  let last = -Infinity;
  const amount = (n) => (bytes ? fmtBytes(n) : `${Math.round(n)}${unit}`);
  const clock = (s) => (s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(Math.floor(s) % 60).padStart(2, '0')}s` : `${s.toFixed(0)}s`);
  return (done, total) => {
    const now = performance.now(), end = done >= total;
    if (!end && now - last < 100) return;
    last = now;
    const secs = (now - t0) / 1000, rate = done / Math.max(secs, 1e-3);
    const left = end ? `in ${clock(secs)}` : rate > 0 ? `${clock((total - done) / rate)} left` : '';
    process.stderr.write(`\r${what}: ${amount(done)} / ${amount(total)}, ${bytes ? fmtBytes(rate) + '/s' : rate < 0.1 ? (rate * 60).toFixed(1) + unit + '/min' : rate.toFixed(1) + unit + '/s'}, ${left}\x1b[K${end ? '\n' : ''}`);
  };
}
