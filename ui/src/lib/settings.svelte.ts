import type { HearthApi } from '../ipc/client';
import type { FieldRange, Preset, SamplerStage, SamplingParams, SettingsScope } from '../ipc/bindings';
import { AutoSave } from './autosave.svelte';
import { errorMessage } from './format';
import {
  SCOPE_KINDS,
  changedKeys,
  clone,
  deepEqual,
  isParamKey,
  matchingPreset,
  openingScope,
  scopeFor,
  sourceKind,
  stageLayout,
  unfinishedEdit,
  type ParamKey,
  type ScopeContext,
  type ScopeKind,
  type Source,
} from './settings';

export { SAVE_DEBOUNCE_MS, type SaveStatus } from './autosave.svelte';

type Save = { params: SamplingParams; scope: SettingsScope };

/**
 * The sampling settings of one scope (this chat, this model, or all chats) being edited; every
 * change is saved there after a short pause. Editing a scope that inherits gives it its own.
 */
export class SettingsStore {
  /** The values on screen (what is saved once `status` is `saved`). */
  params = $state<SamplingParams | null>(null);
  defaults = $state<SamplingParams | null>(null);
  ranges = $state<FieldRange[]>([]);
  /** Built-in presets first, then the user's. */
  presets = $state<Preset[]>([]);
  /** The scope being edited. */
  scope = $state<ScopeKind>('global');
  /** The chat and model the scopes refer to. */
  context = $state<ScopeContext>({ chatId: null, modelPath: null });
  /** Where the values shown come from: the scope itself once it has its own settings. */
  source = $state<Source>('defaults');
  loading = $state(false);
  loadError = $state<string | null>(null);
  /** Why "Use inherited" failed. */
  scopeError = $state<string | null>(null);
  /** Why saving or deleting a preset failed. */
  presetError = $state<string | null>(null);
  /** All nine sampler stages in display order (unchecked ones keep their place). */
  layout = $state<SamplerStage[]>([]);

  loaded = $derived(this.params !== null && this.defaults !== null);
  own = $derived(this.source === this.scope);
  changed = $derived(this.params && this.defaults ? changedKeys(this.params, this.defaults) : []);
  preset = $derived(this.params ? (matchingPreset(this.params, this.presets)?.name ?? null) : null);

  readonly #api: HearthApi;
  readonly #saver: AutoSave<Save, SamplingParams>;
  /** The scope asked for last (null: the opening one); Retry asks again. */
  #requested: ScopeKind | null = null;
  #token = 0;

