// Tool calls in a chat (lib/tool-calls.ts): a reply's text split at the call marks (contract.json's), the live
// calls of a turn, results paired with the reply that called, and the words for times, sizes and arguments.
import { describe, expect, it } from 'vitest';
import type { CallProgress, PendingCall, StoredMessage, ToolRun } from '../../src/ipc/bindings';
import { toolCallMarks } from '../../src/ipc/contract.json';
import { TOOL_CALL_MARKS } from '../../src/ipc/contract';
import {
  argumentsProblem,
  argumentsToSend,
  askingCall,
  callAnswered,
  callAsked,
  callAskedAgain,
  callProgressed,
  callRunning,
  callView,
  callingLabel,
  callsEnded,
  compactArguments,
  formatChars,
  formatToolTime,
  prettyArguments,
  progressFraction,
  progressText,
  resultFacts,
  resultsByReply,
  roundLimitNotice,
  unavailableText,
  splitToolCalls,
  type LiveCalls,
} from '../../src/lib/tool-calls';
import { table } from './helpers';

const [OPEN, CLOSE] = toolCallMarks;
const call = (name: string, args = '{}') => `${OPEN}\n{"name": "${name}", "arguments": ${args}}\n${CLOSE}`;

describe('the marks', () => {
  it('are contract.json’s', () => {
    expect(TOOL_CALL_MARKS).toEqual({ open: OPEN, close: CLOSE });
  });
});

table('splitToolCalls: a saved reply’s prose and its blocks', (text: string) => splitToolCalls(text, false), [
  ['Just prose.', { prose: 'Just prose.', blocks: [] }],
  [`Let me look.\n${call('read_file', '{"path": "/a"}')}`, { prose: 'Let me look.', blocks: [{ name: 'read_file', closed: true }] }],
  [`${call('a')}\n${call('b')}`, { prose: '', blocks: [{ name: 'a', closed: true }, { name: 'b', closed: true }] }],
  [`Before ${call('a')} between ${call('b')} after`, { prose: 'Before  between  after', blocks: [{ name: 'a', closed: true }, { name: 'b', closed: true }] }],
  // Cut off inside a block (stopped): the block is not text.
  [`Stopped here ${OPEN}{"name": "read_f`, { prose: 'Stopped here', blocks: [{ name: null, closed: false }] }],
  // A saved reply ending in what looks like a mark's start keeps it: it is text.
  ['Compare a <tool_ and b', { prose: 'Compare a <tool_ and b', blocks: [] }],
  [`${OPEN}{"arguments": {}}${CLOSE}`, { prose: '', blocks: [{ name: null, closed: true }] }],
]);

table('splitToolCalls while streaming: a half-arrived mark is held back', (text: string) => splitToolCalls(text, true), [
  ['Let me look.\n<', { prose: 'Let me look.\n', blocks: [] }],
  ['Let me look.\n<tool_c', { prose: 'Let me look.\n', blocks: [] }],
  [`Let me look.\n${OPEN}`, { prose: 'Let me look.', blocks: [{ name: null, closed: false }] }],
  [`Let me look.\n${OPEN}\n{"name": "read_`, { prose: 'Let me look.', blocks: [{ name: null, closed: false }] }],
  [`Let me look.\n${OPEN}\n{"name": "read_file", "argu`, { prose: 'Let me look.', blocks: [{ name: 'read_file', closed: false }] }],
  [`${call('a')} and then <tool`, { prose: 'and then', blocks: [{ name: 'a', closed: true }] }],
  ['a < b', { prose: 'a < b', blocks: [] }],
]);

table('callingLabel', callingLabel, [
  [{ name: 'read_file', closed: false }, 'Calling read_file…'],
  [{ name: null, closed: false }, 'Calling a tool…'],
]);

const pending = (index: number, over: Partial<PendingCall> = {}): PendingCall => ({
  reply: 7, index, server: 'files', tool: 'read_file', description: 'Reads a file.', arguments: '{"path":"/a"}', readOnly: true, ...over,
});
const progress = (p: number, total: number | null = 4, message: string | null = null): CallProgress => ({ progress: p, total, message });

