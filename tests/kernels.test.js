// Every SIMD128 kernel against its scalar twin, on shapes derived from each kernel's edges (the
// gemm table) and on hand-picked awkward shapes (1 row, odd rows, column tails,
// T not a multiple of the 4-token tile), both against a float64 product of the weights as
// dequantized by the independent reference reader, and the quantization error within its bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../js/index.js';
import { dequant } from './reference/reference.js';
import { edgeShapes } from './kernel-shapes.js';

// MLPSCOPE_TEST_RELAXED=1 (tests/relaxed.test.js runs this file so, in a Node started with relaxed
// SIMD on): the relaxed-SIMD kernels this runtime runs right join the harness below
const e = await createEngine({ build: 'test', relaxedSimd: process.env.MLPSCOPE_TEST_RELAXED ? true : 'auto' });
const DT = { f32: 0, f16: 1, bf16: 2, q8_0: 3, q4_0: 4 };
const SHAPES = [[1, 32, 1], [1, 7, 3], [3, 33, 5], [5, 64, 4], [7, 96, 9], [17, 160, 2], [64, 1024, 7], [2, 3, 1]];

function rand(n, seed) {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; return ((s >>> 0) / 2 ** 32) * 2 - 1; });
}

function matmul(dtype, simd, Wq, rows, cols, X, T) {
  const y = e.malloc(rows * T * 4);
  e.c.dbg_matmul(dtype, simd, Wq, rows, cols, X, T, y);
  const out = e.f32.slice(y >> 2, (y >> 2) + rows * T);
  e.free(y);
  return out;
}

test('the build has SIMD128 kernels', () => assert.equal(e.c.have_simd(), 1));

// One harness for every gemm kernel of the engine's table (kernels.h ms_gemm_kernels, read from
// engine info, not copied): test shapes come from each kernel's own edges — its tile's rows and
// tokens, the rows it takes per decode step, its column block and chunk, its row chunk, the width
// above which it hands over to its scalar twin — below, at and above each, varied one at a time
// around a base shape. Each SIMD128 kernel is held to its generic twin (bit for bit for the integer
// activation kernels), and every kernel with f32 or i16x2 activations to the float64 product of
// the weights as stored.
const KERNELS = e.info.gemm_kernels;
const DTYPE_ID = { f32: 0, f16: 1, bf16: 2, q8_0: 3, q4_0: 4, q8_0x4: 5, q4_0x4: 6 };
const PLAIN = { q8_0x4: 'q8_0', q4_0x4: 'q4_0' };

test('the gemm kernel table: names follow the grammar, every SIMD128 kernel has a generic twin, the engine picks from it', () => {
  assert.ok(KERNELS.length >= 18);
  for (const k of KERNELS) {
    assert.match(k.name, new RegExp(`^ms_gemm_${k.weights}w_${k.activations}a(_\\d+x\\d+)?_${k.isa}$`), k.name);
    if (k.isa !== 'generic') assert.ok(KERNELS.some((g) => g.isa === 'generic' && g.weights === k.weights && g.activations === k.activations), `${k.name} has a generic twin`);
  }
});

