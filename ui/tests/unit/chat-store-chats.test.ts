// The ChatStore's chat list, remote replies, reading the draft ahead, and each chat's model loaded first.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatEvent, ModelLoading, ModelTarget } from '../../src/ipc/bindings';
import { ChatStore, type ChatModels } from '../../src/lib/chat.svelte';
import { errorMessage } from '../../src/lib/format';
import { MODEL, chat, ev, fakeBackend, ids, msg, settle, setup } from './chat-store-fixtures';

afterEach(() => {
  vi.useRealTimers();
});

describe('ChatStore: the chat list', () => {
  const listed = (store: ChatStore) => store.chats.map((c) => [c.id, c.title, c.pinned]);

  it('rename, pin and system prompt update the entry in place, re-sorted', async () => {
    const { store, backend } = await setup({ chats: [chat(1, 'First', 20), chat(2, 'Second', 10)] });
    await expect(store.renameChat(2, '  Renamed  ')).resolves.toBe(true);
    expect(backend.api.renameChat).toHaveBeenCalledWith(2, 'Renamed');
    await store.pinChat(2, true);
    expect(listed(store)).toEqual([[2, 'Renamed', true], [1, 'First', false]]);
    await store.setSystemPrompt(1, 'Be brief.');
    expect(store.activeChat?.systemPrompt).toBe('Be brief.');
    await store.pinChat(2, false);
    expect(listed(store)).toEqual([[1, 'First', false], [2, 'Renamed', false]]);
  });

  it('a refused rename says why and changes nothing', async () => {
    const { store, backend } = await setup({ chats: [chat(1, 'First', 20)] });
    vi.mocked(backend.api.renameChat).mockRejectedValueOnce({ kind: 'invalidInput', message: 'the title is too long' });
    await expect(store.renameChat(1, 'x'.repeat(500))).resolves.toBe(false);
    expect(store.error).toBe('the title is too long');
    expect(listed(store)).toEqual([[1, 'First', false]]);
  });

  /** [case, chats (newest first), the open one, the deleted one, the open one after] */
  const deletions: [string, number[], number, number, number | null][] = [
    ['the open chat: the one below it opens', [1, 2, 3], 1, 1, 2],
    ['the open chat at the end: the one above it opens', [1, 2], 2, 2, 1],
    ['the only chat: nothing is open', [1], 1, 1, null],
    ['another chat: the open one stays', [1, 2], 1, 2, 1],
  ];
  it.each(deletions)('deleting %s', async (_case, chatIds, open, deleted, after) => {
    const chats = chatIds.map((id) => chat(id, `Chat ${id}`, 100 - id));
    const { store, backend } = await setup({ chats, messages: { 2: [msg({ id: 20, chatId: 2, role: 'user' })] } });
    await store.selectChat(open);
    await expect(store.deleteChat(deleted)).resolves.toBe(true);
    expect(backend.api.deleteChat).toHaveBeenCalledWith(deleted);
    expect(store.chats.map((c) => c.id)).toEqual(chatIds.filter((id) => id !== deleted));
    expect(store.activeChatId).toBe(after);
    expect(ids(store)).toEqual(after === 2 ? [20] : []);
  });

  it('chats added behind its back (an import): the list is read again, the first opens only when none is open', async () => {
    const { store, backend } = await setup();
    expect(store.activeChatId).toBeNull();
    backend.chats.push(chat(5, 'Imported', 10));
    await store.chatsAdded();
    expect(listed(store)).toEqual([[5, 'Imported', false]]);
    expect(store.activeChatId).toBe(5);
    backend.chats.unshift(chat(6, 'Imported later', 20));
    await store.chatsAdded();
    expect(listed(store)).toEqual([[6, 'Imported later', false], [5, 'Imported', false]]);
    expect(store.activeChatId).toBe(5);
  });

  it('chat-updated events replace the entry in place; unknown chats are ignored', async () => {
    const { store, backend } = await setup({ chats: [chat(1, 'First', 20), chat(2, '', 10)] });
    const unlisten = await store.listen();
    backend.emitChatUpdated({ ...chat(2, 'Cozy evening ideas', 30) });
    expect(listed(store)).toEqual([[2, 'Cozy evening ideas', false], [1, 'First', false]]);
    backend.emitChatUpdated(chat(9, 'Deleted meanwhile', 40));
    expect(store.chats.map((c) => c.id)).toEqual([2, 1]);
    unlisten();
    backend.emitChatUpdated(chat(1, 'After unlisten', 50));
    expect(store.chats[1].title).toBe('First');
  });

  it('a failed subscription is not an error on screen', async () => {
    const { store, backend } = await setup();
    vi.mocked(backend.api.onChatUpdated).mockRejectedValueOnce({ kind: 'store', message: 'event.listen not allowed' });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const unlisten = await store.listen();
    expect(typeof unlisten).toBe('function');
    expect(store.error).toBeNull();
    expect(warn).toHaveBeenCalled();
    warn.mockRestore();
  });
});

