import type { LibraryModel } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';

/** The choice that means no embedding model: passages are ranked by their words alone. */
export const WORDS_ONLY = '';

/** The library's embedding models (their tokens pooled into one vector), which can rank passages by meaning. */
export function embeddingModels(library: LibraryModel[]): LibraryModel[] {
  return library.filter((m) => m.facts?.embedding && !m.error);
}

/**
 * The embedding model that ranks retrieved passages by meaning too (Settings → Attachments): read when the panel
 * opens; a choice is checked by the backend (the engine embeds a word with it) before it is in force.
 */
export class EmbeddingModelStore {
  /** The chosen model's path; null: words alone. */
  path = $state<string | null>(null);
  /** A choice being checked. */
  checking = $state(false);
  /** Why the last read or choice failed. */
  error = $state<string | null>(null);

  readonly #api: HearthApi;
  #token = 0;

  constructor(api: HearthApi) {
    this.#api = api;
  }

  load(): Promise<void> {
    return this.#ask(() => this.#api.getEmbeddingModel());
  }

  /** Choose the model at `path` (null: none). */
  choose(path: string | null): Promise<void> {
    this.checking = true;
    return this.#ask(() => this.#api.setEmbeddingModel(path));
  }

  async #ask(request: () => Promise<string | null>): Promise<void> {
    const token = ++this.#token;
    try {
      const path = await request();
      if (token !== this.#token) return;
      this.path = path;
      this.error = null;
    } catch (e) {
      if (token !== this.#token) return;
      this.error = errorMessage(e);
    } finally {
      if (token === this.#token) this.checking = false;
    }
  }
}
