// What the backend owns, as the mock reads it: ui/src/ipc/contract.json, generated from the Rust side
// (src-tauri/ipc/fixtures.rs) and bundled into the mock, typed by the generated bindings. Nothing here is
// restated by hand. (Read from the JSON itself, not through the window's src/ipc/contract.ts: the mock stands
// for the backend.)
import {
  attachmentLimitDefaults,
  autoContextMax,
  cacheBudgetDefaults,
  commands,
  defaultProviders,
  errorKinds,
  fitContextFallback,
  loadChoices,
  loadDefaults,
  presets,
  providerKinds,
  providerNamePlaceholder,
  samplerStageOrder,
  samplingDefaults,
  samplingRanges,
  samplingSupport,
  serverDefaults,
  serverRanges,
  windowPace,
} from '../../../src/ipc/contract.json';
import type {
  AttachmentLimits,
  CacheBudgets,
  FieldRange,
  FieldSupport,
  FlashAttention,
  IpcErrorKind,
  KvType,
  LoadParams,
  Preset,
  ProviderConfig,
  ProviderKind,
  SamplerStage,
  SamplingParams,
  ServerSettings,
} from '../../../src/ipc/bindings';

/** llama.cpp's order of the sampler stages; also the list of every stage. */
export const SAMPLER_STAGES = samplerStageOrder as SamplerStage[];
/** Each provider kind's facts (ProviderKind's default_base_url, default_context_length, needs_key, takes_extensions). */
export const PROVIDER_KIND_FACTS: Readonly<
  Record<ProviderKind, { defaultBaseUrl: string; defaultContextLength: number; needsKey: boolean; takesExtensions: boolean }>
> = providerKinds;
/** CacheBudgets::default, in MB. */
export const CACHE_BUDGET_DEFAULTS: Readonly<CacheBudgets> = cacheBudgetDefaults;
/** AttachmentLimits::default. */
export const ATTACHMENT_LIMIT_DEFAULTS: Readonly<AttachmentLimits> = attachmentLimitDefaults;
/** ServerSettings::default. */
export const SERVER_DEFAULTS: Readonly<ServerSettings> = serverDefaults;
/** The ranges ServerSettings::validate enforces (the port), with their words. */
export const SERVER_RANGES: readonly FieldRange[] = serverRanges;
/** The context length a fit estimate assumes when the model's header gives none (hearth_gguf::ASSUMED_CONTEXT_LENGTH). */
export const FIT_CONTEXT_FALLBACK: number = fitContextFallback;

/** SamplingParams::default. */
export const DEFAULT_SAMPLING = samplingDefaults as SamplingParams;
/** The ranges SamplingParams::validate enforces, in its order, with their words. */
export const SAMPLING_RANGES: readonly FieldRange[] = samplingRanges;
/** SamplingParams::presets: the built-in presets, listed before the user's. */
export const BUILT_IN_PRESETS = presets as Preset[];
/** LoadParams::default. */
export const DEFAULT_LOAD = loadDefaults as LoadParams;
/** The values a load setting chosen from a list takes (FlashAttention::ALL, KvType::ALL). */
export const LOAD_CHOICES = loadChoices as { flashAttention: FlashAttention[]; kvCacheType: KvType[] };
/** The longest context an automatic choice picks (LoadParams::AUTO_N_CTX_MAX). */
export const AUTO_CONTEXT_MAX: number = autoContextMax;
/** The providers a fresh install has. */
export const DEFAULT_PROVIDERS = defaultProviders as ProviderConfig[];
/** hearth-core's sampling_support, per table: `local`, each provider kind, and `<kind>Extensions`. */
export const SAMPLING_SUPPORT: Readonly<Record<string, FieldSupport[]>> = samplingSupport;
/** Stands for the provider's name in SAMPLING_SUPPORT's notes. */
export const PROVIDER_NAME_PLACEHOLDER: string = providerNamePlaceholder;
/** Every IpcErrorKind. */
export const ERROR_KINDS = errorKinds as IpcErrorKind[];

/** A command's argument as contract.json lists it: a value of a TypeScript type (as bindings.ts writes it), or a channel. */
export type ArgSpec = { name: string; type?: string; channel?: string };
/** Every command, by its IPC name ("list_chats"), with its arguments in the order bindings.ts takes them. */
export const COMMAND_ARGS: ReadonlyMap<string, ArgSpec[]> = new Map(
  (commands as { name: string; args: ArgSpec[] }[]).map((c) => [c.name, c.args]),
);

/** How ChatService paces a reply's text to the window (hearth_app::window_pace's figures). */
export const WINDOW_PACE = windowPace as { fastestMs: number; slowestMs: number; windowCpuShare: number };
