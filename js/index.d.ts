// Types for the mlpscope package (plain ESM; see README for usage).

// ---- GENERATED from the engine's tables by tools/gen-types.mjs (./build.sh wasm): do not edit by hand ----
/** Error codes: the engine's (MS_ERROR_LIST) and those only the JS side raises (js/errors.js HOST_ERROR_CODES). */
export type ErrorCode = 'E_MANIFEST' | 'E_SHARD_MISSING' | 'E_SHARD_SIZE' | 'E_SHARD_HASH' | 'E_TENSOR' | 'E_CONFIG' | 'E_MEMORY' | 'E_ABORTED' | 'E_NETWORK' | 'E_TOKEN' | 'E_CONTEXT' | 'E_CHECKPOINT' | 'E_ARG' | 'E_STATE' | 'E_ENGINE';
/** The hook points of a block (MS_HOOK_LIST), in forward order. */
export type HookKind = 'hook_resid_pre' | 'hook_attn_out' | 'hook_resid_mid' | 'hook_mlp_out' | 'hook_resid_post' | 'mlp.hook_pre' | 'mlp.hook_pre_linear' | 'mlp.hook_post' | 'ln1.hook_normalized' | 'ln2.hook_normalized';
/** How q8 / q4 matrices meet their inputs (MS_ACT_LIST). */
export type ActivationMode = 'plain' | 'int8' | 'exact';
/** The chat templates the engine renders itself (MS_CHAT_LIST). */
export type ChatKind = 'none' | 'chatml' | 'qwen3' | 'qwen3.5';
/** Which logits a forward call returns (MS_LOGITS_LIST). */
export type LogitsMode = 'none' | 'last' | 'all';
/** The dtypes a checkpoint converts to, by short and full name (MS_DTYPE_LIST). */
export type DType = 'f32' | 'f16' | 'bf16' | 'q8' | 'q8_0' | 'q4' | 'q4_0';
/** The dimensions statistics are laid out in. */
export type StatDim = 'layer' | 'token' | 'top_k' | 'gdn_head';
/** The name of a statistic (MS_STAT_LIST). */
export type StatName = 'resid_pre_l2' | 'attn_out_l2' | 'resid_mid_l2' | 'mlp_out_l2' | 'resid_post_l2' | 'mlp_ratio' | 'top_idx' | 'top_val' | 'layer_ms' | 'gdn_state_norm' | 'gdn_decay' | 'gdn_beta' | 'gdn_decay_head' | 'gdn_beta_head' | 'gdn_log_decay_head';
/** The statistics of a forward call with a value per token, one per row of the engine's table (MS_STAT_LIST):
 *  stats.X[layer] holds the values over the other dimensions ([token], or [token × …]); the ones collected
 *  only for models with Gated DeltaNet layers are optional. */
export interface StatArrays {
  /** L2 norm of hook_resid_pre: [layer][token] */
  resid_pre_l2: Float32Array[];
  /** L2 norm of hook_attn_out (the mixer's write): [layer][token] */
  attn_out_l2: Float32Array[];
  /** L2 norm of hook_resid_mid: [layer][token] */
  resid_mid_l2: Float32Array[];
  /** L2 norm of hook_mlp_out (the MLP's write): [layer][token] */
  mlp_out_l2: Float32Array[];
  /** L2 norm of hook_resid_post: [layer][token] */
  resid_post_l2: Float32Array[];
  /** mlp_out_l2 / resid_post_l2: [layer][token] */
  mlp_ratio: Float32Array[];
  /** the top_k neurons of mlp.hook_post by |value|, descending: [layer][token][top_k] */
  top_idx: Int32Array[];
  /** their signed values: [layer][token][top_k] */
  top_val: Float32Array[];
  /** Frobenius norm of each DeltaNet head's state: [layer][token][gdn_head] */
  gdn_state_norm?: Float32Array[];
  /** mean exp(g) over the DeltaNet heads (state decay): [layer][token] */
  gdn_decay?: Float32Array[];
  /** mean beta over the DeltaNet heads (write strength): [layer][token] */
  gdn_beta?: Float32Array[];
  /** exp(g) of each DeltaNet head: how much of its state it keeps: [layer][token][gdn_head] */
  gdn_decay_head?: Float32Array[];
  /** beta of each DeltaNet head: how strongly it writes the token: [layer][token][gdn_head] */
  gdn_beta_head?: Float32Array[];
  /** g of each DeltaNet head, the log of its decay (TransformerLens 3's linear_attn.hook_log_decay): [layer][token][gdn_head] */
  gdn_log_decay_head?: Float32Array[];
}
// ---- end of GENERATED ----

export class MlpscopeError extends Error {
  code: ErrorCode;
  details?: object;
  constructor(code: ErrorCode, message: string, details?: object);
}

/** Loading progress. phase 'download': bytes read or downloaded (of a Hugging Face checkpoint:
 *  source bytes, each converted as it arrives; `rate` in bytes/s); 'convert': bytes of converted
 *  shards finished (hashed, cached, laid out); 'prepare': the model's last steps (0 of 1, then 1 of 1). */
export interface Progress { phase?: 'download' | 'convert' | 'prepare'; loaded: number; total: number; file: string; fromCache: boolean; rate?: number; elapsedMs?: number }