// the SIMD kernels this engine can run: SIMD128, and each relaxed level js/relaxed.js found right
// here (tests/relaxed.test.js runs this file in a Node with relaxed SIMD on, and the relaxed
// kernels in Chromium, where the unsigned-byte level runs on CPUs with AVX-VNNI)
const runnable = (k) => k.isa === 'simd128' || (e.relaxed.linked && e.relaxed.levels[k.isa] === true);
for (const k of KERNELS.filter(runnable)) {
  const twin = KERNELS.find((g) => g.isa === 'generic' && g.weights === k.weights && g.activations === k.activations);
  test(`${k.name}: shapes from its edges (tile ${k.tile_rows}x${k.tile_tokens}, decode ${k.decode_rows} rows, blocks of ${k.col_block}${k.col_chunk ? `, column chunks of ${k.col_chunk}` : ''}${k.row_chunk ? `, row chunks of ${k.row_chunk}` : ''}) against ${twin.name}`, () => {
    const dt = DTYPE_ID[k.weights], shapes = edgeShapes(k);
    let n = 0;
    for (const [rows, cols, T] of shapes) {
      const bytes = e.c.dbg_weight_bytes(dt, rows, cols);
      assert.ok(bytes > 0, `${k.name}: ${rows}x${cols} is a valid shape`);
      const W = rand(rows * cols, rows * 131 + cols * 7 + T), X = rand(T * cols, cols * 17 + T * 3 + rows);
      const wp = e.bytes(new Uint8Array(W.buffer)), qp = e.malloc(bytes), xp = e.bytes(new Uint8Array(X.buffer));
      const ys = e.malloc(rows * T * 4), yg = e.malloc(rows * T * 4);
      try {
        assert.equal(e.c.dbg_quantize(dt, wp, rows, cols, qp), 0);
        assert.equal(e.c.dbg_gemm(k.id, qp, rows, cols, xp, T, ys), 0);
        assert.equal(e.c.dbg_gemm(twin.id, qp, rows, cols, xp, T, yg), 0);
        const simd = e.f32.slice(ys >> 2, (ys >> 2) + rows * T), gen = e.f32.slice(yg >> 2, (yg >> 2) + rows * T);
        if (k.activations !== 'f32') assert.deepEqual(simd, gen, `${k.name} ${rows}x${cols} T=${T}: bit for bit with ${twin.name}`);
        n++;
        if (k.activations === 'i8') continue; // the int8 rounding of the activations: measured against f32 activations below
        // the float64 product of the weights as stored (the x4 layouts hold the plain layout's blocks, interleaved)
        const plainBytes = PLAIN[k.weights] ? (() => { const p = e.malloc(bytes); e.c.dbg_quantize(DTYPE_ID[PLAIN[k.weights]], wp, rows, cols, p); const b = e.u8.slice(p, p + bytes); e.free(p); return b; })() : e.u8.slice(qp, qp + bytes);
        const stored = dequant(plainBytes, PLAIN[k.weights] ?? k.weights, rows * cols);
        for (let t = 0; t < T; t++) for (let o = 0; o < rows; o++) {
          let ref = 0, mag = 0;
          for (let i = 0; i < cols; i++) { ref += stored[o * cols + i] * X[t * cols + i]; mag += Math.abs(stored[o * cols + i] * X[t * cols + i]); }
          const tol = 2e-6 * Math.max(mag, 1e-3);
          assert.ok(Math.abs(simd[t * rows + o] - ref) <= tol, `${k.name} ${rows}x${cols} T=${T} [${t}][${o}]: ${simd[t * rows + o]} vs ${ref}`);
          assert.ok(Math.abs(gen[t * rows + o] - ref) <= tol, `${twin.name} ${rows}x${cols} T=${T} [${t}][${o}]: ${gen[t * rows + o]} vs ${ref}`);
        }
      } finally { for (const p of [wp, qp, xp, ys, yg]) e.free(p); }
    }
    assert.ok(n >= 10, `${n} shapes`);
  });
}

for (const [name, dtype] of Object.entries(DT)) {
  test(`matmul ${name}: SIMD128 and scalar equal the float64 product of the stored weights`, () => {
    let checked = 0;
    for (const [rows, cols, T] of SHAPES) {
      const bytes = e.c.dbg_weight_bytes(dtype, rows, cols);
      if (!bytes) { assert.ok(dtype >= 3 && cols % 32 !== 0, `${name} ${rows}x${cols} must be refused only for block types`); continue; }
      const W = rand(rows * cols, rows * 7919 + cols), X = rand(T * cols, cols * 31 + T);
      const wp = e.bytes(new Uint8Array(W.buffer)), qp = e.malloc(bytes), xp = e.bytes(new Uint8Array(X.buffer));
      assert.equal(e.c.dbg_quantize(dtype, wp, rows, cols, qp), 0);
      const stored = dequant(e.u8.slice(qp, qp + bytes), name, rows * cols);
      const simd = matmul(dtype, 1, qp, rows, cols, xp, T), scalar = matmul(dtype, 0, qp, rows, cols, xp, T);
      for (let t = 0; t < T; t++) for (let o = 0; o < rows; o++) {
        let ref = 0, exact = 0, mag = 0;
        for (let i = 0; i < cols; i++) { ref += stored[o * cols + i] * X[t * cols + i]; exact += W[o * cols + i] * X[t * cols + i]; mag += Math.abs(stored[o * cols + i] * X[t * cols + i]); }
        const tol = 1e-6 * Math.max(mag, 1e-3);
        assert.ok(Math.abs(simd[t * rows + o] - ref) <= tol, `${name} simd ${rows}x${cols} T=${T}: ${simd[t * rows + o]} vs ${ref}`);
        assert.ok(Math.abs(scalar[t * rows + o] - ref) <= tol, `${name} scalar ${rows}x${cols} T=${T}: ${scalar[t * rows + o]} vs ${ref}`);
        // quantization error per weight: f16 2^-11, bf16 2^-8 relative; q8 d/2 = max/254, q4 max/16
        const bound = { 0: 0, 1: 2 ** -11, 2: 2 ** -8, 3: 1 / 254, 4: 1 / 16 }[dtype] * Math.sqrt(cols) * 1.5 + 1e-6 * mag;
        assert.ok(Math.abs(ref - exact) <= bound, `${name} quantization error ${Math.abs(ref - exact)} > ${bound}`);
      }
      e.free(wp); e.free(qp); e.free(xp);
      checked++;
    }
    assert.ok(checked >= 5);
  });
}

