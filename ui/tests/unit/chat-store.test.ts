import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatEvent, ChatSummary, ModelInfo, ModelTarget, StoredMessage, TokenProbs } from '../../src/ipc/bindings';
import type { HearthApi } from '../../src/ipc/client';
import { ChatStore, type ChatModels } from '../../src/lib/chat.svelte';
import { PENDING_USER_ID, TERMINAL_EVENT_GRACE_MS } from '../../src/lib/turns';
import { fakeApi, manualFrames, virtualTimers } from './helpers';
import { stats } from './reply-fixtures';
import { model } from './settings-fixtures';

const MODEL: ModelInfo = model();

function chat(id: number, title: string, updatedAt: number, model: ModelTarget = { kind: 'local', model: null }): ChatSummary {
  return { id, title, updatedAt, pinned: false, systemPrompt: '', model };
}

function msg(over: Partial<StoredMessage> & Pick<StoredMessage, 'id' | 'chatId' | 'role'>): StoredMessage {
  return { content: '', status: 'complete', createdAt: 0, model: null, stats: null, parentId: null, siblings: [over.id], ...over };
}

type TurnKind = 'send' | 'edit' | 'regenerate' | 'continue' | 'branch';
/** A turn command in flight: the test emits its events and settles it. */
type PendingTurn = {
  kind: TurnKind;
  chatId: number;
  /** The command's arguments between chatId and the channel (content, messageId…). */
  args: unknown[];
  emit: (e: ChatEvent) => void;
  resolve: () => void;
  reject: (e: unknown) => void;
};

