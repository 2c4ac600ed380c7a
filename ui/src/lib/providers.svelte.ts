import type { ConnectionReport, ProviderConfig, ProviderView } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';

/** A card of the Providers settings: a saved provider, or one being added (`view` null until its first save). */
export type ProviderEntry = { key: string; view: ProviderView | null };

/** What an action on a provider came to: its value, or why it failed, in words. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };

async function attempt<T>(run: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (e) {
    return { ok: false, error: errorMessage(e) };
  }
}

/**
 * The configured providers (OpenAI, Anthropic, OpenAI-compatible servers) and the ones being added.
 * Keys go to the backend and never come back: a view only says where a key is kept.
 */
export class ProvidersStore {
  /** Saved providers in the backend's order, then those being added. */
  entries = $state<ProviderEntry[]>([]);
  /** The providers were read at least once. */
  loaded = $state(false);
  loadError = $state<string | null>(null);
  /** Counts saves and deletions, so that what depends on a provider's settings is read again. */
  revision = $state(0);

  views = $derived(this.entries.flatMap((e) => (e.view ? [e.view] : [])));

  readonly #api: HearthApi;
  #drafts = 0;

  constructor(api: HearthApi) {
    this.#api = api;
  }

  async load(): Promise<void> {
    const listed = await attempt(() => this.#api.listProviders());
    if (!listed.ok) {
      this.loadError = listed.error;
      return;
    }
    this.loadError = null;
    this.loaded = true;
    // A card keeps its key (and so its place and what it shows) when its draft was saved meanwhile.
    const keys = new Map(this.entries.flatMap((e) => (e.view ? [[e.view.config.id, e.key] as const] : [])));
    const drafts = this.entries.filter((e) => e.view === null);
    this.entries = [...listed.value.map((view) => ({ key: keys.get(view.config.id) ?? view.config.id, view })), ...drafts];
  }

  config(id: string): ProviderConfig | null {
    return this.views.find((v) => v.config.id === id)?.config ?? null;
  }

  /** A new card for a provider to add; resolves to its key. */
  addDraft(): string {
    const key = `new:${++this.#drafts}`; // ':' is never part of a provider id
    this.entries.push({ key, view: null });
    return key;
  }

  /** Save `config` and, when one was typed, its key; the card `key` shows the result. */
  async save(key: string, config: ProviderConfig, apiKey: string): Promise<Outcome<ProviderView>> {
    const saved = await attempt(() => this.#api.saveProvider(config));
    if (!saved.ok) return saved;
    this.#show(key, saved.value);
    this.revision += 1;
    if (apiKey.trim() === '') return saved;
    const stored = await attempt(() => this.#api.setApiKey(config.id, apiKey));
    if (!stored.ok) return { ok: false, error: `The settings were saved, but not the key: ${stored.error}` };
    const view = { ...saved.value, key: stored.value };
    this.#show(key, view);
    return { ok: true, value: view };
  }

  async forgetKey(key: string): Promise<Outcome<null>> {
    const view = this.#entry(key)?.view;
    if (!view) return { ok: true, value: null };
    const forgotten = await attempt(() => this.#api.setApiKey(view.config.id, ''));
    if (!forgotten.ok) return forgotten;
    this.#show(key, { ...view, key: null });
    return { ok: true, value: null };
  }

  /** Delete a saved provider (and its key), or drop a card not saved yet. */
  async remove(key: string): Promise<Outcome<null>> {
    const view = this.#entry(key)?.view;
    if (view) {
      const deleted = await attempt(() => this.#api.deleteProvider(view.config.id));
      if (!deleted.ok) return deleted;
      this.revision += 1;
    }
    this.entries = this.entries.filter((e) => e.key !== key);
    return { ok: true, value: null };
  }

  test(id: string): Promise<Outcome<ConnectionReport>> {
    return attempt(() => this.#api.testProvider(id));
  }

  #entry(key: string): ProviderEntry | undefined {
    return this.entries.find((e) => e.key === key);
  }

  #show(key: string, view: ProviderView): void {
    const entry = this.#entry(key);
    if (entry) entry.view = view;
    else this.entries.push({ key, view });
  }
}
