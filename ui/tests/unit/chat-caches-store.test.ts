import { describe, expect, it, vi } from 'vitest';
import type { CacheBudgets, ChatCacheUsage, FieldRange } from '../../src/ipc/bindings';
import { ChatCachesStore } from '../../src/lib/chat-caches.svelte';
import { CONTRACT } from '../contract.mjs';
import { fakeApi } from './helpers';

const BUDGETS: CacheBudgets = CONTRACT.cacheBudgetDefaults;
const RANGES: FieldRange[] = CONTRACT.cacheBudgetRanges;
/** The budgets with some changed. */
const budgets = (over: Partial<CacheBudgets>): CacheBudgets => ({ ...BUDGETS, ...over });
/** CacheBudgets::validate's words for a value out of `key`'s range. */
const refusal = ({ key, text }: FieldRange) => `${key} must be ${text}`;
const MB = 2 ** 20;

/** The loaded model's weights and context: clearing the chats' caches leaves them. */
const MODEL = { modelBytes: 92 * MB, contextBytes: 180 * MB, keptModelBytes: 0 };
/** Caches taking `bytes` on disk in `chats` files, and `ramBytes` in RAM, within the default budgets, beside the model. */
const used = (bytes: number, chats: number, ramBytes = 0, budgets = BUDGETS): ChatCacheUsage => ({ bytes, chats, ramBytes, budgets, ...MODEL });

/** A backend with `usage`; `clear` answers once `release()` is called when `hold` is set. */
function fakeBackend(usage: ChatCacheUsage) {
  const backend = { usage, hold: false, release: () => {} };
  const api = fakeApi('the chat caches store', {
    chatCacheUsage: vi.fn(async () => ({ ...backend.usage })),
    clearChatCaches: vi.fn(async () => {
      if (backend.hold) await new Promise<void>((r) => (backend.release = r));
      backend.usage = used(0, 0, 0, backend.usage.budgets);
      return { ...backend.usage };
    }),
    // As the backend has it: a budget out of its range is refused, naming it; what no longer fits goes.
    setChatCacheBudgets: vi.fn(async (budgets: CacheBudgets) => {
      const out = RANGES.find((r) => budgets[r.key as keyof CacheBudgets] > r.max);
      if (out) throw { kind: 'invalidInput', message: refusal(out), field: out.key };
      const ramBytes = Math.min(backend.usage.ramBytes, budgets.ramMb * MB);
      backend.usage = { ...backend.usage, ramBytes, budgets: { ...budgets } };
      return { ...backend.usage };
    }),
  });
  return Object.assign(backend, { api });
}

describe('ChatCachesStore', () => {
  it('reads the usage, and clear answers with what is left', async () => {
    const backend = fakeBackend(used(94_371_840, 3, 62_914_560));
    const store = new ChatCachesStore(backend.api);
    expect(store.usage).toBeNull();
    await store.refresh();
    expect(store.usage).toEqual(used(94_371_840, 3, 62_914_560));
    expect(store.budgets).toEqual(BUDGETS);
    await store.clear();
    expect(store.usage).toEqual(used(0, 0));
    expect(store.clearing).toBe(false);
  });

  it('while clearing, another clear or a refresh asks nothing', async () => {
    const backend = fakeBackend(used(1000, 1));
    backend.hold = true;
    const store = new ChatCachesStore(backend.api);
    const clearing = store.clear();
    expect(store.clearing).toBe(true);
    await store.clear();
    await store.refresh();
    backend.release();
    await clearing;
    expect(backend.api.clearChatCaches).toHaveBeenCalledTimes(1);
    expect(backend.api.chatCacheUsage).not.toHaveBeenCalled();
    expect(store.usage).toEqual(used(0, 0));
  });

  it('a failure says why, and the next answer clears it', async () => {
    const backend = fakeBackend(used(1000, 1));
    const store = new ChatCachesStore(backend.api);
    vi.mocked(backend.api.chatCacheUsage).mockRejectedValueOnce({ kind: 'file', message: 'permission denied' });
    await store.refresh();
    expect(store.error).toBe('permission denied');
    expect(store.usage).toBeNull();
    await store.refresh();
    expect(store.error).toBeNull();
    expect(store.usage).toEqual(used(1000, 1));
  });

  it('an earlier answer arriving last is dropped', async () => {
    const backend = fakeBackend(used(1000, 1));
    let answerFirst: (u: ChatCacheUsage) => void = () => {};
    vi.mocked(backend.api.chatCacheUsage).mockImplementationOnce(() => new Promise((r) => (answerFirst = r)));
    const store = new ChatCachesStore(backend.api);
    const first = store.refresh();
    backend.usage = used(2000, 2);
    await store.refresh();
    answerFirst(used(1000, 1));
    await first;
    expect(store.usage).toEqual(used(2000, 2));
  });

  it('setBudgets puts them in force and keeps the answer', async () => {
    const backend = fakeBackend(used(94_371_840, 3, 62_914_560));
    const store = new ChatCachesStore(backend.api);
    await store.refresh();
    const set = budgets({ ramMb: 0, diskMb: 2048, unloadIdleMinutes: 30 });
    await store.setBudgets(set);
    expect(backend.api.setChatCacheBudgets).toHaveBeenCalledWith(set);
    expect(store.usage).toEqual(used(94_371_840, 3, 0, set));
    expect(store.budgets).toEqual(set);
    expect(store.error).toBeNull();
    expect(store.errorKeys).toEqual([]);
  });

  it.each(RANGES)('a refused $key stays on screen, its field named, until the next answer', async (range) => {
    const backend = fakeBackend(used(1000, 1));
    const store = new ChatCachesStore(backend.api);
    await store.refresh();
    const refused = budgets({ [range.key]: range.max + 1 });
    await store.setBudgets(refused);
    expect(store.error).toBe(refusal(range));
    expect(store.errorKeys).toEqual([range.key]);
    expect(store.budgets).toEqual(refused);
    expect(store.usage?.budgets).toEqual(BUDGETS);

    await store.setBudgets(budgets({ [range.key]: range.min }));
    expect(store.error).toBeNull();
    expect(store.errorKeys).toEqual([]);
    expect(store.budgets).toEqual(budgets({ [range.key]: range.min }));
  });

  it('a failure that names no budget shows the budgets in force again', async () => {
    const backend = fakeBackend(used(1000, 1));
    const store = new ChatCachesStore(backend.api);
    await store.refresh();
    vi.mocked(backend.api.setChatCacheBudgets).mockRejectedValueOnce({ kind: 'file', message: 'permission denied' });
    await store.setBudgets(budgets({ ramMb: 256 }));
    expect(store.error).toBe('permission denied');
    expect(store.errorKeys).toEqual([]);
    expect(store.budgets).toEqual(BUDGETS);
  });
});