export interface LoadOptions {
  onProgress?: (p: Progress) => void;
  signal?: AbortSignal;
  /** tokens of context to allocate (default min(max_position_embeddings, maxContext)) */
  contextLength?: number;
  /** cap for the default context length (default 4096) */
  maxContext?: number;
  /** refuse (E_MEMORY) before allocating if weights + state exceed this many bytes */
  memoryBudget?: number;
  /** use the SIMD128 kernels (default true); false runs the scalar reference kernels */
  simd?: boolean;
  /** tokens per prefill batch (default 64) */
  batchSize?: number;
  /** shards fetched at once (default 3) */
  parallel?: number;
  /** how q8 / q4 matrices meet their inputs: 'int8' (the default: activations rounded to int8 per
   * block of 32, fastest), 'exact' (two 16-bit codes per input: exact up to f32 rounding), 'plain'
   * (the reference f32-activation kernels; slow) */
  activations?: ActivationMode;
  /** true: activations 'exact' */
  exact?: boolean;
  /** the earlier name: true = 'int8', false = 'exact' */
  int8Activations?: boolean;
  retries?: number;
  retryDelayMs?: number;
  /** a request that receives no data for this long is aborted and retried (default 30000 ms) */
  stallTimeoutMs?: number;
  /** pin the manifest: its sha256 (hex); a mismatch is E_MANIFEST after the retries */
  manifestSha256?: string;
  /** 'auto' (default): the multi-threaded build with one thread per hardware thread (at most 4)
   * where SharedArrayBuffer works (Node; cross-origin-isolated pages), else one thread. A number
   * asks for that many threads (1..64; falls back to 1 where threads cannot run, saying why in
   * info().build.why). Results are bit-identical for any thread count. */
  threads?: number | 'auto';
  /** an engine from createEngine() to load into (its threads are used; it is not shut down by dispose) */
  engine?: unknown;
  /** the @huggingface/jinja module, to render the model's own chat template (default: imported by
   * name when installed; null: do not use it). Pass it in bundles and browsers, where a bare
   * module name may not resolve. In a Worker it is imported by name inside the Worker. */
  jinja?: { Template: any } | null;
  /** Node: keep downloaded files (URL sources) in this folder, as browsers keep them in the Cache
   * API; a second load of the same weight set reads them from there (also offline) */
  cacheDir?: string;
  /** false: neither read nor write the cache */
  cache?: boolean;
  /** Hugging Face sources (`hf:owner/name[@revision]`, a folder laid out like a hub repository):
   * the hub to ask (default $HF_ENDPOINT in Node, else https://huggingface.co) */
  hubUrl?: string;
  /** Hugging Face sources: the converted matrices' dtype (default 'q8'; vectors stay f32) */
  dtype?: DType;
  /** Hugging Face sources: the embedding's and head's dtype (default: as dtype) */
  embedDtype?: DType;
  /** where a bundle keeps the engine (build/wasm/mlpscope.wasm), its threaded build
   * (mlpscope-mt.wasm) and js/thread-worker.js; default: beside the package's own files */
  wasmUrl?: URL | string;
  mtWasmUrl?: URL | string;
  threadWorkerUrl?: URL | string;
  /** where a bundle keeps the relaxed-SIMD tiles (build/wasm/mlpscope-relaxed.wasm, -relaxed-mt.wasm);
   * missing files mean SIMD128 alone */
  relaxedWasmUrl?: URL | string;
  mtRelaxedWasmUrl?: URL | string;
  /** relaxed SIMD for q8 matrices with int8 activations (prefill tiles; bit-identical results):
   * 'auto' (default) links the relaxed-SIMD module in where the runtime computes what a kernel level
   * needs and keeps a level when it times at least 5 % faster than SIMD128 on the model's own
   * weights; true: the best level that runs here; 'relaxed' / 'relaxedu8': that level; false: SIMD128.
   * E_ARG when asked for and it cannot run here. Node 20 needs --experimental-wasm-relaxed-simd --no-liftoff. */
  relaxedSimd?: 'auto' | boolean | 'relaxed' | 'relaxedu8';
  /** 'test': a checkout's test build of the engine (its kernel and benchmark exports, and the
   * statistics of the test builds); default 'release' */
  build?: 'release' | 'test';
}

/** A weight set in the cache: its folder URL, files (sha256 null for a manifest's last good copy) and bytes. */
export interface CachedModel { url: string; bytes: number; files: { file: string; sha256: string | null; bytes: number }[] }
/** The weight sets in the cache (browsers: the Cache API; Node: `cacheDir`). */
export function listCachedModels(opts?: { cacheDir?: string }): Promise<CachedModel[]>;
/** Removes a weight set (its folder URL or manifest.json URL) from the cache; resolves to the number of files removed. */
export function deleteCachedModel(url: string | URL, opts?: { cacheDir?: string }): Promise<number>;

/** A model's own chat template, as the weight set keeps it. */
export interface ChatTemplateInfo { template: string; bos_token: string | null; eos_token: string | null }

/** `blocks.${layer}.${HookKind}` */
export type HookName = string;

/** A change to a hook point made as the pass goes by (in the engine, in prefill and decode):
 * scale: x *= value; set: x = value or vector (zero-ablation: set with value 0, the default);
 * add: x += value or vector (steering). Later layers, statistics and captures see the change. */
export interface Intervention {
  /** 'blocks.L.<point>', or the point with `layer` */
  hook: HookName | HookKind;
  layer?: number;
  op?: 'scale' | 'set' | 'add';
  value?: number;
  /** one value per listed component (or per component of the hook, when none are listed) */
  vector?: ArrayLike<number>;
  /** the components changed: neurons of an MLP hook, or dimensions of the residual stream (default: all) */
  neurons?: number[];
  dims?: number[];
  /** sequence positions (negative: from the end of this call; default: all) */
  positions?: number[];
  /** the earlier form: op 'scale' with this value */
  scale?: number;
}

export interface ForwardOptions {
  stats?: boolean;
  topK?: number;
  hooks?: HookName[];
  interventions?: Intervention[];
  logits?: LogitsMode;
  /** afterMixer: also the lens of hook_resid_mid (the stream before each layer's MLP) */
  logitLens?: { positions: number[]; k?: number; afterMixer?: boolean };
  /** extend the current sequence instead of starting a fresh one */
  continue?: boolean;
  /** these layers' MLPs run with SiLU replaced by its linear term z/2: each neuron becomes
   *  (w_gate·x)(w_in·x)/2, the bilinear MLP of bilinearView (an ablation) */
  bilinearMlp?: number[];
  /** transcoder features for this call (loadTranscoders): hooks 'blocks.L.transcoder.hook_feature' read them
   *  ([token][feature], dense), interventions on that hook ({hook, op, features, value, positions}) edit them;
   *  replace: the MLPs of `layers` write the transcoders' output (else the MLP's own output stays and edits add what they change) */
  transcoders?: { set: TranscoderSet; layers?: number[]; replace?: boolean };
}

/** Per-layer arrays: stats.X[layer] is a typed array over positions (and the statistic's other
 * dimensions: top_k neurons, DeltaNet heads), one for every statistic of the engine's table (StatArrays). */
export interface Stats extends StatArrays {
  T: number;
  layers: number;
  topK: number;
  mixer: ('full' | 'linear')[];
  /** with Gated DeltaNet layers (qwen3_5): the heads of the per-head statistics */
  gdn_heads?: number;
}

/** token: the vocabulary entry as the tokenizer file spells it (byte-level BPE: "Ġthe"); text: what
 *  a person reads (a lone byte of a character as \xNN, a character finished after its context
 *  marked "但 (2/2)"; never "\uFFFD") */
export interface LensToken { id: number; token: string | undefined; text: string | undefined; logit: number; prob: number }

export interface ForwardResult {
  /** [vocab] for the last token, or [T][vocab] flattened with logits: 'all' */
  logits: Float32Array | null;
  stats: Stats | null;
  /** hook name -> Float32Array [T][width] flattened */
  hooks: Record<string, Float32Array>;
  timings: { total_ms: number; layer_ms: Float64Array | null };
  logitLens?: { position: number; layers: LensToken[][]; afterMixer?: LensToken[][] }[];
  position: number;
}

