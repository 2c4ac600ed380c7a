// The settings panel's types, generated from Rust (bindings.ts); imported through this one file.
export type {
  BiasTarget,
  Constraint,
  FieldRange,
  FlashAttention,
  KvType,
  LoadParams,
  LoadSettings,
  LogitBias,
  Mirostat,
  ModelInfo,
  OverflowPolicy,
  Preset,
  SamplerStage,
  SamplingParams,
  SamplingSettings,
  SettingsScope,
} from './bindings';
