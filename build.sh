#!/usr/bin/env bash
# Builds everything into build/ (ignored by git):
#   build/wasm/mlpscope.wasm   the engine for Node and browsers (emcc -O3 -msimd128, standalone)
#                              and mlpscope-mt.wasm, its threaded twin; mlpscope-test.wasm and
#                              mlpscope-mt-test.wasm add the kernel/benchmark exports (api_test.c);
#                              mlpscope-relaxed(-mt).wasm: the relaxed-SIMD tiles (clang-16)
#   build/native/              gcc builds: mlpscope-native (converter/runner CLI), ms_tests
#   build/asan/                the same with AddressSanitizer + UndefinedBehaviorSanitizer
#   build/site/                the lesson page with the engine and weight sets (static files)
#   build/fuzz/                libFuzzer targets (clang, ASan + UBSan), with `./build.sh fuzz`
#   build/native/stress-threads, build/tsan/stress-threads   the threads' stress harness
#                              (bench/stress_threads.c; -O2, and clang ThreadSanitizer), with `./build.sh stress`
# Usage: ./build.sh [all|native|trainer|wasm|site|fuzz|stress]   (default all; trainer: only
#   build/native/mlpscope-train, what weights/demo/train.sh needs). Warnings are errors.
#   A target already newer than its sources is skipped; FORCE=1 rebuilds it.
set -euo pipefail
cd "$(dirname "$0")"
what="${1:-all}"
case "$what" in
  all|native|trainer|wasm|site|fuzz|stress) ;;
  *) echo "build.sh: unknown target '$what' (one of: all native trainer wasm site fuzz stress)" >&2; exit 2 ;;
esac

ENGINE_SRC=$(find src -name '*.c' | sort)
TOOL_SRC="tools/native_host.c"
CFLAGS_COMMON="-std=c11 -Wall -Wextra -Werror -Wshadow -Wno-unused-function -D_POSIX_C_SOURCE=200809L"

need_emcc() {
  if command -v emcc >/dev/null 2>&1; then return; fi
  # installs only when asked (MLPSCOPE_AUTO_INSTALL=1) or in CI, as root; `npm start` / `npm test`
  # install what they need through tools/setup.mjs before they get here
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && { [ "${MLPSCOPE_AUTO_INSTALL:-}" = 1 ] || [ -n "${CI:-}" ]; }; then
    echo "build.sh: emcc not found; installing Debian's emscripten package" >&2
    (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q emscripten) >&2
  else
    echo "build.sh: emcc (Emscripten) is required. On Debian/Ubuntu run: sudo apt-get install -y emscripten" >&2
    echo "          (or run 'npm start' / 'npm test', which install what they need)" >&2
    exit 1
  fi
}

# newer OUT INPUT...: OUT exists and is newer than every file under the INPUTs (a make-like skip)
newer() {
  local out=$1; shift
  [ -e "$out" ] || return 1
  [ -z "$(find "$@" -newer "$out" -type f -print -quit 2>/dev/null)" ]
}