describe('ChatStore: remote replies', () => {
  const OPENAI: ModelTarget = { kind: 'remote', provider: 'openai', model: 'gpt-4o-mini' };
  const REPLY_MODEL = 'gpt-4o-mini (OpenAI)';
  const RATE_LIMITED = {
    kind: 'rateLimited' as const,
    message: 'OpenAI is rate limiting requests (429); it asks to wait 7 s before retrying: Rate limit reached',
    retryAfterS: 7,
  };
  const failedReply = (content = '') => msg({ id: 2, chatId: 1, role: 'assistant', content, status: 'failed', model: REPLY_MODEL });

  /** Chat 1 answered by `model`, with a question sent and its reply started. */
  async function sending(model: ModelTarget) {
    const t = await setup({ chats: [chat(1, 'Remote', 1, model)] });
    t.store.draft = 'hi';
    const sent = t.store.send();
    await settle();
    t.backend.send.emit(ev.userSaved(msg({ id: 1, chatId: 1, role: 'user', content: 'hi' })));
    t.backend.send.emit(ev.replyStarted(2, REPLY_MODEL));
    return { ...t, sent };
  }

  it("switches the chat's model; the summary the backend returns replaces the chat's", async () => {
    const { store, backend } = await setup({ chats: [chat(1, 'Remote', 1)] });
    expect(await store.setChatModel(1, OPENAI)).toBe(true);
    expect(backend.api.setChatModel).toHaveBeenCalledWith(1, OPENAI);
    expect(store.activeChat?.model).toEqual(OPENAI);
    vi.mocked(backend.api.setChatModel).mockRejectedValueOnce({ kind: 'provider', message: 'no provider "gone" is configured' });
    expect(await store.setChatModel(1, { kind: 'remote', provider: 'gone', model: 'x' })).toBe(false);
    expect(store.error).toBe('no provider "gone" is configured');
    expect(store.activeChat?.model).toEqual(OPENAI);
  });

  it('a failed remote reply keeps its text and carries its error, with when to retry; no banner', async () => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ['Date'] });
    const { store, backend, sent } = await sending(OPENAI);
    backend.send.emit(ev.delta('Half a'));
    backend.send.emit({ event: 'failed', data: { error: RATE_LIMITED, message: failedReply('Half a') } });
    backend.send.resolve();
    await sent;
    expect(store.messages.at(-1)).toMatchObject({ id: 2, status: 'failed', content: 'Half a', model: REPLY_MODEL });
    expect(store.failures[2]).toEqual({ chatId: 1, error: RATE_LIMITED, retryAt: 1_007_000 });
    expect(store.error).toBeNull();
  });

  const banner: [string, ModelTarget, ChatEvent, string, string | null][] = [
    [
      'a remote reply that could not start (no key) goes to the banner, with its kind',
      OPENAI,
      { event: 'failed', data: { error: { kind: 'providerAuth', message: 'OpenAI needs an API key: add it in Settings → Providers' }, message: null } },
      'OpenAI needs an API key: add it in Settings → Providers',
      'providerAuth',
    ],
    [
      'a local failure keeps the banner, even with the reply saved',
      { kind: 'local', model: null },
      { event: 'failed', data: { error: { kind: 'engine', message: 'The model crashed' }, message: failedReply('partial') } },
      'The model crashed',
      'engine',
    ],
  ];
  it.each(banner)('%s', async (_, model, failed, text, kind) => {
    const { store, backend, sent } = await sending(model);
    backend.send.emit(failed);
    backend.send.resolve();
    await sent;
    expect(store.error).toBe(text);
    expect(store.errorKind).toBe(kind);
    expect(store.failures).toEqual({});
    store.dismissError();
    expect(store.errorKind).toBeNull();
  });

  it("the chat's next turn drops its earlier failures (the retry's own result replaces them)", async () => {
    const { store, backend, sent } = await sending(OPENAI);
    const auth = { kind: 'providerAuth' as const, message: 'OpenAI refused the API key (401): bad key. Check the key in Settings → Providers' };
    backend.send.emit({ event: 'failed', data: { error: auth, message: failedReply() } });
    backend.send.resolve();
    await sent;
    expect(store.failures[2]?.retryAt).toBeNull();
    void store.regenerate(2);
    await settle();
    expect(backend.api.regenerateReply).toHaveBeenCalledWith(1, 2, expect.any(Function));
    expect(store.failures).toEqual({});
  });
});