  constructor(api: HearthApi) {
    this.#api = api;
    this.#saver = new AutoSave<Save, SamplingParams>({
      read: () => {
        const scope = scopeFor(this.scope, this.context);
        return this.params && scope ? { params: $state.snapshot(this.params) as SamplingParams, scope } : null;
      },
      unfinished: ({ params }) => unfinishedEdit(params),
      send: ({ params, scope }) => this.#api.setSampling(params, scope),
      saved: (_, { scope }) => {
        // The scope has its own settings now (it may have inherited until this save).
        if (deepEqual(scope, scopeFor(this.scope, this.context))) this.source = this.scope;
      },
    });
  }

  get status() {
    return this.#saver.status;
  }
  /** Why the on-screen values are not saved; null while they are (or are about to be). */
  get error() {
    return this.#saver.error;
  }
  /** The fields the error is about, to mark them. */
  get errorKeys(): ParamKey[] {
    return this.#saver.errorFields.filter(isParamKey);
  }
  /** True while an edit has not reached the backend yet. */
  get pending(): boolean {
    return this.#saver.pending;
  }

  /** Whether `kind` can be edited now: "This chat" needs a chat, "This model" a loaded model. */
  available(kind: ScopeKind): boolean {
    return scopeFor(kind, this.context) !== null;
  }

  /** Show the settings for `context`, at the scope its values come from (see `openingScope`). */
  async open(context: ScopeContext): Promise<void> {
    await this.flush();
    this.context = context;
    this.params = null; // another chat's values must not be edited for this one while loading
    await this.#show(null);
  }

  /** Edit another scope; an edit not saved yet is saved where it was made first. */
  async selectScope(kind: ScopeKind): Promise<void> {
    if (!this.available(kind) || (kind === this.scope && this.loaded && !this.loading)) return;
    await this.flush();
    await this.#show(kind);
  }

  /** Load the scope asked for last again (after a failed load). */
  load(): Promise<void> {
    return this.#show(this.#requested);
  }

  /** Drop this scope's own settings so it inherits again (not for the global scope: it has nothing broader). */
  async useInherited(): Promise<void> {
    const scope = scopeFor(this.scope, this.context);
    if (!scope || scope.kind === 'global' || !this.own) return;
    this.#saver.discard(); // an edit still waiting would give the scope its own settings again
    await this.flush();
    this.scopeError = null;
    try {
      await this.#api.clearSampling(scope);
    } catch (e) {
      this.scopeError = errorMessage(e);
      return;
    }
    await this.#show(this.scope);
  }

  isDefault(key: ParamKey): boolean {
    return !this.params || !this.defaults || deepEqual(this.params[key], this.defaults[key]);
  }

  set<K extends ParamKey>(key: K, value: SamplingParams[K]): void {
    if (!this.params || this.loading) return;
    this.params[key] = value;
    if (key === 'samplerOrder') this.layout = stageLayout(value as SamplerStage[], this.layout);
    this.#saver.edited();
  }

  setLayout(layout: SamplerStage[], order: SamplerStage[]): void {
    if (!this.params || this.loading) return;
    this.layout = layout;
    this.params.samplerOrder = order;
    this.#saver.edited();
  }

  reset(key: ParamKey): void {
    if (this.defaults) this.set(key, clone(this.defaults[key]));
  }

  resetAll(): void {
    if (this.defaults) this.#replace(clone(this.defaults));
  }

  /** A preset's values become this scope's. */
  applyPreset(preset: Preset): void {
    this.#replace(clone(preset.params));
  }

  /** Save the values on screen as a user preset; false (and `presetError`) when the backend refused. */
  async savePreset(name: string): Promise<boolean> {
    if (!this.params) return false;
    const params = $state.snapshot(this.params) as SamplingParams;
    return this.#presetAction(() => this.#api.savePreset(name, params));
  }

  async deletePreset(name: string): Promise<boolean> {
    return this.#presetAction(() => this.#api.deletePreset(name));
  }

  /** Save now instead of after the pause; resolves when the backend has answered. */
  flush(): Promise<void> {
    return this.#saver.flush();
  }

  async #presetAction(action: () => Promise<unknown>): Promise<boolean> {
    this.presetError = null;
    try {
      await action();
      // The backend owns the list (names are trimmed, a same-named preset is replaced): read it back.
      const scope = scopeFor(this.scope, this.context) ?? { kind: 'global' };
      this.presets = (await this.#api.getSampling(scope)).presets;
      return true;
    } catch (e) {
      this.presetError = errorMessage(e);
      return false;
    }
  }

  /**
   * Load `kind` (null: the opening scope, found from the most specific one); the backend says
   * where its values come from.
   */
  async #show(kind: ScopeKind | null): Promise<void> {
    const token = ++this.#token;
    this.#requested = kind;
    this.loading = true;
    this.loadError = null;
    this.scopeError = null;
    const asked = kind ?? SCOPE_KINDS.find((k) => this.available(k)) ?? 'global';
    try {
      const settings = await this.#api.getSampling(scopeFor(asked, this.context) ?? { kind: 'global' });
      if (token !== this.#token) return;
      // Opening at the scope the values come from shows the same values: they are that scope's own.
      this.scope = kind === null ? openingScope(asked, settings.source, this.context) : asked;
      this.source = sourceKind(settings.source);
      this.defaults = settings.defaults;
      this.ranges = settings.ranges;
      this.presets = settings.presets;
      this.params = settings.current;
      this.layout = stageLayout(settings.current.samplerOrder);
      this.#saver.discard();
    } catch (e) {
      if (token === this.#token) this.loadError = errorMessage(e);
    } finally {
      if (token === this.#token) this.loading = false;
    }
  }

  #replace(params: SamplingParams): void {
    if (this.loading) return; // the values of the scope being switched to are on their way
    this.params = params;
    this.layout = stageLayout(params.samplerOrder, this.layout);
    this.#saver.edited();
  }
}