export interface GenerateOptions {
  /** tokens to generate at most (default 64) */
  maxTokens?: number;
  /** applied in every pass of the generation (prefill and each decode step): steering, ablations */
  interventions?: Intervention[];
  /** 0 (the default) = greedy */
  temperature?: number;
  /** keep the k most probable tokens (0 = no cut) */
  topK?: number;
  /** keep the smallest set of most probable tokens holding this much probability (1 = no cut) */
  topP?: number;
  /** integer in [0, 2^53): the same seed draws the same tokens on every host */
  seed?: number;
  /** what ends generation: token ids (they replace the model's end-of-sequence ids; [] stops on
   * nothing) and strings, matched in the generated text across token boundaries (never emitted;
   * text that could begin one is held back until it cannot). Default: the end-of-sequence ids. */
  stop?: (number | string)[];
  signal?: AbortSignal;
  /** chat prompts: whether the chat template opens a thinking block (Qwen3.5) */
  enableThinking?: boolean;
  /** collect the statistics of every token read, in the generation passes, into the summary */
  stats?: boolean;
  /** with stats: the neurons kept per token in top_idx / top_val (default 8) */
  statsTopK?: number;
}

/** what generate() returns when it ends (also kept as lastGeneration) */
export interface GenerationSummary {
  finishReason: 'stop' | 'length' | 'abort';
  /** the stop string that ended generation, when one did */
  stopString?: string;
  usage: { promptTokens: number; generatedTokens: number; prefillMs: number; decodeMs: number; timeToFirstTokenMs: number;
    /** prompt tokens per second of the prefill */
    prefillTokPerS: number;
    /** tokens per second after the first (which comes out of the prefill), as llama.cpp counts */
    decodeTokPerS: number };
  /** with stats: true, [layer] arrays over every token read (and layer_ms[layer][pass]) */
  stats?: Stats & { layer_ms: Float64Array[] };
}

export interface ChatMessage { role: string; content: string }

export interface GeneratedToken { id: number; text: string; logprob: number }

export interface ModelInfo {
  family: 'llama' | 'qwen3_5' | 'gemma3';
  kernels: string;
  config: Record<string, unknown>;
  params: { total: number; embedding: number; mlp: number; mixer: number; norms: number; lm_head: number };
  dtypes: Record<string, { tensors: number; bytes: number }>;
  tokenizer: Record<string, unknown>;
  contextLength: number;
  source: string;
  /** sha256 of the weight set's manifest.json (it names every shard by its hash, so this identifies
   * the weights: a key for caching results); null for a checkpoint converted while loading */
  manifestSha256: string | null;
  /** bytes: the weights, the sequence state at full context, the wasm memory, and the part of it in use now */
  memory: { weights: number; state: number; heap: number; heapUsed: number };
  /** per layer: full attention, Gated DeltaNet ('linear') or sliding-window attention (Gemma 3's local layers) */
  mixers: ('full' | 'linear' | 'sliding')[];
  /** which build runs: thread count, SIMD128 or scalar kernels, int8 activations, and why */
  build: { threads: number; simd: boolean; activations: ActivationMode | 'f32'; int8Activations: boolean; why: string;
    /** which kernel level the q8 matrices run at, and why (the timing that chose it, or why relaxed SIMD is not used) */
    relaxedSimd: { isa: 'generic' | 'simd128' | 'relaxed' | 'relaxedu8'; used: boolean; why: string;
      timings: { isa: string; tensor: string; rows: number; cols: number; tokens: number; ratio: number; prefillRatio?: number; decodeRatio?: number }[] } };
  /** the hook points of a block, as the engine lists them: name, width for this model, what it holds */
  hooks: { name: HookKind; width: number; what: string }[];
  /** the hooks an intervention can change (every hook point) */
  interventions: HookKind[];
}

export interface TokenPiece { text: string; part?: number; of?: number }

export class Tokenizer {
  kind: string;
  bosId: number;
  eosIds: number[];
  vocabSize: number;
  /** who renders chat messages: 'jinja' (the model's own template through @huggingface/jinja), a
   * kind the engine renders itself, or 'none' (applyChatTemplate throws E_TOKEN) */
  chatTemplate: 'jinja' | ChatKind;
  /** the weight set's own chat template, or null */
  chat: ChatTemplateInfo | null;
  encode(text: string, opts?: { addSpecial?: boolean }): number[];
  decode(ids: ArrayLike<number>): string;
  /** how each token reads, in one call: a character split over tokens is shown whole on each (part k of n); never U+FFFD for split bytes */
  pieces(ids: ArrayLike<number>): TokenPiece[];
  /** Each id as readable text (as `pieces([id])[0].text`: a lone byte of a character as \xNN, never
   *  "\uFFFD"), all in one call; with `after`, as it reads after those tokens ("但 (2/2)") */
  tokenTexts(ids: ArrayLike<number>, opts?: { after?: ArrayLike<number> }): string[];
  idToToken(id: number): string | undefined;
  /** inverse of idToToken */
  tokenToId(token: string): number | undefined;
  /** the pieces the pre-tokenizer cuts (NFC) text into before BPE; for files on the general
   *  pipeline, the pre-tokenizers alone (no normalizer; text a Split removes joins the next piece) */
  pretokenize(text: string): string[];
  /** messages rendered with the tokenizer's chat template */
  applyChatTemplate(messages: ChatMessage[], opts?: { addGenerationPrompt?: boolean; enableThinking?: boolean }): string;
  decoder(): { push(id: number): string; flush(): string };
  dispose(): void;
  [Symbol.dispose](): void;
}