describe('ChatStore: reading the draft ahead', () => {
  const chats = () => [chat(1, 'Soup', 20), chat(2, 'Rust', 10)];
  /** The prefill_draft calls so far: [chatId, draft, files, stillTyping]. */
  const prefills = (backend: ReturnType<typeof fakeBackend>) => vi.mocked(backend.api.prefillDraft).mock.calls;

  it("hands the active chat's draft to prefill_draft, paced (see read-ahead.test.ts)", async () => {
    const { store, backend, timers } = await setup({ chats: chats() });
    store.draftTyped('How long');
    timers.advanceTo(50);
    store.draftTyped('How long does');
    expect(prefills(backend)).toEqual([]);
    timers.advanceTo(1000);
    expect(prefills(backend)).toEqual([[1, 'How long does', [], false]]);
  });

  it('a chat without messages is read ahead too; without a chat, nothing', async () => {
    const { store, backend, timers } = await setup();
    expect(store.activeChatId).toBeNull();
    store.draftTyped('Hello there');
    timers.advanceTo(1000);
    expect(prefills(backend)).toEqual([]);
    await store.newChat();
    store.draftTyped('Hello there');
    timers.advanceTo(2000);
    expect(prefills(backend)).toEqual([[100, 'Hello there', [], false]]);
  });

  it('Enter drops the pending send, and nothing is read while the reply is generated', async () => {
    const { store, backend, timers } = await setup({ chats: chats() });
    store.draft = 'Why is the sky blue';
    store.draftTyped(store.draft);
    void store.send();
    await settle();
    store.draftTyped('Thanks, and');
    timers.advanceTo(1000);
    expect(prefills(backend)).toEqual([]);
    backend.send.emit(ev.finished(msg({ id: 2, chatId: 1, role: 'assistant', content: 'Rayleigh.' })));
    backend.send.resolve();
    await settle();
    store.draftTyped('Thanks, and the sunset');
    timers.advanceTo(2000);
    expect(prefills(backend)).toEqual([[1, 'Thanks, and the sunset', [], false]]);
  });

  it('another chat opened drops the pending send; its own draft goes to it', async () => {
    const { store, backend, timers } = await setup({ chats: chats() });
    store.draftTyped('about soup');
    void store.selectChat(2);
    timers.advanceTo(1000);
    expect(prefills(backend)).toEqual([]);
    store.draftTyped('about lifetimes');
    timers.advanceTo(2000);
    expect(prefills(backend)).toEqual([[2, 'about lifetimes', [], false]]);
  });

  it('a refused read-ahead is not shown: it was only a head start', async () => {
    const { store, backend, timers } = await setup({ chats: chats() });
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    vi.mocked(backend.api.prefillDraft).mockRejectedValueOnce({ kind: 'notFound', message: 'Chat 1 does not exist.' });
    store.draftTyped('Hello there');
    timers.advanceTo(1000);
    await settle();
    expect(prefills(backend)).toHaveLength(1);
    expect(store.error).toBeNull();
    expect(debug).toHaveBeenCalledWith('draft not read ahead:', 'Chat 1 does not exist.');
    debug.mockRestore();
  });
});

