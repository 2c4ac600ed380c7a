import type { CacheBudgets, ChatCacheUsage } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { CACHE_BUDGET_DEFAULTS } from '../ipc/contract';
import { errorFields, errorMessage } from './format';

export type BudgetKey = keyof CacheBudgets;

export function isBudgetKey(key: string): key is BudgetKey {
  return key in CACHE_BUDGET_DEFAULTS;
}

/**
 * What the chats' KV caches take in RAM and on disk (each chat's conversation as the model read it,
 * kept so its next reply starts without reading it again), their budgets, and clearing them all.
 */
export class ChatCachesStore {
  /** Null until read. */
  usage = $state<ChatCacheUsage | null>(null);
  /**
   * The budgets on screen: those in force, or the last ones set while the backend refuses them (so
   * the refused value stays in its box, marked); null until read.
   */
  budgets = $state<CacheBudgets | null>(null);
  clearing = $state(false);
  /** Why the last read, clear or change of the budgets failed. */
  error = $state<string | null>(null);
  /** The budgets `error` is about (the backend's `IpcError.field`), to mark their boxes. */
  errorKeys = $state<BudgetKey[]>([]);

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

  /** Save the budgets; the backend puts them in force at once (evicting what no longer fits). */
  setBudgets(budgets: CacheBudgets): Promise<void> {
    this.budgets = { ...budgets };
    return this.#ask(() => this.#api.setChatCacheBudgets(budgets));
  }

  async #ask(request: () => Promise<ChatCacheUsage>): Promise<void> {
    const token = ++this.#token;
    try {
      const usage = await request();
      if (token !== this.#token) return;
      this.usage = usage;
      this.budgets = { ...usage.budgets };
      this.error = null;
      this.errorKeys = [];
    } catch (e) {
      if (token !== this.#token) return;
      this.error = errorMessage(e);
      this.errorKeys = errorFields(e).filter(isBudgetKey);
      // A refused budget stays in its box, marked; after any other failure the boxes show what is in force.
      if (this.errorKeys.length === 0 && this.usage) this.budgets = { ...this.usage.budgets };
    }
  }
}
