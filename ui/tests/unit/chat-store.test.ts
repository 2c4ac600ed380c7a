// The ChatStore: loading chats and the model, streaming a reply batched per frame, sending, failures, stop,
// and a turn's end when its events and its response arrive in either order.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChatStore } from '../../src/lib/chat.svelte';
import { TERMINAL_EVENT_GRACE_MS } from '../../src/lib/turns';
import { manualFrames, virtualTimers } from './helpers';
import { stats } from './reply-fixtures';
import { MODEL, chat, ev, fakeBackend, msg, settle, setup } from './chat-store-fixtures';

afterEach(() => {
  vi.useRealTimers();
});

describe('ChatStore', () => {
  it('loads chats and the model, and opens the most recent chat', async () => {
    const { store, backend } = await setup({
      chats: [chat(2, 'Latest', 2), chat(1, 'Older', 1)],
      messages: { 2: [msg({ id: 5, chatId: 2, role: 'user', content: 'hi' })] },
    });
    expect(store.ready).toBe(true);
    expect(store.model?.name).toBe(MODEL.name);
    expect(store.activeChatId).toBe(2);
    expect(store.activeChat?.title).toBe('Latest');
    expect(store.messages.map((m) => m.content)).toEqual(['hi']);
    expect(backend.api.listMessages).toHaveBeenCalledWith(2);
  });

  it('reports load errors in words', async () => {
    const backend = fakeBackend();
    backend.api.listChats = vi.fn(async () => Promise.reject({ kind: 'store', message: 'Database is locked' }));
    const store = new ChatStore(backend.api, manualFrames().frames);
    await store.init();
    expect(store.error).toBe('Database is locked');
    expect(store.ready).toBe(true);
  });

  it('streams a reply, batching deltas per frame', async () => {
    const { store, backend, clock } = await setup();
    await store.newChat();
    const chatId = store.activeChatId!;
    store.draft = '  Hello there \n';
    const sending = store.send();
    await settle();
    expect(backend.api.sendMessage).toHaveBeenCalledWith(chatId, 'Hello there', [], expect.any(Function));
    expect(store.draft).toBe('');
    expect(store.generatingHere).toBe(true);
    expect(store.canSend).toBe(false);

    const { emit, resolve } = backend.send;
    emit(ev.userSaved(msg({ id: 1, chatId, role: 'user', content: 'Hello there' })));
    emit(ev.replyStarted(2));
    expect(store.messages.map((m) => [m.role, m.status])).toEqual([['user', 'complete'], ['assistant', 'streaming']]);
    expect(store.messages[1].model).toBe(MODEL.name);

    emit(ev.delta('Hi'));
    emit(ev.delta(', '));
    expect(store.messages[1].content).toBe(''); // nothing rendered before the frame
    expect(clock.scheduled).toBe(1);
    clock.tick();
    expect(store.messages[1].content).toBe('Hi, ');
    emit(ev.delta('friend'));
    emit(ev.delta('!')); // still pending when the reply finishes
    const saved = stats();
    emit(ev.finished(msg({ id: 2, chatId, role: 'assistant', content: 'Hi, friend!', stats: saved })));
    resolve();
    await expect(sending).resolves.toBe(true);

    expect(store.messages[1]).toMatchObject({ content: 'Hi, friend!', status: 'complete', stats: saved });
    expect(store.generating).toBeNull();
    clock.tick(); // a stale frame must not append anything
    expect(store.messages[1].content).toBe('Hi, friend!');
  });

  it("keeps a search's progress for its reply until the reply ends", async () => {
    const { store, backend } = await setup();
    await store.newChat();
    const chatId = store.activeChatId!;
    store.draft = 'Plan a day in Lisbon.';
    const sending = store.send();
    await settle();
    const { emit, resolve } = backend.send;
    emit(ev.userSaved(msg({ id: 1, chatId, role: 'user', content: 'Plan a day in Lisbon.' })));
    emit(ev.replyStarted(2));
    expect(store.searching).toBeNull();
    emit(ev.searching(1));
    emit(ev.searching(4));
    expect(store.searching).toEqual({ reply: 2, tokens: 4 });
    emit(ev.delta('The Alfama, then the 28 tram.'));
    emit(ev.finished(msg({ id: 2, chatId, role: 'assistant', content: 'The Alfama, then the 28 tram.', stats: stats() })));
    resolve();
    await expect(sending).resolves.toBe(true);
    expect(store.searching).toBeNull();
  });

  it('reads the chat list again (a title from the message) only once the first text is painted', async () => {
    const backend = fakeBackend();
    const clock = manualFrames();
    const timers = virtualTimers();
    const store = new ChatStore(backend.api, { ...clock.frames, after: timers.timers.after }, timers.timers);
    await store.init();
    await store.newChat();
    const chatId = store.activeChatId!;
    store.draft = 'Hello';
    const sending = store.send();
    await settle();
    const { emit, resolve } = backend.send;
    emit(ev.userSaved(msg({ id: 1, chatId, role: 'user', content: 'Hello' })));
    emit(ev.replyStarted(2));
    const reads = vi.mocked(backend.api.listChats).mock.calls.length;
    emit(ev.delta('Hi'));
    expect(backend.api.listChats).toHaveBeenCalledTimes(reads);
    clock.tick(); // the frame that paints the first text: nothing else in it
    expect(store.messages[1].content).toBe('Hi');
    expect(backend.api.listChats).toHaveBeenCalledTimes(reads);
    timers.advanceTo(0); // after that frame
    expect(backend.api.listChats).toHaveBeenCalledTimes(reads + 1);
    emit(ev.delta(' there'));
    clock.tick();
    timers.advanceTo(1000);
    expect(backend.api.listChats).toHaveBeenCalledTimes(reads + 1); // once a turn
    emit(ev.finished(msg({ id: 2, chatId, role: 'assistant', content: 'Hi there' })));
    resolve();
    await sending;
  });

  it('creates a chat when sending without one', async () => {
    const { store, backend } = await setup();
    expect(store.activeChatId).toBeNull();
    store.draft = 'first';
    void store.send();
    await settle();
    expect(backend.api.createChat).toHaveBeenCalledTimes(1);
    expect(store.activeChatId).toBe(100);
    expect(backend.send.chatId).toBe(100);
  });

  it('does not send while a reply is being generated, or an empty draft', async () => {
    const { store, backend } = await setup();
    await store.newChat();
    store.draft = '   ';
    expect(await store.send()).toBe(false);
    store.draft = 'one';
    void store.send();
    await settle();
    store.draft = 'two';
    expect(store.canSend).toBe(false);
    expect(await store.send()).toBe(false);
    expect(backend.api.sendMessage).toHaveBeenCalledTimes(1);
  });

  it('shows a failed event as an error and drops the empty placeholder', async () => {
    const { store, backend } = await setup();
    await store.newChat();
    const chatId = store.activeChatId!;
    store.draft = 'hi';
    const sending = store.send();
    await settle();
    backend.send.emit(ev.userSaved(msg({ id: 1, chatId, role: 'user', content: 'hi' })));
    backend.send.emit(ev.replyStarted(2));
    backend.send.emit(ev.failed('The model crashed'));
    backend.send.resolve();
    await sending;
    expect(store.error).toBe('The model crashed');
    expect(store.messages.map((m) => m.id)).toEqual([1]);
    expect(store.generating).toBeNull();
  });

  it('keeps a failed message returned with the failed event', async () => {
    const { store, backend } = await setup();
    await store.newChat();
    const chatId = store.activeChatId!;
    store.draft = 'hi';
    void store.send();
    await settle();
    backend.send.emit(ev.replyStarted(2));
    backend.send.emit(ev.delta('partial'));
    backend.send.emit(ev.failed('Out of memory', msg({ id: 2, chatId, role: 'assistant', content: 'partial', status: 'failed' })));
    expect(store.messages.at(-1)).toMatchObject({ id: 2, status: 'failed', content: 'partial' });
  });

  it('restores the draft when the call is rejected before anything was saved', async () => {
    const { store, backend } = await setup();
    await store.newChat();
    store.draft = 'keep me';
    const sending = store.send();
    await settle();
    backend.send.reject({ kind: 'noModel', message: 'No model is loaded' });
    await expect(sending).resolves.toBe(false);
    expect(store.error).toBe('No model is loaded');
    expect(store.draft).toBe('keep me');
    expect(store.generating).toBeNull();
  });

  it('stop asks the backend to stop the generating chat', async () => {
    const { store, backend } = await setup();
    await store.newChat();
    const chatId = store.activeChatId!;
    store.draft = 'long story please';
    const sending = store.send();
    await settle();
    backend.send.emit(ev.replyStarted(2));
    await store.stop();
    expect(backend.api.stopGeneration).toHaveBeenCalledWith(chatId);
    expect(store.generating?.stopping).toBe(true);
    await store.stop(); // a second click is ignored
    expect(backend.api.stopGeneration).toHaveBeenCalledTimes(1);
    backend.send.emit(ev.finished(msg({ id: 2, chatId, role: 'assistant', content: 'Once', status: 'stopped' })));
    backend.send.resolve();
    await sending;
    expect(store.messages.at(-1)?.status).toBe('stopped');
    expect(store.generating).toBeNull();
  });

  it('puts live text back after switching away from the streaming chat and back', async () => {
    const { store, backend, clock } = await setup({
      chats: [chat(1, 'Other', 1)],
      messages: { 1: [msg({ id: 50, chatId: 1, role: 'user', content: 'old' })] },
    });
    await store.newChat();
    const chatId = store.activeChatId!;
    store.draft = 'hi';
    void store.send();
    await settle();
    backend.send.emit(ev.userSaved(msg({ id: 60, chatId, role: 'user', content: 'hi' })));
    backend.send.emit(ev.replyStarted(61));
    backend.send.emit(ev.delta('abc'));
    clock.tick();

    await store.selectChat(1);
    expect(store.messages.map((m) => m.content)).toEqual(['old']);
    expect(store.generatingHere).toBe(false);
    backend.send.emit(ev.delta('def'));
    clock.tick();
    expect(store.messages.map((m) => m.content)).toEqual(['old']); // other chat untouched

    // The backend has persisted only the user message (or an empty streaming row) so far.
    backend.messages[chatId] = [msg({ id: 60, chatId, role: 'user', content: 'hi' })];
    await store.selectChat(chatId);
    expect(store.messages.at(-1)).toMatchObject({ id: 61, content: 'abcdef', status: 'streaming' });
    backend.send.emit(ev.delta('g'));
    clock.tick();
    expect(store.messages.at(-1)?.content).toBe('abcdefg');
  });

  it('waits for the terminal event when the response arrives first, then resyncs', async () => {
    vi.useFakeTimers();
    const { store, backend } = await setup();
    await store.newChat();
    const chatId = store.activeChatId!;
    store.draft = 'hi';
    const sending = store.send();
    await vi.advanceTimersByTimeAsync(0);
    backend.send.emit(ev.userSaved(msg({ id: 1, chatId, role: 'user', content: 'hi' })));
    backend.send.emit(ev.replyStarted(2));
    backend.send.resolve(); // response wins the race against the `finished` event
    await sending;
    expect(store.generating).not.toBeNull();

    backend.messages[chatId] = [
      msg({ id: 1, chatId, role: 'user', content: 'hi' }),
      msg({ id: 2, chatId, role: 'assistant', content: 'Hello!' }),
    ];
    await vi.advanceTimersByTimeAsync(TERMINAL_EVENT_GRACE_MS + 10);
    expect(store.generating).toBeNull();
    expect(store.messages.map((m) => m.content)).toEqual(['hi', 'Hello!']);
  });

  it('a late terminal event within the grace period ends the reply normally', async () => {
    vi.useFakeTimers();
    const { store, backend } = await setup();
    await store.newChat();
    const chatId = store.activeChatId!;
    store.draft = 'hi';
    const sending = store.send();
    await vi.advanceTimersByTimeAsync(0);
    backend.send.emit(ev.replyStarted(2));
    backend.send.resolve();
    await sending;
    await vi.advanceTimersByTimeAsync(100);
    backend.send.emit(ev.finished(msg({ id: 2, chatId, role: 'assistant', content: 'Done' })));
    expect(store.generating).toBeNull();
    expect(store.messages.at(-1)?.content).toBe('Done');
    const loads = vi.mocked(backend.api.listMessages).mock.calls.length;
    await vi.advanceTimersByTimeAsync(TERMINAL_EVENT_GRACE_MS * 2);
    expect(vi.mocked(backend.api.listMessages).mock.calls.length).toBe(loads); // no resync needed
  });
});
