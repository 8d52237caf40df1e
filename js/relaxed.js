// Relaxed SIMD: whether this runtime can run the engine's relaxed-SIMD tiles
// (build/wasm/mlpscope-relaxed.wasm, from src/kernels/wasm/gemm_qx4_relaxed.c) and run them right.
// The engine imports the tiles from module "relaxed"; js/wasm.js links them in where this says
// yes, and js/weightset.js then times them against the SIMD128 kernels on the model's own weights.

/** A module of one function computing i32x4.relaxed_dot_i8x16_i7x16_add_s(a, b, c) on constants and
 * returning 1 when all four lanes hold `expect`. `WebAssembly.validate` says whether the runtime
 * has the instruction; calling it, whether its first-tier compiler computes it right (Node 20's
 * Liftoff returns twice the dot product and drops the accumulator). */
function knownAnswerModule(a, b, c, expect) {
  const v128 = (bytes) => [0xfd, 0x0c, ...bytes.map((x) => x & 255)];
  const i32x4 = (lanes) => lanes.flatMap((v) => [v & 255, (v >> 8) & 255, (v >> 16) & 255, (v >>> 24) & 255]);
  const body = [
    0x00, // no locals
    ...v128(a), ...v128(b), ...v128(i32x4(c)),
    0xfd, 0x93, 0x02, // i32x4.relaxed_dot_i8x16_i7x16_add_s
    ...v128(i32x4(expect)),
    0xfd, 0x37, // i32x4.eq
    0xfd, 0xa3, 0x01, // i32x4.all_true
    0x0b,
  ];
  const section = (id, content) => [id, content.length, ...content];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [0x01, 0x60, 0x00, 0x01, 0x7f]), // type: () -> i32
    ...section(3, [0x01, 0x00]), // function 0 of type 0
    ...section(7, [0x01, 0x01, 0x66, 0x00, 0x00]), // export "f"
    ...section(10, [0x01, body.length, ...body]),
  ]);
}

/** What each relaxed kernel level needs of the instruction (kernels.h MS_ISA_RELAXED, _RELAXED_U8),
 * as a known answer: "relaxed" only the specified case (b in 0..127); "relaxedu8" b read as
 * unsigned 8-bit (its top bit set in most lanes here) and the four products of a lane added to c
 * in 32 bits without saturating (x86 with AVX-VNNI does; an engine reading b as signed, as ARM's
 * sdot, or adding pairs in 16 bits with saturation, as x86 without VNNI, does not). */
const CHECKS = {
  relaxed: knownAnswerModule([1, 2, 3, 4, -1, -2, -3, -4, 127, -127, 127, -127, 5, 6, 7, 8], [1, 1, 1, 1, 2, 2, 2, 2, 127, 127, 0, 0, 10, 20, 30, 40],
    [100, 200, 300, 400], [110, 180, 300, 1100]),
  relaxedu8: knownAnswerModule([127, 127, 127, 127, -127, -127, -127, -127, 1, 2, 3, 4, -1, -1, 0, 0], [255, 255, 255, 255, 255, 255, 255, 255, 128, 129, 130, 131, 200, 0, 0, 0],
    [1, 2, 3, 4], [1 + 4 * 127 * 255, 2 - 4 * 127 * 255, 3 + 128 + 258 + 390 + 524, 4 - 200]),
};
/** The kernel level of each (kernels.h MS_ISA_*). */
export const RELAXED_LEVELS = { relaxed: 2, relaxedu8: 3 };

/**
 * Which relaxed kernel levels run right here; `why` says what was found (and, in Node 20, what to do).
 * @returns {{ok: boolean, levels: {relaxed: boolean, relaxedu8: boolean}, why: string}}
 */
export function relaxedSupport() {
  const node = typeof process !== 'undefined' && !!process.versions?.node;
  const levels = { relaxed: false, relaxedu8: false };
  try {
    if (!WebAssembly.validate(CHECKS.relaxed))
      return { ok: false, levels, why: `this runtime has no relaxed SIMD${node ? ' (Node 20: run node with --experimental-wasm-relaxed-simd --no-liftoff)' : ''}` };
    for (const [k, bytes] of Object.entries(CHECKS)) levels[k] = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.f() === 1;
  } catch (err) {
    return { ok: false, levels, why: `relaxed SIMD failed its check here: ${err?.message ?? err}` };
  }
  if (!levels.relaxed) return { ok: false, levels, why: `this runtime computes the relaxed dot product wrongly${node ? ' (Node 20\'s Liftoff does: add --no-liftoff)' : ''}` };
  return { ok: true, levels, why: levels.relaxedu8 ? 'relaxed SIMD with an unsigned-byte dot product (as x86 AVX-VNNI)' : 'relaxed SIMD (its dot product reads signed or saturates: the unsigned-weight kernel is out)' };
}

/** The tiles' export names, which the engine imports from module "relaxed": build.sh checks that the
 *  relaxed module exports each and that the engine imports no other. */
export const RELAXED_TILES = ['q8_0x4_i8a_pn_prefill', 'q8_0x4_i8a_u8_prefill', 'q4_0x4_i8a_prefill', 'q4_0x4_i8a_decode'];

/**
 * The engine's "relaxed" imports: the tiles of `instance` (instantiated over the engine's memory),
 * or, for an engine without them, stand-ins that fail loudly (the engine calls them only at the
 * relaxed kernel levels, which the loader sets only when the tiles are linked and checked).
 * @param {() => (WebAssembly.Instance | null)} instance
 */
export function relaxedImports(instance) {
  const out = {};
  for (const name of RELAXED_TILES) {
    out[name] = (...a) => {
      const i = instance();
      if (!i) throw new Error(`the relaxed-SIMD tile ${name} was called, but this engine did not link the relaxed module`);
      return i.exports[name](...a);
    };
  }
  return out;
}