// The 4-row interleaved layouts (int8 activations) against the plain layout with f32 activations:
// same weights, so the difference is the activation rounding alone. SIMD128 == its scalar twin bit
// for bit (integer sums per block, then the same f32 operations), and a token's outputs do not
// depend on the tokens beside it (T = 1 against its row of the T-token product).
for (const [name, plainDt, x4Dt] of [['q8_0x4', 3, 5], ['q4_0x4', 4, 6]]) {
  test(`${name} (4-row interleaved, int8 activations): SIMD128 == scalar twin; close to ${name.slice(0, 4)} with f32 activations`, () => {
    // T = 1 (decode) reads four row groups at once: groups of 1..5, 9 and 17 cover every remainder
    const shapes = [[4, 32, 1], [8, 64, 1], [12, 96, 1], [16, 160, 1], [20, 1024, 1], [36, 3584, 1], [68, 1024, 1],
      [4, 64, 3], [8, 96, 9], [16, 1024, 5], [12, 3584, 2], [64, 1024, 17],
      [8, 9216, 3], [20, 8224, 7], [4, 16416, 1]]; // wide rows: prefill runs them in column chunks of 4096; SIMD up to 16384 columns, the scalar twin beyond
    for (const [rows, cols, T] of shapes) {
      const W = rand(rows * cols, rows + cols * 3), X = rand(T * cols, T * 7 + cols);
      const wp = e.bytes(new Uint8Array(W.buffer)), xp = e.bytes(new Uint8Array(X.buffer));
      const bytes = e.c.dbg_weight_bytes(plainDt, rows, cols);
      assert.equal(e.c.dbg_weight_bytes(x4Dt, rows, cols), bytes);
      const qp = e.malloc(bytes), x4 = e.malloc(bytes);
      assert.equal(e.c.dbg_quantize(plainDt, wp, rows, cols, qp), 0);
      assert.equal(e.c.dbg_quantize(x4Dt, wp, rows, cols, x4), 0);
      const plain = matmul(plainDt, 0, qp, rows, cols, xp, T), simd = matmul(x4Dt, 1, x4, rows, cols, xp, T), scalar = matmul(x4Dt, 0, x4, rows, cols, xp, T);
      const wmax = plainDt === 3 ? 1 : 1 + 1 / 16; // largest |stored weight| (q4 rounds up to d * 8)
      for (const t of T > 1 ? [0, T - 1] : []) {
        const alone = matmul(x4Dt, 1, x4, rows, cols, xp + t * cols * 4, 1);
        for (let o = 0; o < rows; o++) assert.equal(alone[o], simd[t * rows + o], `${name} ${rows}x${cols}: token ${t} alone vs among ${T}, row ${o}`);
      }
      for (let i = 0; i < plain.length; i++) {
        const scale = Math.sqrt(cols); // |W|,|X| <= 1: products sum like a random walk
        assert.equal(simd[i], scalar[i], `${name} simd vs scalar ${rows}x${cols} [${i}]`);
        assert.ok(Math.abs(simd[i] - plain[i]) <= (wmax / 254) * 1.5 * scale + 1e-5, `${name} vs f32 activations ${rows}x${cols} [${i}]: ${simd[i]} ${plain[i]}`);
      }
      e.free(wp); e.free(xp); e.free(qp); e.free(x4);
    }
  });
}