describe("ChatStore: the chat's model, loaded first by the turn", () => {
  /** Chat models that record what the turn tells them of its load. */
  function recordingModels() {
    const seen: string[] = [];
    const models: ChatModels = {
      opened: vi.fn(),
      ready: vi.fn(async () => {}),
      turnLoad: vi.fn((chatId: number) => ({
        progress: (load: ModelLoading) => void seen.push(`${chatId}: ${load.name} ${load.fraction}`),
        end: (error?: unknown) => void seen.push(error === undefined ? 'ended' : `failed: ${errorMessage(error)}`),
        cancel: vi.fn(async () => void seen.push('cancelled')),
      })),
      failed: vi.fn((chatId: number, error: unknown) => void seen.push(`problem of ${chatId}: ${errorMessage(error)}`)),
    };
    return { models, seen };
  }

  async function sendingWhileLoading() {
    const t = await setup({ chats: [chat(1, 'Soup', 1)], messages: { 1: [msg({ id: 1, chatId: 1, role: 'user', content: 'hi' })] } });
    const held = recordingModels();
    t.store.models = held.models;
    t.store.draft = 'Leeks?';
    const sent = t.store.send();
    await settle();
    t.backend.send.emit(ev.modelLoading(0));
    t.backend.send.emit(ev.modelLoading(0.5));
    return { ...t, held, sent };
  }

  it('the turn goes at once; its load shows from its events, the message on show meanwhile; then the reply', async () => {
    const { store, backend, held, sent } = await sendingWhileLoading();
    expect(backend.api.sendMessage).toHaveBeenCalledWith(1, 'Leeks?', [], expect.any(Function));
    expect(held.seen).toEqual([`1: ${MODEL.name} 0`, `1: ${MODEL.name} 0.5`]);
    expect(store.draft).toBe('');
    expect(store.messages.map((m) => m.content)).toEqual(['hi', 'Leeks?']);
    expect(store.generatingHere).toBe(true);
    backend.send.emit(ev.userSaved(msg({ id: 2, chatId: 1, role: 'user', content: 'Leeks?', parentId: 1 })));
    expect(held.seen.at(-1)).toBe('ended');
    backend.send.emit(ev.replyStarted(3));
    backend.send.emit(ev.finished(msg({ id: 3, chatId: 1, role: 'assistant', content: 'Yes.', parentId: 2 })));
    backend.send.resolve();
    await expect(sent).resolves.toBe(true);
    expect(held.seen.filter((s) => s === 'ended')).toHaveLength(1);
  });

  it('a model that cannot be loaded: no turn, the draft back, the banner and the chat say why', async () => {
    const { store, backend, held, sent } = await sendingWhileLoading();
    const broken = { kind: 'engine' as const, message: 'broken.gguf is not a model llama.cpp can load', field: 'model' };
    backend.send.reject(broken);
    await expect(sent).resolves.toBe(false);
    expect(held.seen.slice(2)).toEqual([`failed: ${broken.message}`, `problem of 1: ${broken.message}`]);
    expect(store.draft).toBe('Leeks?');
    expect(store.messages.map((m) => m.content)).toEqual(['hi']);
    expect(store.error).toBe(broken.message);
    expect(store.busy).toBe(false);
  });

  it('a file that is gone fails before any load: said, and kept on the chat', async () => {
    const t = await setup({ chats: [chat(1, 'Soup', 1)] });
    const held = recordingModels();
    t.store.models = held.models;
    t.store.draft = 'Leeks?';
    const sent = t.store.send();
    await settle();
    const gone = { kind: 'file' as const, message: 'this chat talks to gone, whose file is gone (/m/gone.gguf); pick another model for it with the model button', field: 'model' };
    t.backend.send.reject(gone);
    await expect(sent).resolves.toBe(false);
    expect(held.seen).toEqual([`problem of 1: ${gone.message}`]);
    expect(t.store.error).toBe(gone.message);
    expect(t.store.draft).toBe('Leeks?');
  });

  it('Stop while the model loads gives the load up: no reply, the draft back, no banner', async () => {
    const { store, backend, held, sent } = await sendingWhileLoading();
    await store.stop();
    expect(held.seen.at(-1)).toBe('cancelled');
    backend.send.reject({ kind: 'engine', message: 'loading /m/model.gguf was cancelled', field: 'model' });
    await expect(sent).resolves.toBe(false);
    expect(store.draft).toBe('Leeks?');
    expect(store.messages.map((m) => m.content)).toEqual(['hi']);
    expect(store.error).toBeNull();
    expect(store.busy).toBe(false);
  });

  it('Stop as the load ends, before the reply started: the reply is stopped once it starts', async () => {
    const { store, backend, sent } = await sendingWhileLoading();
    await store.stop();
    expect(backend.api.stopGeneration).toHaveBeenCalledTimes(1);
    backend.send.emit(ev.userSaved(msg({ id: 2, chatId: 1, role: 'user', content: 'Leeks?', parentId: 1 })));
    backend.send.emit(ev.replyStarted(3));
    expect(backend.api.stopGeneration).toHaveBeenCalledTimes(2);
    backend.send.emit(ev.finished(msg({ id: 3, chatId: 1, role: 'assistant', content: '', status: 'stopped', parentId: 2 })));
    backend.send.resolve();
    await expect(sent).resolves.toBe(true);
  });

  it('a chat opened, or a new one, is told to the chat models', async () => {
    const { store } = await setup({ chats: [chat(1, 'Soup', 2), chat(2, 'Rust', 1)] });
    const held = recordingModels();
    store.models = held.models;
    await store.selectChat(2);
    await store.newChat();
    expect(vi.mocked(held.models.opened).mock.calls).toEqual([[2], [100]]);
  });
});
