import type { FieldRange, LoadParams, ModelInfo, Preset, SamplingParams } from '../../src/ipc/settings-types';

/** hearth-core's SamplingParams::default(), as get_sampling sends it. */
export const DEFAULTS: SamplingParams = Object.freeze({
  temperature: 0.8,
  dynatempRange: 0,
  dynatempExponent: 1,
  topK: 40,
  topP: 0.95,
  minP: 0.05,
  typicalP: 1,
  topNSigma: 0,
  xtcProbability: 0,
  xtcThreshold: 0.1,
  dryMultiplier: 0,
  dryBase: 1.75,
  dryAllowedLength: 2,
  dryLastN: -1,
  drySequenceBreakers: ['\n', ':', '"', '*'],
  mirostat: 'off',
  mirostatTau: 5,
  mirostatEta: 0.1,
  repeatPenalty: 1,
  repeatLastN: 64,
  presencePenalty: 0,
  frequencyPenalty: 0,
  logitBias: [],
  seed: null,
  maxTokens: 1024,
  ignoreEos: false,
  stop: [],
  constraint: null,
  samplerOrder: ['penalties', 'dry', 'topNSigma', 'topK', 'typicalP', 'topP', 'minP', 'xtc', 'temperature'],
  overflow: 'stopAtLimit',
}) as SamplingParams;

export const RANGES: FieldRange[] = [
  { key: 'temperature', min: 0, max: 5 },
  { key: 'topK', min: 0, max: 1_000_000 },
  { key: 'topP', min: 0, max: 1 },
  { key: 'minP', min: 0, max: 1 },
  { key: 'repeatLastN', min: -1, max: 1_000_000 },
];

/** The defaults with some fields changed (a fresh copy every time). */
export function params(over: Partial<SamplingParams> = {}): SamplingParams {
  return { ...structuredClone({ ...DEFAULTS }), ...over };
}

/** The backend's built-in presets (hearth-core's SamplingParams::presets). */
export const BUILT_IN: Preset[] = [
  { name: 'Precise', builtIn: true, params: params({ temperature: 0.2, topP: 0.9, topK: 40, minP: 0.05, repeatPenalty: 1.05 }) },
  { name: 'Balanced', builtIn: true, params: params() },
  {
    name: 'Creative',
    builtIn: true,
    params: params({ temperature: 1.1, topP: 0.98, minP: 0.02, topK: 0, xtcProbability: 0.5, xtcThreshold: 0.1, dryMultiplier: 0.8 }),
  },
];

/** hearth-core's LoadParams::default(). */
export const LOAD_DEFAULTS: LoadParams = Object.freeze({
  nCtx: null,
  nThreads: null,
  nBatch: 512,
  nUbatch: 512,
  nGpuLayers: null,
  flashAttention: 'auto',
  kvCacheType: 'f16',
  useMmap: true,
  useMlock: false,
  chatTemplate: null,
  reuseKv: true,
}) as LoadParams;

export function loadParams(over: Partial<LoadParams> = {}): LoadParams {
  return { ...LOAD_DEFAULTS, ...over };
}

/** A model loaded with `load`; "auto" resolved to 8192 tokens of 8192 trained and 8 threads. */
export function model(load: LoadParams = loadParams(), over: Partial<ModelInfo> = {}): ModelInfo {
  return {
    name: 'Tiny-1B-Q4_K_M',
    path: '/models/tiny.gguf',
    sizeBytes: 700_000_000,
    load,
    nCtx: load.nCtx ?? 8192,
    nCtxTrain: 8192,
    nThreads: load.nThreads ?? 8,
    nThreadsBatch: load.nThreads ?? 8,
    ...over,
  };
}