// The int8 layouts at the ends of their ranges, where the integer sums are largest: every weight
// code at the top (q8 127, q4 7) or bottom (q8 -127, q4 -8) and every activation code at +-127.
// The q4 decode tile multiplies nibbles read as code + 8 by codes scaled up to 256 x 127 and
// shifts each block's sum back down, so this is where an overflow would show: SIMD128 == scalar
// twin bit for bit, and both equal the sum of the codes' products in float64.
for (const [name, plainDt, x4Dt, top, bottom] of [['q8_0x4', 3, 5, 127, -127], ['q4_0x4', 4, 6, 7, -8]]) {
  test(`${name} (int8 activations) with every code at the end of its range: SIMD128 == scalar twin == float64`, () => {
    const rows = 20, cols = 96; // five row groups: the decode tile's four-group pass and its remainder
    for (const T of [1, 4]) for (const [wsign, xsign] of [[1, 1], [1, -1], [-1, 1], [-1, -1], [0, 1]]) {
      // per block of 32, one anchor of magnitude 1 fixes the scale; the rest sit at the top or bottom code
      // q4_0: d = max / -8, so -1 is code -8 and +7/8 is code 7; q8_0: +-1 is +-127
      const W = Float32Array.from({ length: rows * cols }, (_, i) => {
        if (i % 32 === 0) return -1;
        const s = wsign === 0 ? (i % 3 === 0 ? 1 : -1) : wsign;
        return plainDt === 4 ? (s > 0 ? 7 / 8 : -1) : s;
      });
      const X = Float32Array.from({ length: T * cols }, (_, i) => (xsign > 0 ? 1 : -1) * (i % 5 === 0 ? -1 : 1));
      const wp = e.bytes(new Uint8Array(W.buffer)), xp = e.bytes(new Uint8Array(X.buffer));
      const bytes = e.c.dbg_weight_bytes(x4Dt, rows, cols), x4 = e.malloc(bytes), qp = e.malloc(bytes);
      assert.equal(e.c.dbg_quantize(x4Dt, wp, rows, cols, x4), 0);
      assert.equal(e.c.dbg_quantize(plainDt, wp, rows, cols, qp), 0);
      const stored = dequant(e.u8.slice(qp, qp + bytes), plainDt === 3 ? 'q8_0' : 'q4_0', rows * cols);
      const codes = new Set(Array.from(stored, (v) => Math.round(v / (plainDt === 3 ? 1 / 127 : 1 / 8))));
      assert.ok([...codes].every((c) => c === top || c === bottom), `${name}: every weight sits at an end code (${[...codes]})`);
      const simd = matmul(x4Dt, 1, x4, rows, cols, xp, T), scalar = matmul(x4Dt, 0, x4, rows, cols, xp, T);
      for (let t = 0; t < T; t++) for (let o = 0; o < rows; o++) {
        let ref = 0; // |X| = 1 in every block: the activation codes are +-127 and the scale 1/127
        for (let i = 0; i < cols; i++) ref += stored[o * cols + i] * X[t * cols + i];
        const k = t * rows + o;
        assert.equal(simd[k], scalar[k], `${name} T=${T} signs ${wsign},${xsign} [${t}][${o}]: simd vs scalar`);
        assert.ok(Math.abs(simd[k] - ref) <= 1e-5 * cols, `${name} T=${T} signs ${wsign},${xsign} [${t}][${o}]: ${simd[k]} vs ${ref}`);
      }
      for (const p of [wp, xp, x4, qp]) e.free(p);
    }
  });
}

