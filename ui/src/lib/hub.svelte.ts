import type { FitEstimate, IpcErrorKind, HubRepo, HubTokenStatus, RepoQuant } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';
import { defaultFitContext, errorKind, sortQuants } from './models';
import type { Outcome } from './providers.svelte';

/** A failure in words, with its IpcError kind (`hubAuth` gets a way to add a token). */
export type Failure = { message: string; kind: IpcErrorKind | null };

/** A repository's quantizations, read when it is opened. */
export type RepoFiles = { status: 'loading' } | { status: 'ready'; quants: RepoQuant[] } | { status: 'failed'; error: Failure };

/** A quantization's fit: the last estimate stays on show while the next one is worked out. */
export type QuantFit =
  | { status: 'checking'; estimate: FitEstimate | null }
  | { status: 'done'; estimate: FitEstimate }
  | { status: 'failed'; error: Failure; estimate: FitEstimate | null };

const failure = (e: unknown): Failure => ({ message: errorMessage(e), kind: errorKind(e) });

/** Key of a quantization in the fit maps. */
export const quantKey = (repo: string, quant: string) => `${repo}\n${quant}`;

/**
 * Hugging Face in the Discover tab: the search, the repository opened and its quantizations,
 * each one's fit on this machine and the context length it is checked at, and the token.
 */
export class HubStore {
  /** The query the results are for; null before the first search. */
  searched = $state<string | null>(null);
  results = $state<HubRepo[]>([]);
  searching = $state(false);
  searchError = $state<Failure | null>(null);
  /** The repository whose files are shown. */
  openRepo = $state<string | null>(null);
  files = $state<Record<string, RepoFiles>>({});
  fits = $state<Record<string, QuantFit>>({});
  /** The context length each quantization's fit is checked at. */
  contexts = $state<Record<string, number>>({});
  token = $state<HubTokenStatus | null>(null);

  readonly #api: HearthApi;
  #searches = 0;
  readonly #fitAsked = new Map<string, number>();

  constructor(api: HearthApi) {
    this.#api = api;
  }

  async search(query: string): Promise<void> {
    const asked = ++this.#searches;
    this.searching = true;
    try {
      const results = await this.#api.hubSearch(query.trim());
      if (asked !== this.#searches) return;
      this.results = results;
      this.searched = query.trim();
      this.searchError = null;
      this.openRepo = null;
    } catch (e) {
      if (asked === this.#searches) this.searchError = failure(e);
    } finally {
      if (asked === this.#searches) this.searching = false;
    }
  }

  /** Show `repo`'s files (read once), or hide them when they are on show. */
  async toggle(repo: string): Promise<void> {
    if (this.openRepo === repo) {
      this.openRepo = null;
      return;
    }
    this.openRepo = repo;
    if (this.files[repo]?.status !== 'ready') await this.readFiles(repo);
  }

  async readFiles(repo: string): Promise<void> {
    this.files[repo] = { status: 'loading' };
    try {
      this.files[repo] = { status: 'ready', quants: sortQuants(await this.#api.hubRepoFiles(repo)) };
    } catch (e) {
      this.files[repo] = { status: 'failed', error: failure(e) };
    }
  }

  /**
   * Estimate the fit of `quant` (from its first part's header). Without a context length it is
   * checked at the model's own (the backend's assumption when the header does not say): the first answer tells which.
   */
  async checkFit(repo: string, quant: RepoQuant, contextLength: number | null = this.contexts[quantKey(repo, quant.quant)] ?? null): Promise<void> {
    const key = quantKey(repo, quant.quant);
    const asked = (this.#fitAsked.get(key) ?? 0) + 1;
    this.#fitAsked.set(key, asked);
    const previous = this.fits[key]?.estimate ?? null;
    this.fits[key] = { status: 'checking', estimate: previous };
    if (contextLength !== null) this.contexts[key] = contextLength;
    try {
      let estimate = await this.#api.hubFit(repo, quant.files[0], contextLength);
      if (this.#fitAsked.get(key) !== asked) return;
      if (contextLength === null) {
        const wanted = defaultFitContext(estimate.facts);
        this.contexts[key] = wanted;
        if (estimate.contextLength !== wanted) estimate = await this.#api.hubFit(repo, quant.files[0], wanted);
      }
      if (this.#fitAsked.get(key) === asked) this.fits[key] = { status: 'done', estimate };
    } catch (e) {
      if (this.#fitAsked.get(key) === asked) this.fits[key] = { status: 'failed', error: failure(e), estimate: previous };
    }
  }

  async refreshToken(): Promise<Outcome<HubTokenStatus>> {
    return this.#tokenAction(() => this.#api.hubTokenStatus());
  }

  /** Save a token (null forgets it); repositories refused for want of one are read again. */
  async setToken(token: string | null): Promise<Outcome<HubTokenStatus>> {
    const result = await this.#tokenAction(() => this.#api.setHubToken(token));
    if (result.ok) {
      const refused = Object.entries(this.files).filter(([, f]) => f.status === 'failed' && f.error.kind === 'hubAuth');
      await Promise.all(refused.map(([repo]) => this.readFiles(repo)));
    }
    return result;
  }

  async #tokenAction(run: () => Promise<HubTokenStatus>): Promise<Outcome<HubTokenStatus>> {
    try {
      this.token = await run();
      return { ok: true, value: this.token };
    } catch (e) {
      return { ok: false, error: errorMessage(e) };
    }
  }
}
