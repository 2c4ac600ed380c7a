import type { IpcErrorKind, ImportMode, LibraryModel } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';
import { errorKind, importText, isGguf, type ImportResult } from './models';

/** An action on one library file that failed, and why (shown on its row). */
export type RowError = { action: 'load' | 'unload' | 'delete' | 'reveal'; message: string; kind: IpcErrorKind | null };

/**
 * The GGUF files on this computer that Hearth knows, and the one loaded. Loading reports its
 * progress; a failed load leaves the model that was loaded as it was, and says why on the row.
 */
export class LibraryStore {
  models = $state<LibraryModel[]>([]);
  /** The library was read at least once. */
  ready = $state(false);
  listError = $state<string | null>(null);
  /** The file being loaded and how far (0..1). */
  loading = $state<{ path: string; fraction: number } | null>(null);
  unloading = $state(false);
  /** Per file: why the last action on it failed. */
  errors = $state<Record<string, RowError>>({});
  /** Files being deleted. */
  deleting = $state<Record<string, boolean>>({});
  importing = $state(false);
  /** How the last import went, in words. */
  importNotice = $state<{ tone: 'done' | 'error'; text: string } | null>(null);

  loadedPath = $derived(this.models.find((m) => m.loaded)?.path ?? null);

  readonly #api: HearthApi;
  readonly #onModelChanged: () => void;
  #asked = 0;

  /** `onModelChanged`: the loaded model changed (or may have), so that the chat header reads it again. */
  constructor(api: HearthApi, onModelChanged: () => void = () => {}) {
    this.#api = api;
    this.#onModelChanged = onModelChanged;
  }

  async refresh(): Promise<void> {
    const asked = ++this.#asked;
    try {
      const models = await this.#api.listLibrary();
      if (asked !== this.#asked) return;
      this.models = models;
      this.listError = null;
    } catch (e) {
      if (asked === this.#asked) this.listError = errorMessage(e);
    } finally {
      if (asked === this.#asked) this.ready = true;
    }
  }

  get(path: string): LibraryModel | undefined {
    return this.models.find((m) => m.path === path);
  }

  /** Load `path` in place of the loaded model; true once it is loaded. One load at a time. */
  async load(path: string): Promise<boolean> {
    if (this.loading) return false;
    this.loading = { path, fraction: 0 };
    delete this.errors[path];
    try {
      await this.#api.loadModel(path, (fraction) => {
        if (this.loading?.path === path) this.loading.fraction = Math.max(this.loading.fraction, Math.min(1, fraction));
      });
      for (const m of this.models) m.loaded = m.path === path;
      return true;
    } catch (e) {
      this.errors[path] = { action: 'load', message: errorMessage(e), kind: errorKind(e) };
      return false;
    } finally {
      this.loading = null;
      this.#onModelChanged();
      void this.refresh();
    }
  }

  /** Gives up the load under way; `load` then ends with the app's words on the row. */
  async cancelLoad(): Promise<void> {
    if (!this.loading) return;
    try {
      await this.#api.cancelLoad();
    } catch (e) {
      const path = this.loading?.path;
      if (path) this.errors[path] = { action: 'load', message: errorMessage(e), kind: errorKind(e) };
    }
  }

  async unload(): Promise<void> {
    const path = this.loadedPath;
    if (path === null) return;
    this.unloading = true;
    delete this.errors[path];
    try {
      await this.#api.unloadModel();
      for (const m of this.models) m.loaded = false;
    } catch (e) {
      this.errors[path] = { action: 'unload', message: errorMessage(e), kind: errorKind(e) };
    } finally {
      this.unloading = false;
      this.#onModelChanged();
    }
  }

  /** Delete the file (or forget a linked one). */
  async remove(path: string): Promise<void> {
    const wasLoaded = this.get(path)?.loaded ?? false;
    this.deleting[path] = true;
    delete this.errors[path];
    try {
      await this.#api.deleteModel(path);
      this.models = this.models.filter((m) => m.path !== path);
      if (wasLoaded) this.#onModelChanged();
    } catch (e) {
      this.errors[path] = { action: 'delete', message: errorMessage(e), kind: errorKind(e) };
    } finally {
      delete this.deleting[path];
      void this.refresh();
    }
  }

  async reveal(path: string): Promise<void> {
    delete this.errors[path];
    try {
      await this.#api.revealModel(path);
    } catch (e) {
      this.errors[path] = { action: 'reveal', message: errorMessage(e), kind: errorKind(e) };
    }
  }

  /** Import a file the user picks in the system's dialog; nothing happens when it is cancelled. */
  async importDialog(mode: ImportMode): Promise<void> {
    await this.#importing(async () => {
      const model = await this.#api.importModelDialog(mode);
      return model ? { imported: [model], failed: [], skipped: [] } : null;
    });
  }

  /** Import dropped files: each .gguf one in turn; anything else is skipped and named. */
  async importPaths(paths: string[], mode: ImportMode): Promise<void> {
    await this.#importing(async () => {
      const result: ImportResult = { imported: [], failed: [], skipped: paths.filter((p) => !isGguf(p)) };
      for (const path of paths.filter(isGguf)) {
        try {
          result.imported.push(await this.#api.importModel(path, mode));
        } catch (e) {
          result.failed.push({ path, error: errorMessage(e) });
        }
      }
      return result;
    });
  }

  async #importing(run: () => Promise<ImportResult | null>): Promise<void> {
    if (this.importing) return;
    this.importing = true;
    this.importNotice = null;
    try {
      const result = await run();
      if (result === null) return;
      this.importNotice = importText(result);
      if (result.imported.length > 0) await this.refresh();
    } catch (e) {
      this.importNotice = { tone: 'error', text: `Not imported: ${errorMessage(e)}` };
    } finally {
      this.importing = false;
    }
  }

  dismissImportNotice(): void {
    this.importNotice = null;
  }
}