build_native() {
  local out=$1; shift
  mkdir -p "$out"
  # shellcheck disable=SC2086
  gcc $CFLAGS_COMMON "$@" -pthread -o "$out/mlpscope-native" $ENGINE_SRC $TOOL_SRC tools/mlpscope_native.c -lm
  # shellcheck disable=SC2086
  gcc $CFLAGS_COMMON "$@" -pthread -o "$out/ms_tests" $ENGINE_SRC $TOOL_SRC tests/native/*.c -lm
}

# a target whose outputs are newer than all its inputs is skipped (FORCE=1 rebuilds anyway)
fresh() { [ -z "${FORCE:-}${PROFILE:-}" ] && newer "$@"; }

if [ "$what" = trainer ] || { [ "$what" = all ] || [ "$what" = native ]; } && \
   ! { fresh build/native/ms_tests src tools tests/native tests/train-gemm build.sh && \
       fresh build/asan/ms_tests src tools tests/native build.sh && fresh build/native/mlpscope-train src tools build.sh; }; then
  # the trainer: register-blocked matmuls in AVX-512 where the CPU has it (else AVX2), no FP
  # contraction: the same summation order either way, so runs are bit-reproducible
  mkdir -p build/native
  TRAIN_ISA="-mavx2"
  grep -q avx512f /proc/cpuinfo 2>/dev/null && TRAIN_ISA="-mavx512f -mavx2"
  # shellcheck disable=SC2086
  gcc $CFLAGS_COMMON -O3 $TRAIN_ISA -ffp-contract=off -pthread -o build/native/mlpscope-train tools/train/train_main.c \
    $(echo $ENGINE_SRC | tr ' ' '\n' | grep -v '^src/api/') $TOOL_SRC -lm 2>&1 || exit 1
  [ "$what" = trainer ] && { echo "built build/native/mlpscope-train"; exit 0; }
  # its matmuls against scalar loops, bit for bit: this CPU's block shape and AVX-512's 4 x 4
  # (of the engine, train_core.c only calls ms_rng_seed: sample.c and the kernel that needs)
  for shape in native 4x4; do
    flags=""; [ $shape = 4x4 ] && flags="-DMR=4 -DNV=4"
    # shellcheck disable=SC2086
    gcc $CFLAGS_COMMON -O3 $TRAIN_ISA -ffp-contract=off $flags -o build/native/train-gemm-check-$shape tests/train-gemm/gemm_check.c \
      src/engine/sample.c src/kernels/generic/activation_generic.c -lm 2>&1 || exit 1
  done
  build_native build/native -O2 -g
  build_native build/asan -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  echo "built build/native and build/asan"
fi

# (stale too when clang-16 is there and the relaxed-SIMD modules are not: installed since the last build)
if { [ "$what" = all ] || [ "$what" = wasm ]; } && ! { fresh build/wasm/mlpscope-mt-test.wasm src build.sh &&
     { ! command -v clang-16 >/dev/null 2>&1 || fresh build/wasm/mlpscope-relaxed-test.wasm src build.sh; }; }; then
  need_emcc
  mkdir -p build/wasm
  # Standalone wasm: our own ESM glue (js/wasm.js) instantiates it with a handful of imports.
  # PROFILE=1 keeps function names in the module, so `node --cpu-prof` shows kernels by name.
  wasm_flags="$CFLAGS_COMMON -O3 -msimd128 -flto ${PROFILE:+--profiling-funcs} -sSTANDALONE_WASM --no-entry \
    -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sINITIAL_MEMORY=16MB -sTOTAL_STACK=1MB \
    -sERROR_ON_UNDEFINED_SYMBOLS=0 -sWARN_ON_UNDEFINED_SYMBOLS=0"
  # shellcheck disable=SC2086
  NODE_PATH=/usr/share/nodejs emcc $wasm_flags -o build/wasm/mlpscope.wasm $ENGINE_SRC
  # The multi-threaded twin: the same code with wasm atomics over an imported shared memory; its
  # extra threads are workers that instantiate it again over that memory (js/threads.js).
  # shellcheck disable=SC2086
  mt_flags="-matomics -mbulk-memory -Wl,--shared-memory -Wl,--import-memory"
  # shellcheck disable=SC2086
  NODE_PATH=/usr/share/nodejs emcc $wasm_flags $mt_flags -o build/wasm/mlpscope-mt.wasm $ENGINE_SRC
  # The test builds: the same engine plus the kernel and benchmark exports of src/api/api_test.c
  # (tests/kernels.test.js, bench/); the release modules above do not carry them.
  # shellcheck disable=SC2086
  NODE_PATH=/usr/share/nodejs emcc $wasm_flags -DMS_TEST_EXPORTS -o build/wasm/mlpscope-test.wasm $ENGINE_SRC
  # shellcheck disable=SC2086
  NODE_PATH=/usr/share/nodejs emcc $wasm_flags $mt_flags -DMS_TEST_EXPORTS -o build/wasm/mlpscope-mt-test.wasm $ENGINE_SRC
  # The relaxed-SIMD tiles (src/kernels/wasm/gemm_qx4_relaxed.c) are a module of their own, built by
  # clang-16 and wasm-ld-16 alone: Debian's emscripten cannot (clang-14 lacks the instructions, and
  # its binaryen 108 turns them into drops). It imports the engine's memory (shared for the threaded
  # engine) and exports the tiles the engine imports from module "relaxed"; js/wasm.js links it in
  # where the runtime has relaxed SIMD. Without clang-16 the engine runs its SIMD128 kernels alone.
  rm -f build/wasm/mlpscope-relaxed.wasm build/wasm/mlpscope-relaxed-mt.wasm build/wasm/mlpscope-relaxed-test.wasm
  if command -v clang-16 >/dev/null 2>&1 && command -v wasm-ld-16 >/dev/null 2>&1 && command -v llvm-objdump-16 >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    clang-16 --target=wasm32 $CFLAGS_COMMON -O3 -msimd128 -mrelaxed-simd -c -o build/wasm/relaxed.o src/kernels/wasm/gemm_qx4_relaxed.c
    wasm-ld-16 --no-entry --import-memory --strip-all -o build/wasm/mlpscope-relaxed.wasm build/wasm/relaxed.o
    # shellcheck disable=SC2086
    clang-16 --target=wasm32 $CFLAGS_COMMON -O3 -msimd128 -mrelaxed-simd -matomics -mbulk-memory -c -o build/wasm/relaxed-mt.o src/kernels/wasm/gemm_qx4_relaxed.c
    wasm-ld-16 --no-entry --import-memory --shared-memory --max-memory=4294967296 --strip-all -o build/wasm/mlpscope-relaxed-mt.wasm build/wasm/relaxed-mt.o
    # and for bench/ only, the same with a compute probe (bench/relaxed.mjs); not shipped
    # shellcheck disable=SC2086
    clang-16 --target=wasm32 $CFLAGS_COMMON -O3 -msimd128 -mrelaxed-simd -DMS_TEST_EXPORTS -c -o build/wasm/relaxed-test.o src/kernels/wasm/gemm_qx4_relaxed.c
    wasm-ld-16 --no-entry --import-memory --strip-all -o build/wasm/mlpscope-relaxed-test.wasm build/wasm/relaxed-test.o
    # it must own nothing in the engine's memory: its code touches no global (so no stack pointer:
    # wasm-ld still defines one, unused) and the module has no data
    if llvm-objdump-16 -d build/wasm/relaxed.o build/wasm/relaxed-mt.o build/wasm/relaxed-test.o | grep -q 'global\.[gs]et'; then
      echo "build.sh: the relaxed-SIMD tiles use a global (the stack pointer?): they must keep everything in locals" >&2; exit 1
    fi
    rm -f build/wasm/relaxed.o build/wasm/relaxed-mt.o build/wasm/relaxed-test.o
    node --input-type=module -e '
      import { readFileSync } from "node:fs";
      import { RELAXED_TILES } from "./js/relaxed.js";
      for (const f of ["build/wasm/mlpscope-relaxed.wasm", "build/wasm/mlpscope-relaxed-mt.wasm", "build/wasm/mlpscope-relaxed-test.wasm"]) {
        const b = readFileSync(f), ids = [], ex = [];
        let p = 8;
        const leb = () => { let v = 0, s = 0, x; do { x = b[p++]; v |= (x & 127) << s; s += 7; } while (x & 128); return v >>> 0; };
        while (p < b.length) {
          const id = b[p++], n = leb(), end = p + n;
          ids.push(id);
          if (id === 7) for (let k = leb(); k > 0; k--) { const len = leb(); ex.push(b.toString("utf8", p, p + len)); p += len + 1; leb(); } /* export names (Node 20 cannot compile the module) */
          p = end;
        }
        const missing = RELAXED_TILES.filter((n) => !ex.includes(n));
        if (missing.length) { console.error("build.sh: " + f + " lacks the tiles " + missing.join(", ") + " (js/relaxed.js RELAXED_TILES)"); process.exit(1); }
        if (ids.includes(11) || ids.includes(12)) { console.error("build.sh: " + f + " has a data section: it must own no memory"); process.exit(1); }
      }'
  else
    echo "build.sh: clang-16 / wasm-ld-16 not found: the relaxed-SIMD kernels are not built, the engine runs SIMD128 alone (apt-get install clang-16 lld-16)" >&2
  fi
  # Undefined symbols are allowed only for our declared host imports: check the import list.
  node --input-type=module -e '
    import { readFileSync } from "node:fs";
    import { RELAXED_TILES } from "./js/relaxed.js"; // the relaxed tiles the engine imports, as the loader lists them
    const ok = new Set(["ms_now_ms","ms_host_open","ms_host_close","ms_host_size","ms_host_read","ms_host_write","ms_host_log","ms_host_progress","emscripten_notify_memory_growth",
      ...RELAXED_TILES.map((n) => "relaxed." + n)]);
    for (const f of ["build/wasm/mlpscope.wasm", "build/wasm/mlpscope-mt.wasm", "build/wasm/mlpscope-test.wasm", "build/wasm/mlpscope-mt-test.wasm"]) {
      const mod = new WebAssembly.Module(readFileSync(f));
      const bad = WebAssembly.Module.imports(mod).filter(i => !ok.has(i.module === "relaxed" ? "relaxed." + i.name : i.name) && !(f.includes("-mt") && i.name === "memory"));
      if (bad.length) { console.error("build.sh: unexpected wasm imports (undefined symbols) in " + f + ":", bad.map(i => i.module + "." + i.name).join(", ")); process.exit(1); }
      const ex = new Set(WebAssembly.Module.exports(mod).map(e => e.name));
      if (f.includes("-mt") && !(ex.has("stackRestore") && ex.has("ms_pool_enter"))) { console.error("build.sh: " + f + " lacks the thread entry points"); process.exit(1); }
      const testOnly = [...ex].filter(n => /^ms_(dbg|bench)_/.test(n));
      if (f.includes("-test") !== (testOnly.length > 0)) { console.error("build.sh: " + f + (testOnly.length ? " exports test functions: " + testOnly.join(", ") : " lacks the test exports")); process.exit(1); }
    }
  '
  # the parts of js/index.d.ts that mirror the engine's tables (error codes, hooks, statistics, ...)
  # are generated from the engine just built: rewritten when a table changed (commit the result)
  node tools/gen-types.mjs
  echo "built build/wasm/mlpscope.wasm ($(stat -c %s build/wasm/mlpscope.wasm) bytes) and mlpscope-mt.wasm ($(stat -c %s build/wasm/mlpscope-mt.wasm) bytes)"