/** An in-memory backend whose turn commands are driven step by step by the test. */
function fakeBackend(opts: { chats?: ChatSummary[]; messages?: Record<number, StoredMessage[]>; model?: ModelInfo | null } = {}) {
  const chats = opts.chats ?? [];
  const messages = opts.messages ?? {};
  let nextChat = 100;
  let pending: PendingTurn | null = null;
  let onChatUpdated: ((chat: ChatSummary) => void) | null = null;
  const turn = (kind: TurnKind) =>
    vi.fn(
      (chatId: number, ...rest: unknown[]) =>
        new Promise<null>((resolve, reject) => {
          const emit = rest.pop() as (e: ChatEvent) => void;
          pending = { kind, chatId, args: rest, emit, resolve: () => resolve(null), reject };
        }),
    );
  const chatOp = (field: 'title' | 'pinned' | 'systemPrompt' | 'model') =>
    vi.fn(async (chatId: number, value: string | boolean | ModelTarget) => {
      const found = chats.find((c) => c.id === chatId)!;
      Object.assign(found, { [field]: value });
      return { ...found };
    });
  const api: HearthApi = fakeApi('the chat store', {
    listChats: vi.fn(async () => chats.map((c) => ({ ...c }))),
    createChat: vi.fn(async () => {
      const created = chat(nextChat++, '', Date.now());
      chats.unshift(created);
      return { ...created };
    }),
    listMessages: vi.fn(async (chatId: number) => structuredClone(messages[chatId] ?? [])),
    sendMessage: turn('send'),
    editMessage: turn('edit'),
    regenerateReply: turn('regenerate'),
    continueReply: turn('continue'),
    branchReply: turn('branch'),
    tokenProbs: vi.fn(async (_messageId: number) => [] as TokenProbs[]),
    stopGeneration: vi.fn(async () => null),
    prefillDraft: vi.fn(async (_chatId: number, _draft: string, _stillTyping: boolean) => null),
    activeModel: vi.fn(async () => (opts.model === undefined ? MODEL : opts.model)),
    switchBranch: vi.fn(async () => [] as StoredMessage[]),
    deleteMessage: vi.fn(async () => [] as StoredMessage[]),
    renameChat: chatOp('title'),
    pinChat: chatOp('pinned'),
    setSystemPrompt: chatOp('systemPrompt'),
    setChatModel: chatOp('model'),
    deleteChat: vi.fn(async (chatId: number) => {
      chats.splice(chats.findIndex((c) => c.id === chatId), 1);
      return null;
    }),
    onChatUpdated: vi.fn(async (cb: (chat: ChatSummary) => void) => {
      onChatUpdated = cb;
      return () => (onChatUpdated = null);
    }),
  });
  return {
    api,
    chats,
    messages,
    get send(): PendingTurn {
      if (!pending) throw new Error('no turn command was called');
      return pending;
    },
    /** What the backend's watch_chats channel would deliver. */
    emitChatUpdated(chat: ChatSummary) {
      onChatUpdated?.(chat);
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

const ev = {
  userSaved: (m: StoredMessage): ChatEvent => ({ event: 'userSaved', data: { message: m } }),
  replyStarted: (messageId: number, model = MODEL.name): ChatEvent => ({ event: 'replyStarted', data: { messageId, model } }),
  delta: (text: string): ChatEvent => ({ event: 'delta', data: { text } }),
  finished: (m: StoredMessage): ChatEvent => ({ event: 'finished', data: { message: m } }),
  failed: (message: string, m: StoredMessage | null = null): ChatEvent => ({
    event: 'failed',
    data: { error: { kind: 'engine', message }, message: m },
  }),
};

async function setup(opts: Parameters<typeof fakeBackend>[0] = {}) {
  const backend = fakeBackend(opts);
  const clock = manualFrames();
  const timers = virtualTimers();
  const store = new ChatStore(backend.api, clock.frames, timers.timers);
  await store.init();
  return { backend, clock, store, timers };
}

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
    expect(backend.api.sendMessage).toHaveBeenCalledWith(chatId, 'Hello there', expect.any(Function));
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

// ---------------------------------------------------------------------------------------------
// The message tree: edit, regenerate, continue, branches, delete

/** Chat 1's path: user 1, reply 2, user 3, reply 4 (`over` changes reply 4). */
function treeSetup(over: Partial<StoredMessage> = {}) {
  return setup({
    chats: [chat(1, 'Tree', 10), chat(2, 'Other', 5)],
    messages: {
      1: [
        msg({ id: 1, chatId: 1, role: 'user', content: 'Hi' }),
        msg({ id: 2, chatId: 1, role: 'assistant', content: 'Hello!', parentId: 1 }),
        msg({ id: 3, chatId: 1, role: 'user', content: 'Tell a story', parentId: 2 }),
        msg({ id: 4, chatId: 1, role: 'assistant', content: 'Once upon', parentId: 3, ...over }),
      ],
    },
  });
}

const ids = (store: ChatStore) => store.messages.map((m) => m.id);

describe('ChatStore: the message tree', () => {
  it('edit: the message and all after it leave the path, the new version streams, then the path is read again', async () => {
    const { store, backend } = await treeSetup();
    store.startEdit(3);
    expect(store.editing).toEqual({ messageId: 3, text: 'Tell a story' });
    store.editing!.text = '  Tell a short story ';
    const editing = store.saveEdit();
    expect(backend.api.editMessage).toHaveBeenCalledWith(1, 3, 'Tell a short story', expect.any(Function));
    expect(store.editing).toBeNull();
    expect(store.busy).toBe(true);
    expect(ids(store)).toEqual([1, 2, PENDING_USER_ID]);
    expect(store.messages[2]).toMatchObject({ content: 'Tell a short story', siblings: [3, PENDING_USER_ID] });

    const { emit, resolve } = backend.send;
    emit(ev.userSaved(msg({ id: 5, chatId: 1, role: 'user', content: 'Tell a short story', parentId: 2, siblings: [3, 5] })));
    emit(ev.replyStarted(6));
    expect(ids(store)).toEqual([1, 2, 5, 6]);
    expect(store.messages[3]).toMatchObject({ status: 'streaming', parentId: 5, siblings: [6] });

    const path = [...backend.messages[1].slice(0, 2), msg({ id: 5, chatId: 1, role: 'user', siblings: [3, 5] }), msg({ id: 6, chatId: 1, role: 'assistant' })];
    backend.messages[1] = path;
    emit(ev.finished(msg({ id: 6, chatId: 1, role: 'assistant', content: 'Short.', parentId: 5 })));
    resolve();
    await expect(editing).resolves.toBe(true);
    await settle();
    expect(backend.api.listMessages).toHaveBeenCalledTimes(2); // opened, then read again after the edit
    expect(store.messages).toEqual(path);
    expect(store.busy).toBe(false);
  });

  it('regenerate: the old reply leaves and the new one streams beside it as the newest version', async () => {
    const { store, backend } = await treeSetup();
    void store.regenerate(4);
    expect(backend.api.regenerateReply).toHaveBeenCalledWith(1, 4, expect.any(Function));
    expect(ids(store)).toEqual([1, 2, 3]);
    backend.send.emit(ev.replyStarted(7));
    expect(store.messages.at(-1)).toMatchObject({ id: 7, status: 'streaming', parentId: 3, siblings: [4, 7] });
    backend.send.emit(ev.finished(msg({ id: 7, chatId: 1, role: 'assistant', content: 'Again', parentId: 3, siblings: [4, 7] })));
    await settle();
    expect(backend.api.listMessages).toHaveBeenCalledTimes(2);
  });

  it('continue: the same message streams on from its text and takes the finished status', async () => {
    const { store, backend, clock } = await treeSetup({ status: 'stopped' });
    void store.continueReply(4);
    expect(backend.api.continueReply).toHaveBeenCalledWith(1, 4, expect.any(Function));
    expect(ids(store)).toEqual([1, 2, 3, 4]);
    backend.send.emit(ev.replyStarted(4));
    expect(store.messages[3]).toMatchObject({ id: 4, content: 'Once upon', status: 'streaming' });
    backend.send.emit(ev.delta(' a time'));
    clock.tick();
    expect(store.messages[3].content).toBe('Once upon a time');
    backend.send.emit(ev.finished(msg({ id: 4, chatId: 1, role: 'assistant', content: 'Once upon a time.', parentId: 3 })));
    await settle();
    expect(store.messages[3]).toMatchObject({ content: 'Once upon a time.', status: 'complete' });
    expect(ids(store)).toEqual([1, 2, 3, 4]);
    expect(backend.api.listMessages).toHaveBeenCalledTimes(1); // no versions changed
  });

  it('branch: the reply leaves, and its new version streams on from the kept tokens and the alternative', async () => {
    const { store, backend, clock } = await treeSetup();
    void store.branchReply(4, 2, 1017, 'Once upon a');
    expect(backend.api.branchReply).toHaveBeenCalledWith(1, 4, 2, 1017, expect.any(Function));
    expect(store.busy).toBe(true);
    expect(ids(store)).toEqual([1, 2, 3]);
    backend.send.emit(ev.replyStarted(8));
    // The opening shows at once (the deltas carry only what is written after it), beside the version it came from.
    expect(store.messages.at(-1)).toMatchObject({ id: 8, content: 'Once upon a', status: 'streaming', parentId: 3, siblings: [4, 8] });
    backend.send.emit(ev.delta(' dragon'));
    clock.tick();
    expect(store.messages.at(-1)!.content).toBe('Once upon a dragon');
    const branched = msg({ id: 8, chatId: 1, role: 'assistant', content: 'Once upon a dragon.', parentId: 3, siblings: [4, 8] });
    backend.messages[1] = [...backend.messages[1].slice(0, 3), branched];
    backend.send.emit(ev.finished(branched));
    await settle();
    expect(store.messages.at(-1)).toMatchObject({ id: 8, content: 'Once upon a dragon.', status: 'complete', siblings: [4, 8] });
    expect(backend.api.listMessages).toHaveBeenCalledTimes(2); // the versions changed: the path is read again
    expect(store.busy).toBe(false);
  });

  it('branch: a refusal puts the path back and says why', async () => {
    const { store, backend } = await treeSetup();
    const running = store.branchReply(4, 9, 5, 'x');
    backend.send.reject({ kind: 'invalidInput', message: 'that token was not among the alternatives at this position' });
    await expect(running).resolves.toBe(false);
    expect(ids(store)).toEqual([1, 2, 3, 4]);
    expect(store.error).toBe('that token was not among the alternatives at this position');
    expect(store.busy).toBe(false);
  });

  it('tokenProbs asks the backend for the reply\'s tokens', async () => {
    const { store, backend } = await treeSetup();
    const tokens: TokenProbs[] = [{ id: 7, text: 'Once', p: 0.6, entropy: 1.2, top: [{ id: 7, text: 'Once', p: 0.6 }] }];
    vi.mocked(backend.api.tokenProbs).mockResolvedValueOnce(tokens);
    await expect(store.tokenProbs(4)).resolves.toEqual(tokens);
    expect(backend.api.tokenProbs).toHaveBeenCalledWith(4);
  });

  it('continue: a failure with nothing saved keeps the text and marks it failed', async () => {
    const { store, backend } = await treeSetup({ status: 'interrupted' });
    void store.continueReply(4);
    backend.send.emit(ev.replyStarted(4));
    backend.send.emit(ev.failed('The model crashed'));
    expect(store.messages[3]).toMatchObject({ id: 4, content: 'Once upon', status: 'failed' });
    expect(store.error).toBe('The model crashed');
  });

  const refused: [string, (store: ChatStore) => Promise<boolean>, Partial<ChatStore>][] = [
    [
      'edit',
      (store) => {
        store.startEdit(3);
        store.editing!.text = 'Changed';
        return store.saveEdit();
      },
      { editing: { messageId: 3, text: 'Changed' } },
    ],
    ['regenerate', (store) => store.regenerate(4), { editing: null }],
  ];
  it.each(refused)('a refused %s puts the path and the typed text back', async (_name, start, expected) => {
    const { store, backend } = await treeSetup();
    const running = start(store);
    backend.send.reject({ kind: 'busy', message: 'A reply is already being generated.' });
    await expect(running).resolves.toBe(false);
    expect(ids(store)).toEqual([1, 2, 3, 4]);
    expect(store.editing).toEqual(expected.editing);
    expect(store.error).toBe('A reply is already being generated.');
    expect(store.busy).toBe(false);
  });

  it('one turn at a time: nothing else starts, and this chat\'s path stays put', async () => {
    const { store, backend } = await treeSetup({ status: 'stopped' });
    store.draft = 'more';
    void store.send();
    await settle();
    store.startEdit(3);
    const attempts = await Promise.all([
      store.regenerate(4),
      store.continueReply(4),
      store.branchReply(4, 1, 5, 'x'),
      store.saveEdit(),
      store.switchBranch(2),
      store.deleteMessage(4),
    ]);
    expect(attempts).toEqual([false, false, false, false, false, false]);
    expect(backend.api.sendMessage).toHaveBeenCalledTimes(1);
    for (const cmd of ['regenerateReply', 'continueReply', 'branchReply', 'editMessage', 'switchBranch', 'deleteMessage'] as const) {
      expect(backend.api[cmd]).not.toHaveBeenCalled();
    }
  });

  it('switching branch and deleting a message show the path the backend returns', async () => {
    const { store, backend } = await treeSetup();
    const other = [msg({ id: 1, chatId: 1, role: 'user' }), msg({ id: 8, chatId: 1, role: 'assistant', siblings: [2, 8] })];
    vi.mocked(backend.api.switchBranch).mockResolvedValueOnce(other);
    await expect(store.switchBranch(8)).resolves.toBe(true);
    expect(backend.api.switchBranch).toHaveBeenCalledWith(1, 8);
    expect(ids(store)).toEqual([1, 8]);

    store.startEdit(1);
    vi.mocked(backend.api.deleteMessage).mockResolvedValueOnce([]);
    await expect(store.deleteMessage(1)).resolves.toBe(true);
    expect(backend.api.deleteMessage).toHaveBeenCalledWith(1, 1);
    expect(store.messages).toEqual([]);
    expect(store.editing).toBeNull();

    vi.mocked(backend.api.switchBranch).mockRejectedValueOnce({ kind: 'notFound', message: 'Message 9 does not exist.' });
    await expect(store.switchBranch(9)).resolves.toBe(false);
    expect(store.error).toBe('Message 9 does not exist.');
  });

  it('opening a search hit switches to its branch only when it is not on the path', async () => {
    const { store, backend } = await treeSetup();
    await store.selectChat(2);
    await expect(store.openMessage(1, 3)).resolves.toBe(true);
    expect(store.activeChatId).toBe(1);
    expect(backend.api.switchBranch).not.toHaveBeenCalled();

    const branch = [msg({ id: 1, chatId: 1, role: 'user' }), msg({ id: 9, chatId: 1, role: 'assistant', siblings: [2, 9] })];
    vi.mocked(backend.api.switchBranch).mockResolvedValueOnce(branch);
    await expect(store.openMessage(1, 9)).resolves.toBe(true);
    expect(backend.api.switchBranch).toHaveBeenCalledWith(1, 9);
    expect(ids(store)).toEqual([1, 9]);
  });
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
  /** The prefill_draft calls so far: [chatId, draft, stillTyping]. */
  const prefills = (backend: ReturnType<typeof fakeBackend>) => vi.mocked(backend.api.prefillDraft).mock.calls;

  it("hands the active chat's draft to prefill_draft, paced (see read-ahead.test.ts)", async () => {
    const { store, backend, timers } = await setup({ chats: chats() });
    store.draftTyped('How long');
    timers.advanceTo(50);
    store.draftTyped('How long does');
    expect(prefills(backend)).toEqual([]);
    timers.advanceTo(1000);
    expect(prefills(backend)).toEqual([[1, 'How long does', false]]);
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
    expect(prefills(backend)).toEqual([[100, 'Hello there', false]]);
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
    expect(prefills(backend)).toEqual([[1, 'Thanks, and the sunset', false]]);
  });

  it('another chat opened drops the pending send; its own draft goes to it', async () => {
    const { store, backend, timers } = await setup({ chats: chats() });
    store.draftTyped('about soup');
    void store.selectChat(2);
    timers.advanceTo(1000);
    expect(prefills(backend)).toEqual([]);
    store.draftTyped('about lifetimes');
    timers.advanceTo(2000);
    expect(prefills(backend)).toEqual([[2, 'about lifetimes', false]]);
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

describe("ChatStore: the chat's model, loaded first", () => {
  /** Chat models whose load the test settles: `finish()` or `fail(error)`. */
  function heldModels() {
    const held = { opened: vi.fn(), finish: () => {}, fail: (_e: unknown) => {} };
    const models: ChatModels = {
      opened: held.opened,
      readyForTurn: vi.fn(
        () =>
          new Promise<void>((resolve, reject) => {
            held.finish = resolve;
            held.fail = reject;
          }),
      ),
    };
    return Object.assign(held, { models });
  }

  async function sendingWhileLoading() {
    const t = await setup({ chats: [chat(1, 'Soup', 1)], messages: { 1: [msg({ id: 1, chatId: 1, role: 'user', content: 'hi' })] } });
    const held = heldModels();
    t.store.models = held.models;
    t.store.draft = 'Leeks?';
    const sent = t.store.send();
    await settle();
    return { ...t, held, sent };
  }

  it('the turn waits for the load, the message already on show; then it starts', async () => {
    const { store, backend, held, sent } = await sendingWhileLoading();
    expect(held.models.readyForTurn).toHaveBeenCalledWith(1);
    expect(backend.api.sendMessage).not.toHaveBeenCalled();
    expect(store.draft).toBe('');
    expect(store.messages.map((m) => m.content)).toEqual(['hi', 'Leeks?']);
    expect(store.generatingHere).toBe(true);
    held.finish();
    await settle();
    expect(backend.api.sendMessage).toHaveBeenCalledWith(1, 'Leeks?', expect.any(Function));
    backend.send.emit(ev.finished(msg({ id: 3, chatId: 1, role: 'assistant', content: 'Yes.' })));
    backend.send.resolve();
    await expect(sent).resolves.toBe(true);
  });

  it('a model that cannot be loaded: no turn, the draft back, the banner says why', async () => {
    const { store, backend, held, sent } = await sendingWhileLoading();
    const gone = { kind: 'file' as const, message: 'this chat talks to gone, whose file is gone (/m/gone.gguf); pick another model for it with the model button' };
    held.fail(gone);
    await expect(sent).resolves.toBe(false);
    expect(backend.api.sendMessage).not.toHaveBeenCalled();
    expect(store.draft).toBe('Leeks?');
    expect(store.messages.map((m) => m.content)).toEqual(['hi']);
    expect(store.error).toBe(gone.message);
    expect(store.busy).toBe(false);
  });

  it('Stop while the model loads: the turn never starts, and the draft comes back', async () => {
    const { store, backend, held, sent } = await sendingWhileLoading();
    await store.stop();
    held.finish();
    await expect(sent).resolves.toBe(false);
    expect(backend.api.sendMessage).not.toHaveBeenCalled();
    expect(store.draft).toBe('Leeks?');
    expect(store.messages.map((m) => m.content)).toEqual(['hi']);
    expect(store.busy).toBe(false);
  });

  it('a chat opened, or a new one, is told to the chat models', async () => {
    const { store } = await setup({ chats: [chat(1, 'Soup', 2), chat(2, 'Rust', 1)] });
    const held = heldModels();
    store.models = held.models;
    await store.selectChat(2);
    await store.newChat();
    expect(held.opened.mock.calls).toEqual([[2], [100]]);
  });
});