export class Model {
  readonly tokenizer: Tokenizer | null;
  readonly contextLength: number;
  readonly config: Record<string, any>;
  readonly nLayers: number;
  readonly position: number;
  info(): ModelInfo;
  /** every hook name, blocks.{layer}.{hook}, in forward order */
  hookNames(): HookName[];
  forward(ids: ArrayLike<number>, opts?: ForwardOptions): ForwardResult;
  generate(prompt: string | number[] | ChatMessage[], opts?: GenerateOptions): AsyncGenerator<GeneratedToken, GenerationSummary>;
  /** the summary of the last generate() that ended */
  lastGeneration?: GenerationSummary;
  setDeltaNetMode(mode: { recurrent?: boolean; chunk?: number }): void;
  /** A neuron's down_proj column and its direct effect on the logits (the layers after it ignored). */
  neuronOutput(layer: number, neuron: number, opts?: { k?: number }): NeuronOutput;
  /** every neuron of the chosen layers (default all) in its input-output class, from the weights alone */
  neuronWeightClasses(opts?: WeightClassOptions & { layers?: number[] }): WeightClassResult;
  /** one neuron's weight cosines, norms and class */
  neuronWeightClass(layer: number, neuron: number, opts?: WeightClassOptions): NeuronWeightClass;
  /** a layer's MLP as a bilinear form read out along a token, a direction or one neuron */
  bilinearView(opts: BilinearViewOptions): BilinearView;
  /** element (row, col) of the matrix `tensor` (e.g. 'layers.2.mlp.down_proj') as the kernels read it */
  weight(tensor: string, row: number, col: number): number;
  /** one row of the matrix `tensor`, dequantized */
  weightRow(tensor: string, row: number): Float32Array;
  /** sets single weights to exactly 0 in place until restore() (not over the Worker) */
  zeroWeights(list: { tensor: string; row: number; col: number }[]): { restore(): void };
  /** how far each MLP is from its bilinear stand-in on a text (or ids) */
  bilinearGap(input: string | ArrayLike<number>, opts?: { layers?: number[] }): BilinearGap;
  /** lm_head · ((offset + final_norm) ⊙ v) and the tokens it raises / lowers most; normalize: v / rms(v) first (the logit lens of a residual vector). */
  unembedDirection(v: ArrayLike<number>, opts?: { k?: number; normalize?: boolean }): DirectionLogits;
  /** activation patching: clean values of `hook` patched into the corrupted run, one layer and position at a time */
  activationPatching(clean: ArrayLike<number>, corrupted: ArrayLike<number>, opts: PatchingOptions): PatchingResult;
  /** the logit of a token (or a logit difference) at a position, as the sum of the embedding's, every mixer's and every MLP's contribution */
  /** mean of a hook point's activations over prompts a minus over prompts b (at each prompt's last token, or the mean over its tokens): a vector for an 'add' intervention */
  steeringVector(a: string | ArrayLike<number> | (string | ArrayLike<number>)[], b: string | ArrayLike<number> | (string | ArrayLike<number>)[], opts: { hook: string; at?: 'last' | 'mean' }): SteeringVector;
  decomposePrediction(ids: ArrayLike<number>, opts?: { position?: number; token?: number; logitDiff?: [number, number]; neurons?: number; transcoder?: { set: TranscoderSet; layer: number } }): Decomposition;
  reset(): void;
  dispose(): void;
  /** `using model = await loadModel(…)` */
  [Symbol.dispose](): void;
}
export interface PatchingOptions {
  /** a hook point of a block (default 'hook_resid_pre'); 'transcoder.hook_feature' with `transcoders` */
  hook?: HookKind | 'transcoder.hook_feature';
  /** with hook 'transcoder.hook_feature': the set (layers default to its layers); every feature of a layer is set to its clean value at the position */
  transcoders?: { set: TranscoderSet };
  /** with one layer: each of these features patched alone (the rows of value / restored are these features) */
  features?: number[];
  /** logit(a) − logit(b) at the last position, or KL(clean ‖ patched) of the next-token distribution */
  metric: { logitDiff: [number, number] } | 'kl';
  layers?: number[];
  positions?: number[];
}
/** value and restored are [layer][position]; restored: 1 = the clean answer is back, 0 = no change */
export interface PatchingResult { hook: string; layers: number[]; positions: number[]; clean: number; corrupted: number; value: number[][]; restored: number[][]; features?: number[] }
/** parts[].value sum to `sum`; `logit` is the model's own value; scale is the frozen 1/rms of the final norm */
export interface Decomposition {
  position: number; token?: number; logitDiff?: [number, number]; logit: number; sum: number; scale: number;
  parts: { name: string; kind: 'embed' | 'attention' | 'deltanet' | 'mlp'; layer: number | null; value: number }[];
  /** with `neurons: L`: layer L's MLP part, one term per neuron (values[j]), and their sum */
  neurons?: { layer: number; values: Float32Array; sum: number };
  /** with `transcoder: {set, layer}`: layer L's MLP part in transcoder features (the ones that fire, by |value|), the decoder bias's term and the error; sum = their total = the MLP part */
  features?: { layer: number; active: { feature: number; activation: number; value: number }[]; bias: number; error: number; sum: number };
}
export interface SteeringVector { hook: string; vector: Float32Array; norm: number; count: [number, number] }
export interface LogitToken { id: number; token: string | undefined; text: string | undefined; logit: number }
export interface DirectionLogits { logits: Float32Array; promoted: LogitToken[]; suppressed: LogitToken[] }
export interface NeuronOutput extends DirectionLogits { direction: Float32Array; norm: number }

/** source: a weight set (folder path in Node, or URL); `hf:owner/name[@revision]`; or a folder (URL,
 *  or path in Node) laid out like a Hugging Face repository, converted while it streams in and kept
 *  converted in the cache (browsers: the Cache API; Node: cacheDir, default $MLPSCOPE_CACHE or
 *  ~/.cache/mlpscope). */
export function loadModel(source: string | URL, opts?: LoadOptions): Promise<Model>;
/** the engine's built-in shapes ('qwen3.5-0.8b', 'gemma3-270m', 'gemma3-1b', 'llama-398m') */
export const CONFIG_PRESETS: readonly string[];
/** A configuration (preset name, config.json text or object, or {family, config}) without weights:
 *  its family, its keys as the engine reads them, and its parameter counts. */
export function configSummary(config: string | object, opts?: { engine?: unknown }): Promise<{
  family: 'llama' | 'qwen3_5' | 'gemma3'; config: Record<string, unknown>;
  params: { total: number; embedding: number; mlp: number; mixer: number; norms: number; lm_head: number; mlp_per_layer: number } }>;
/** The demo model shipped in the package (weights/demo/): a file: URL in Node, beside the package's files in a browser. */
export const demoModelUrl: URL;
/** Only a tokenizer: from a weight set, or from a Hugging Face folder with tokenizer.json. */
export function loadTokenizer(source: string | URL, opts?: { engine?: unknown; jinja?: { Template: any } | null }): Promise<Tokenizer>;

/** A labelled probe text: character spans with labels such as 'city', 'negation', 'code'. */
export interface Probe { text: string; spans: { start: number; end: number; label: string }[]; lang?: string }
/** pos: labels that make a token positive; neg: labels of the negatives (omitted: every other
 *  non-blank token); at 'word-end': a labelled span counts once, at its last token. */
export interface FeatureSpec { pos: string[]; neg?: string[]; at?: 'token' | 'word-end' }
/** A neuron (mlp.hook_post) and its ROC AUC: chosen on the first part of the probes, heldOutAuc on the rest. */
export interface FeatureNeuron { feature: string; layer: number; neuron: number; sign: 1 | -1; auc: number; heldOutAuc: number; nPos: number; nNeg: number; top?: TopActivation[];
  /** with `transcoders`: 'transcoder', and `neuron` is the feature's index in the set */
  unit?: 'transcoder';
  /** with `combine` (each layer's first candidate): the held-out AUC of the layer's n best units read together */
  combined?: { n: number; heldOutAuc: number }[];
  /** quantiles (with topActivations): the token at each quantile of sign × activation over the probes */
  atQuantiles?: (TopActivation & { q: number })[];
  /** probes that carry `lang`: the held-out AUC within each language's probes */
  heldOutAucByLang?: Record<string, number> }
/** The mean-difference direction of the MLP input (hook_resid_mid divided by its RMS) for a feature. */
export interface FeatureDirection { feature: string; layer: number; auc: number; heldOutAuc: number; direction: Float32Array; threshold: number }
/** topActivations: k, each best neuron also gets `top`, its k strongest activations over all the probes;
 *  quantiles (with topActivations): each best neuron also gets `atQuantiles`, as neuronTopActivations({quantiles});
 *  maxBytes (default 256 MiB): activations held at once, past it the layers go in groups (one pass each);
 *  onProgress: after each probe's forward pass (total = passes × probes);
 *  byLang: also search within each language's probes alone (probes that carry `lang`). */
