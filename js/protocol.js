// The worker protocol: the one list of what a WorkerModel (worker-client.js) asks of its worker
// (worker.js). Both sides are built from these rows, and tests/types.test.js checks that the
// WorkerModel declared in index.d.ts has exactly these methods.

/** Model methods proxied as they are: the worker runs model[name](...args). `arrays`: arguments
 *  that are array-likes, sent as plain arrays. */
export const MODEL_CALLS = {
  info: {},
  forward: { arrays: [0] },
  reset: {},
  setDeltaNetMode: {},
  neuronOutput: {},
  neuronWeightClasses: {},
  neuronWeightClass: {},
  bilinearView: {},
  bilinearGap: { arrays: [0] },
  weight: {},
  unembedDirection: { arrays: [0] },
  hookNames: {},
  activationPatching: { arrays: [0, 1] },
  decomposePrediction: { arrays: [0] },
  steeringVector: {},
};

/** Tokenizer methods proxied as they are (WorkerModel.tokenizer[name]). */
export const TOKENIZER_CALLS = {
  encode: {},
  decode: { arrays: [0] },
  pieces: { arrays: [0] },
  tokenTexts: { arrays: [0] },
  idToToken: {},
  tokenToId: {},
  pretokenize: {},
  applyChatTemplate: {},
};

/** Analysis functions of features.js, language.js, superweights.js and transcoder.js run in the worker on its model:
 *  WorkerModel[name](...args) is name(model, ...args) there. `progress`: an onProgress option
 *  stays on this side and the worker posts progress messages. `signal`: an AbortSignal option
 *  stays on this side and aborting it stops the call in the worker. `optsOnly`: the function takes
 *  only its options, name(model, opts). */
export const FUNCTION_CALLS = {
  findFeatureNeurons: { progress: true },
  neuronTopActivations: {},
  neuronQuadrants: {},
  featureTokens: {},
  neuronsForTokens: { arrays: [0] },
  pushNeuron: { arrays: [0] },
  languageNeurons: {},
  languageSwitch: {},
  languageLoss: {},
  superWeights: { arrays: [0] },
  trainTranscoders: { progress: true, signal: true, optsOnly: true },
  neuronsVsFeatures: { progress: true, optsAt: 2 },
  featureCard: { optsAt: 2 },
  featuresOnText: { arrays: [1], optsAt: 2 },
};

/** Where a FUNCTION_CALLS row's options are among its arguments (after the model). */
export const optsIndex = (spec) => (spec.optsOnly ? 0 : spec.optsAt ?? 1);

/** A transcoder set lives in the worker (its weights are in the worker's engine); on the wire an
 *  argument stands for it as {[SET_KEY]: handle}, anywhere inside the arguments. */
export const SET_KEY = '__mlpscopeTranscoderSet';

/** Calls with their own code on both sides: loading, aborting, generation, disposal. */
export const CONTROL_CALLS = ['load', 'abort', 'genStart', 'genNext', 'genStop', 'dispose', 'loadTranscoders', 'featureOutput', 'disposeTranscoders'];

/** Arguments for the wire: the listed array-likes as plain arrays (text stays text). */
export function wireArgs(spec, args) {
  return args.map((a, i) => (spec.arrays?.includes(i) && a != null && typeof a === 'object' ? Array.from(a) : a));
}