describe('the live calls of a turn', () => {
  it('follow a call from its question to its end, and the next one', () => {
    let calls: LiveCalls = {};
    calls = callAsked(calls, pending(0));
    expect(calls[7]).toEqual([{ index: 0, phase: 'asking', pending: pending(0), progress: null }]);
    expect(askingCall(calls)).toEqual(pending(0));

    calls = callAnswered(calls, 7, 0, { decision: 'allow', arguments: '{}' });
    expect(calls[7][0].phase).toBe('allowed');
    expect(askingCall(calls)).toBeNull();
    calls = callRunning(calls, { reply: 7, index: 0 });
    calls = callProgressed(calls, 7, 0, progress(2));
    expect(calls[7][0]).toMatchObject({ phase: 'running', progress: progress(2) });

    // The next call's question: the one before has run.
    calls = callAsked(calls, pending(1));
    expect(calls[7].map((c) => [c.index, c.phase])).toEqual([[0, 'ran'], [1, 'asking']]);
    calls = callAnswered(calls, 7, 1, { decision: 'deny' });
    expect(calls[7][1].phase).toBe('denied');
  });

  it('a call allowed for the session runs without a question; its results end the running', () => {
    let calls: LiveCalls = callRunning({}, { reply: 9, index: 0 });
    expect(calls[9]).toEqual([{ index: 0, phase: 'running', pending: null, progress: null }]);
    calls = callRunning(calls, { reply: 9, index: 1 });
    expect(calls[9].map((c) => c.phase)).toEqual(['ran', 'running']);
    calls = callsEnded(calls, 9);
    expect(calls[9].map((c) => c.phase)).toEqual(['ran', 'ran']);
    expect(callsEnded(calls, 9)).toBe(calls);
    expect(callsEnded(calls, 123)).toBe(calls);
  });

  it('an answer that did not reach the backend is asked again', () => {
    let calls = callAnswered(callAsked({}, pending(0)), 7, 0, { decision: 'alwaysAllow', arguments: '{}' });
    calls = callAskedAgain(calls, 7, 0);
    expect(calls[7][0].phase).toBe('asking');
  });

  it('leave the state they were given alone', () => {
    const before = callAsked({}, pending(0));
    const frozen = structuredClone(before);
    callAnswered(before, 7, 0, { decision: 'deny' });
    callRunning(before, { reply: 7, index: 1 });
    expect(before).toEqual(frozen);
  });
});

table('progressFraction', progressFraction, [
  [null, null],
  [progress(1, 4), 0.25],
  [progress(5, 4), 1],
  [progress(3, null), null],
  [progress(3, 0), null],
]);

table('progressText', progressText, [
  [null, ''],
  [progress(2, 4), '2/4'],
  [progress(2, 4, 'Reading'), '2/4 · Reading'],
  [progress(17, null, 'Pages fetched'), '17 · Pages fetched'],
  [progress(0.5, 1), '0.5/1'],
]);

function message(id: number, role: StoredMessage['role'], tool: ToolRun | null = null): StoredMessage {
  return { id, chatId: 1, role, content: `m${id}`, status: 'complete', createdAt: 0, model: null, stats: null, parentId: null, siblings: [id], tool, toolCalls: [], attachments: [], passages: [] };
}
const run = (over: Partial<ToolRun> = {}): ToolRun => ({ name: 'read_file', server: 'files', arguments: '{}', end: 'ran', isError: false, elapsedMs: 412, chars: 3, cut: false, ...over });

