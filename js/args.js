// Shape checks for the arguments of the public calls: an options object, token ids, a list. The
// engine checks ranges (a layer that does not exist, a position past the sequence); these only
// make sure a value is of the kind a call reads, so a wrong type ends in E_ARG naming the call and
// the argument, not in a TypeError from deep inside.
import { MlpscopeError } from './errors.js';

/** a value shown in a message: short, and never throwing (BigInt, symbols, huge arrays) */
export function show(v) {
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? v.slice(0, 60) + '…' : v);
  if (typeof v === 'bigint') return `${v}n`;
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name} of ${v.length}`;
  if (v === null || typeof v !== 'object') return String(v);
  if (v.constructor === Object) return 'an object';
  return v.constructor?.name ? `a ${v.constructor.name}` : 'an object without a prototype';
}
const bad = (where, what) => new MlpscopeError('E_ARG', `${where}: ${what}`);
const isList = (v) => Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));

/** an options argument: undefined is {}; anything else must be a plain object */
export function options(v, where) {
  if (v === undefined) return {};
  if (v === null || typeof v !== 'object' || isList(v) || v instanceof Map || v instanceof Set || v instanceof Date || v instanceof RegExp)
    throw bad(where, `the options must be an object, not ${show(v)}`);
  return v;
}
/** token ids: an array or typed array (each id is checked where it is used) */
export function ids(v, where, name = 'ids') {
  if (!isList(v)) throw bad(where, `${name} must be an array of token ids, not ${show(v)}`);
  return v;
}
/** an optional list (undefined stays undefined): an array or typed array */
export function list(v, where, name) {
  if (v === undefined) return undefined;
  if (!isList(v)) throw bad(where, `${name} must be an array, not ${show(v)}`);
  return v;
}
/** an optional list of integers */
export function intList(v, where, name) {
  if (list(v, where, name) === undefined) return undefined;
  for (let i = 0; i < v.length; i++) if (!Number.isInteger(v[i])) throw bad(where, `${name}[${i}] is ${show(v[i])}, not an integer`);
  return v;
}
/** an optional string */
export function str(v, where, name) {
  if (v !== undefined && typeof v !== 'string') throw bad(where, `${name} must be a string, not ${show(v)}`);
  return v;
}