// The same layouts with exact activations (each input split into two 16-bit codes, run as two rows
// of the int8 prefill tile over chunks of 1024 rows): SIMD128 == scalar twin bit for bit, a token
// alone == among others, and as close to the float64 product of the stored weights as the f32
// kernels are. Shapes cross each edge of the tile: 1 and 2 tokens per pass (odd T), one and two
// row groups per tile (odd groups), the 1024-row chunk (1020, 1024, 1028, 2052 rows), the
// 4096-column chunk, and the 16384 columns beyond which both run the scalar code.
for (const [name, x4Dt] of [['q8_0x4', 5], ['q4_0x4', 6]]) {
  test(`${name} with exact activations: SIMD128 == scalar twin; float64 product of the stored weights within f32 rounding`, () => {
    const shapes = [[4, 32, 1], [8, 64, 2], [12, 96, 3], [20, 160, 1], [1020, 64, 1], [1024, 96, 2], [1028, 32, 3], [2052, 64, 1],
      [36, 3584, 1], [16, 1024, 5], [8, 4128, 2], [4, 8224, 3], [4, 16416, 1]];
    for (const [rows, cols, T] of shapes) {
      const W = rand(rows * cols, rows * 3 + cols), X = rand(T * cols, T * 11 + cols);
      // a wide range of magnitudes inside blocks: tiny values next to large ones
      for (let i = 0; i < X.length; i += 7) X[i] *= 1e-4;
      const wp = e.bytes(new Uint8Array(W.buffer)), xp = e.bytes(new Uint8Array(X.buffer));
      const plainDt = x4Dt === 5 ? 3 : 4, bytes = e.c.dbg_weight_bytes(plainDt, rows, cols);
      const qp = e.malloc(bytes), x4 = e.malloc(bytes);
      assert.equal(e.c.dbg_quantize(plainDt, wp, rows, cols, qp), 0);
      assert.equal(e.c.dbg_quantize(x4Dt, wp, rows, cols, x4), 0);
      const ref = dequant(e.u8.slice(qp, qp + bytes), plainDt === 3 ? 'q8_0' : 'q4_0', rows * cols);
      const run = (simd, xptr, n) => {
        const y = e.malloc(rows * n * 4);
        e.c.dbg_matmul_exact(x4Dt, simd, x4, rows, cols, xptr, n, y);
        const out = e.f32.slice(y >> 2, (y >> 2) + rows * n);
        e.free(y);
        return out;
      };
      const simd = run(1, xp, T), scalar = run(0, xp, T);
      for (let i = 0; i < simd.length; i++) assert.equal(simd[i], scalar[i], `${name} simd vs scalar ${rows}x${cols} T=${T} [${i}]`);
      for (const t of T > 1 ? [0, T - 1] : []) {
        const alone = run(1, xp + t * cols * 4, 1);
        for (let o = 0; o < rows; o++) assert.equal(alone[o], simd[t * rows + o], `${name} ${rows}x${cols}: token ${t} alone vs among ${T}`);
      }
      let worst = 0;
      for (let t = 0; t < T; t++) for (let o = 0; o < rows; o++) {
        let r = 0, mag = 0;
        for (let i = 0; i < cols; i++) { r += ref[o * cols + i] * X[t * cols + i]; mag += Math.abs(ref[o * cols + i] * X[t * cols + i]); }
        const err = Math.abs(simd[t * rows + o] - r) / Math.max(mag, 1e-3);
        worst = Math.max(worst, err);
        assert.ok(err <= 1e-6, `${name} exact ${rows}x${cols} T=${T} row ${o}: ${simd[t * rows + o]} vs ${r}`);
      }
      e.free(wp); e.free(xp); e.free(qp); e.free(x4);
    }
  });
}

test('f16 / bf16 decoded in the SIMD128 kernel: exact for zeros, subnormals, the smallest and largest normals', () => {
  const f16 = (h) => { // reference decoding, written from the IEEE definition
    const s = h & 0x8000 ? -1 : 1, ex = (h >> 10) & 31, m = h & 1023;
    return ex === 0 ? s * m * 2 ** -24 : s * (1 + m / 1024) * 2 ** (ex - 15);
  };
  const bf16 = (h) => new Float32Array(new Uint32Array([h << 16]).buffer)[0];
  const halves = [0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x3555, 0x0200, 0x1234, 0xc000, 0x5a5a, 0x83ff];
  const cols = halves.length + 3; // a tail after the 8-wide part
  const all = [...halves, 0x3c00, 0x0001, 0x7bff];
  for (const [dt, dec] of [[1, f16], [2, bf16]]) {
    const wp = e.bytes(new Uint8Array(new Uint16Array(all).buffer));
    for (let j = 0; j < cols; j++) {
      const X = new Float32Array(cols * 3); // three tokens, each one-hot at a different column
      for (let u = 0; u < 3; u++) X[u * cols + ((j + u) % cols)] = 1;
      const xp = e.bytes(new Uint8Array(X.buffer));
      const simd = matmul(dt, 1, wp, 1, cols, xp, 3), scalar = matmul(dt, 0, wp, 1, cols, xp, 3);
      for (let u = 0; u < 3; u++) {
        const want = Math.fround(dec(all[(j + u) % cols]));
        // === (not Object.is): a sum that starts at +0 turns a -0 weight into +0, as it should
        assert.ok(simd[u] === want, `dtype ${dt} half 0x${all[(j + u) % cols].toString(16)}: SIMD ${simd[u]} vs ${want}`);
        assert.ok(scalar[u] === want, `dtype ${dt} half 0x${all[(j + u) % cols].toString(16)}: scalar ${scalar[u]} vs ${want}`);
      }
      e.free(xp);
    }
    e.free(wp);
  }
});

