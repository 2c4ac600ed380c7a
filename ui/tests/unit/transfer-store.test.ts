import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChatSummary, ExportFormat, ImportReport } from '../../src/ipc/bindings';
import { ChatStore } from '../../src/lib/chat.svelte';
import { NOTICE_MS, TransferStore } from '../../src/lib/transfer.svelte';
import { fakeApi } from './helpers';

const chat = (id: number, title: string, updatedAt: number): ChatSummary => ({ id, title, updatedAt, pinned: false, systemPrompt: '', model: { kind: 'local', model: null }, modelName: null });

/** A file dialog the backend opened: the test answers it (a path or a report; null: cancelled) or fails it. */
type Dialog = { answer: (value: unknown) => void; fail: (error: unknown) => void };

/** The chat screen over a backend whose file dialogs the test answers one by one; `chats` is its list. */
async function setup(chats: ChatSummary[] = []) {
  const dialogs: Dialog[] = [];
  const dialog = <T>() => new Promise<T>((answer, fail) => dialogs.push({ answer: answer as Dialog['answer'], fail }));
  const api = fakeApi('export and import', {
    listChats: vi.fn(async () => [...chats].sort((a, b) => b.updatedAt - a.updatedAt)),
    activeModel: vi.fn(async () => null),
    listMessages: vi.fn(async () => []),
    exportChats: vi.fn((_ids: number[] | null, _format: ExportFormat) => dialog<string | null>()),
    importChats: vi.fn(() => dialog<ImportReport | null>()),
  });
  const chatStore = new ChatStore(api);
  await chatStore.init();
  return {
    api,
    chatStore,
    store: new TransferStore(api, chatStore),
    /** The dialog opened last. */
    get dialog(): Dialog {
      return dialogs.at(-1)!;
    },
  };
}

const DISK_FULL = {
  kind: 'file',
  message: 'could not write /home/me/Stories.md: No space left on device (os error 28). Nothing was exported',
};

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('TransferStore: export', () => {
  it('says where the file went; the notice hides itself after a while', async () => {
    const t = await setup([chat(1, 'Stories', 10)]);
    const done = t.store.exportChats([1], 'markdown');
    expect(t.api.exportChats).toHaveBeenCalledWith([1], 'markdown');
    expect(t.store.working).toBe(true);
    t.dialog.answer('/home/me/Stories.md');
    await expect(done).resolves.toBe(true);
    expect(t.store.notice).toBe('Exported to /home/me/Stories.md');
    expect(t.store.working).toBe(false);
    await vi.advanceTimersByTimeAsync(NOTICE_MS - 1);
    expect(t.store.notice).not.toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    expect(t.store.notice).toBeNull();
  });

  it('stays while held, waits the whole time again once let go; dismissed, it goes at once', async () => {
    const t = await setup();
    const done = t.store.exportChats(null, 'json');
    t.dialog.answer('/home/me/hearth-chats.json');
    await done;
    await vi.advanceTimersByTimeAsync(NOTICE_MS - 100);
    t.store.holdNotice(true);
    await vi.advanceTimersByTimeAsync(10 * NOTICE_MS);
    expect(t.store.notice).toBe('Exported to /home/me/hearth-chats.json');
    t.store.holdNotice(false);
    await vi.advanceTimersByTimeAsync(NOTICE_MS - 1);
    expect(t.store.notice).not.toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    expect(t.store.notice).toBeNull();

    const again = t.store.exportChats(null, 'json');
    t.dialog.answer('/home/me/again.json');
    await again;
    t.store.holdNotice(true); // focus on its dismiss button…
    t.store.dismissNotice(); // …which is pressed: the next notice is not held
    expect(t.store.notice).toBeNull();
    const third = t.store.exportChats(null, 'json');
    t.dialog.answer('/home/me/third.json');
    await third;
    await vi.advanceTimersByTimeAsync(NOTICE_MS);
    expect(t.store.notice).toBeNull();
  });

  it('a new export replaces the notice and its time starts again', async () => {
    const t = await setup();
    const first = t.store.exportChats([1], 'json');
    t.dialog.answer('/a.json');
    await first;
    await vi.advanceTimersByTimeAsync(NOTICE_MS - 10);
    const second = t.store.exportChats([2], 'markdown');
    t.dialog.answer('/b.md');
    await second;
    await vi.advanceTimersByTimeAsync(NOTICE_MS - 1);
    expect(t.store.notice).toBe('Exported to /b.md');
  });

  it('cancelled: nothing on screen', async () => {
    const t = await setup();
    const done = t.store.exportChats([1], 'json');
    t.dialog.answer(null);
    await expect(done).resolves.toBe(false);
    expect(t.store.notice).toBeNull();
    expect(t.chatStore.error).toBeNull();
    expect(t.store.working).toBe(false);
  });

  it("failed: the backend's message in the error banner; trying again clears it, but not another error", async () => {
    const t = await setup();
    const failed = t.store.exportChats([1], 'markdown');
    t.dialog.fail(DISK_FULL);
    await expect(failed).resolves.toBe(false);
    expect(t.chatStore.error).toBe(DISK_FULL.message);
    expect(t.store.notice).toBeNull();
    expect(t.store.working).toBe(false);

    const retried = t.store.exportChats([1], 'markdown');
    expect(t.chatStore.error).toBeNull();
    t.dialog.answer(null);
    await retried;

    const failedAgain = t.store.exportChats([1], 'markdown');
    t.dialog.fail(DISK_FULL);
    await failedAgain;
    t.chatStore.showError('The model failed to generate a reply.');
    const other = t.store.exportChats([1], 'markdown');
    expect(t.chatStore.error).toBe('The model failed to generate a reply.');
    t.dialog.answer(null);
    await other;
  });

  it('a second request while a dialog is open is ignored', async () => {
    const t = await setup();
    const first = t.store.exportChats([1], 'json');
    await expect(t.store.exportChats([2], 'json')).resolves.toBe(false);
    await expect(t.store.importChats()).resolves.toBe(false);
    expect(t.api.exportChats).toHaveBeenCalledTimes(1);
    expect(t.api.importChats).not.toHaveBeenCalled();
    t.dialog.answer('/a.json');
    await expect(first).resolves.toBe(true);
  });
});