export interface FeatureOptions { features?: Record<string, FeatureSpec>; layers?: number[]; top?: number; heldOutFrom?: number; directions?: boolean; topActivations?: number; quantiles?: number[]; maxBytes?: number; byLang?: boolean; onProgress?: (p: { done: number; total: number }) => void;
  /** search this set's features (blocks.L.transcoder.hook_feature) instead of the neurons, on its layers */
  transcoders?: TranscoderSet;
  /** sizes n: each layer's first candidate also gets `combined`, its layer's n best units (by AUC on the first part) weighted by |mean⁺ − mean⁻| / pooled variance (signed as each unit's AUC orients it) and summed, scored on the held-out part */
  combine?: number[] }
export interface FeatureResult { best: FeatureNeuron[]; perLayer: Record<string, FeatureNeuron[]>; tokens: number; directions?: FeatureDirection[];
  /** byLang: the best neuron per feature within each language's probes (chosen on the first half of them, reported on the second) */
  bestByLang?: Record<string, FeatureNeuron[]> }
export const DEFAULT_FEATURES: Record<'city' | 'negation' | 'code', FeatureSpec>;
/** Ranks MLP neurons by how selectively they fire on labelled tokens. */
export function findFeatureNeurons(model: Model, probes: Probe[], opts?: FeatureOptions): FeatureResult;
/** One place where a neuron fires: `token` indexes the text's ids (with the BOS); before/after are up to `window` decoded tokens; labels (probe texts only): the labels of the spans over the token, spans: those spans' label and text (a token longer than its span holds neighbouring words too). */
export interface TopActivation { text: number; token: number; activation: number; before: string; piece: string; after: string; labels?: string[]; spans?: { label: string; text: string }[] }
export interface TopActivationOptions { layer: number; neuron: number; k?: number; sign?: 1 | -1; window?: number;
  /** also one example at each of these quantiles (0..1) of sign × activation over every token: examples across its range */
  quantiles?: number[];
  /** `neuron` is a feature of this transcoder set (blocks.{layer}.transcoder.hook_feature) */
  transcoders?: TranscoderSet }
/** top: the k largest sign × activation; tokens: tokens scanned; mean: their mean activation; positive: share with sign × activation > 0. */
/** histogram: the activations (times sign) of every token in `counts.length` equal bins from lo to hi */
export interface TopActivationResult { top: TopActivation[]; tokens: number; mean: number; positive: number; histogram: { lo: number; hi: number; counts: number[] }; atQuantiles?: (TopActivation & { q: number })[] }
/** Where one MLP neuron (blocks.{layer}.mlp.hook_post) fires most over a set of texts. */
export function neuronTopActivations(model: Model, texts: (string | Probe)[], opts: TopActivationOptions): TopActivationResult;
/** one sign quadrant of a gated neuron: gate = sign of mlp.hook_pre, up = sign of mlp.hook_pre_linear */
export interface Quadrant {
  gate: '+' | '-'; up: '+' | '-';
  /** tokens in it, and their share of all tokens */
  count: number; frequency: number;
  meanGate: number; meanUp: number; meanOutput: number;
  /** the quadrant's share of Σ|mlp.hook_post| over all tokens */
  share: number;
  /** its k tokens of largest |output|, in context */
  top: TopActivation[];
}
export interface QuadrantResult { layer: number; neuron: number; tokens: number; zero: number; quadrants: Quadrant[] }
/** a gated neuron's four (sign gate, sign up) quadrants over texts: one forward pass per text */
export function neuronQuadrants(model: Model, texts: (string | Probe)[], opts: { layer: number; neuron: number; k?: number; window?: number }): QuadrantResult;
/** The input-output classes of a gated neuron by the cosines of its w_gate, w_in (up_proj row) and
 *  w_out (down_proj column) (Gerstner & Schütze 2025), in the order of the class codes. */
export type WeightClass = 'enrichment' | 'conditional_enrichment' | 'depletion' | 'conditional_depletion' | 'proportional_change' | 'orthogonal_output';
export const WEIGHT_CLASSES: readonly WeightClass[];
export interface WeightClassOptions {
  /** |cos| above it counts as aligned (default 0.5), in (0, 1) */
  threshold?: number;
  /** multiply the MLP RMSNorm's gain into w_gate and w_in first: the stream directions they read (default true) */
  foldNorm?: boolean;
}
/** One layer: per neuron the cosines and norms, its class code (an index into WEIGHT_CLASSES) and
 *  whether it is atypical (cos(w_gate, w_in) not as its class's prototype has it). */
export interface WeightClassLayer {
  layer: number;
  cosGateIn: Float32Array; cosGateOut: Float32Array; cosInOut: Float32Array;
  normGate: Float32Array; normIn: Float32Array; normOut: Float32Array;
  classes: Uint8Array; atypical: Uint8Array;
  counts: Record<WeightClass, number>; atypicalCount: number;
  medianCosInOut: number;
}
export interface WeightClassResult { threshold: number; foldNorm: boolean; classes: readonly WeightClass[]; layers: WeightClassLayer[] }
export interface NeuronWeightClass { layer: number; neuron: number; threshold: number; foldNorm: boolean;
  cosGateIn: number; cosGateOut: number; cosInOut: number; normGate: number; normIn: number; normOut: number; class: WeightClass; atypical: boolean }
/** One eigenpair of an interaction matrix: value, unit vector (a residual-stream direction, its
 *  largest component positive), ‖Qv − λv‖, and the direction read by the head at both ends. */
export interface BilinearEigen { value: number; vector: Float32Array; residual: number; promoted: LogitToken[]; suppressed: LogitToken[] }
export interface BilinearView {
  layer: number; source: 'token' | 'direction' | 'neuron'; token?: number; neuron?: number; foldNorm: boolean;
  /** every neuron's read-out weight c_k = u·w_out,k (one-hot for a neuron alone) */
  readout: Float32Array;
  /** hidden × hidden, row-major, symmetric: read-out ≈ x̂ᵀQx̂ with SiLU replaced by z/2 */
  Q: Float32Array;
  eigen: BilinearEigen[];
  /** Σλ² = ‖Q‖²_F, Σλ = trace, and the share of Σλ² the returned pairs hold */
  frobenius2: number; trace: number; explained: number;
}
export interface BilinearViewOptions { layer: number; token?: number; direction?: ArrayLike<number>; neuron?: number;
  /** eigenpairs of largest |value| (default 8) */
  k?: number; foldNorm?: boolean;
  /** tokens per end when a direction is read by the head (default 5) */
  tokens?: number }