fi

if [ "$what" = all ] || [ "$what" = site ]; then
  [ -f build/wasm/mlpscope.wasm ] || "$0" wasm
  node tools/build-site.mjs
fi

FUZZ_TARGETS="json manifest config safetensors llama2c_checkpoint tokenizer_bin msbpe tokenizer_json bpe_encode chat regex sp_encode"
if { [ "$what" = all ] || [ "$what" = fuzz ]; } && ! fresh build/fuzz/chat src fuzz/fuzz_targets.c build.sh; then
  if command -v clang >/dev/null 2>&1 && echo 'int LLVMFuzzerTestOneInput(const char*d,long n){(void)d;(void)n;return 0;}' | clang -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
    mkdir -p build/fuzz
    for t in $FUZZ_TARGETS; do
      # shellcheck disable=SC2086
      clang $CFLAGS_COMMON -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -DTARGET_$t \
        -o "build/fuzz/$t" fuzz/fuzz_targets.c $(echo $ENGINE_SRC | tr ' ' '\n' | grep -v '^src/api/') -lm &
    done
    wait
    echo "built build/fuzz ($FUZZ_TARGETS)"
  else
    echo "build.sh: clang with libFuzzer not found; fuzz targets skipped (apt-get install clang libclang-rt-14-dev)" >&2
    [ "$what" = fuzz ] && exit 1
  fi
fi

# The threads' stress harness (not part of `all`: bench/README.md says how to run it): the pthread
# pool natively, plain and under ThreadSanitizer (clang; libclang-rt-14-dev has its runtime).
if [ "$what" = stress ]; then
  mkdir -p build/native build/tsan
  # shellcheck disable=SC2086
  gcc $CFLAGS_COMMON -O2 -g -pthread -o build/native/stress-threads bench/stress_threads.c $ENGINE_SRC $TOOL_SRC -lm
  # shellcheck disable=SC2086
  clang $CFLAGS_COMMON -O1 -g -fsanitize=thread -pthread -o build/tsan/stress-threads bench/stress_threads.c $ENGINE_SRC $TOOL_SRC -lm
  echo "built build/native/stress-threads and build/tsan/stress-threads"
fi
