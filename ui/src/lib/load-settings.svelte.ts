import type { HearthApi } from '../ipc/client';
import type { LoadParams, LoadSettings } from '../ipc/bindings';
import { AutoSave } from './autosave.svelte';
import { errorMessage } from './format';
import { isLoadKey, unfinishedLoadEdit, type LoadKey } from './load-settings';
import { clone, deepEqual } from './settings';

/**
 * The loaded model's load settings being edited. Every change is saved after a short pause, like
 * the sampling settings, but applies only when the model is loaded again (`reload`).
 */
export class LoadSettingsStore {
  /** The backend's last word: the model as loaded, the saved settings, whether a reload would change anything. */
  info = $state<LoadSettings | null>(null);
  /** The values on screen. */
  params = $state<LoadParams | null>(null);
  loading = $state(false);
  /** Why there are no settings to show (no model is loaded, say). */
  loadError = $state<string | null>(null);
  reloading = $state(false);
  reloadError = $state<string | null>(null);
  /** The last reload worked; cleared by the next edit. */
  reloaded = $state(false);

  needsReload = $derived(this.info?.needsReload ?? false);

  readonly #api: HearthApi;
  readonly #onReloaded: (error: string | null) => void;
  readonly #saver: AutoSave<LoadParams, LoadSettings>;

  /** `onReloaded` runs after each reload attempt, with its error if it failed: the model may have changed. */
  constructor(api: HearthApi, onReloaded: (error: string | null) => void = () => {}) {
    this.#api = api;
    this.#onReloaded = onReloaded;
    this.#saver = new AutoSave<LoadParams, LoadSettings>({
      read: () => (this.params ? ($state.snapshot(this.params) as LoadParams) : null),
      unfinished: unfinishedLoadEdit,
      send: (params) => this.#api.setLoadSettings(params),
      saved: (answer) => {
        this.info = answer;
      },
    });
  }

  get status() {
    return this.#saver.status;
  }
  get error() {
    return this.#saver.error;
  }
  /** The fields the error is about, to mark them. */
  get errorKeys(): LoadKey[] {
    return this.#saver.errorFields.filter(isLoadKey);
  }
  get pending(): boolean {
    return this.#saver.pending;
  }

  async load(): Promise<void> {
    if (this.loading || this.reloading) return; // a reload under way shows its own outcome
    await this.flush();
    this.loading = true;
    this.loadError = null;
    try {
      this.#show(await this.#api.getLoadSettings());
    } catch (e) {
      this.#unavailable(e);
    } finally {
      this.loading = false;
    }
  }

  isDefault(key: LoadKey): boolean {
    return !this.params || !this.info || deepEqual(this.params[key], this.info.defaults[key]);
  }

  set<K extends LoadKey>(key: K, value: LoadParams[K]): void {
    if (!this.params || this.reloading) return;
    this.params[key] = value;
    this.reloaded = false;
    this.reloadError = null;
    this.#saver.edited();
  }

  reset(key: LoadKey): void {
    if (this.info) this.set(key, clone(this.info.defaults[key]));
  }

  /**
   * Load the model again with the saved settings (an edit still waiting is saved first). When
   * llama.cpp refuses them, the backend loads it as it was and `reloadError` says what happened.
   */
  async reload(): Promise<void> {
    if (this.reloading || !this.info) return;
    await this.flush();
    if (this.error) return; // the on-screen values are not the saved ones: reloading would not apply them
    this.reloading = true;
    this.reloadError = null;
    this.reloaded = false;
    try {
      this.#show(await this.#api.reloadModel());
      this.reloaded = true;
    } catch (e) {
      this.reloadError = errorMessage(e);
      try {
        this.info = await this.#api.getLoadSettings();
      } catch (again) {
        this.#unavailable(again); // not even the previous settings could be loaded
      }
    } finally {
      this.reloading = false;
      this.#onReloaded(this.reloadError);
    }
  }

  flush(): Promise<void> {
    return this.#saver.flush();
  }

  /** There are no settings to show (no model is loaded): say why. */
  #unavailable(error: unknown): void {
    this.info = null;
    this.params = null;
    this.loadError = errorMessage(error);
  }

  #show(settings: LoadSettings): void {
    this.info = settings;
    this.params = clone(settings.saved);
    this.#saver.discard();
  }
}