/** per layer: mean KL(real ‖ bilinear) over the positions (nats) and the change of the mean next-token loss */
export interface BilinearGap { tokens: number; loss: number; layers: { layer: number; kl: number; dLoss: number }[]; all: { kl: number; dLoss: number } }
/** Dense symmetric eigendecomposition (cyclic Jacobi, float64; `a` is overwritten): column i of `vectors` belongs to values[i]. */
export function jacobiEigen(a: Float64Array, n: number): { values: Float64Array; vectors: Float64Array };
/** The k eigenpairs of largest |value| of a symmetric n×n matrix (Lanczos with full reorthogonalization). */
export function topEigen(Q: ArrayLike<number>, n: number, k: number): { value: number; vector: Float32Array; residual: number }[];
/** A language-specific neuron (Tang et al. 2024): its activation probability (share of tokens with mlp.hook_pre > 0) and mean mlp.hook_post per language, the entropy of the normalised probabilities, and the language it fires for most. */
export interface LanguageNeuron { layer: number; neuron: number; entropy: number; probs: Record<string, number>; mean: Record<string, number>; lang: string }
export interface LanguageNeuronResult { langs: string[]; tokens: Record<string, number>; threshold: number; neurons: LanguageNeuron[]; byLang: Record<string, LanguageNeuron[]>;
  /** [layer × intermediate] per language */
  probs: Record<string, Float32Array>; means: Record<string, Float32Array>; entropy: Float32Array }
/** Neurons by language activation probability entropy over texts in two or more languages: the `share` (default 0.01) of all neurons of lowest entropy among those whose largest probability reaches the `quantile` (default 0.95) of all probabilities. */
export function languageNeurons(model: Model, texts: Record<string, string[]>, opts?: { share?: number; quantile?: number }): LanguageNeuronResult;
export interface LanguageSwitchResult { neurons: number; activated: number; maxTokens: number; before: number; after: number; changed: number;
  prompts: { prompt: string; before: { text: string; cjk: number }; after: { text: string; cjk: number } }[] }
/** Greedy continuations with the neurons switched off (and `activate` held at their values), and the share of Chinese characters before and after. */
export function languageSwitch(model: Model, prompts: string[], opts: { neurons: { layer: number; neuron: number }[]; activate?: { layer: number; neuron: number; value: number }[]; maxTokens?: number }): LanguageSwitchResult;
/** Mean next-token loss per language with the neurons switched off, against the unchanged model. */
export function languageLoss(model: Model, texts: Record<string, string[]>, opts: { neurons: { layer: number; neuron: number }[] }): Record<string, { tokens: number; before: number; after: number; change: number }>;
export interface SuperWeightLayer { layer: number; token: number; row: number; col: number; weight: number; activation: number; output: number;
  /** activation × weight / output: how much of the spike the one product makes */
  share: number;
  /** |output| / median |hook_mlp_out| of the layer over the prompt */
  spike: number }
export interface SuperWeightResult { tokens: number; evalTokens: number; loss: number; layers: SuperWeightLayer[];
  candidates: (SuperWeightLayer & { tensor: string; loss: number; dLoss: number; control: { row: number; col: number; value: number; loss: number; dLoss: number } })[] }
/** Super weights (Yu et al. 2024): per layer the largest |hook_mlp_out| on the prompt and the down_proj weight that makes most of it; the k layers whose spike stands out most tested by zeroing that weight against zeroing the largest other weight of the matrix. */
export function superWeights(model: Model, prompt: string | ArrayLike<number>, opts?: { k?: number; evalTexts?: (string | ArrayLike<number>)[] }): SuperWeightResult;

/** Options of trainTranscoders (defaults: TRANSCODER_DEFAULTS). */
export interface TranscoderTrainOptions {
  /** the MLPs to train a transcoder for (default every layer) */
  layers?: number[];
  features?: number; k?: number;
  /** training tokens from the project's corpus, and held-out tokens to score on (0: no scores) */
  tokens?: number; valTokens?: number;
  epochs?: number; batch?: number; buffer?: number; lr?: number; seed?: number; corpusSeed?: number; valSeed?: number;
  /** score the replacement (KL, loss with each MLP and all of them replaced; default true) */
  replacement?: boolean;
  /** sequence length (default min(128, the model's context)) */
  ctx?: number;
  /** the token rows (at most ctx ids each) instead of the project's corpus, called with corpusSeed to train and valSeed to score (a model without a tokenizer needs it; not in a Worker) */
  sequences?: (seed: number, ctx: number) => Iterable<ArrayLike<number>>;
  /** layers (while training): each layer's last batch — its FVU and the features dead so far */
  onProgress?: (p: { phase: 'train' | 'score'; done: number; total: number; tokensPerSecond: number; secondsLeft: number; layers?: { layer: number; steps: number; fvu: number | null; dead: number }[] }) => void;
  signal?: AbortSignal;
  /** sequences between two progress reports / chances to stop (default 8) */
  yieldEvery?: number;
}
/** One layer's held-out scores (null where not measured). */
export interface TranscoderLayerScores {
  layer: number; features: number; k: number; steps: number; train_tokens: number; train_fvu: number | null; train_dead: number;
  /** fraction of the MLP output's variance unexplained, mean features above 0 per token, features that never fired */
  fvu: number | null; l0: number | null; dead: number | null;
  /** with this MLP replaced: KL(model || replaced) per token, next-token loss; the loss with the MLP zeroed; (zeroed − replaced) / (zeroed − model) */
  kl: number | null; ce: number | null; ce_zero: number | null; recovered: number | null;
}
export interface TranscoderScores {
  eval_tokens: number; layers: TranscoderLayerScores[]; ce_model: number | null;
  /** every trained layer replaced at once */
  all: { kl: number | null; ce: number | null };
}
export interface TranscoderTrainResult {
  layers: number[]; features: number; k: number; trainTokens: number; trainSeconds: number; tokensPerSecond: number;
  scoreSeconds: number; threads: number; scores: TranscoderScores;
  /** the transcoder set (docs/format.md): write both into one folder */
  files: { 'manifest.json': string; 'transcoders.bin': Uint8Array };
}
export const TRANSCODER_DEFAULTS: Readonly<Required<Pick<TranscoderTrainOptions, 'features' | 'k' | 'tokens' | 'valTokens' | 'epochs' | 'batch' | 'buffer' | 'lr' | 'seed' | 'corpusSeed' | 'valSeed' | 'replacement'>>>;
/** What trainTranscoders allocates for these options and what the engine's memory has left (its own preflight: E_MEMORY when bytes > free). */
export function transcoderMemory(model: Model, opts?: Pick<TranscoderTrainOptions, 'layers' | 'features' | 'k' | 'buffer' | 'batch' | 'ctx'>): { bytes: number; free: number; parts: { weights: number; activations: number; scoring: number; saved: number } };
/** Trains TopK transcoders for some MLPs of a loaded model on the project's corpus and scores them on held-out text. */
export function trainTranscoders(model: Model, opts?: TranscoderTrainOptions): Promise<TranscoderTrainResult>;
/** A transcoder set loaded into a model's engine. */
export class TranscoderSet {
  readonly layers: number[]; readonly features: number; readonly k: number; readonly scores: TranscoderScores | null;
  /** what a feature writes (its decoder row) and that row read by the head, like Model.neuronOutput */
  featureOutput(layer: number, feature: number, opts?: { k?: number }): { direction: Float32Array; norm: number } & DirectionLogits;
  dispose(): void;
}
/** One labelled feature: the best neuron against the best transcoder feature (held-out AUC), and how many of the feature's layer's neurons read together match it. */
export interface NeuronsVsFeaturesRow { feature: string; neuron: FeatureNeuron; transcoder: FeatureNeuron; neuronsToMatch: number | null; combined: { n: number; heldOutAuc: number }[];
  byLang?: Record<string, { neuron: FeatureNeuron | null; transcoder: FeatureNeuron | null }> }
