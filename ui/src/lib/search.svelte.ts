import type { SearchHit } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';

/** Typing pauses this long before a search is sent. */
export const SEARCH_DEBOUNCE_MS = 150;

/** The sidebar's message search: the query, its results once answered, and the highlighted one. */
export class SearchStore {
  query = $state('');
  results = $state<SearchHit[]>([]);
  /** The query `results` answer; behind `query` while a search waits or runs. */
  answered = $state('');
  /** The result Enter opens (arrow keys move it). */
  selected = $state(0);
  error = $state<string | null>(null);

  /** A query is present: results replace the chat list. */
  active = $derived(this.query.trim() !== '');
  pending = $derived(this.active && this.answered !== this.query.trim());
  /** Answered, and nothing matched. */
  empty = $derived(this.active && !this.pending && this.error === null && this.results.length === 0);

  readonly #api: Pick<HearthApi, 'searchMessages'>;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #token = 0;

  constructor(api: Pick<HearthApi, 'searchMessages'>) {
    this.#api = api;
  }

  setQuery(query: string): void {
    this.query = query;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const trimmed = query.trim();
    if (!trimmed) {
      this.#token += 1; // an answer still on its way is for a query that is gone
      this.results = [];
      this.answered = '';
      this.error = null;
      this.selected = 0;
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#run(trimmed);
    }, SEARCH_DEBOUNCE_MS);
  }

  clear(): void {
    this.setQuery('');
  }

  /** Move the highlight by `step`, staying within the results. */
  move(step: number): void {
    if (this.results.length === 0) return;
    this.selected = Math.min(this.results.length - 1, Math.max(0, this.selected + step));
  }

  get current(): SearchHit | null {
    return this.results[this.selected] ?? null;
  }

  async #run(query: string): Promise<void> {
    const token = ++this.#token;
    try {
      const hits = await this.#api.searchMessages(query);
      if (token !== this.#token) return; // a newer query was typed meanwhile
      this.results = hits;
      this.error = null;
    } catch (e) {
      if (token !== this.#token) return;
      this.results = [];
      this.error = errorMessage(e);
    }
    this.selected = 0;
    this.answered = query;
  }
}
