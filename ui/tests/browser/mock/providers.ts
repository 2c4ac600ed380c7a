// Remote providers, as hearth-providers and src-tauri/ipc/providers.rs have them: their settings and keys
// (`providers`, `keys`, `keyStorage`), the models they list (`remoteModels`, failures via `providerFailures`),
// which sampling settings reach them (the contract's tables), and the start of a remote reply with its failures
// (no key where the kind needs one, a refused key "sk-wrong"). The providers on first start and each kind's facts
// come from the contract.
import type { IpcError, ModelTarget, ProviderConfig, ProviderView, RemoteModel } from '../../../src/ipc/bindings';
import { PROVIDER_KIND_FACTS, PROVIDER_NAME_PLACEHOLDER, SAMPLING_SUPPORT } from './contract';
import type { Handlers } from './ipc';
import { state } from './state';
import { clone, delay, ipcError, isU32, variants } from './util';

const KINDS = Object.keys(PROVIDER_KIND_FACTS);
/** Every field of a ProviderConfig (serde refuses others). */
const CONFIG_FIELDS = variants<keyof ProviderConfig>({
  id: true, name: true, kind: true, baseUrl: true, models: true, contextLength: true, extensions: true, tokenizerRepo: true, allowPlainHttp: true,
});
/** A key the provider refuses (401). */
const REFUSED_KEY = 'sk-wrong';

/** Keys given by the test are where set_api_key would have put them. */
export function initProviders() {
  for (const p of state.providers) if (state.keys[p.config.id]) p.key ??= clone(state.keyStorage);
}

function providerOf(id: string): ProviderView {
  const found = state.providers.find((p) => p.config.id === id);
  if (!found) throw ipcError('provider', `no provider ${JSON.stringify(id)} is configured; pick another model for this chat`);
  return found;
}

/** The key a request would carry: ProviderError::NoKey where the kind needs one, Unauthorized for a refused one. */
function keyFor({ config: c }: ProviderView) {
  const key = state.keys[c.id];
  if (!key && PROVIDER_KIND_FACTS[c.kind].needsKey) {
    throw ipcError('providerAuth', `${c.name} needs an API key: add it in Settings → Providers`);
  }
  if (key === REFUSED_KEY) {
    throw ipcError('providerAuth', `${c.name} refused the API key (401): Incorrect API key provided: sk-wr**ng. Check the key in Settings → Providers`);
  }
  return key ?? null;
}

function listModels(provider: string): RemoteModel[] {
  const p = providerOf(provider);
  const failure = state.providerFailures[p.config.id];
  if (failure) throw clone(failure);
  keyFor(p);
  const listed = clone(state.remoteModels[p.config.id] ?? []);
  for (const typed of p.config.models) if (!listed.some((m) => m.id === typed)) listed.push({ id: typed, contextLength: null });
  return listed;
}

/** Tauri's argument check of a ProviderConfig (a plain string error), then ProviderConfig::validate. */
function checkProviderConfig(c: ProviderConfig) {
  const ok =
    c && typeof c.id === 'string' && typeof c.name === 'string' && KINDS.includes(c.kind) && typeof c.baseUrl === 'string' &&
    Array.isArray(c.models) && c.models.every((m) => typeof m === 'string') && (c.contextLength === null || isU32(c.contextLength)) &&
    typeof c.extensions === 'boolean' && (c.tokenizerRepo === null || typeof c.tokenizerRepo === 'string') && typeof c.allowPlainHttp === 'boolean' &&
    Object.keys(c).length === CONFIG_FIELDS.length;
  if (!ok) {
    state.contractErrors.push(`save_provider: bad config ${JSON.stringify(c)}`);
    throw `invalid args \`config\` for command \`save_provider\`: ${JSON.stringify(c)}`;
  }
}

/** scheme://host:port of a base URL, as ProviderConfig::same_destination compares them. */
function destination(url: string) {
  try {
    const u = new URL(url.trim());
    return `${u.protocol}//${u.hostname}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`;
  } catch {
    return null;
  }
}

function saveProvider(config: ProviderConfig) {
  checkProviderConfig(config);
  const existing = state.providers.find((p) => p.config.id === config.id);
  if (existing && destination(existing.config.baseUrl) !== destination(config.baseUrl)) {
    // App::save_provider: a key given for one host is not sent to another.
    delete state.keys[existing.config.id];
    existing.key = null;
  }
  if (existing) existing.config = clone(config);
  else state.providers.push({ config: clone(config), key: null });
  return clone(providerOf(config.id));
}

function setApiKey(provider: string, sent: string) {
  const p = providerOf(provider);
  const key = sent.trim();
  if (key === '') {
    delete state.keys[p.config.id];
    p.key = null;
  } else {
    state.keys[p.config.id] = key;
    p.key = clone(state.keyStorage);
  }
  return clone(p.key);
}

/** Tauri's argument check of a ModelTarget. */
export function checkTarget(cmd: string, target: ModelTarget) {
  const t = target as Record<string, unknown> | null;
  const ok =
    t && ((t.kind === 'local' && (t.model === null || typeof t.model === 'string') && Object.keys(t).length === 2) ||
      (t.kind === 'remote' && typeof t.provider === 'string' && typeof t.model === 'string' && Object.keys(t).length === 3));
  if (!ok) {
    state.contractErrors.push(`${cmd}: bad target ${JSON.stringify(t)}`);
    throw `invalid args \`target\` for command \`${cmd}\`: ${JSON.stringify(t)}`;
  }
}

/** A remote target's provider, or the backend's refusal (a chat's next message says so). */
export const checkProvider = (id: string) => void providerOf(id);

/** hearth-core's sampling_support: the contract's table for the target's kind, with the provider's name in its notes. */
function samplingSupportFor(target: ModelTarget) {
  checkTarget('sampling_support_for', target);
  if (target.kind === 'local') return clone(SAMPLING_SUPPORT.local);
  const { name, kind, extensions } = providerOf(target.provider).config;
  const table = PROVIDER_KIND_FACTS[kind].takesExtensions && extensions ? `${kind}Extensions` : kind;
  return SAMPLING_SUPPORT[table].map((s) => ({ ...s, note: s.note.replaceAll(PROVIDER_NAME_PLACEHOLDER, name) }));
}

/**
 * Providers::start_reply for a chat's remote target: the provider and its key are looked up before
 * the reply starts (failing then, nothing is saved); the display name is "<model> (<provider name>)".
 * A refused key only shows once the request is made: `refused` is the error the reply fails with.
 */
export function startRemote(target: Extract<ModelTarget, { kind: 'remote' }>) {
  const p = providerOf(target.provider);
  let refused: IpcError | null = null;
  try {
    keyFor(p);
  } catch (error) {
    if (state.keys[p.config.id] !== REFUSED_KEY) throw error;
    refused = error as IpcError;
  }
  return { model: `${target.model} (${p.config.name})`, refused };
}

export const providerCommands = {
  listProviders: () => clone(state.providers),
  saveProvider,
  deleteProvider: (provider) => {
    state.providers = state.providers.filter((p) => p.config.id !== provider);
    delete state.keys[provider];
    return null;
  },
  setApiKey,
  listProviderModels: async (provider) => {
    await delay(state.listDelayMs ?? 60);
    return listModels(provider);
  },
  testProvider: async (provider) => {
    await delay(state.listDelayMs ?? 60);
    return { models: listModels(provider), latencyMs: 123.4 };
  },
  samplingSupportFor,
} satisfies Partial<Handlers>;
