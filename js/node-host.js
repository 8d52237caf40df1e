// File I/O for the converter when it runs in wasm under Node (the engine calls these imports).
import fs from 'node:fs';
import path from 'node:path';

/** @param {string} outDir @param {(done: number, total: number) => void} [progress] the converter's progress, in source bytes */
export function nodeHost(outDir, progress) {
  const files = new Map();
  let next = 1;
  return {
    open(name, mode) {
      try {
        const fd = fs.openSync(mode === 'w' ? path.join(outDir, name) : name, mode === 'w' ? 'w' : 'r');
        files.set(next, fd);
        return next++;
      } catch { return -1; }
    },
    close(h) { const fd = files.get(h); if (fd === undefined) return -1; fs.closeSync(fd); files.delete(h); return 0; },
    size(h) { try { return fs.fstatSync(files.get(h)).size; } catch { return -1; } },
    read(h, off, view) {
      let done = 0;
      while (done < view.length) {
        const n = fs.readSync(files.get(h), view, done, view.length - done, off + done);
        if (n <= 0) return -1;
        done += n;
      }
      return 0;
    },
    write(h, view) {
      let done = 0;
      while (done < view.length) done += fs.writeSync(files.get(h), view, done, view.length - done);
      return 0;
    },
    log(line) { process.stderr.write(line + '\n'); },
    progress(done, total) { progress?.(done, total); },
    closeAll() { for (const fd of files.values()) fs.closeSync(fd); files.clear(); },
  };
}
