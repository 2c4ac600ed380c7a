import type { FieldRange, SamplingParams } from '../../src/ipc/settings-types';

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
