import type { HearthApi } from '../ipc/client';
import type { FieldRange, SamplerStage, SamplingParams } from '../ipc/settings-types';
import { errorMessage } from './format';
import {
  applyPreset,
  changedKeys,
  clone,
  deepEqual,
  errorField,
  findPreset,
  matchingPreset,
  stageLayout,
  unfinishedEdit,
  type ParamKey,
  type PresetName,
} from './settings';

/** Edits are saved this long after the last change. */
export const SAVE_DEBOUNCE_MS = 300;

/**
 * - `idle`: nothing edited since loading; `pending`: an edit waits for the debounce;
 * - `saving` / `saved`: the backend has / has accepted the params;
 * - `rejected`: the backend refused them (`error` says why);
 * - `unfinished`: an edit the backend would only refuse (`error` says what to finish), not sent.
 */
export type SaveStatus = 'idle' | 'pending' | 'saving' | 'saved' | 'rejected' | 'unfinished';

/** The global sampling settings being edited; every change is saved after a short pause. */
export class SettingsStore {
  /** The values on screen (what is saved once `status` is `saved`). */
  params = $state<SamplingParams | null>(null);
  defaults = $state<SamplingParams | null>(null);
  ranges = $state<FieldRange[]>([]);
  loading = $state(false);
  loadError = $state<string | null>(null);
  status = $state<SaveStatus>('idle');
  /** Why the on-screen values are not saved; null while they are (or are about to be). */
  error = $state<string | null>(null);
  /** All nine sampler stages in display order (unchecked ones keep their place). */
  layout = $state<SamplerStage[]>([]);

  loaded = $derived(this.params !== null && this.defaults !== null);
  changed = $derived(this.params && this.defaults ? changedKeys(this.params, this.defaults) : []);
  preset = $derived(this.params && this.defaults ? matchingPreset(this.params, this.defaults) : null);
  errorKey = $derived(errorField(this.error));

  readonly #api: HearthApi;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #inFlight: Promise<void> | null = null;
  #again = false;

  constructor(api: HearthApi) {
    this.#api = api;
  }

  /** True while an edit has not reached the backend yet. */
  get pending(): boolean {
    return this.#timer !== null || this.#inFlight !== null;
  }

  async load(): Promise<void> {
    if (this.loading) return;
    this.loading = true;
    this.loadError = null;
    try {
      const settings = await this.#api.getSampling();
      this.defaults = settings.defaults;
      this.ranges = settings.ranges;
      this.params = settings.current;
      this.layout = stageLayout(settings.current.samplerOrder);
      this.status = 'idle';
      this.error = null;
    } catch (e) {
      this.loadError = errorMessage(e);
    } finally {
      this.loading = false;
    }
  }

  isDefault(key: ParamKey): boolean {
    return !this.params || !this.defaults || deepEqual(this.params[key], this.defaults[key]);
  }

  set<K extends ParamKey>(key: K, value: SamplingParams[K]): void {
    if (!this.params) return;
    this.params[key] = value;
    if (key === 'samplerOrder') this.layout = stageLayout(value as SamplerStage[], this.layout);
    this.#edited();
  }

  setLayout(layout: SamplerStage[], order: SamplerStage[]): void {
    if (!this.params) return;
    this.layout = layout;
    this.params.samplerOrder = order;
    this.#edited();
  }

  reset(key: ParamKey): void {
    if (this.defaults) this.set(key, clone(this.defaults[key]));
  }

  resetAll(): void {
    this.applyPreset('balanced');
  }

  applyPreset(name: PresetName): void {
    const preset = findPreset(name);
    if (!preset || !this.defaults) return;
    this.#replace(applyPreset(this.defaults, preset));
  }

  /** Save now instead of after the pause; resolves when the backend has answered. */
  async flush(): Promise<void> {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
      await this.#save();
    } else if (this.#inFlight) {
      await this.#inFlight;
    }
  }

  #replace(params: SamplingParams): void {
    this.params = params;
    this.layout = stageLayout(params.samplerOrder, this.layout);
    this.#edited();
  }

  #edited(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.status = 'pending';
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#save();
    }, SAVE_DEBOUNCE_MS);
  }

  /** Send the on-screen params; one request at a time, the latest values last. */
  #save(): Promise<void> {
    if (this.#inFlight) {
      this.#again = true;
      return this.#inFlight;
    }
    const run = async () => {
      do {
        this.#again = false;
        if (!this.params) return;
        const params = $state.snapshot(this.params) as SamplingParams;
        const unfinished = unfinishedEdit(params);
        if (unfinished) {
          this.status = 'unfinished';
          this.error = unfinished;
          return;
        }
        this.status = 'saving';
        try {
          await this.#api.setSampling(params);
          if (!this.#again && this.#timer === null) {
            this.status = 'saved';
            this.error = null;
          }
        } catch (e) {
          if (!this.#again && this.#timer === null) {
            this.status = 'rejected';
            this.error = errorMessage(e);
          }
        }
      } while (this.#again);
    };
    this.#inFlight = run().finally(() => {
      this.#inFlight = null;
    });
    return this.#inFlight;
  }
}