/** Neurons against transcoder features on labelled probes (two searches over them). */
export function neuronsVsFeatures(model: Model, set: TranscoderSet, probes: Probe[], opts?: { features?: Record<string, FeatureSpec>; sizes?: number[]; byLang?: boolean; onProgress?: (p: { done: number; total: number }) => void }): { rows: NeuronsVsFeaturesRow[]; tokens: number };
/** Loads a transcoder set for this model: a folder (Node), a URL, or a trainTranscoders result's files. */
export function loadTranscoders(model: Model, source: string | URL | { 'manifest.json': string; 'transcoders.bin': Uint8Array }): Promise<TranscoderSet>;
/** The corpus as token rows of T tokens (documents encoded one by one, each followed by the stop token eos). */
export function corpusSequences(model: Model, seed: number, T: number, eos: number): Generator<Int32Array, never, unknown>;
/** The share of Chinese characters among the Chinese and Latin letters of a text (NaN without either). */
export function cjkShare(text: string): number;
/** The class of one neuron from its three cosines (the rule neuronWeightClasses applies). */
export function weightClassOf(cosGateIn: number, cosGateOut: number, cosInOut: number, threshold?: number): { class: WeightClass; code: number; atypical: boolean };
/** the first token of every span labelled `label` in the probes (language `lang` only, when given): sorted ids */
export function featureTokens(model: Model, probes: Probe[], opts: { label: string; lang?: string }): number[];
/** P(any of `tokens`) under softmax(logits), summed in double */
export function tokenSetProbability(logits: ArrayLike<number>, tokens: Iterable<number>): number;
export interface TokenWriter { layer: number; neuron: number; activation: number; p: number; delta: number }
export interface TokenWritersResult { p: number; passes: number; candidates: TokenWriter[] }
/** which MLP neurons write a set of next tokens: the perLayer (default 8) most active at the last token of every
 * layer, each switched off for one pass; sorted by the drop of P(tokens) at the last position */
export function neuronsForTokens(model: Model, text: string | ArrayLike<number>, opts: { tokens: number[]; perLayer?: number }): TokenWritersResult;
export interface PushRead { p: number; top: (LogitToken & { prob: number })[] }
export interface PushResult { layer: number; neuron: number; before: PushRead; after: (PushRead & { value: number })[] }
/** one neuron's mlp.hook_post plus each value at every position: P(tokens) at the last position and the top k next tokens */
/** with `transcoders`, `neuron` is a feature of the set and the push adds to its transcoder.hook_feature */
export function pushNeuron(model: Model, text: string | ArrayLike<number>, opts: { layer: number; neuron: number; values: number[]; tokens: number[]; k?: number; transcoders?: TranscoderSet }): PushResult;
/** A transcoder feature's card: where it fires (top, atQuantiles, histogram), how often, what it writes, its computed label (the probe label its activation separates best on the first half; heldOutAuc on the second), and `scale` (its strongest activation: the unit of a calibrated push). */
export interface FeatureCard extends TopActivationResult { layer: number; feature: number; scale: number; frequency: number;
  label: { label: string; auc: number; heldOutAuc: number; count: number } | null; labels: { label: string; auc: number; heldOutAuc: number; count: number }[];
  output: { direction: Float32Array; norm: number } & DirectionLogits }
export function featureCard(model: Model, set: TranscoderSet, probes: Probe[], opts: { layer: number; feature: number; k?: number; quantiles?: number[]; logits?: number; window?: number }): FeatureCard;
/** The features of a set that fire on a text: per token its k strongest, and the text's features ranked by their largest activation. */
export interface FeaturesOnText { layer: number; ids: number[]; tokens: { token: number; id: number; piece: string | null; features: { feature: number; activation: number }[] }[]; features: { feature: number; activation: number; token: number }[] }
export function featuresOnText(model: Model, set: TranscoderSet, text: string | ArrayLike<number>, opts: { layer: number; k?: number; top?: number }): FeaturesOnText;
/** Mann-Whitney AUC: P(a positive scores above a negative), ties count half. */
export function auc(pos: ArrayLike<number>, neg: ArrayLike<number>): number;
/** Character offsets [start, end) of each token in the decoded text. */
export function tokenOffsets(tokenizer: Tokenizer, ids: ArrayLike<number>): [number, number][];

