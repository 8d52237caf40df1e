// Compiled (never run) by tests/types.test.js with `tsc --noEmit --strict`: the public API as a
// TypeScript user writes it, so that js/index.d.ts stays complete and consistent with itself.
import {
  loadModel, loadTokenizer, loadModelInWorker, findFeatureNeurons, neuronTopActivations, auc, tokenOffsets, DEFAULT_FEATURES,
  topTokens, fmtBytes, createEngine, MlpscopeError, demoModelUrl, listCachedModels, deleteCachedModel,
  klDivergence, trainTranscoders, loadTranscoders, neuronsVsFeatures, featureCard, featuresOnText, transcoderMemory, WEIGHT_CLASSES, weightClassOf, jacobiEigen, topEigen, superWeights, configSummary, CONFIG_PRESETS, type SuperWeightResult, type BilinearView, type BilinearGap, type WeightClassResult, type WeightClass, type Intervention, type PatchingResult, type Decomposition,
  type Model, type Probe, type FeatureResult, type ForwardResult, type ModelInfo, type GenerationSummary,
} from '../../js/index.js';

export async function usage(): Promise<void> {
  const model: Model = await loadModel('weights/demo', { onProgress: (p) => console.log(p.loaded, p.total, p.file) });
  const demo: Model = await loadModel(demoModelUrl, { threads: 1 });
  demo.dispose();
  const tok = model.tokenizer;
  if (!tok) return;
  const ids: number[] = tok.encode('I flew from Paris to Tokyo.');
  const r: ForwardResult = model.forward(ids, { hooks: ['blocks.0.mlp.hook_post'], logits: 'last', logitLens: { positions: [-1], afterMixer: true } });
  console.log(r.logitLens?.[0].afterMixer?.[0][0].prob);
  const info: ModelInfo = model.info();
  console.log(info.mixers.length, info.build.simd, r.logits?.length, fmtBytes(info.memory.heap), info.hooks[0].width, model.hookNames()[0]);
  for await (const t of model.generate('Once', { maxTokens: 4, temperature: 0.8, topP: 0.9, seed: 1 })) console.log(t.text, t.logprob);
  const g = model.generate('Once', { maxTokens: 4, stats: true });
  let step = await g.next();
  while (!step.done) step = await g.next();
  const summary: GenerationSummary = step.value;
  const speed: number = summary.usage.decodeTokPerS, why: 'stop' | 'length' | 'abort' = summary.finishReason;
  console.log(speed, why, summary.stats?.mlp_ratio[0], model.lastGeneration?.usage.promptTokens, model.info().build.activations);
  const exact: Model = await loadModel('weights/demo', { exact: true, activations: 'exact' });
  exact.dispose();
  const probes: Probe[] = [{ text: 'I flew to Oslo.', spans: [{ start: 10, end: 14, label: 'city' }] }];
  const res: FeatureResult = findFeatureNeurons(model, probes, { top: 2, directions: true, topActivations: 4, maxBytes: 2 ** 26, features: { city: DEFAULT_FEATURES.city } });
  console.log(res.best[0]?.top?.[0]?.labels);
  const d = res.directions?.[0];
  console.log(res.best[0]?.heldOutAuc, d?.direction.length, d?.threshold, auc([1, 2], [0]), tokenOffsets(tok, ids)[0][1]);
  const ta = neuronTopActivations(model, ['I flew to Oslo.', probes[0]], { layer: 0, neuron: 3, k: 5, sign: -1 });
  console.log(ta.top[0]?.before, ta.top[0]?.piece, ta.top[0]?.activation, ta.tokens, ta.mean, ta.positive);
  const no = model.neuronOutput(1, 2, { k: 3 });
  console.log(no.norm, no.direction.length, no.promoted[0]?.token, no.suppressed[0]?.logit, model.unembedDirection(no.direction).logits.length);
  console.log(topTokens(new Float32Array(4), 2, tok)[0].prob, tok.tokenToId('the'), tok.pretokenize('a b').length, tok.applyChatTemplate([{ role: 'user', content: 'hi' }]));
  const t2 = await loadTokenizer('weights/demo');
  console.log(t2.decode([1, 2]));
  const w = await loadModelInWorker('weights/demo/', { maxContext: 512 });
  const wr: ForwardResult = await w.forward([1, 2, 3], { stats: false });
  const wf: FeatureResult = await w.findFeatureNeurons(probes, { top: 1, onProgress: (p) => console.log(p.done / p.total) });
  const wt = await w.neuronTopActivations(['hello'], { layer: 1, neuron: 2 });
  console.log(wt.top.length, (await w.neuronOutput(0, 1)).promoted.length, (await w.unembedDirection([1, 2])).suppressed.length);
  const wids: number[] = (await w.tokenizer?.encode('hello')) ?? [];
  console.log(wr.stats, wf.tokens, wids.length, (await w.info()).contextLength);
  // transcoders, in-process and in the worker
  const tr = await trainTranscoders(model, { layers: [1], features: 64, k: 4, tokens: 1024, onProgress: (p) => console.log(p.layers?.[0].fvu) });
  const set = await loadTranscoders(model, tr.files);
  console.log(transcoderMemory(model, { features: 64 }).parts.scoring, neuronsVsFeatures(model, set, probes).rows[0].neuronsToMatch);
  console.log(featureCard(model, set, probes, { layer: 1, feature: 0 }).label?.heldOutAuc, featuresOnText(model, set, 'hi', { layer: 1 }).features.length);
  console.log(model.decomposePrediction([1, 2], { transcoder: { set, layer: 1 } }).features?.error, set.featureOutput(1, 0).promoted.length);
  console.log(findFeatureNeurons(model, probes, { transcoders: set, combine: [1, 2] }).best[0].combined?.[0].heldOutAuc);
  const ws = await w.loadTranscoders(tr.files);
  console.log((await w.findFeatureNeurons(probes, { transcoders: ws })).best.length, (await w.neuronsVsFeatures(ws, probes)).tokens);
  console.log((await w.forward([1, 2], { transcoders: { set: ws } })).hooks, (await ws.featureOutput(1, 0)).norm);
  await ws.dispose();
  set.dispose();
  await w.dispose();
  {
    using scoped = await loadModel('weights/demo');
    const g = scoped.generate('Once', { stop: ['.', 13], maxTokens: 4 });
    for await (const t of g) console.log(t.text);
    console.log(scoped.lastGeneration?.stopString, scoped.lastGeneration?.finishReason);
    await using scopedW = await loadModelInWorker('weights/demo/');
    console.log(scopedW.nLayers);
  }
  const steer: Intervention = { hook: 'blocks.1.hook_resid_post', op: 'add', vector: new Float32Array(8), positions: [-1] };
  const pr: PatchingResult = model.activationPatching([1, 2, 3], [1, 4, 3], { metric: { logitDiff: [5, 6] }, hook: 'hook_mlp_out' });
  const dp: Decomposition = model.decomposePrediction([1, 2, 3], { position: -1 });
  console.log(klDivergence([1, 2], [2, 1]), steer.op, pr.restored[0][0], dp.parts[0].kind, (await listCachedModels({ cacheDir: '/tmp/x' })).length, await deleteCachedModel('http://x/'));
  const wc: WeightClassResult = model.neuronWeightClasses({ layers: [0], threshold: 0.4, foldNorm: false });
  const one: WeightClass = model.neuronWeightClass(0, 1).class;
  console.log(wc.layers[0].counts.enrichment, WEIGHT_CLASSES[wc.layers[0].classes[0]], one, weightClassOf(0.9, 0.9, 0.9).atypical);
  const bv: BilinearView = model.bilinearView({ layer: 0, neuron: 3, k: 2 });
  const bg: BilinearGap = model.bilinearGap('Once upon a time', { layers: [0] });
  console.log(bv.eigen[0].value, bv.Q.length, bg.layers[0].kl, topEigen(bv.Q, 8, 1)[0].residual, jacobiEigen(new Float64Array(4), 2).values[0]);
  const edit = model.zeroWeights([{ tensor: 'layers.0.mlp.down_proj', row: 0, col: 1 }]);
  edit.restore();
  const sw: SuperWeightResult = superWeights(model, 'Once upon a time', { k: 1 });
  console.log(model.weight('layers.0.mlp.down_proj', 0, 1), sw.candidates[0]?.control.dLoss);
  const sizes = await configSummary(CONFIG_PRESETS[1]);
  const mixers: ('full' | 'linear' | 'sliding')[] = model.info().mixers;
  console.log(sizes.family === 'gemma3' && sizes.params.mlp_per_layer, mixers.length);
  const e = await createEngine({ threads: 1 });
  console.log(e.info.neuron_geometry[0]);
  e.shutdown();
  try { model.forward([-1]); } catch (err) { if (err instanceof MlpscopeError) console.log(err.code); }
  model.dispose();
}
