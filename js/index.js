// mlpscope: run small transformer LMs in wasm and look inside their SwiGLU MLPs.
export { loadModel } from './loader.js';
export { fmtBytes } from './format.js';
export { demoModelUrl } from './demo.js';
export { Model, topTokens, klDivergence } from './model.js';
export { Tokenizer, loadTokenizer } from './tokenizer.js';
export { MlpscopeError } from './errors.js';
export { createEngine } from './wasm.js';
export { listCachedModels, deleteCachedModel } from './cache.js';
export { loadModelInWorker, WorkerModel, WorkerTranscoderSet } from './worker-client.js';
export { findFeatureNeurons, neuronTopActivations, neuronsVsFeatures, featureCard, featuresOnText, neuronQuadrants, featureTokens, neuronsForTokens, pushNeuron, tokenSetProbability, auc, tokenOffsets, DEFAULT_FEATURES } from './features.js';
export { WEIGHT_CLASSES, weightClassOf } from './geometry.js';
export { jacobiEigen, topEigen } from './bilinear.js';
export { languageNeurons, languageSwitch, languageLoss, cjkShare } from './language.js';
export { superWeights } from './superweights.js';
export { configSummary, CONFIG_PRESETS } from './config.js';
export { trainTranscoders, corpusSequences, TRANSCODER_DEFAULTS, loadTranscoders, TranscoderSet, transcoderMemory } from './transcoder.js';
