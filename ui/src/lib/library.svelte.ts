import type { IpcErrorKind, ImportMode, LibraryModel, ModelInfo } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';
import { errorKind, importText, isGguf, type ImportResult } from './models';

/** An action on one library file that failed, and why (shown on its row). */
export type RowError = { action: 'load' | 'unload' | 'delete' | 'reveal'; message: string; kind: IpcErrorKind | null };

/**
 * A model load under way: its file and what it is called (null until the backend says, when it picks
 * the file: a chat that names none), the chat it is for (null: the model manager's own load), and how
 * far it got (0..1).
 */
export type ModelLoad = { path: string | null; name: string | null; chatId: number | null; fraction: number };

/** What a load is for, and whether to show it before the backend reports progress. */
export type LoadRequest = {
  path: string | null;
  chatId: number | null;
  /**
   * Show the load at once; otherwise only from its first progress report (the backend decides
   * whether a chat's model must be loaded, and reports at 0 as such a load begins).
   */
  expected: boolean;
};

/** A load's progress: how far (0..1), and which file where the backend says. */
export type LoadProgress = (fraction: number, model?: { path: string; name: string }) => void;

/** A load command: reports its progress to the callback, resolves to the model it loaded (null: none needed). */
export type LoadCommand = (onProgress: LoadProgress) => Promise<ModelInfo | null>;

/** A load shown as the load under way while someone else runs it (a turn readying its chat's model). */
export type FollowedLoad = {
  progress: LoadProgress;
  /** It ended: `loaded` is the file loaded now (null: none was needed), or it failed with `error`. */
  end(outcome: { loaded: string | null } | { error: unknown }): void;
};

/**
 * The GGUF files on this computer that Hearth knows, and the one loaded. Loading reports its
 * progress; a failed load leaves the model that was loaded as it was, and says why on the row.
 */
export class LibraryStore {
  models = $state<LibraryModel[]>([]);
  /** The library was read at least once. */
  ready = $state(false);
  listError = $state<string | null>(null);
  /** The load under way, whoever asked for it (the manager, a chat). */
  loading = $state<ModelLoad | null>(null);
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
  /** The newest load: an older one's progress is not shown. */
  #loads = 0;

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
    try {
      await this.track({ path, chatId: null, expected: true }, (onProgress) => this.#api.loadModel(path, onProgress));
      return true;
    } catch {
      return false; // said on the row
    }
  }

  /**
   * Run a load `command` as the load under way: its progress shown (for `request.chatId` where a chat
   * asked), its failure said on its file's row (and rethrown); afterwards the loaded model is read again.
   * A newer load takes the display over.
   */
  async track(request: LoadRequest, command: LoadCommand): Promise<ModelInfo | null> {
    const load = this.follow(request);
    try {
      const loaded = await command(load.progress);
      load.end({ loaded: loaded?.path ?? null });
      return loaded;
    } catch (error) {
      load.end({ error });
      throw error;
    }
  }

  /** Show a load someone else runs as the load under way (see `track`), until its `end`. */
  follow(request: LoadRequest): FollowedLoad {
    const load = ++this.#loads;
    const { chatId } = request;
    let path = request.path;
    let name = path === null ? null : (this.get(path)?.name ?? null);
    if (request.expected) this.loading = { path, name, chatId, fraction: 0 };
    if (path !== null) delete this.errors[path];
    let changed = false;
    return {
      progress: (fraction, model) => {
        if (load !== this.#loads) return;
        changed = true;
        if (model) ({ path, name } = model);
        this.loading ??= { path, name, chatId, fraction: 0 };
        Object.assign(this.loading, { path, name, fraction: Math.max(this.loading.fraction, Math.min(1, fraction)) });
      },
      end: (outcome) => {
        if ('error' in outcome) {
          changed = true; // a failed load may have reloaded the model before it
          if (path !== null) this.errors[path] = { action: 'load', message: errorMessage(outcome.error), kind: errorKind(outcome.error) };
        } else if (outcome.loaded !== null) {
          changed = true;
          this.markLoaded(outcome.loaded);
        }
        if (load === this.#loads) this.loading = null;
        if (changed) {
          this.#onModelChanged();
          if (this.ready) void this.refresh();
        }
      },
    };
  }

  /** `path` is the loaded model now (null: none is). */
  markLoaded(path: string | null): void {
    for (const m of this.models) m.loaded = m.path === path;
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
      this.markLoaded(null);
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

  /** Import a file the user picks in the system's dialog; nothing happens when it is cancelled. Resolves to what was imported. */
  async importDialog(mode: ImportMode): Promise<LibraryModel[]> {
    const result = await this.#importing(async () => {
      const model = await this.#api.importModelDialog(mode);
      return model ? { imported: [model], failed: [], skipped: [] } : null;
    });
    return result?.imported ?? [];
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

  async #importing(run: () => Promise<ImportResult | null>): Promise<ImportResult | null> {
    if (this.importing) return null;
    this.importing = true;
    this.importNotice = null;
    try {
      const result = await run();
      if (result === null) return null;
      this.importNotice = importText(result);
      if (result.imported.length > 0) await this.refresh();
      return result;
    } catch (e) {
      this.importNotice = { tone: 'error', text: `Not imported: ${errorMessage(e)}` };
      return null;
    } finally {
      this.importing = false;
    }
  }

  dismissImportNotice(): void {
    this.importNotice = null;
  }
}
