// The ChatStore's turns with tools: a reply that calls ends its round (saved with its calls), each call's
// question, answer, run and progress followed by reply, the results added to the path, the next reply streamed
// in as a new message; Stop, a refused answer, and a turn that used all its rounds.
import { describe, expect, it } from 'vitest';
import type { PendingCall, StoredMessage, ToolRun } from '../../src/ipc/bindings';
import { roundLimitNotice } from '../../src/lib/tool-calls';
import { ev, msg, settle, setup } from './chat-store-fixtures';
import { stats } from './reply-fixtures';

const CALL = '<tool_call>\n{"name": "read_file", "arguments": {"path": "/a"}}\n</tool_call>';
const pending = (reply: number, index = 0): PendingCall => ({
  reply, index, server: 'files', tool: 'read_file', description: 'Reads a file.', arguments: '{"path":"/a"}', readOnly: true,
});
const run = (over: Partial<ToolRun> = {}): ToolRun => ({ name: 'read_file', server: 'files', arguments: '{"path":"/a"}', end: 'ran', isError: false, elapsedMs: 40, chars: 5, cut: false, ...over });

/** A chat, a message sent, its reply started and written with a call. */
async function calling() {
  const t = await setup();
  await t.store.newChat();
  const chatId = t.store.activeChatId!;
  t.store.draft = 'Read /a';
  const sending = t.store.send();
  await settle();
  const { emit } = t.backend.send;
  emit(ev.userSaved(msg({ id: 1, chatId, role: 'user', content: 'Read /a' })));
  emit(ev.replyStarted(2));
  emit(ev.delta(`Let me look.\n${CALL}`));
  t.clock.tick();
  const caller = msg({ id: 2, chatId, role: 'assistant', content: `Let me look.\n${CALL}`, parentId: 1, toolCalls: [{ name: 'read_file', arguments: '{"path":"/a"}' }] });
  emit(ev.roundFinished(caller));
  return { ...t, chatId, sending, emit, caller };
}

const shape = (messages: StoredMessage[]) => messages.map((m) => [m.id, m.role, m.status]);

