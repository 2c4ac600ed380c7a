// What the window needs of contract.json, the data the Rust side owns and generates (see
// src-tauri/ipc/fixtures.rs): read from there, never restated here. Named imports, so the build
// keeps only these entries of the file.
import {
  attachmentLimitDefaults,
  attachmentLimitRanges,
  cacheBudgetDefaults,
  cacheBudgetRanges,
  draftPace,
  fitContextFallback,
  loadChoices,
  loadRanges,
  logitBiasNever,
  providerIdMaxLength,
  providerKinds,
  reasoningMarks,
  samplerStageOrder,
  serverDefaults,
  serverRanges,
  toolCallMarks,
  windowPace,
} from './contract.json';
import type { AttachmentLimits, CacheBudgets, FieldRange, FlashAttention, KvType, ProviderKind, SamplerStage, ServerSettings } from './bindings';

/** llama.cpp's order of the sampler stages; also the list of every stage. */
export const SAMPLER_STAGES: readonly SamplerStage[] = samplerStageOrder as SamplerStage[];

/** Biases at or below this forbid the token ("never"). */
export const NEVER_BIAS: number = logitBiasNever;

/** What the backend knows of a kind of provider (ProviderKind's default_base_url, default_context_length, needs_key, takes_extensions). */
export type ProviderKindFacts = {
  /** What a new provider of this kind starts with. */
  defaultBaseUrl: string;
  /** The context window the backend budgets for when neither the user nor the server says. */
  defaultContextLength: number;
  /** The backend refuses to call it without a key (local servers usually want none). */
  needsKey: boolean;
  /** It may be a llama.cpp server, so the provider's "llama.cpp extensions" switch applies. */
  takesExtensions: boolean;
};

/** Each provider kind's facts; typed by ProviderKind, so a kind added on one side only fails the type check. */
export const PROVIDER_KIND_FACTS: Readonly<Record<ProviderKind, ProviderKindFacts>> = providerKinds;

/** The longest provider id the backend takes, in ASCII characters (ProviderConfig::ID_MAX_LEN). */
export const PROVIDER_ID_MAX_LENGTH: number = providerIdMaxLength;

/** The ranges LoadParams::validate enforces on the load settings' numbers (an unset one is "auto"). */
export const LOAD_RANGES: readonly FieldRange[] = loadRanges;

/** The values the load settings chosen from a list take (FlashAttention::ALL, KvType::ALL), in the order offered. */
export const LOAD_CHOICES: Readonly<{ flashAttention: readonly FlashAttention[]; kvCacheType: readonly KvType[] }> = loadChoices as {
  flashAttention: FlashAttention[];
  kvCacheType: KvType[];
};

/** The budgets for chats' caches on first start (CacheBudgets::default), in MB. */
export const CACHE_BUDGET_DEFAULTS: Readonly<CacheBudgets> = cacheBudgetDefaults;

/** The ranges CacheBudgets::validate enforces, with their words. */
export const CACHE_BUDGET_RANGES: readonly FieldRange[] = cacheBudgetRanges;

/** The limits on attached files on first start (AttachmentLimits::default). */
export const ATTACHMENT_LIMIT_DEFAULTS: Readonly<AttachmentLimits> = attachmentLimitDefaults;

/** The ranges AttachmentLimits::validate enforces, with their words. */
export const ATTACHMENT_LIMIT_RANGES: readonly FieldRange[] = attachmentLimitRanges;

/** The local OpenAI-compatible server's settings on first start (ServerSettings::default): off, on 127.0.0.1 only. */
export const SERVER_DEFAULTS: Readonly<ServerSettings> = serverDefaults;

/** The ranges ServerSettings::validate enforces (the port), with their words. */
export const SERVER_RANGES: readonly FieldRange[] = serverRanges;

/** The context length a fit estimate assumes when the model's header gives none (hearth_gguf::ASSUMED_CONTEXT_LENGTH). */
export const FIT_CONTEXT_FALLBACK: number = fitContextFallback;

/** How often the backend hands a streaming reply to the window (hearth_app::window_pace): never
 *  closer than `fastestMs`, never further apart than `slowestMs`, keeping the window's CPU to
 *  `windowCpuShare` of a core. The window paints each delta at its next frame. */
export const WINDOW_PACE: Readonly<{ fastestMs: number; slowestMs: number; windowCpuShare: number }> = windowPace;

/** When the composer sends the draft to be read ahead (hearth_core::DRAFT_PACE), in ms: `quietMs`
 *  after the last key, at the latest `maxWaitMs` after the first key not yet sent, never two sends
 *  closer than `minGapMs`. */
export const DRAFT_PACE: Readonly<{ quietMs: number; maxWaitMs: number; minGapMs: number }> = draftPace;

/** How a reply marks its leading reasoning block (hearth_core's THINK_OPEN, THINK_CLOSE). */
export const REASONING_MARKS: Readonly<{ open: string; close: string }> = { open: reasoningMarks[0], close: reasoningMarks[1] };

/** The marks around a tool call in a reply's text (hearth_core's CALL_OPEN, CALL_CLOSE): what the model
 *  writes when it calls a tool. The text outside them is the reply's prose. */
export const TOOL_CALL_MARKS: Readonly<{ open: string; close: string }> = { open: toolCallMarks[0], close: toolCallMarks[1] };
