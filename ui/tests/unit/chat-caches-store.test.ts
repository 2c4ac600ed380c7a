import { describe, expect, it, vi } from 'vitest';
import type { ChatCacheUsage } from '../../src/ipc/bindings';
import { ChatCachesStore } from '../../src/lib/chat-caches.svelte';
import { fakeApi } from './helpers';

/** A backend with `usage` on disk; `clear` answers once `release()` is called when `hold` is set. */
function fakeBackend(usage: ChatCacheUsage) {
  const backend = { usage, hold: false, release: () => {} };
  const api = fakeApi('the chat caches store', {
    chatCacheUsage: vi.fn(async () => ({ ...backend.usage })),
    clearChatCaches: vi.fn(async () => {
      if (backend.hold) await new Promise<void>((r) => (backend.release = r));
      backend.usage = { bytes: 0, chats: 0 };
      return { ...backend.usage };
    }),
  });
  return Object.assign(backend, { api });
}

describe('ChatCachesStore', () => {
  it('reads the usage, and clear answers with what is left', async () => {
    const backend = fakeBackend({ bytes: 94_371_840, chats: 3 });
    const store = new ChatCachesStore(backend.api);
    expect(store.usage).toBeNull();
    await store.refresh();
    expect(store.usage).toEqual({ bytes: 94_371_840, chats: 3 });
    await store.clear();
    expect(store.usage).toEqual({ bytes: 0, chats: 0 });
    expect(store.clearing).toBe(false);
  });

  it('while clearing, another clear or a refresh asks nothing', async () => {
    const backend = fakeBackend({ bytes: 1000, chats: 1 });
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
    expect(store.usage).toEqual({ bytes: 0, chats: 0 });
  });

  it('a failure says why, and the next answer clears it', async () => {
    const backend = fakeBackend({ bytes: 1000, chats: 1 });
    const store = new ChatCachesStore(backend.api);
    vi.mocked(backend.api.chatCacheUsage).mockRejectedValueOnce({ kind: 'file', message: 'permission denied' });
    await store.refresh();
    expect(store.error).toBe('permission denied');
    expect(store.usage).toBeNull();
    await store.refresh();
    expect(store.error).toBeNull();
    expect(store.usage).toEqual({ bytes: 1000, chats: 1 });
  });

  it('an earlier answer arriving last is dropped', async () => {
    const backend = fakeBackend({ bytes: 1000, chats: 1 });
    let answerFirst: (u: ChatCacheUsage) => void = () => {};
    vi.mocked(backend.api.chatCacheUsage).mockImplementationOnce(() => new Promise((r) => (answerFirst = r)));
    const store = new ChatCachesStore(backend.api);
    const first = store.refresh();
    backend.usage = { bytes: 2000, chats: 2 };
    await store.refresh();
    answerFirst({ bytes: 1000, chats: 1 });
    await first;
    expect(store.usage).toEqual({ bytes: 2000, chats: 2 });
  });
});
