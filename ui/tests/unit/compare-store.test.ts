import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatEvent, CompareEvent, SamplingParams, SamplingSettings, StoredMessage } from '../../src/ipc/bindings';
import { ChatStore } from '../../src/lib/chat.svelte';
import { TERMINAL_EVENT_GRACE_MS } from '../../src/lib/turns';
import { CompareStore, lastSaved, type ColumnResult } from '../../src/lib/compare.svelte';
import { fakeApi, manualFrames } from './helpers';
import { stats } from './reply-fixtures';
import { BUILT_IN, DEFAULTS, RANGES, model, params } from './settings-fixtures';

function msg(over: Partial<StoredMessage> & Pick<StoredMessage, 'id' | 'role'>): StoredMessage {
  return { chatId: 1, content: '', status: 'complete', createdAt: 0, model: null, stats: null, parentId: null, siblings: [over.id], tool: null, toolCalls: [], attachments: [], passages: [], ...over };
}

const STATS = stats();

const QUESTION = msg({ id: 11, role: 'user', content: 'Plan one day in Lisbon.' });
const REPLY = msg({ id: 12, role: 'assistant', content: 'Start in the Alfama.', parentId: 11 });

const ev = {
  started: (column: number, messageId: number): CompareEvent => ({ column, event: { event: 'replyStarted', data: { messageId, model: 'Tiny', text: '' } } }),
  delta: (column: number, text: string): CompareEvent => ({ column, event: { event: 'delta', data: { text } } }),
  finished: (column: number, m: StoredMessage): CompareEvent => ({ column, event: { event: 'finished', data: { message: m } } }),
  failed: (column: number, message: string, m: StoredMessage | null = null): CompareEvent => ({
    column,
    event: { event: 'failed', data: { error: { kind: 'engine', message }, message: m } } as ChatEvent,
  }),
};

/** A chat with one question and its reply; compare_replies is driven by the test. */
function setup(current: SamplingParams = params()) {
  let path = [QUESTION, REPLY];
  let pending: { emit: (e: CompareEvent) => void; resolve: () => void; reject: (e: unknown) => void } | null = null;
  const settings: SamplingSettings = { current, source: null, own: false, defaults: params(), ranges: RANGES, presets: BUILT_IN };
  const api = fakeApi('the compare view', {
    listChats: vi.fn(async () => [{ id: 1, title: 'Lisbon', updatedAt: 1, pinned: false, systemPrompt: '', model: { kind: 'local' as const, model: null }, modelName: null }]),
    activeModel: vi.fn(async () => model()),
    listMessages: vi.fn(async () => structuredClone(path)),
    getSampling: vi.fn(async () => structuredClone(settings)),
    compareReplies: vi.fn(
      (_chatId: number, _messageId: number, _variants: SamplingParams[], onEvent: (e: CompareEvent) => void) =>
        new Promise<null>((resolve, reject) => {
          pending = { emit: onEvent, resolve: () => resolve(null), reject };
        }),
    ),
    stopGeneration: vi.fn(async () => null),
    switchBranch: vi.fn(async (_chatId: number, messageId: number) => {
      path = [QUESTION, { ...REPLY, id: messageId, siblings: [12, 20, 21] }];
      return structuredClone(path);
    }),
  });
  const chat = new ChatStore(api, manualFrames().frames);
  const compare = new CompareStore(api, chat);
  return {
    api,
    chat,
    compare,
    setPath: (next: StoredMessage[]) => (path = next),
    get call() {
      if (!pending) throw new Error('compare_replies was not called');
      return pending;
    },
  };
}

/** `setup`, the chat read and the view opened on the reply: its setup shown. */
async function opened(current?: SamplingParams) {
  const t = setup(current);
  await t.chat.init();
  await t.compare.open(12);
  return t;
}

/** On fake timers: opened and run, both columns started; the run, and the call's emit and resolve for the rest. */
async function bothStarted() {
  vi.useFakeTimers();
  const t = await opened();
  const running = t.compare.run();
  await vi.advanceTimersByTimeAsync(0);
  const { emit, resolve } = t.call;
  emit(ev.started(0, 20));
  emit(ev.started(1, 21));
  return { t, running, emit, resolve };
}

const settle = () => new Promise((r) => setTimeout(r, 0));
const texts = (results: ColumnResult[]) => results.map((r) => [r.status, r.text]);

afterEach(() => {
  vi.useRealTimers();
});

