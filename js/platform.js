// Where the package runs: Node or a browser. Node's built-in modules are imported by a name held in
// a variable, so a browser bundle (esbuild, Vite, webpack) neither resolves nor includes them;
// Node imports them as usual.

export const isNode = typeof process !== 'undefined' && !!process.versions?.node;

/** import('node:…') out of a bundler's sight */
export function nodeImport(name) {
  return import(/* webpackIgnore: true */ /* @vite-ignore */ name);
}
