import type { ProviderView } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';

/**
 * One provider's models in the model menu. A provider that could not list them says why in
 * words, and still offers the models typed into its settings (a server may have no models list).
 */
export type ModelList =
  | { status: 'loading' }
  | { status: 'ready'; models: string[] }
  | { status: 'failed'; error: string; models: string[] };

/** The models each provider offers, read when the model menu opens; the last answer shows meanwhile. */
export class ModelCatalog {
  lists = $state<Record<string, ModelList>>({});

  readonly #api: HearthApi;
  /** The newest request per provider: an older answer arriving late is dropped. */
  readonly #asked = new Map<string, number>();

  constructor(api: HearthApi) {
    this.#api = api;
  }

  /** Ask every provider for its models at once; each list shows as soon as it arrives. */
  async refresh(providers: ProviderView[]): Promise<void> {
    await Promise.all(providers.map((p) => this.#refreshOne(p)));
  }

  async #refreshOne({ config }: ProviderView): Promise<void> {
    const id = config.id;
    const asked = (this.#asked.get(id) ?? 0) + 1;
    this.#asked.set(id, asked);
    this.lists[id] ??= { status: 'loading' };
    let list: ModelList;
    try {
      list = { status: 'ready', models: (await this.#api.listProviderModels(id)).map((m) => m.id) };
    } catch (e) {
      list = { status: 'failed', error: errorMessage(e), models: config.models };
    }
    if (this.#asked.get(id) === asked) this.lists[id] = list;
  }
}