describe('resultsByReply', () => {
  it('pairs each reply with the tool messages after it', () => {
    const path = [message(1, 'user'), message(2, 'assistant'), message(3, 'tool', run()), message(4, 'tool', run()), message(5, 'assistant'), message(6, 'user'), message(7, 'assistant')];
    const results = resultsByReply(path);
    expect([...results.keys()]).toEqual([2]);
    expect(results.get(2)!.map((m) => m.id)).toEqual([3, 4]);
  });

  it('a tool message after no reply belongs to none', () => {
    expect(resultsByReply([message(1, 'user'), message(2, 'tool', run())]).size).toBe(0);
  });
});

describe('callView', () => {
  const result = message(9, 'tool', run({ end: 'denied' }));
  it('a result wins; then the live state; then waiting (turn under way) or never run', () => {
    const live = callRunning({}, { reply: 7, index: 1 })[7];
    expect(callView(0, live, [result])).toEqual({ kind: 'result', result, run: result.tool });
    expect(callView(1, live, [result])).toMatchObject({ kind: 'live', call: { index: 1, phase: 'running' } });
    expect(callView(2, live, [result])).toEqual({ kind: 'queued' });
    expect(callView(0, null, [])).toEqual({ kind: 'notRun' });
  });
});

table('formatToolTime', formatToolTime, [
  [0, '0 ms'],
  [35, '35 ms'],
  [412, '0.4 s'],
  [2400, '2.4 s'],
  [12_480, '12.5 s'],
  [125_000, '2 min 5 s'],
  [-1, '–'],
  [Number.NaN, '–'],
]);

table('formatChars', formatChars, [
  [1, '1 character'],
  [850, '850 characters'],
  [1000, '1k characters'],
  [1234, '1.2k characters'],
  [12_840, '12.8k characters'],
  [240_000, '240k characters'],
  [3_400_000, '3.4M characters'],
]);

describe('results', () => {

  it('are told by their time, size and cut', () => {
    expect(resultFacts(run({ elapsedMs: 412, chars: 3 }))).toEqual(['0.4 s', '3 characters']);
    expect(resultFacts(run({ elapsedMs: 2400, chars: 12_840, cut: true }))).toEqual(['2.4 s', '12.8k characters', 'cut for the model']);
    // Denied: it took no time.
    expect(resultFacts(run({ end: 'denied', elapsedMs: 0, chars: 35 }))).toEqual(['35 characters']);
  });

  it('say how many rounds a turn used', () => {
    expect(roundLimitNotice(8)).toBe('Stopped after 8 rounds of tool calls');
    expect(roundLimitNotice(1)).toBe('Stopped after 1 round of tool calls');
    expect(unavailableText([{ server: 'linear', why: 'it asks to sign in' }, { server: 'gh', why: 'it failed: no answer' }])).toEqual([
      "linear's tools were not offered: it asks to sign in",
      "gh's tools were not offered: it failed: no answer",
    ]);
  });
});

table('prettyArguments', prettyArguments, [
  ['{"path":"/a","n":2}', '{\n  "path": "/a",\n  "n": 2\n}'],
  ['{}', '{}'],
  ['not json', 'not json'],
]);

table('compactArguments', compactArguments, [
  ['{\n  "path": "/a"\n}', '{"path":"/a"}'],
  ['not\n  json', 'not json'],
]);

describe('argumentsProblem', () => {
  it('takes any JSON', () => {
    expect(argumentsProblem('{"path": "/a"}')).toBeNull();
    expect(argumentsProblem(' {} ')).toBeNull();
  });
  it('says what is wrong in words', () => {
    expect(argumentsProblem('{"path": ')).toMatch(/^This is not valid JSON: /);
    expect(argumentsProblem('  ')).toBe('The arguments are empty: they must be JSON, e.g. {}.');
  });
});

table('argumentsToSend: the model’s own unless edited', ([original, shown, edited]: [string, string, string]) => argumentsToSend(original, shown, edited), [
  [['{"a":1}', '{\n  "a": 1\n}', '{\n  "a": 1\n}'], '{"a":1}'],
  [['{"a":1}', '{\n  "a": 1\n}', '{\n  "a": 2\n}'], '{\n  "a": 2\n}'],
]);
