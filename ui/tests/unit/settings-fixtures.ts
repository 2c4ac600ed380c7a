import type { FieldRange, LoadParams, ModelInfo, Preset, SamplingParams } from '../../src/ipc/bindings';
import { CONTRACT } from '../contract.mjs';

export { CONTRACT };

/** hearth-core's SamplingParams::default(), as get_sampling sends it (contract.json). */
export const DEFAULTS: SamplingParams = Object.freeze(CONTRACT.samplingDefaults) as SamplingParams;

/** The ranges set_sampling enforces, as get_sampling sends them. */
export const RANGES: FieldRange[] = CONTRACT.samplingRanges;

/** The defaults with some fields changed (a fresh copy every time). */
export function params(over: Partial<SamplingParams> = {}): SamplingParams {
  return { ...structuredClone({ ...DEFAULTS }), ...over };
}

/** The backend's built-in presets (hearth-core's SamplingParams::presets). */
export const BUILT_IN: Preset[] = CONTRACT.presets;

/** hearth-core's LoadParams::default(). */
export const LOAD_DEFAULTS: LoadParams = Object.freeze(CONTRACT.loadDefaults) as LoadParams;

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
    fromMemory: false,
    offload: { backend: 'CPU', device: 'CPU', gpuLayers: 0, totalLayers: 30, label: 'On the CPU' },
    projectors: [],
    ...over,
  };
}