describe('ChatStore: turns with tools', () => {
  it('follows a round: the calling reply saved, the question answered, the call run, its result, the next reply', async () => {
    const { store, backend, clock, chatId, sending, emit } = await calling();
    expect(shape(store.messages)).toEqual([[1, 'user', 'complete'], [2, 'assistant', 'complete']]);
    expect(store.messages[1].toolCalls).toHaveLength(1);
    expect(store.generating).not.toBeNull();

    emit(ev.toolApproval(pending(2)));
    expect(store.liveCalls[2]).toEqual([{ index: 0, phase: 'asking', pending: pending(2), progress: null }]);
    await expect(store.answerToolCall(2, 0, { decision: 'allow', arguments: '{"path":"/b"}' })).resolves.toBe(true);
    expect(backend.api.answerToolCall).toHaveBeenCalledWith(chatId, { decision: 'allow', arguments: '{"path":"/b"}' });
    expect(store.liveCalls[2][0].phase).toBe('allowed');

    emit(ev.toolRunning(2, 0));
    emit(ev.toolProgress(2, 0, { progress: 1, total: 2, message: 'Reading' }));
    expect(store.liveCalls[2][0]).toMatchObject({ phase: 'running', progress: { progress: 1, total: 2, message: 'Reading' } });

    // The result, after the reply that called; then the next reply, a new message after it.
    emit(ev.userSaved(msg({ id: 3, chatId, role: 'tool', content: 'hello', parentId: 2, tool: run({ arguments: '{"path":"/b"}' }) })));
    expect(store.liveCalls[2][0].phase).toBe('ran');
    emit(ev.replyStarted(4));
    expect(shape(store.messages)).toEqual([[1, 'user', 'complete'], [2, 'assistant', 'complete'], [3, 'tool', 'complete'], [4, 'assistant', 'streaming']]);
    expect(store.messages[3]).toMatchObject({ content: '', parentId: 3, siblings: [4] });
    emit(ev.delta('It says hello.'));
    clock.tick();
    expect(store.messages[3].content).toBe('It says hello.');
    expect(store.messages[1].content, 'the calling reply keeps its text').toBe(`Let me look.\n${CALL}`);

    emit(ev.finished(msg({ id: 4, chatId, role: 'assistant', content: 'It says hello.', parentId: 3 })));
    backend.send.resolve();
    await expect(sending).resolves.toBe(true);
    expect(store.generating).toBeNull();
    expect(store.liveCalls).toEqual({});
    expect(store.messages[3].stats?.toolRoundLimit, 'a turn that ended by itself says nothing of rounds').toBeUndefined();
  });

  it('a denied call shows denied at once; an answer the backend refuses is asked again, the error said', async () => {
    const { store, backend, emit } = await calling();
    emit(ev.toolApproval(pending(2)));
    backend.api.answerToolCall = async () => Promise.reject({ kind: 'notFound', message: 'this chat is not waiting for an answer about a tool' });
    await expect(store.answerToolCall(2, 0, { decision: 'deny' })).resolves.toBe(false);
    expect(store.liveCalls[2][0].phase).toBe('asking');
    expect(store.error).toBe('this chat is not waiting for an answer about a tool');

    backend.api.answerToolCall = async () => null;
    await store.answerToolCall(2, 0, { decision: 'deny' });
    expect(store.liveCalls[2][0].phase).toBe('denied');
  });

  it('answers nothing when no turn runs', async () => {
    const { store, backend } = await setup();
    await expect(store.answerToolCall(2, 0, { decision: 'deny' })).resolves.toBe(false);
    expect(backend.api.answerToolCall).not.toHaveBeenCalled();
  });

  it('Stop while a call waits: stop_generation; the stopped result joins the path and the turn ends with the reply that called', async () => {
    const { store, backend, chatId, sending, emit, caller } = await calling();
    emit(ev.toolApproval(pending(2)));
    await store.stop();
    expect(backend.api.stopGeneration).toHaveBeenCalledWith(chatId);
    emit(ev.userSaved(msg({ id: 3, chatId, role: 'tool', content: 'The user stopped before this tool ran.', parentId: 2, tool: run({ end: 'stopped', isError: true }) })));
    emit(ev.finished(caller));
    backend.send.resolve();
    await sending;
    expect(shape(store.messages)).toEqual([[1, 'user', 'complete'], [2, 'assistant', 'complete'], [3, 'tool', 'complete']]);
    expect(store.generating).toBeNull();
    expect(store.liveCalls).toEqual({});
  });

  it('a turn that used its rounds: the reply it ended with, saved again, says so in its stats', async () => {
    const { store, backend, clock, chatId, sending, emit } = await calling();
    emit(ev.toolRunning(2, 0)); // allowed for the session: nothing asked
    emit(ev.userSaved(msg({ id: 3, chatId, role: 'tool', content: 'x', parentId: 2, tool: run() })));
    emit(ev.replyStarted(4));
    emit(ev.delta(CALL));
    clock.tick();
    const last = msg({ id: 4, chatId, role: 'assistant', content: CALL, parentId: 3, toolCalls: [{ name: 'read_file', arguments: '{}' }], stats: stats({ toolRoundLimit: 8 }) });
    // As the backend sends them: the reply as saved with the limit, then the turn's end with it.
    emit(ev.roundLimit(last));
    expect(store.messages[3], 'the live reply is replaced by the saved one').toEqual(last);
    expect(roundLimitNotice(store.messages[3].stats!.toolRoundLimit!)).toBe('Stopped after 8 rounds of tool calls');
    emit(ev.finished(last));
    backend.send.resolve();
    await sending;
    expect(shape(store.messages)).toEqual([[1, 'user', 'complete'], [2, 'assistant', 'complete'], [3, 'tool', 'complete'], [4, 'assistant', 'complete']]);
    expect(store.messages[3].stats?.toolRoundLimit).toBe(8);
    expect(store.messages[1].stats?.toolRoundLimit, 'only the last reply says so').toBeUndefined();
    expect(store.generating).toBeNull();
  });

  it('a failed second reply leaves, the round before it kept', async () => {
    const { store, backend, chatId, sending, emit } = await calling();
    emit(ev.toolRunning(2, 0));
    emit(ev.userSaved(msg({ id: 3, chatId, role: 'tool', content: 'x', parentId: 2, tool: run() })));
    emit(ev.replyStarted(4));
    emit(ev.failed('the engine stopped'));
    backend.send.resolve();
    await sending;
    expect(shape(store.messages)).toEqual([[1, 'user', 'complete'], [2, 'assistant', 'complete'], [3, 'tool', 'complete']]);
    expect(store.error).toBe('the engine stopped');
  });

  it('keeps the servers a turn could not offer, for its chat, until the next turn starts', async () => {
    const t = await setup();
    await t.store.newChat();
    const chatId = t.store.activeChatId!;
    t.store.draft = 'Which issues are open?';
    const sending = t.store.send();
    await settle();
    const servers = [{ server: 'linear', why: 'it asks to sign in' }];
    t.backend.send.emit({ event: 'toolsUnavailable', data: { servers } });
    expect(t.store.toolsUnavailable).toEqual({ chatId, servers });
    t.backend.send.emit(ev.userSaved(msg({ id: 1, chatId, role: 'user', content: 'Which issues are open?' })));
    t.backend.send.emit(ev.replyStarted(2));
    t.backend.send.emit(ev.finished(msg({ id: 2, chatId, role: 'assistant', content: 'None I can see.', parentId: 1 })));
    t.backend.send.resolve();
    await sending;
    // It outlives its turn.
    expect(t.store.toolsUnavailable).toEqual({ chatId, servers });

    t.store.draft = 'And now?';
    void t.store.send();
    await settle();
    expect(t.store.toolsUnavailable).toBeNull();
  });
});