describe('CompareStore', () => {
  it("opens on a reply with the chat's settings: its question, two columns, their summaries", async () => {
    const t = setup(params({ temperature: 0.5 }));
    await t.chat.init();
    const opening = t.compare.open(12);
    expect(t.compare.phase).toBe('loading');
    await opening;
    expect(t.api.getSampling).toHaveBeenCalledWith({ kind: 'chat', id: 1 });
    expect(t.compare.phase).toBe('setup');
    expect(t.compare.question).toBe('Plan one day in Lisbon.');
    expect(t.compare.columns).toEqual([
      { base: null, strategy: 'sampling' },
      { base: null, strategy: 'beam' },
    ]);
    expect(t.compare.summaries.map((s) => s.text)).toEqual(["This chat's settings", 'Beam search · width 4']);
    expect(t.compare.canRun).toBe(true);
    expect(t.compare.canRemove).toBe(false);

    t.compare.addColumn();
    t.compare.addColumn();
    expect(t.compare.columns.length).toBe(4);
    expect(t.compare.canAdd).toBe(false);
    t.compare.addColumn();
    expect(t.compare.columns.length).toBe(4);
    t.compare.removeColumn(1);
    expect(t.compare.columns.map((c) => c.base)).toEqual([null, 'Precise', 'Balanced']);
    t.compare.setBase(2, 'Creative');
    t.compare.setStrategy(2, 'beam');
    expect(t.compare.summaries[2].text).toBe('Creative · Beam search · width 4');
  });

  it('a failed load says why and can be retried', async () => {
    const t = setup();
    await t.chat.init();
    t.api.getSampling = vi.fn(async () => Promise.reject({ kind: 'store', message: 'database is locked' }));
    await t.compare.open(12);
    expect(t.compare.phase).toBe('loading');
    expect(t.compare.loadError).toBe('database is locked');
    t.api.getSampling = vi.fn(async () => ({ current: params(), source: null, own: false, defaults: params(), ranges: RANGES, presets: BUILT_IN }));
    await t.compare.retry();
    expect(t.compare.phase).toBe('setup');
    expect(t.compare.loadError).toBeNull();
  });

  it('runs the columns whole, streams each answer into its column, then reloads the path and lets one be kept', async () => {
    const chatParams = params({ temperature: 0.5 });
    const t = await opened(chatParams);
    t.compare.addColumn();
    t.compare.setBase(2, 'Creative');
    t.compare.setStrategy(2, 'beam');
    const running = t.compare.run();
    await settle();
    const creative = BUILT_IN.find((p) => p.name === 'Creative')!.params;
    expect(t.api.compareReplies).toHaveBeenCalledWith(
      1,
      12,
      [{ ...chatParams, strategy: 'sampling' }, { ...chatParams, strategy: 'beam' }, { ...creative, strategy: 'beam' }],
      expect.any(Function),
    );
    expect(Object.keys((t.api.compareReplies as ReturnType<typeof vi.fn>).mock.calls[0][2][0]).sort()).toEqual(Object.keys(DEFAULTS).sort());
    expect(t.compare.phase).toBe('running');
    expect(t.chat.generatingHere).toBe(true);
    expect(t.chat.busy).toBe(true);
    expect(t.compare.canRun).toBe(false);

    const { emit, resolve } = t.call;
    emit(ev.started(0, 20));
    emit(ev.started(1, 21));
    emit(ev.started(2, 22));
    emit(ev.delta(0, 'One'));
    emit(ev.delta(2, 'Three'));
    emit(ev.delta(0, ', two'));
    expect(texts(t.compare.results)).toEqual([['streaming', 'One, two'], ['streaming', ''], ['streaming', 'Three']]);
    expect(t.compare.results.map((r) => r.messageId)).toEqual([20, 21, 22]);

    // Stop stops them all: the chat's one turn.
    await t.compare.stop();
    expect(t.api.stopGeneration).toHaveBeenCalledWith(1);

    emit(ev.finished(0, msg({ id: 20, role: 'assistant', content: 'One, two', stats: STATS, parentId: 11 })));
    emit(ev.failed(1, 'the beams cannot fit the context'));
    emit(ev.finished(2, msg({ id: 22, role: 'assistant', content: 'Three', status: 'stopped', stats: STATS, parentId: 11 })));
    expect(t.compare.phase).toBe('running'); // until the call returned
    t.setPath([QUESTION, { ...REPLY, id: 22, content: 'Three', siblings: [12, 20, 21, 22] }]);
    resolve();
    await running;
    expect(t.compare.phase).toBe('done');
    expect(t.chat.generating).toBeNull();
    expect(t.compare.results.map((r) => [r.status, r.error])).toEqual([
      ['complete', null],
      ['failed', 'The beams cannot fit the context'],
      ['stopped', null],
    ]);
    expect(t.compare.results[0].message?.stats).toEqual(STATS);
    // The backend shows the last answer: the chat's path was read again.
    expect(t.chat.messages.at(-1)?.id).toBe(22);
    expect(t.compare.onShow).toBe(2);

    // Keeping one shows it (switch_branch) and closes the view.
    expect(await t.compare.keep(0)).toBe(true);
    expect(t.api.switchBranch).toHaveBeenCalledWith(1, 20);
    expect(t.chat.messages.at(-1)?.id).toBe(20);
    expect(t.compare.phase).toBe('closed');
  });

  it('a refusal puts the setup back, saying it in words and marking the column it names', async () => {
    const t = await opened(params({ temperature: 0 }));
    t.compare.setStrategy(0, 'consensus');
    const running = t.compare.run();
    await settle();
    t.call.reject({
      kind: 'invalidInput',
      message: 'settings 1: temperature must be above 0 for consensus decoding (its candidates are sampled), got 0',
    });
    await running;
    expect(t.compare.phase).toBe('setup');
    expect(t.compare.error).toBe('Settings 1: temperature must be above 0 for consensus decoding (its candidates are sampled), got 0');
    expect(t.compare.refused).toBe(0);
    expect(t.compare.results).toEqual([]);
    expect(t.chat.generating).toBeNull();
    expect(t.api.listMessages).toHaveBeenCalledTimes(1); // nothing changed: the path is not read again
    // Changing the columns clears it.
    t.compare.setStrategy(0, 'sampling');
    expect(t.compare.error).toBeNull();
    expect(t.compare.refused).toBeNull();
  });

  it('waits a moment for columns whose last event has not come when the call returns, then ends them as they are', async () => {
    const { t, running, emit, resolve } = await bothStarted();
    emit(ev.delta(1, 'Half'));
    emit(ev.finished(0, msg({ id: 20, role: 'assistant', content: 'Whole', stats: STATS })));
    resolve();
    await running;
    expect(t.compare.phase).toBe('running');
    await vi.advanceTimersByTimeAsync(TERMINAL_EVENT_GRACE_MS);
    expect(t.compare.phase).toBe('done');
    expect(texts(t.compare.results)).toEqual([['complete', 'Whole'], ['stopped', 'Half']]);
  });

  it('a late last event ends it at once', async () => {
    const { t, running, emit, resolve } = await bothStarted();
    emit(ev.finished(0, msg({ id: 20, role: 'assistant', content: 'A', stats: STATS })));
    resolve();
    await running;
    emit(ev.finished(1, msg({ id: 21, role: 'assistant', content: 'B', stats: STATS })));
    expect(t.compare.phase).toBe('done');
    expect(texts(t.compare.results)).toEqual([['complete', 'A'], ['complete', 'B']]);
  });

  it('cannot close while the answers are written; closing after leaves the path as the backend has it', async () => {
    const t = await opened();
    const running = t.compare.run();
    await settle();
    t.compare.close();
    expect(t.compare.phase).toBe('running');
    t.call.emit(ev.started(0, 20));
    t.call.emit(ev.failed(0, 'boom'));
    t.call.emit(ev.started(1, 21));
    t.call.emit(ev.finished(1, msg({ id: 21, role: 'assistant', content: 'B', stats: STATS })));
    t.call.resolve();
    await running;
    t.compare.again();
    expect(t.compare.phase).toBe('setup');
    expect(t.compare.results).toEqual([]);
    t.compare.close();
    expect(t.compare.phase).toBe('closed');
    expect(t.api.switchBranch).not.toHaveBeenCalled();
  });

  it('does not run while another reply is being written', async () => {
    const t = await opened();
    t.chat.generating = { chatId: 1, stopping: false };
    expect(t.compare.canRun).toBe(false);
    await t.compare.run();
    expect(t.api.compareReplies).not.toHaveBeenCalled();
  });

  it('the answer on show is the last one saved', () => {
    const r = (messageId: number | null): ColumnResult => ({ messageId, text: '', status: 'complete', message: null, error: null, searched: null });
    expect(lastSaved([r(1), r(2), r(null)])).toBe(1);
    expect(lastSaved([r(null), r(null)])).toBe(-1);
  });
});