// The chunked Gated DeltaNet's product Out += sign * A B (A plain or transposed through its
// strides): SIMD128 (4 x 8 tiles) and scalar against float64, on shapes with row and column tails.
test('gemm_acc f32: SIMD128 and scalar equal the float64 product, plain and transposed A, with tails', () => {
  let checked = 0;
  for (const [M, K, N] of [[1, 1, 1], [3, 5, 7], [4, 128, 8], [5, 17, 9], [7, 64, 17], [64, 128, 128], [13, 3, 40]]) {
    for (const trans of [false, true]) {
      for (const sign of [1, -1]) {
        const A = rand(M * K, M * 31 + K), B = rand(K * N, K * 17 + N), O0 = rand(M * (N + 3), N + 5);
        const ars = trans ? 1 : K, acs = trans ? M : 1, os = N + 3, bs = N; // A stored [K][M] when transposed
        const ap = e.bytes(new Uint8Array(A.buffer)), bp = e.bytes(new Uint8Array(B.buffer));
        const out = {};
        for (const simd of [1, 0]) {
          const op = e.bytes(new Uint8Array(O0.slice().buffer));
          e.c.dbg_gemm_acc(simd, op, os, ap, ars, acs, bp, bs, M, K, N, sign);
          out[simd] = e.f32.slice(op >> 2, (op >> 2) + M * os);
          e.free(op);
        }
        for (let i = 0; i < M; i++)
          for (let y = 0; y < os; y++) {
            let ref = O0[i * os + y], mag = Math.abs(ref);
            if (y < N) for (let x = 0; x < K; x++) { const p = A[i * ars + x * acs] * B[x * bs + y]; ref += sign * p; mag += Math.abs(p); }
            for (const simd of [1, 0]) {
              const got = out[simd][i * os + y];
              if (y >= N) assert.equal(got, O0[i * os + y], `column ${y} past N was written`);
              else assert.ok(Math.abs(got - ref) <= 1e-6 * mag + 1e-7, `${simd ? 'simd' : 'scalar'} ${M}x${K}x${N} trans=${trans} [${i},${y}]: ${got} vs ${ref}`);
            }
            checked++;
          }
        e.free(ap); e.free(bp);
      }
    }
  }
  assert.ok(checked > 20000);
});

// One query's attention scores against key rows `stride` floats apart (decode attention): SIMD128
// (four rows at a time) and scalar against float64 on row counts and widths with every tail, and
// each row's score the same whether computed in a group of four or alone.
test('dot_rows f32: SIMD128 and scalar equal float64 on awkward shapes; a row does not depend on its neighbours', () => {
  let checked = 0;
  for (const [n, k, stride] of [[1, 1, 1], [3, 5, 7], [4, 8, 8], [5, 128, 256], [7, 256, 512], [9, 13, 40], [64, 256, 512], [67, 128, 1024]]) {
    const A = rand(n * stride, n + k), x = rand(k, k * 3 + 1);
    const ap = e.bytes(new Uint8Array(A.buffer)), xp = e.bytes(new Uint8Array(x.buffer)), yp = e.malloc(4 * n), y1 = e.malloc(4);
    for (const simd of [1, 0]) {
      e.c.dbg_dot_rows(simd, yp, xp, ap, stride, n, k, 0.0625);
      const y = e.f32.slice(yp >> 2, (yp >> 2) + n);
      for (let u = 0; u < n; u++) {
        let ref = 0, mag = 0;
        for (let i = 0; i < k; i++) { ref += x[i] * A[u * stride + i]; mag += Math.abs(x[i] * A[u * stride + i]); }
        ref *= 0.0625; mag *= 0.0625;
        assert.ok(Math.abs(y[u] - ref) <= 1e-6 * mag + 1e-30, `${simd ? 'simd' : 'scalar'} n=${n} k=${k} row ${u}: ${y[u]} vs ${ref}`);
        e.c.dbg_dot_rows(simd, y1, xp, ap + 4 * u * stride, stride, 1, k, 0.0625);
        assert.equal(e.f32[y1 >> 2], y[u], `${simd ? 'simd' : 'scalar'} n=${n} k=${k} row ${u} alone`);
        checked++;
      }
    }
    e.free(ap); e.free(xp); e.free(yp); e.free(y1);
  }
  assert.ok(checked > 300);
});

