// The ChatStore's message tree: edit, regenerate, continue, branch, delete, and search hits on other branches.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TokenProbs } from '../../src/ipc/bindings';
import { ChatStore } from '../../src/lib/chat.svelte';
import { PENDING_USER_ID } from '../../src/lib/turns';
import { ev, ids, msg, settle, treeSetup } from './chat-store-fixtures';

afterEach(() => {
  vi.useRealTimers();
});

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
    backend.send.emit(ev.replyStarted(4, undefined, 'Once upon'));
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
    void store.branchReply(4, 2, 1017);
    expect(backend.api.branchReply).toHaveBeenCalledWith(1, 4, 2, 1017, expect.any(Function));
    expect(store.busy).toBe(true);
    expect(ids(store)).toEqual([1, 2, 3]);
    backend.send.emit(ev.replyStarted(8, undefined, 'Once upon a'));
    // The opening, as the backend wrote it, shows at once (the deltas carry only what is written after it), beside the version it came from.
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
    const running = store.branchReply(4, 9, 5);
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
    backend.send.emit(ev.replyStarted(4, undefined, 'Once upon'));
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
      store.branchReply(4, 1, 5),
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
