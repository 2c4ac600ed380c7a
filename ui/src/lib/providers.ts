// Remote providers on the UI side: what each kind of API needs, the settings form of a provider,
// new ids, where a key is kept, and the labels of a chat's model. Pure functions over plain values;
// the reactive stores are in providers.svelte.ts, model-catalog.svelte.ts and sampling-support.svelte.ts.
import type { ConnectionReport, IpcErrorKind, KeyStorage, ModelInfo, ModelTarget, ProviderConfig, ProviderKind } from '../ipc/bindings';
import { PROVIDER_ID_MAX_LENGTH, PROVIDER_KIND_FACTS, type ProviderKindFacts } from '../ipc/contract';
import { localName } from './chat-model';
import { plural, sentence } from './format';
import { U32_MAX, deepEqual } from './settings';

/** The local engine with whichever model is loaded: a chat that has not answered locally yet (or no chat). */
export const LOCAL_TARGET: ModelTarget = { kind: 'local', model: null };

/** A kind of provider: its name in the window, and the backend's facts about it (contract.json). */
export type KindInfo = ProviderKindFacts & { label: string };

const labelled = (label: string, kind: ProviderKind): KindInfo => ({ label, ...PROVIDER_KIND_FACTS[kind] });

/** Every kind, in the order the kind picker offers them. */
export const KINDS: Record<ProviderKind, KindInfo> = {
  openAi: labelled('OpenAI', 'openAi'),
  anthropic: labelled('Anthropic', 'anthropic'),
  openAiCompatible: labelled('OpenAI-compatible', 'openAiCompatible'),
};

export const PROVIDER_KINDS = Object.keys(KINDS) as ProviderKind[];

/** The API a provider speaks, to show beside its name; null when the name already says it ("OpenAI"). */
export function kindNote(name: string, kind: ProviderKind): string | null {
  const label = KINDS[kind].label;
  return name.trim().toLowerCase() === label.toLowerCase() ? null : label;
}

/** Errors of a remote reply, shown on the reply itself with what to do next. */
export const PROVIDER_ERRORS: readonly IpcErrorKind[] = ['providerAuth', 'rateLimited', 'network', 'provider'];

/** The longest slug kept: 16 characters short of the backend's longest id, so that "-<n>" still fits. */
export const SLUG_MAX = PROVIDER_ID_MAX_LENGTH - 16;

/** A new provider's id: its name as a slug plus the first number not taken ("My vLLM" → "my-vllm-1"). */
export function newProviderId(name: string, taken: Iterable<string>): string {
  const slug =
    name
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .slice(0, SLUG_MAX)
      .replace(/^-+|-+$/g, '') || 'provider';
  const used = new Set(taken);
  for (let n = 1; ; n++) {
    const id = `${slug}-${n}`;
    if (!used.has(id)) return id;
  }
}

/** A provider's settings as typed: numbers and lists stay text until saved. */
export type ProviderForm = {
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  extensions: boolean;
  contextLength: string;
  /** Comma-separated model names. */
  models: string;
  tokenizerRepo: string;
  /** The user's yes to plain http:// to another machine (the backend says when it is needed). */
  allowPlainHttp: boolean;
};

/** What "Add OpenAI-compatible provider" starts from: a llama.cpp server on this machine. */
export function newProviderForm(): ProviderForm {
  return {
    name: '',
    kind: 'openAiCompatible',
    baseUrl: KINDS.openAiCompatible.defaultBaseUrl,
    extensions: true,
    contextLength: '',
    models: '',
    tokenizerRepo: '',
    allowPlainHttp: false,
  };
}

export function formOf(config: ProviderConfig): ProviderForm {
  return {
    name: config.name,
    kind: config.kind,
    baseUrl: config.baseUrl,
    extensions: config.extensions,
    contextLength: config.contextLength === null ? '' : String(config.contextLength),
    models: config.models.join(', '),
    tokenizerRepo: config.tokenizerRepo ?? '',
    allowPlainHttp: config.allowPlainHttp,
  };
}

/** The form with another kind; a base URL left at the old kind's default follows to the new one's. */
export function withKind(form: ProviderForm, kind: ProviderKind): ProviderForm {
  const followsDefault = form.baseUrl.trim() === '' || form.baseUrl.trim() === KINDS[form.kind].defaultBaseUrl;
  return { ...form, kind, baseUrl: followsDefault ? KINDS[kind].defaultBaseUrl : form.baseUrl };
}

