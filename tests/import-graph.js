// The import graph of the source tree, for tests/layering.test.js: C units (a .c file and its .h
// are one unit; `#include "..."` arrows, resolved from the including file, then from src/) and ES
// modules (`import … from`, `export … from`, `import(…)`, JSDoc `import('…')` types included, since
// they tie two modules together as much as an import does). A circle is a strongly connected group
// of more than one unit.
import fs from 'node:fs';
import path from 'node:path';

const walk = (d) => (fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true })
  .flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)])) : []);

/**
 * The arrows between the units under `root`'s folders `dirs` (paths relative to root).
 * @param {string} root @param {string[]} dirs @returns {Map<string, Set<string>>}
 */
export function importGraph(root, dirs) {
  const edges = new Map();
  const add = (a, b) => { if (a === b) return; if (!edges.has(a)) edges.set(a, new Set()); edges.get(a).add(b); };
  const unit = (f) => path.relative(root, f).split(path.sep).join('/').replace(/\.(c|h)$/, '');
  for (const dir of dirs) {
    for (const f of walk(path.join(root, dir))) {
      if (/\.(c|h)$/.test(f)) {
        for (const m of fs.readFileSync(f, 'utf8').matchAll(/^\s*#\s*include\s+"([^"]+)"/gm)) {
          const to = [path.resolve(path.dirname(f), m[1]), path.resolve(root, 'src', m[1])].find((c) => fs.existsSync(c));
          if (to) add(unit(f), unit(to));
        }
      } else if (/\.m?js$/.test(f)) {
        const text = fs.readFileSync(f, 'utf8');
        for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
          const to = path.resolve(path.dirname(f), m[1] ?? m[2]);
          if (fs.existsSync(to)) add(unit(f), unit(to));
        }
      }
    }
  }
  return edges;
}

/** The circles of a graph (Tarjan's strongly connected components with more than one unit), each sorted. */
export function circles(edges) {
  let idx = 0;
  const stack = [], on = new Set(), num = new Map(), low = new Map(), out = [];
  const nodes = new Set([...edges.keys(), ...[...edges.values()].flatMap((s) => [...s])]);
  const strong = (v) => {
    num.set(v, idx); low.set(v, idx); idx++; stack.push(v); on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!num.has(w)) { strong(w); low.set(v, Math.min(low.get(v), low.get(w))); } else if (on.has(w)) low.set(v, Math.min(low.get(v), num.get(w)));
    }
    if (low.get(v) === num.get(v)) {
      const c = [];
      let w;
      do { w = stack.pop(); on.delete(w); c.push(w); } while (w !== v);
      if (c.length > 1) out.push(c.sort());
    }
  };
  for (const v of [...nodes].sort()) if (!num.has(v)) strong(v);
  return out;
}

/** Arrows between two units of the same folder `prefix` (e.g. 'web/sections/'), as 'a -> b'. */
export function siblingImports(edges, prefix) {
  return [...edges].filter(([a]) => a.startsWith(prefix))
    .flatMap(([a, bs]) => [...bs].filter((b) => b.startsWith(prefix)).map((b) => `${a} -> ${b}`));
}