/** options as the Worker takes them: a WorkerTranscoderSet where the in-process call takes a TranscoderSet */
type InWorker<O, S> = Omit<O, 'transcoders'> & { transcoders?: S };
type Async<T> = T extends (...a: infer A) => infer R ? (...a: A) => Promise<Awaited<R>> : never;
/** The model in a Web Worker: the same calls as Model, each returning a promise. */
export class WorkerModel {
  readonly tokenizer: { [K in 'encode' | 'decode' | 'pieces' | 'tokenTexts' | 'idToToken' | 'tokenToId' | 'pretokenize' | 'applyChatTemplate']: Async<Tokenizer[K]> } & { kind: string; bosId: number; eosIds: number[]; vocabSize: number; chatTemplate: Tokenizer['chatTemplate'] } | null;
  readonly contextLength: number;
  readonly config: Record<string, any>;
  readonly nLayers: number;
  info(): Promise<ModelInfo>;
  hookNames(): Promise<HookName[]>;
  forward(ids: ArrayLike<number>, opts?: InWorker<ForwardOptions, { set: WorkerTranscoderSet; layers?: number[]; replace?: boolean }>): Promise<ForwardResult>;
  generate(prompt: string | number[] | ChatMessage[], opts?: GenerateOptions): AsyncGenerator<GeneratedToken, GenerationSummary>;
  /** the summary of the last generate() that ended */
  lastGeneration?: GenerationSummary;
  findFeatureNeurons(probes: Probe[], opts?: InWorker<FeatureOptions, WorkerTranscoderSet>): Promise<FeatureResult>;
  neuronTopActivations(texts: (string | Probe)[], opts: InWorker<TopActivationOptions, WorkerTranscoderSet>): Promise<TopActivationResult>;
  neuronQuadrants(texts: (string | Probe)[], opts: { layer: number; neuron: number; k?: number; window?: number }): Promise<QuadrantResult>;
  featureTokens(probes: Probe[], opts: { label: string; lang?: string }): Promise<number[]>;
  neuronsForTokens(text: string | ArrayLike<number>, opts: { tokens: number[]; perLayer?: number }): Promise<TokenWritersResult>;
  pushNeuron(text: string | ArrayLike<number>, opts: { layer: number; neuron: number; values: number[]; tokens: number[]; k?: number; transcoders?: WorkerTranscoderSet }): Promise<PushResult>;
  featureCard(set: WorkerTranscoderSet, probes: Probe[], opts: { layer: number; feature: number; k?: number; quantiles?: number[]; logits?: number; window?: number }): Promise<FeatureCard>;
  featuresOnText(set: WorkerTranscoderSet, text: string | ArrayLike<number>, opts: { layer: number; k?: number; top?: number }): Promise<FeaturesOnText>;
  neuronOutput(layer: number, neuron: number, opts?: { k?: number }): Promise<NeuronOutput>;
  neuronWeightClasses(opts?: WeightClassOptions & { layers?: number[] }): Promise<WeightClassResult>;
  neuronWeightClass(layer: number, neuron: number, opts?: WeightClassOptions): Promise<NeuronWeightClass>;
  bilinearView(opts: BilinearViewOptions): Promise<BilinearView>;
  weight(tensor: string, row: number, col: number): Promise<number>;
  superWeights(prompt: string | ArrayLike<number>, opts?: { k?: number; evalTexts?: (string | ArrayLike<number>)[] }): Promise<SuperWeightResult>;
  /** trainTranscoders in the worker: onProgress and signal stay on this side (aborting stops the run there) */
  trainTranscoders(opts?: TranscoderTrainOptions): Promise<TranscoderTrainResult>;
  bilinearGap(input: string | ArrayLike<number>, opts?: { layers?: number[] }): Promise<BilinearGap>;
  languageNeurons(texts: Record<string, string[]>, opts?: { share?: number; quantile?: number }): Promise<LanguageNeuronResult>;
  languageSwitch(prompts: string[], opts: { neurons: { layer: number; neuron: number }[]; activate?: { layer: number; neuron: number; value: number }[]; maxTokens?: number }): Promise<LanguageSwitchResult>;
  languageLoss(texts: Record<string, string[]>, opts: { neurons: { layer: number; neuron: number }[] }): Promise<Record<string, { tokens: number; before: number; after: number; change: number }>>;
  unembedDirection(v: ArrayLike<number>, opts?: { k?: number; normalize?: boolean }): Promise<DirectionLogits>;
  activationPatching(clean: ArrayLike<number>, corrupted: ArrayLike<number>, opts: InWorker<PatchingOptions, { set: WorkerTranscoderSet }>): Promise<PatchingResult>;
  steeringVector(a: string | ArrayLike<number> | (string | ArrayLike<number>)[], b: string | ArrayLike<number> | (string | ArrayLike<number>)[], opts: { hook: string; at?: 'last' | 'mean' }): Promise<SteeringVector>;
  decomposePrediction(ids: ArrayLike<number>, opts?: { position?: number; token?: number; logitDiff?: [number, number]; neurons?: number; transcoder?: { set: WorkerTranscoderSet; layer: number } }): Promise<Decomposition>;
  /** a transcoder set loaded into the worker's model (a URL or folder, or a trainTranscoders result's files) */
  loadTranscoders(source: string | URL | { 'manifest.json': string; 'transcoders.bin': Uint8Array }): Promise<WorkerTranscoderSet>;
  neuronsVsFeatures(set: WorkerTranscoderSet, probes: Probe[], opts?: { features?: Record<string, FeatureSpec>; sizes?: number[]; byLang?: boolean; onProgress?: (p: { done: number; total: number }) => void }): Promise<{ rows: NeuronsVsFeaturesRow[]; tokens: number }>;
  setDeltaNetMode(mode: { recurrent?: boolean; chunk?: number }): Promise<void>;
  reset(): Promise<void>;
  dispose(): Promise<void>;
  /** `await using model = await loadModelInWorker(…)` */
  [Symbol.asyncDispose](): Promise<void>;
}
/** A transcoder set held in the worker's engine (WorkerModel.loadTranscoders). */
export class WorkerTranscoderSet {
  readonly handle: number; readonly layers: number[]; readonly features: number; readonly k: number; readonly scores: TranscoderScores | null;
  featureOutput(layer: number, feature: number, opts?: { k?: number }): Promise<{ direction: Float32Array; norm: number } & DirectionLogits>;
  dispose(): Promise<void>;
}
/** The model in a worker (a Web Worker in browsers, node:worker_threads in Node); every method async. */
export function loadModelInWorker(source: string | URL, opts?: LoadOptions & { workerUrl?: string | URL }): Promise<WorkerModel>;
/** the k most likely tokens; with `after` (the ids before the prediction), each text reads as it would after them */
export function topTokens(logits: Float32Array, k: number, tokenizer?: Tokenizer | null, opts?: { after?: ArrayLike<number> }): LensToken[];
/** KL(p ‖ q) in nats between the softmaxes of two logit vectors, over their first n entries (default all) */
export function klDivergence(a: ArrayLike<number>, b: ArrayLike<number>, n?: number): number;
export function fmtBytes(n: number): string;
/** A wasm engine instance; threads > 1 starts the multi-threaded build (E_ARG where it cannot run). */
export function createEngine(opts?: { wasmBinary?: ArrayBuffer | Uint8Array; wasmUrl?: URL | string; mtWasmBinary?: ArrayBuffer | Uint8Array;
  mtWasmUrl?: URL | string; threadWorkerUrl?: URL | string; relaxedWasmUrl?: URL | string; mtRelaxedWasmUrl?: URL | string; threads?: number;
  build?: 'release' | 'test'; relaxedSimd?: 'auto' | boolean | 'relaxed' | 'relaxedu8' }): Promise<{ threads: number; shutdown(): void; info: EngineInfo;
  relaxed: { linked: boolean; why: string; levels: { relaxed: boolean; relaxedu8: boolean } } }>;
/** What the engine can show, as it lists itself (C's tables). */
export interface EngineInfo {
  hooks: { name: HookKind; id: number; width: 'hidden_size' | 'intermediate_size'; what: string }[];
  interventions: HookKind[];
  intervention_ops: ('scale' | 'set' | 'add')[];
  stats: { name: StatName; id: number; type: 'f32' | 'i32' | 'f64'; shape: StatDim[]; when: 'always' | 'gdn'; what: string }[];
  /** the engine's error codes, by code (E_ENGINE is the JS side's own) */
  errors: ErrorCode[];
  /** by code, as are chat_kinds and logits_modes */
  activations: ActivationMode[];
  chat_kinds: ChatKind[];
  logits_modes: LogitsMode[];
  /** how the logit lens results are laid out, and the hook point of each kind */
  lens: { shape: ('position' | 'kind' | 'layer' | 'k')[]; kinds: HookKind[] };
  dtypes: { name: string; id: number; short: string | null; in_files: boolean }[];
  /** the values per neuron of ms_mlp_neuron_geometry, in its order (neuronWeightClasses) */
  neuron_geometry: ('cos_gate_in' | 'cos_gate_out' | 'cos_in_out' | 'norm_gate' | 'norm_in' | 'norm_out')[];
}
