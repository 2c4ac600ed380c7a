import type { Download, LibraryModel, RepoQuant, StarterModel } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import type { DownloadsStore } from './downloads.svelte';
import { errorMessage } from './format';
import { quantKey, type HubStore, type QuantFit } from './hub.svelte';
import type { LibraryStore } from './library.svelte';
import { isActive } from './models';

/** Where the offer stands: asking the backend and the hub, ready to download, or the hub cannot be reached. */
export type Offer =
  | { status: 'checking' }
  | { status: 'ready'; quant: RepoQuant; fit: QuantFit | null }
  | { status: 'offline'; message: string }
  | { status: 'failed'; message: string };

/**
 * The welcome screen of a Hearth with no model: the model the backend recommends for this machine
 * (read from the hub with its fit, downloaded with progress, then loaded), or a GGUF file the user
 * already has (imported, then loaded). Nothing here needs a terminal.
 */
export class WelcomeStore {
  starter = $state<StarterModel | null>(null);
  #starterError = $state<string | null>(null);
  /** The user asked for the starter: once its download is done, it is loaded. */
  #wanted = $state(false);
  /** Why the last download or import did not start or did not load. */
  problem = $state<string | null>(null);

  readonly #api: HearthApi;
  readonly #hub: HubStore;
  readonly #downloads: DownloadsStore;
  readonly #library: LibraryStore;

  constructor(api: HearthApi, hub: HubStore, downloads: DownloadsStore, library: LibraryStore) {
    this.#api = api;
    this.#hub = hub;
    this.#downloads = downloads;
    this.#library = library;
  }

  /** The starter's quantization, its fit, or why the hub did not answer. */
  get offer(): Offer {
    if (this.#starterError) return { status: 'failed', message: this.#starterError };
    const starter = this.starter;
    const files = starter ? this.#hub.files[starter.repo] : undefined;
    if (!starter || !files || files.status === 'loading') return { status: 'checking' };
    if (files.status === 'failed') {
      const { kind, message } = files.error;
      return kind === 'network' ? { status: 'offline', message } : { status: 'failed', message };
    }
    const quant = files.quants.find((q) => q.quant === starter.quant);
    if (!quant) return { status: 'failed', message: `${starter.repo} no longer offers ${starter.quant}` };
    const fit = this.#hub.fits[quantKey(starter.repo, quant.quant)] ?? null;
    if (fit?.status === 'failed' && fit.error.kind === 'network') return { status: 'offline', message: fit.error.message };
    return { status: 'ready', quant, fit };
  }

  /** The starter's newest download: under way, done or failed. */
  get download(): Download | null {
    const starter = this.starter;
    if (!starter) return null;
    return this.#downloads.items.find((d) => d.repo === starter.repo && d.quant === starter.quant) ?? null;
  }

  /** Ask which model to offer, then the hub for its files and fit. Again after being offline: `retry`. */
  async open(): Promise<void> {
    if (!this.#library.ready) void this.#library.refresh();
    try {
      this.starter ??= await this.#api.starterModel();
      this.#starterError = null;
    } catch (e) {
      this.#starterError = errorMessage(e);
      return;
    }
    await this.retry();
  }

  async retry(): Promise<void> {
    const starter = this.starter;
    if (!starter) return this.open();
    await this.#hub.readFiles(starter.repo);
    const offer = this.offer;
    if (offer.status === 'ready') await this.#hub.checkFit(starter.repo, offer.quant);
  }

  /** Download the starter (unless it is under way already); it is loaded when it is done. */
  async fetch(): Promise<void> {
    const offer = this.offer;
    if (!this.starter || offer.status !== 'ready') return;
    this.problem = null;
    this.#wanted = true;
    const underway = this.download;
    if (underway && isActive(underway)) return;
    const started = await this.#downloads.download(this.starter.repo, offer.quant.quant, offer.quant.files);
    if (!started.ok) {
      this.#wanted = false;
      this.problem = started.error;
    }
  }

  /** A download finished: the starter the user asked for is loaded. */
  async downloaded(d: Download): Promise<void> {
    if (!this.#wanted || d.repo !== this.starter?.repo || d.quant !== this.starter.quant || !d.modelPath) return;
    this.#wanted = false;
    await this.#library.refresh();
    await this.#load(d.modelPath);
  }

  /** Import a GGUF file the user picks in the system's dialog, then load it. */
  async importFile(): Promise<void> {
    this.problem = null;
    const imported: LibraryModel[] = await this.#library.importDialog('link');
    const notice = this.#library.importNotice;
    if (imported.length === 0) {
      if (notice?.tone === 'error') this.problem = notice.text;
      return;
    }
    this.#library.dismissImportNotice();
    await this.#load(imported[0].path);
  }

  async #load(path: string): Promise<void> {
    if (!(await this.#library.load(path))) this.problem = this.#library.errors[path]?.message ?? 'The model could not be loaded';
  }
}