// silu(g) * u (the SwiGLU activation, the Gated DeltaNet convolution and output gates): the SIMD128
// kernel's polynomial e^x and libm's expf, both against float64, on lengths with every tail, in
// place, without u, over the range activations take and at the clamp edges; NaN stays NaN.
test('silu_mul f32: SIMD128 and scalar equal float64 within a few ulp, any length, in place, NaN kept', () => {
  const silu64 = (x) => x / (1 + Math.exp(-x));
  let worst = 0, checked = 0;
  for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 4099]) {
    const g = rand(n, n * 7 + 1).map((v, i) => (i % 5 === 0 ? v * 90 : v * 12)), u = rand(n, n + 11);
    if (n > 8) { g[1] = 0; g[2] = -0; g[3] = 87.5; g[4] = -87.5; g[5] = 88.9; g[6] = -88.9; g[7] = 1e-30; g[8] = -1e-30; }
    for (const withU of [true, false]) {
      for (const simd of [1, 0]) {
        for (const inPlace of [false, true]) {
          const gp = e.bytes(new Uint8Array(g.slice().buffer)), up = e.bytes(new Uint8Array(u.buffer)), yp = inPlace ? gp : e.malloc(4 * n);
          e.c.dbg_silu_mul(simd, yp, gp, withU ? up : 0, n);
          const y = e.f32.slice(yp >> 2, (yp >> 2) + n);
          for (let i = 0; i < n; i++) {
            const ref = silu64(g[i]) * (withU ? u[i] : 1);
            const err = Math.abs(y[i] - ref), tol = 4 * 2 ** -23 * Math.abs(ref) + 1e-30;
            assert.ok(err <= tol, `${simd ? 'simd' : 'scalar'} n=${n} u=${withU} [${i}] silu(${g[i]}): ${y[i]} vs ${ref}`);
            if (Math.abs(ref) > 1e-30) worst = Math.max(worst, err / Math.abs(ref) / 2 ** -24);
            checked++;
          }
          e.free(gp); e.free(up); if (!inPlace) e.free(yp);
        }
      }
    }
  }
  assert.ok(checked > 30000 && worst > 0, `worst ${worst} half-ulps over ${checked}`);
  const np = e.bytes(new Uint8Array(Float32Array.from([NaN, 1, NaN, -1, NaN]).buffer));
  for (const simd of [1, 0]) {
    e.c.dbg_silu_mul(simd, np, np, 0, 5);
    const y = e.f32.slice(np >> 2, (np >> 2) + 5);
    assert.ok(Number.isNaN(y[0]) && Number.isNaN(y[2]) && Number.isNaN(y[4]) && !Number.isNaN(y[1]), `${simd}: NaN in, NaN out: ${y}`);
    e.f32.set([NaN, 1, NaN, -1, NaN], np >> 2);
  }
  e.free(np);
});

// gelu(g) * u with the tanh GELU (Gemma's GeGLU): both kernels against the float64 definition
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), any length, in place, without u, at the clamp
// edges. The f32 cubic makes the error grow with |z| where gelu is small (x < 0), so the bound
// scales with it.
test('gelu_tanh_mul f32: SIMD128 and scalar equal float64 within a few ulp, any length, in place', () => {
  // 0.5 x (1 + tanh z) = x / (1 + e^(-2z)); the second form keeps float64's precision where
  // 1 + tanh z cancels (x below about -5)
  const gelu64 = (x) => x / (1 + Math.exp(-2 * Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
  assert.ok(Math.abs(gelu64(0.7) - 0.5 * 0.7 * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (0.7 + 0.044715 * 0.343)))) < 1e-15);
  let worst = 0, checked = 0;
  for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 17, 4099]) {
    const g = rand(n, n * 5 + 3).map((v, i) => (i % 7 === 0 ? v * 40 : v * 8)), u = rand(n, n + 17);
    if (n > 8) { g[1] = 0; g[2] = -0; g[3] = 9.5; g[4] = -9.5; g[5] = 1e-30; g[6] = -1e-30; g[7] = -0.7517916; }
    for (const withU of [true, false]) {
      for (const simd of [1, 0]) {
        for (const inPlace of [false, true]) {
          const gp = e.bytes(new Uint8Array(g.slice().buffer)), up = e.bytes(new Uint8Array(u.buffer)), yp = inPlace ? gp : e.malloc(4 * n);
          e.c.dbg_gelu_tanh_mul(simd, yp, gp, withU ? up : 0, n);
          const y = e.f32.slice(yp >> 2, (yp >> 2) + n);
          for (let i = 0; i < n; i++) {
            const x = g[i], ref = gelu64(x) * (withU ? u[i] : 1);
            const z2 = Math.abs(2 * Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3));
            const err = Math.abs(y[i] - ref), tol = (6 + 3 * z2) * 2 ** -23 * Math.abs(ref) + 1e-30;
            assert.ok(err <= tol, `${simd ? 'simd' : 'scalar'} n=${n} u=${withU} [${i}] gelu(${x}): ${y[i]} vs ${ref}`);
            checked++;
            if (Math.abs(ref) > 1e-30 && z2 < 1) worst = Math.max(worst, err / Math.abs(ref) / 2 ** -24);
          }
          e.free(gp); e.free(up); if (!inPlace) e.free(yp);
        }
      }
    }
  }
  assert.ok(checked > 15000 && worst > 0, `worst ${worst} half-ulps over ${checked}`);
});

