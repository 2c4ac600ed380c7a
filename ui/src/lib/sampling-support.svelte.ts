import { getContext, setContext } from 'svelte';
import type { FieldSupport, ModelTarget } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';

/**
 * Which sampling settings reach the active chat's model: a remote API takes only some of them.
 * The settings panel greys the others out, with the backend's note saying why.
 */
export class SamplingSupport {
  fields = $state<FieldSupport[]>([]);
  /** The provider the settings go to; null for the local model. */
  provider = $state<string | null>(null);
  error = $state<string | null>(null);

  unsupported = $derived(this.fields.filter((f) => !f.supported).length);

  readonly #api: HearthApi;
  #token = 0;

  constructor(api: HearthApi) {
    this.#api = api;
  }

  /** Ask about `target` (whose provider is called `provider`); an older answer arriving late is dropped. */
  async load(target: ModelTarget, provider: string | null): Promise<void> {
    const token = ++this.#token;
    try {
      const fields = await this.#api.samplingSupportFor(target);
      if (token !== this.#token) return;
      this.fields = fields;
      this.provider = target.kind === 'remote' ? provider : null;
      this.error = null;
    } catch (e) {
      if (token !== this.#token) return;
      // Nothing is greyed out then: better a setting the API ignores than one the user cannot reach.
      this.fields = [];
      this.error = errorMessage(e);
    }
  }

  /** The backend's word on setting `key`; undefined for settings it does not list (load settings). */
  of(key: string): FieldSupport | undefined {
    return this.fields.find((f) => f.field === key);
  }
}

const CONTEXT = Symbol('sampling-support');

/** Lets every settings field below the caller look up whether it is sent. */
export function provideSupport(support: SamplingSupport): void {
  setContext(CONTEXT, support);
}

export function fieldSupport(): SamplingSupport | undefined {
  return getContext<SamplingSupport | undefined>(CONTEXT);
}
