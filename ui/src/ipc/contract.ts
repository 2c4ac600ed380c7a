// What the window needs of contract.json, the data the Rust side owns and generates (see
// src-tauri/ipc/fixtures.rs): read from there, never restated here. Named imports, so the build
// keeps only these entries of the file.
import { logitBiasNever, providerDefaultBaseUrls, samplerStageOrder } from './contract.json';
import type { ProviderKind, SamplerStage } from './bindings';

/** llama.cpp's order of the sampler stages; also the list of every stage. */
export const SAMPLER_STAGES: readonly SamplerStage[] = samplerStageOrder as SamplerStage[];

/** Biases at or below this forbid the token ("never"). */
export const NEVER_BIAS: number = logitBiasNever;

/** The base URL a new provider of each kind starts with (ProviderKind::default_base_url). */
export const DEFAULT_BASE_URLS: Readonly<Record<ProviderKind, string>> = providerDefaultBaseUrls;
