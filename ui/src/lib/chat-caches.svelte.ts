import type { ChatCacheUsage } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { errorMessage } from './format';

/**
 * What the chats' KV caches take on disk (each chat's conversation as the model read it, kept so
 * its next reply starts without reading it again), and clearing them all.
 */
export class ChatCachesStore {
  /** Null until read. */
  usage = $state<ChatCacheUsage | null>(null);
  clearing = $state(false);
  /** Why the last read or clear failed. */
  error = $state<string | null>(null);

  readonly #api: HearthApi;
  /** Answers to an earlier request than the last are dropped. */
  #token = 0;

  constructor(api: HearthApi) {
    this.#api = api;
  }

  /** Read the usage again (the panel opened, the model was reloaded and spilled its caches). */
  refresh(): Promise<void> {
    if (this.clearing) return Promise.resolve(); // the clear answers with the usage after it
    return this.#ask(() => this.#api.chatCacheUsage());
  }

  /** Drop every chat's cache, in RAM and on disk: each chat's next reply reads its conversation again. */
  async clear(): Promise<void> {
    if (this.clearing) return;
    this.clearing = true;
    try {
      await this.#ask(() => this.#api.clearChatCaches());
    } finally {
      this.clearing = false;
    }
  }

  async #ask(request: () => Promise<ChatCacheUsage>): Promise<void> {
    const token = ++this.#token;
    try {
      const usage = await request();
      if (token !== this.#token) return;
      this.usage = usage;
      this.error = null;
    } catch (e) {
      if (token === this.#token) this.error = errorMessage(e);
    }
  }
}
