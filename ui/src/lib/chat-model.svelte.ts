import type { ChatSummary, ModelInfo } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import type { ChatModels, ChatStore, TurnLoad } from './chat.svelte';
import { errorMessage } from './format';
import type { LibraryStore, LoadCommand } from './library.svelte';

/**
 * Loads the local model each chat talks to: as the chat opens, before a comparison, and when the user
 * picks another one for it; a turn's own load (the backend readies the chat's model before its reply)
 * is followed from the turn's events. The backend decides whether a load is needed; its progress
 * shows as the library's load under way (LibraryStore.track / follow). The loads asked for here run
 * one after the other; a chat opened later drops the opens still waiting, so the last chat opened
 * wins. Why a chat's model could not be loaded is kept per chat for its model button and menu. The
 * backend's own changes of the loaded model (an idle unload) are followed with `watch`.
 */
export class ChatModelStore implements ChatModels {
  /** Per chat: why its model could not be loaded, in the backend's words; cleared by its next load. */
  problems = $state<Record<number, string>>({});

  readonly #api: HearthApi;
  readonly #chats: ChatStore;
  readonly #library: LibraryStore;
  #queue: Promise<void> = Promise.resolve();
  #opens = 0;

  constructor(api: HearthApi, chats: ChatStore, library: LibraryStore) {
    this.#api = api;
    this.#chats = chats;
    this.#library = library;
  }

  /**
   * Chat `chatId` was opened: load its model when another (or none) is loaded; a failure goes to the
   * banner while the chat is on show. Not while a reply is written (the engine is busy with it): the
   * chat's next turn loads its model then.
   */
  async opened(chatId: number): Promise<void> {
    if (this.#chats.busy) return;
    const open = ++this.#opens;
    const latest = () => open === this.#opens;
    try {
      await this.#queued(() => (latest() ? this.#ready(chatId) : Promise.resolve()));
    } catch (e) {
      if (latest() && this.#chats.activeChatId === chatId) this.#chats.showError(e);
    }
  }

  /** Before a comparison in chat `chatId`: its model loaded where the backend finds it must be, with progress; rejects with why not. */
  ready(chatId: number): Promise<void> {
    return this.#queued(() => this.#ready(chatId));
  }

  /** A turn of chat `chatId` loads its model first (its events say how far): shown as the load under way. */
  turnLoad(chatId: number): TurnLoad {
    const load = this.#library.follow({ path: null, chatId, expected: true });
    let loading: string | null = null;
    let ended = false;
    return {
      progress: ({ path, name, fraction }) => {
        loading = path;
        load.progress(fraction, { path, name });
      },
      end: (error) => {
        if (ended) return;
        ended = true;
        load.end(error === undefined ? { loaded: loading } : { error });
        if (error === undefined) delete this.problems[chatId];
      },
      cancel: () => this.#library.cancelLoad(),
    };
  }

  /** A turn of chat `chatId` could not ready its model: why, in the backend's words, for its model button. */
  failed(chatId: number, error: unknown): void {
    this.problems[chatId] = errorMessage(error);
  }

  /** The user picked `path` for chat `chatId` (its model menu): it talks to it from now on, loaded now. A failure goes to the banner. */
  async use(chatId: number, path: string): Promise<boolean> {
    try {
      await this.#use(chatId, path);
      return true;
    } catch (e) {
      this.#chats.showError(e);
      return false;
    }
  }

  /**
   * The model manager's Load. With a local chat open, the model becomes that chat's too: the chat on
   * show talks to the model the user just loaded (as in LM Studio), rather than loading its own again
   * at its next reply. Otherwise the model is only loaded. A failure is said on the file's row.
   */
  async loadFromLibrary(path: string): Promise<boolean> {
    const chat = this.#chats.activeChat;
    if (chat?.model.kind !== 'local') return this.#library.load(path);
    return this.#use(chat.id, path).then(
      () => true,
      () => false,
    );
  }

  /**
   * Follow the loaded model as the backend changes it on its own (unloaded after the idle time set), so
   * that the header and the library show it at once; `onChanged` runs after each change is applied.
   * Resolves to the unsubscribe.
   */
  async watch(onChanged: (model: ModelInfo | null) => void = () => {}): Promise<() => void> {
    try {
      return await this.#api.onModelChanged((model) => {
        this.changed(model);
        onChanged(model);
      });
    } catch (e) {
      // Not worth a banner: each turn still asks the backend for its chat's model.
      console.warn('changes of the loaded model are not available:', errorMessage(e));
      return () => {};
    }
  }

  /** `model` is the loaded model now (null: none is), as the backend said without being asked. */
  changed(model: ModelInfo | null): void {
    this.#chats.model = model;
    this.#library.markLoaded(model?.path ?? null);
  }

  #use(chatId: number, path: string): Promise<void> {
    return this.#queued(async () => {
      let chat = null as ChatSummary | null;
      const command: LoadCommand = async (onProgress) => {
        const picked = await this.#api.useLocalModel(chatId, path, onProgress);
        chat = picked.chat;
        return picked.loaded;
      };
      try {
        await this.#load(chatId, path, path !== this.#loadedPath(), command);
      } catch (e) {
        void this.#chats.refreshChats(); // the chat may name the file now, though it did not load
        throw e;
      }
      if (chat) this.#chats.applyChatUpdate(chat);
    });
  }

  /** Load chat `chatId`'s model if the backend finds it must (it says which, and how far). */
  async #ready(chatId: number): Promise<void> {
    const chat = this.#chats.chats.find((c) => c.id === chatId);
    if (chat?.model.kind !== 'local') return;
    await this.#load(chatId, chat.model.model, false, (onProgress) =>
      this.#api.loadChatModel(chatId, ({ path, name, fraction }) => onProgress(fraction, { path, name })),
    );
  }

  async #load(chatId: number, path: string | null, expected: boolean, command: LoadCommand): Promise<void> {
    try {
      const loaded = await this.#library.track({ path, chatId, expected }, command);
      if (loaded) this.#chats.model = loaded;
      delete this.problems[chatId];
    } catch (e) {
      this.problems[chatId] = errorMessage(e);
      throw e;
    }
  }

  #loadedPath(): string | null {
    return this.#chats.model?.path ?? null;
  }

  /** Runs `task` once the loads asked for before it have ended. */
  #queued(task: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(task);
    this.#queue = run.catch(() => {});
    return run;
  }
}
