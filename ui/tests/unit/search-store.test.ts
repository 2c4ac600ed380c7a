import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SearchHit } from '../../src/ipc/bindings';
import { SEARCH_DEBOUNCE_MS, SearchStore } from '../../src/lib/search.svelte';

const hit = (messageId: number, text = 'match'): SearchHit => ({
  chatId: 1,
  chatTitle: 'Chat',
  messageId,
  role: 'user',
  snippet: [{ text, hit: true }],
  createdAt: 0,
});

/** A search backend whose answers the test releases one by one. */
function backend() {
  const calls: { query: string; answer: (hits: SearchHit[]) => void; fail: (e: unknown) => void }[] = [];
  const searchMessages = vi.fn(
    (query: string) =>
      new Promise<SearchHit[]>((resolve, reject) => {
        calls.push({ query, answer: resolve, fail: reject });
      }),
  );
  return { calls, store: new SearchStore({ searchMessages }), searchMessages };
}

const pause = (ms: number) => vi.advanceTimersByTimeAsync(ms);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('SearchStore', () => {
  it('waits for a pause in typing, then sends one trimmed query', async () => {
    const { store, calls } = backend();
    store.setQuery('r');
    await pause(100);
    store.setQuery('ra');
    await pause(100);
    store.setQuery(' rain ');
    expect(store.active).toBe(true);
    expect(store.pending).toBe(true);
    expect(store.empty).toBe(false); // not "No messages match" before the answer
    await pause(SEARCH_DEBOUNCE_MS);
    expect(calls.map((c) => c.query)).toEqual(['rain']);
    calls[0].answer([hit(1), hit(2)]);
    await pause(0);
    expect(store.results.map((h) => h.messageId)).toEqual([1, 2]);
    expect(store.pending).toBe(false);
    expect(store.current?.messageId).toBe(1);
  });

  it('drops an answer overtaken by a newer query', async () => {
    const { store, calls } = backend();
    store.setQuery('old');
    await pause(SEARCH_DEBOUNCE_MS);
    store.setQuery('new');
    await pause(SEARCH_DEBOUNCE_MS);
    calls[1].answer([hit(2)]);
    await pause(0);
    calls[0].answer([hit(1)]);
    await pause(0);
    expect(store.results.map((h) => h.messageId)).toEqual([2]);
    expect(store.answered).toBe('new');
  });

  it('says nothing matched only once answered', async () => {
    const { store, calls } = backend();
    store.setQuery('"foo OR bar*');
    await pause(SEARCH_DEBOUNCE_MS);
    expect(calls[0].query).toBe('"foo OR bar*'); // sent as typed: the backend makes any text a valid query
    expect(store.empty).toBe(false);
    calls[0].answer([]);
    await pause(0);
    expect(store.empty).toBe(true);
  });

  it('clearing shows the chat list again and ignores a late answer', async () => {
    const { store, calls, searchMessages } = backend();
    store.setQuery('rain');
    await pause(SEARCH_DEBOUNCE_MS);
    store.clear();
    calls[0].answer([hit(1)]);
    await pause(0);
    expect(store.active).toBe(false);
    expect(store.results).toEqual([]);
    store.setQuery('   ');
    await pause(SEARCH_DEBOUNCE_MS);
    expect(store.active).toBe(false);
    expect(searchMessages).toHaveBeenCalledTimes(1); // whitespace is not searched
  });

  it('moves the highlight within the results', async () => {
    const { store, calls } = backend();
    store.move(1); // nothing to move through yet
    expect(store.selected).toBe(0);
    store.setQuery('rain');
    await pause(SEARCH_DEBOUNCE_MS);
    calls[0].answer([hit(1), hit(2), hit(3)]);
    await pause(0);
    const moves: [number, number][] = [[1, 1], [1, 2], [1, 2], [-1, 1], [-5, 0]];
    for (const [step, expected] of moves) {
      store.move(step);
      expect(store.selected).toBe(expected);
    }
  });

  it('shows a failed search in words', async () => {
    const { store, calls } = backend();
    store.setQuery('rain');
    await pause(SEARCH_DEBOUNCE_MS);
    calls[0].fail({ kind: 'store', message: 'The search index is damaged.' });
    await pause(0);
    expect(store.error).toBe('The search index is damaged.');
    expect(store.empty).toBe(false);
  });
});
