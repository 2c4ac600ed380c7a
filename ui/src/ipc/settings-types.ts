// The settings panel's types, generated from Rust (bindings.ts); imported through this one file.
export type {
  BiasTarget,
  Constraint,
  FieldRange,
  LogitBias,
  Mirostat,
  OverflowPolicy,
  SamplerStage,
  SamplingParams,
  SamplingSettings,
} from './bindings';