/** Model names typed as a list: split on commas or new lines, trimmed, without blanks or repeats. */
export function parseModelList(text: string): string[] {
  return [...new Set(text.split(/[,\n]/).map((m) => m.trim()).filter(Boolean))];
}

/** The context length typed: empty for the default; what is not a whole number of tokens is a problem in words. */
export function parseContextLength(text: string): { value: number | null } | { problem: string } {
  const t = text.trim().replace(/[,_\s]/g, '');
  if (t === '') return { value: null };
  const n = Number(t);
  if (!/^\d+$/.test(t) || n > U32_MAX) {
    return { problem: `the context length must be a whole number of tokens (or empty for the default), not ${JSON.stringify(text.trim())}` };
  }
  return { value: n };
}

/** The config to save; the backend validates the rest (name, URL, id) and says what is wrong. */
export function configOf(id: string, form: ProviderForm): { config: ProviderConfig } | { problem: string } {
  const context = parseContextLength(form.contextLength);
  if ('problem' in context) return context;
  const repo = form.tokenizerRepo.trim();
  return {
    config: {
      id,
      name: form.name.trim(),
      kind: form.kind,
      baseUrl: form.baseUrl.trim(),
      models: parseModelList(form.models),
      contextLength: context.value,
      extensions: form.extensions,
      tokenizerRepo: repo === '' ? null : repo,
      allowPlainHttp: form.allowPlainHttp,
    },
  };
}

/** Whether the base URL is plain http:// (the switch to allow it is shown then). */
export function isPlainHttp(baseUrl: string): boolean {
  return /^http:\/\//i.test(baseUrl.trim());
}

/** What "Saved" says; a key saved before that is gone now was forgotten by the backend (the address moved to another host). */
export function savedText(withKey: boolean, hadKey: boolean, hasKey: boolean): string {
  if (withKey) return 'Saved, with the key.';
  if (hadKey && !hasKey) return 'Saved. The key was given for the old address and is forgotten: enter it again if this server should have it.';
  return 'Saved.';
}

/** Whether the form says something else than `config` (a draft always has something to save). */
export function formChanged(form: ProviderForm, config: ProviderConfig | null): boolean {
  if (!config) return true;
  const next = configOf(config.id, form);
  return !('config' in next) || !deepEqual(next.config, config);
}

/** Where a provider's key is, in words; `warn` when it is not where the user would expect it. */
export function keyStorageText(storage: KeyStorage | null, config: Pick<ProviderConfig, 'name' | 'kind'>): { text: string; warn: boolean } {
  if (storage === null) {
    return KINDS[config.kind].needsKey
      ? { text: `No key saved: ${config.name || 'this provider'} needs one.`, warn: false }
      : { text: 'No key saved; local servers usually need none.', warn: false };
  }
  return savedWhere(storage, 'key');
}

/** Where a secret (`noun`: "key", "token") was saved, in words; `warn` for the fallback file. */
export function savedWhere(storage: KeyStorage, noun: string): { text: string; warn: boolean } {
  if (storage.kind === 'keychain') return { text: `${sentence(noun)} saved in the system keychain.`, warn: false };
  return { text: `No keychain answered: the ${noun} is saved in ${storage.path} (readable only by you). ${storage.reason}`, warn: true };
}

/** "Connected: 3 models in 123 ms". */
export function connectionText(report: ConnectionReport): string {
  return `Connected: ${plural(report.models.length, 'model')} in ${Math.round(report.latencyMs)} ms`;
}

/** Two targets name the same model (local ones, the same file). */
export function sameTarget(a: ModelTarget, b: ModelTarget): boolean {
  if (a.kind === 'local' || b.kind === 'local') return a.kind === b.kind && a.model === b.model;
  return a.provider === b.provider && a.model === b.model;
}

/** A chat's model in the header: its GGUF's name (see localName), or "<model> · <provider name>". */
export function targetLabel(
  target: ModelTarget,
  named: string | null,
  loaded: Pick<ModelInfo, 'name' | 'path'> | null,
  providerName: string | null,
): string {
  if (target.kind === 'local') return localName(target, named, loaded) ?? 'No model loaded';
  return `${target.model} · ${providerName ?? target.provider}`;
}

/** Seconds until `retryAt` (Unix ms), rounded up; 0 once it has passed or when there is nothing to wait for. */
export function secondsLeft(retryAt: number | null, now: number): number {
  return retryAt === null ? 0 : Math.max(0, Math.ceil((retryAt - now) / 1000));
}

export function retryLabel(secondsToWait: number): string {
  return secondsToWait > 0 ? `Retry in ${secondsToWait} s` : 'Retry';
}