// Softmax numerators and denominator, y = e^((x - shift) * scale) and their sum (attention scores;
// the sampler's whole vocabulary, sum only): SIMD128 (float lanes moved into a double every 256
// values) and scalar against float64, every tail, a 248k vocabulary, terms at the e^-87 edge,
// stored, not stored and in place; a NaN makes the sum NaN.
test('exp_sum f32: SIMD128 and scalar equal float64, values and sum, any length', () => {
  let worst = 0, worstY = 0;
  for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 255, 256, 257, 263, 4099, 248320]) {
    const x = rand(n, n * 3 + 5).map((v, i) => (i % 7 === 0 ? v * 40 : v * 8));
    let mx = -Infinity;
    for (const v of x) mx = Math.max(mx, v);
    for (const scale of [1, 1 / 0.7, 3]) {
      if (n > 8) { x[1] = mx - 86.95 / scale; x[2] = mx - 87.05 / scale; }
      let ref = 0;
      for (const v of x) { const a = Math.fround(Math.fround(v - mx) * Math.fround(scale)); ref += a < -87 ? 0 : Math.exp(a); }
      const xp = e.bytes(new Uint8Array(x.buffer)), yp = e.malloc(4 * n);
      for (const simd of [1, 0]) {
        for (const out of ['none', 'y', 'in place']) {
          const dst = out === 'none' ? 0 : out === 'y' ? yp : e.bytes(new Uint8Array(x.buffer));
          const got = e.c.dbg_exp_sum(simd, dst, out === 'in place' ? dst : xp, n, mx, scale);
          const rel = Math.abs(got - ref) / ref;
          assert.ok(rel < 2e-6, `${simd ? 'simd' : 'scalar'} ${out} n=${n} scale=${scale}: ${got} vs ${ref} (rel ${rel})`);
          worst = Math.max(worst, rel);
          if (dst) {
            const y = e.f32.slice(dst >> 2, (dst >> 2) + n);
            for (let i = 0; i < n; i += n > 5000 ? 7 : 1) {
              const a = Math.fround(Math.fround(x[i] - mx) * Math.fround(scale)), want = a < -87 ? 0 : Math.exp(a);
              const err = Math.abs(y[i] - want);
              assert.ok(err <= 4 * 2 ** -23 * want, `${simd ? 'simd' : 'scalar'} ${out} n=${n} y[${i}] = ${y[i]} vs ${want}`);
              if (want > 0) worstY = Math.max(worstY, err / want / 2 ** -24);
            }
            if (out === 'in place') e.free(dst);
          }
        }
      }
      e.free(xp); e.free(yp);
    }
  }
  assert.ok(worst > 0 && worstY > 0, `worst sum error ${worst}, worst value ${worstY} half-ulps`);
  const np = e.bytes(new Uint8Array(Float32Array.from([0, -1, NaN, -2, 0, 0, 0, 0, -3, -4]).buffer));
  for (const simd of [1, 0]) for (const n of [4, 10]) assert.ok(Number.isNaN(e.c.dbg_exp_sum(simd, 0, np, n, 0, 1)), `${simd} n=${n}: NaN in, NaN out`);
  e.free(np);
});

test('sumsq f32 (the Gated DeltaNet state norm): SIMD128 == scalar bit for bit, float64 within f32 rounding, any length', () => {
  for (const n of [0, 1, 15, 16, 17, 31, 32, 33, 100, 4096, 16384, 16387]) {
    const x = rand(n, n + 5);
    for (let i = 0; i < n; i += 5) x[i] *= 100; // uneven magnitudes
    const p = e.bytes(new Uint8Array(x.buffer.slice(0)));
    const simd = e.c.dbg_sumsq(1, p, n), scalar = e.c.dbg_sumsq(0, p, n);
    let want = 0;
    for (const v of x) want += v * v;
    assert.equal(simd, scalar, `n=${n}`);
    assert.ok(Math.abs(simd - want) <= 1e-6 * want + 1e-30, `n=${n}: ${simd} vs ${want}`);
    e.free(p);
  }
});
