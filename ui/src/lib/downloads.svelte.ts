import type { Download } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';
import { isActive } from './models';
import type { Outcome } from './providers.svelte';

/**
 * The model downloads: those the backend remembers, then every change it reports on the
 * `watchDownloads` channel. One store for the app's life, watching from the start; the newest download first.
 */
export class DownloadsStore {
  items = $state<Download[]>([]);
  /** Why the downloads could not be read or watched. */
  loadError = $state<string | null>(null);
  /** Per download: why the user's last action on it (pause, resume, cancel) failed. */
  errors = $state<Record<string, string>>({});
  /** Per download: an action on it is under way. */
  working = $state<Record<string, boolean>>({});
  /** Per retrying download: when it tries again (ms since the epoch), to count down here. */
  retryAt = $state<Record<string, number>>({});

  /** Downloads not finished yet (paused ones included): the tab's badge. */
  active = $derived(this.items.filter(isActive).length);

  readonly #api: HearthApi;
  readonly #onDone: (download: Download) => void;
  readonly #now: () => number;
  #started = false;

  /** `onDone`: a download finished (seen through the channel), so its file is in the library now. */
  constructor(api: HearthApi, onDone: (download: Download) => void = () => {}, now: () => number = Date.now) {
    this.#api = api;
    this.#onDone = onDone;
    this.#now = now;
  }

  /** Called once when the app starts. Watch, then list: a change in between is not lost (the watched one is newer). */
  async watch(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    try {
      await this.#api.watchDownloads((d) => this.#update(d));
      const listed = await this.#api.listDownloads();
      for (const d of listed) if (!this.get(d.id)) this.items.push(d);
      for (const d of listed) this.#noteRetry(d);
      this.loadError = null;
    } catch (e) {
      this.loadError = errorMessage(e);
    }
  }

  get(id: string): Download | undefined {
    return this.items.find((d) => d.id === id);
  }

  /** The download of `repo`'s `quant` still under way, if any. */
  underway(repo: string, quant: string): Download | undefined {
    return this.items.find((d) => d.repo === repo && d.quant === quant && isActive(d));
  }

  /** Start downloading `repo`'s `quant` (all of its parts). */
  async download(repo: string, quant: string, files: string[]): Promise<Outcome<Download>> {
    try {
      const d = await this.#api.startDownload(repo, quant, files);
      // An update sent meanwhile is newer than the answer.
      if (!this.get(d.id)) this.#update(d);
      return { ok: true, value: d };
    } catch (e) {
      return { ok: false, error: errorMessage(e) };
    }
  }

  pause(id: string): Promise<void> {
    return this.#act(id, async () => this.#update(await this.#api.pauseDownload(id)));
  }

  /** Resume a paused download, or retry a failed one. */
  resume(id: string): Promise<void> {
    return this.#act(id, async () => this.#update(await this.#api.resumeDownload(id)));
  }

  cancel(id: string): Promise<void> {
    return this.#act(id, async () => {
      await this.#api.cancelDownload(id);
      const d = this.get(id);
      // The channel says so too; until it does, show what was asked for.
      if (d && d.state !== 'done' && d.state !== 'cancelled') this.#update({ ...d, state: 'cancelled', bytesPerSecond: 0, etaSeconds: null, retryInS: null });
    });
  }

  async #act(id: string, action: () => Promise<void>): Promise<void> {
    this.working[id] = true;
    delete this.errors[id];
    try {
      await action();
    } catch (e) {
      this.errors[id] = errorMessage(e);
    } finally {
      delete this.working[id];
    }
  }

  #update(d: Download): void {
    const at = this.items.findIndex((x) => x.id === d.id);
    const before = at >= 0 ? this.items[at] : undefined;
    if (at >= 0) this.items[at] = d;
    else this.items.unshift(d);
    this.#noteRetry(d);
    if (d.state === 'done' && before?.state !== 'done') this.#onDone(d);
  }

  #noteRetry(d: Download): void {
    if (d.state === 'retrying' && d.retryInS !== null) this.retryAt[d.id] = this.#now() + d.retryInS * 1000;
    else delete this.retryAt[d.id];
  }
}