describe('TransferStore: import', () => {
  const REPORT: ImportReport = {
    imported: [chat(7, 'From last spring', 5)],
    skipped: [{ chat: 'chat 2', reason: 'two messages have the id 4' }],
    notes: ['From last spring: its settings were left out (temperature must be between 0 and 5, got 9)'],
  };

  it('shows the report and reads the list again: new chats sort by their own dates', async () => {
    const chats = [chat(1, 'Today', 30)];
    const t = await setup(chats);
    const done = t.store.importChats();
    chats.push(chat(7, 'From last spring', 5), chat(8, 'Yesterday', 20));
    t.dialog.answer(REPORT);
    await expect(done).resolves.toBe(true);
    expect(t.store.report).toEqual(REPORT);
    expect(t.chatStore.chats.map((c) => c.title)).toEqual(['Today', 'Yesterday', 'From last spring']);
    expect(t.chatStore.activeChatId).toBe(1);
    t.store.dismissReport();
    expect(t.store.report).toBeNull();
  });

  it('with no chat open, the first one opens', async () => {
    const chats: ChatSummary[] = [];
    const t = await setup(chats);
    expect(t.chatStore.activeChatId).toBeNull();
    const done = t.store.importChats();
    chats.push(chat(7, 'From last spring', 5));
    t.dialog.answer(REPORT);
    await done;
    expect(t.chatStore.activeChatId).toBe(7);
    expect(t.api.listMessages).toHaveBeenCalledWith(7);
  });

  it('cancelled: nothing changes; the last report stays', async () => {
    const t = await setup();
    const first = t.store.importChats();
    t.dialog.answer(REPORT);
    await first;
    vi.mocked(t.api.listChats).mockClear();
    const cancelled = t.store.importChats();
    t.dialog.answer(null);
    await expect(cancelled).resolves.toBe(false);
    expect(t.store.report).toEqual(REPORT);
    expect(t.api.listChats).not.toHaveBeenCalled();
  });

  it("refused: the backend's message in the error banner, and no report", async () => {
    const t = await setup();
    const done = t.store.importChats();
    t.dialog.fail({ kind: 'invalidInput', message: 'this export was made by a newer Hearth (format version 3); update Hearth to import it' });
    await expect(done).resolves.toBe(false);
    expect(t.chatStore.error).toBe('this export was made by a newer Hearth (format version 3); update Hearth to import it');
    expect(t.store.report).toBeNull();
  });
});
