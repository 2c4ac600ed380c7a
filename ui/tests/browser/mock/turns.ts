// Turns: send, edit, regenerate, continue and branch share one streaming path (runTurn); compare_replies answers a
// reply's question once per settings, side by side; stop_generation stops what runs. A reply comes from `replies`
// (FIFO), then `defaultReply` (see reply.ts for how it is written). Remote chats' replies fail as their provider
// does (no key, a refused key "sk-wrong"; rate limits and network errors through a reply's `failWith`). A local
// reply whose script calls tools (`calls`) ends its round; its calls are asked about (answer_tool_call), run and
// answered as scripted (runCalls), and the next reply reads their results, as hearth-app's agent loop goes.
import type { Attachment, ChatEvent, CompareEvent, Decision, IpcError, SamplingParams, TokenProbs, ToolRun, ToolRunEnd } from '../../../src/ipc/bindings';
import { checkAttachments } from './attachments';
import { takeCache } from './caches';
import { append, decorate, findChat, messageById, messageOf, shownPath } from './history';
import { tokenProbsOf } from './inspector';
import { argsRefused, checkErrorKind, type Handlers, type Sink } from './ipc';
import { prepareChatModel } from './loading';
import { startRemote } from './providers';
import { writeReply } from './reply';
import { checkSamplingShape, getSampling } from './sampling';
import { state, type Chat, type Message, type ScriptedCall } from './state';
import { clone, delay, ipcError } from './util';

/** The engine's words for images sent to a model without a projector (hearth-engine's session/prompt.rs). */
const NO_PROJECTOR = ipcError(
  'invalidInput',
  'this model cannot read images: load a vision model, with its projector (mmproj-….gguf) beside it or chosen in its load settings',
);

/** A user message: its text and the files it carries. */
type Question = { content: string; attachments: Attachment[] };

/** What a turn saves before its reply: a user message, or where the reply goes (beside a reply, in one, or a branch of one). */
type Plan = {
  user?: Question & { parentId: number | null };
  replyParent?: number | null;
  continued?: Message;
  branch?: { parentId: number | null; text: string; model: string | null };
  tokens?: TokenProbs[];
};

const continuePlan = (chat: Chat, messageId: number): Plan => {
  const partial = messageOf(chat, messageId, 'assistant');
  if (partial.status === 'streaming') throw ipcError('invalidInput', 'this reply is still being written');
  return { continued: partial, tokens: tokenProbsOf(partial) };
};

/**
 * ChatService's Turn::Branch, its accepted case only: the reply's text up to `at`, then the alternative chosen there.
 * What branch_at refuses (a position or token not kept, a reply edited since) is not checked again here: the tests
 * that send such a branch record the backend's refusal in refusals.json, which answers it before this runs.
 */
const branchPlan = (chat: Chat, messageId: number, at: number, token: number): Plan => {
  const original = messageOf(chat, messageId, 'assistant');
  const tokens = tokenProbsOf(original);
  const position = tokens[at];
  const alternative = position?.top.find((t) => t.id === token);
  if (!position || !alternative) throw new Error(`mock: branch_reply at ${at} to token ${token} is no recorded case (refusals.json)`);
  const kept = tokens.slice(0, at).map((t) => t.text).join('');
  const chosen = { ...clone(position), id: alternative.id, text: alternative.text, p: alternative.p };
  return { branch: { parentId: original.parentId, text: kept + alternative.text, model: original.model }, tokens: [...clone(tokens.slice(0, at)), chosen] };
};

/**
 * A turn of chat `chatId`: refused while another runs, its chat's model readied first, then `plan` says what is
 * saved; the reply is written (writeReply) and its events go to `events`. `asked`: the message typed and the files
 * it carries, refused when it has neither text nor files.
 */
async function runTurn(cmd: string, chatId: number, events: Sink<ChatEvent>, plan: (chat: Chat) => Plan, asked?: Question) {
  const chat = findChat(chatId);
  if (asked && asked.content.trim() === '' && asked.attachments.length === 0) throw ipcError('invalidInput', 'the message is empty');
  const remote = chat.model.kind === 'remote' ? chat.model : null;
  if (state.generating.size > 0) throw ipcError('busy', 'A reply is already being generated.');
  await prepareChatModel(chat, events);
  if (!remote && !state.model) throw ipcError('noModel', 'No model is loaded.');
  // As ToolBox::gather: the servers switched on that cannot be offered, told before the reply.
  const unavailable = state.toolServers.flatMap(({ config, state: s }) =>
    s.state === 'signIn' ? [{ server: config.name, why: 'it asks to sign in' }] : s.state === 'failed' ? [{ server: config.name, why: `it failed: ${s.message}` }] : [],
  );
  if (unavailable.length > 0) events.send({ event: 'toolsUnavailable', data: { servers: unavailable } });
  const planned = plan(chat);
  // Remote providers keep no cache of ours: their prompts always come as new.
  const promptSource = remote ? 'new' : takeCache(chat.id);
  const reply = state.replies.shift() ?? state.defaultReply;
  const gen = { stop: false };
  state.generating.set(chat.id, gen);

  const user = planned.user && append(chat, planned.user.parentId, { role: 'user', content: planned.user.content, attachments: clone(planned.user.attachments) });
  await delay(5);
  if (user) events.send({ event: 'userSaved', data: { message: decorate(user) } });

  let model = state.model?.name;
  let { text, failWith } = reply;
  // The engine reads a question's images through the local model's projector, and refuses them without one.
  if (!remote && !state.model?.projector && planned.user?.attachments.some((a) => a.kind === 'image')) [text, failWith] = ['', NO_PROJECTOR];
  if (remote) {
    try {
      const started = startRemote(remote);
      model = started.model;
      // A refused key fails the request before any text.
      if (started.refused) [text, failWith] = ['', started.refused];
    } catch (e) {
      // The backend could not start the reply: nothing was saved for it.
      const error = e as IpcError;
      state.generating.delete(chat.id);
      checkErrorKind(cmd, error);
      events.send({ event: 'failed', data: { error, message: null } });
      events.end();
      return null;
    }
  }
  const assistant =
    planned.continued ??
    (planned.branch
      ? append(chat, planned.branch.parentId, { role: 'assistant', content: planned.branch.text, status: 'stopped', model: planned.branch.model })
      : append(chat, user ? user.id : (planned.replyParent ?? null), { role: 'assistant', content: '', status: 'streaming', model: model ?? null }));
  const sampling = getSampling({ kind: 'chat', id: chat.id }).current;
  const send = (event: ChatEvent) => events.send(event);
  const beforeEnd = () => state.generating.delete(chat.id);
  // Tools are offered to the local model only.
  let round = remote ? undefined : 1;
  let calling = await writeReply({
    cmd, chat, assistant, model, reply, text, failWith, sampling, remote, gen, promptSource, planTokens: planned.tokens, send, beforeEnd, round,
  });
  if (calling) await callRounds({ cmd, chat, caller: assistant, scripts: reply.calls ?? [], model, sampling, gen, send, beforeEnd, round: round! });
  events.end();
  return null;
}

/** What the rounds after a reply that called run with (see callRounds). */
type Rounds = {
  cmd: string;
  chat: Chat;
  caller: Message;
  scripts: ScriptedCall[];
  model: string | undefined;
  sampling: SamplingParams;
  gen: { stop: boolean };
  send: (event: ChatEvent) => void;
  beforeEnd: () => void;
  round: number;
  /** A re-run: the arguments each call last ran with, offered when it is asked about (a tool allowed for the session too). */
  rerun?: string[];
};

/**
 * The rounds after `caller` (its `roundFinished` sent), as hearth-app's agent loop goes: its calls run (runCalls), their
 * results are saved after it, and the next reply (the next of `replies`, else `defaultReply`) reads them; until a reply
 * calls none, Stop, or the chat's rounds.
 */
async function callRounds(r: Rounds): Promise<void> {
  const { cmd, chat, model, sampling, gen, send, beforeEnd } = r;
  let [caller, scripts, round, rerun] = [r.caller, r.scripts, r.round, r.rerun];
  for (let calling = true; calling; ) {
    const results = await runCalls(chat.id, caller, scripts, gen, send, rerun);
    rerun = undefined;
    let parent = caller.id;
    const saveResults = () => {
      for (const r of results) {
        const saved = append(chat, parent, { role: 'tool', content: r.content, tool: r.run });
        send({ event: 'userSaved', data: { message: decorate(saved) } });
        parent = saved.id;
      }
    };
    if (gen.stop) {
      // What ran is kept; no reply reads it now. The turn ends with the reply that called.
      saveResults();
      beforeEnd();
      send({ event: 'finished', data: { message: decorate(caller) } });
      break;
    }
    await delay(5);
    saveResults();
    const script = state.replies.shift() ?? state.defaultReply;
    caller = append(chat, parent, { role: 'assistant', content: '', status: 'streaming', model: model ?? null });
    scripts = script.calls ?? [];
    round += 1;
    calling = await writeReply({
      cmd, chat, assistant: caller, model, reply: script, text: script.text, failWith: script.failWith, sampling, remote: null, gen,
      promptSource: 'live', planTokens: [], send, beforeEnd, round,
    });
  }
}

/**
 * rerun_tool_calls, as hearth-app's App::rerun_tool_calls: the calls of reply `messageId` (as its script scripted them)
 * run again, each asked about with the arguments it last ran with on the path shown (else the model's), even a tool
 * allowed for the session; their results are saved after the reply, beside the earlier ones, and the model answers them.
 * Refused in the backend's words: a turn running, a message that is no reply that called, no tool server ready.
 */
async function rerunToolCalls(chatId: number, messageId: number, events: Sink<ChatEvent>) {
  const cmd = 'rerun_tool_calls';
  const chat = findChat(chatId);
  const caller = messageById(messageId);
  if (!caller || caller.chatId !== chatId || caller.toolCalls.length === 0) {
    throw ipcError('invalidInput', `message ${messageId} is not a reply of this chat that called tools`);
  }
  if (state.generating.size > 0) throw ipcError('busy', 'this chat is already generating a reply; wait for it or press Stop');
  const scripts = state.callScripts.get(caller.id);
  if (!scripts?.length) throw ipcError('invalidInput', 'no tool server is ready: switch one on in Settings → Tools');
  await prepareChatModel(chat, events);
  // The results after it on the path shown: the arguments each call last ran with.
  const path = shownPath(chat);
  const at = path.findIndex((m) => m.id === caller.id);
  const after = at < 0 ? [] : path.slice(at + 1);
  const others = after.findIndex((m) => m.role !== 'tool');
  const lastRan = others < 0 ? after : after.slice(0, others);
  const gen = { stop: false };
  state.generating.set(chat.id, gen);
  const send = (event: ChatEvent) => events.send(event);
  await delay(5);
  send({ event: 'roundFinished', data: { message: decorate(caller) } });
  const sampling = getSampling({ kind: 'chat', id: chat.id }).current;
  const rerun = lastRan.flatMap((m) => (m.tool ? [m.tool.arguments] : []));
  const beforeEnd = () => state.generating.delete(chat.id);
  await callRounds({ cmd, chat, caller, scripts, model: state.model?.name, sampling, gen, send, beforeEnd, round: 1, rerun });
  events.end();
  return null;
}

/** The backend's words for a call that did not run (hearth-app's agent.rs). */
const DECLINED = 'The user declined to run this tool.';
const STOPPED_BEFORE = 'The user stopped before this tool ran.';
const STOPPED = 'The user stopped this tool.';

/**
 * The calls of `caller`, in order, as `scripts` say: each asked about (`toolApproval`, then waiting for
 * answer_tool_call, or Stop) unless its tool was allowed for the session; one allowed runs (`toolRunning`, its
 * `progress` over `runMs`, then its `result`) with the arguments the user answered with. Resolves to the results,
 * in order, with their records; Stop ends the calls (a call stopped is recorded so).
 */
async function runCalls(chatId: number, caller: Message, scripts: ScriptedCall[], gen: { stop: boolean }, send: (event: ChatEvent) => void, rerun?: string[]) {
  const results: { content: string; run: ToolRun }[] = [];
  for (const [index, script] of scripts.entries()) {
    if (gen.stop) break;
    const { call, server } = script;
    const record = (end: ToolRunEnd, content: string, args: string, over: Partial<ToolRun> = {}) =>
      results.push({ content, run: { name: call.name, server, arguments: args, end, isError: end !== 'ran', elapsedMs: 0, chars: [...content].length, cut: false, ...over } });
    let args = rerun?.[index] ?? call.arguments;
    const key = `${server}/${call.name}`;
    if (rerun || !state.toolsAllowed.includes(key)) {
      const asked = new Promise<Decision | null>((resolve) => state.toolWaiting.set(chatId, resolve));
      send({
        event: 'toolApproval',
        data: { reply: caller.id, index, server, tool: call.name, description: script.description ?? '', arguments: args, readOnly: script.readOnly ?? false },
      });
      const decision = await asked;
      if (decision === null) {
        record('stopped', STOPPED_BEFORE, args);
        break;
      }
      if (decision.decision === 'deny') {
        record('denied', DECLINED, args);
        continue;
      }
      if (decision.decision === 'alwaysAllow') state.toolsAllowed.push(key);
      args = decision.arguments;
    }
    send({ event: 'toolRunning', data: { reply: caller.id, index } });
    const steps = script.progress ?? [];
    const runMs = script.runMs ?? 60;
    const stepMs = script.stepMs ?? runMs / (steps.length + 1);
    const started = performance.now();
    /** Runs until `ms` after the start, or Stop. */
    const runUntil = async (ms: number) => {
      while (!gen.stop && performance.now() - started < ms) await delay(Math.min(20, ms - (performance.now() - started)));
    };
    for (const [step, progress] of steps.entries()) {
      await runUntil(stepMs * (step + 1));
      if (gen.stop) break;
      send({ event: 'toolProgress', data: { reply: caller.id, index, progress } });
    }
    await runUntil(runMs);
    if (gen.stop) {
      record('stopped', STOPPED, args);
      break;
    }
    const result = script.result ?? { content: '' };
    const elapsedMs = result.elapsedMs ?? Math.round(performance.now() - started);
    record('ran', result.content, args, { isError: result.isError ?? false, elapsedMs, chars: result.chars ?? [...result.content].length, cut: result.cut ?? false });
  }
  return results;
}

/** answer_tool_call: the user's word on the call chat `chatId` waits for; refused when none waits. */
function answerToolCall(chatId: number, decision: Decision) {
  const kinds = ['allow', 'alwaysAllow', 'deny'];
  const argsOk = decision?.decision === 'deny' || typeof (decision as { arguments?: unknown })?.arguments === 'string';
  if (!kinds.includes(decision?.decision) || !argsOk) argsRefused('answer_tool_call', 'decision', [`not a Decision: ${JSON.stringify(decision)}`]);
  const waiting = state.toolWaiting.get(chatId);
  if (!waiting) throw ipcError('notFound', 'this chat is not waiting for an answer about a tool');
  state.toolWaiting.delete(chatId);
  state.toolDecisions.push({ chatId, decision: clone(decision) });
  waiting(decision);
  return null;
}

/**
 * ChatService::compare (compare_replies): the question of reply `messageId` answered once per settings in
 * `variants`, side by side. Refused before anything starts, in the backend's words and order: each variant's
 * shape (Tauri's check), 2 to 4 of them, each validated as set_sampling validates ("settings N: …"), a turn
 * already running, a message that is not a reply of the chat. Then every answer is saved as a new version
 * beside the reply, in column order (so the last is on show), and all are written at once: each as a reply
 * (writeReply) under its own settings, with the next of `replies` (else `defaultReply`), its events tagged with
 * its column and interleaved with the others', each ending with its own finished or failed; one that cannot
 * start (no model, a provider that refuses) fails alone, nothing saved for it. Stop stops them all.
 */
async function compareReplies(chatId: number, messageId: number, variants: SamplingParams[], events: Sink<CompareEvent>) {
  const cmd = 'compare_replies';
  const shape = variants.flatMap((v, i) => checkSamplingShape(v).map((p) => `variants[${i}]: ${p}`));
  if (shape.length > 0) argsRefused(cmd, 'variants', shape);
  const chat = findChat(chatId);
  if (state.generating.size > 0) throw ipcError('busy', 'this chat is already generating a reply; wait for it or press Stop');
  await prepareChatModel(chat, null); // the window readied it before it asked
  const original = messageOf(chat, messageId, 'assistant');
  const remote = chat.model.kind === 'remote' ? chat.model : null;
  const gen = { stop: false };
  state.generating.set(chat.id, gen);
  // Started in column order; the first keeps the chat's cache, the others share its opening.
  const columns = variants.map((sampling, column) => {
    const reply = state.replies.shift() ?? state.defaultReply;
    let model = state.model?.name;
    let { text, failWith } = reply;
    try {
      if (!remote && !state.model) throw ipcError('noModel', 'No model is loaded.');
      if (remote) {
        const started = startRemote(remote);
        model = started.model;
        if (started.refused) [text, failWith] = ['', started.refused];
      }
    } catch (error) {
      return { column, cannotStart: error as IpcError } as const;
    }
    const promptSource = remote ? 'new' : column === 0 ? takeCache(chat.id) : 'new';
    const assistant = append(chat, original.parentId, { role: 'assistant', content: '', status: 'streaming', model: model ?? null });
    return { column, sampling, reply, model, text, failWith, assistant, promptSource, cannotStart: null };
  });
  await delay(5);
  await Promise.all(
    columns.map((c) => {
      const send = (event: ChatEvent) => events.send({ column: c.column, event });
      if (c.cannotStart) {
        checkErrorKind(cmd, c.cannotStart);
        send({ event: 'failed', data: { error: c.cannotStart, message: null } });
        return null;
      }
      const { assistant, model, reply, text, failWith, sampling, promptSource } = c;
      return writeReply({ cmd, chat, assistant, model, reply, text, failWith, sampling, remote, gen, promptSource, planTokens: [], send, beforeEnd: () => {} });
    }),
  );
  state.generating.delete(chat.id);
  events.end();
  return null;
}

export const turnCommands = {
  sendMessage: (chatId, content, attachments, events) => {
    checkAttachments(attachments);
    const asked = { content, attachments };
    return runTurn('send_message', chatId, events, (chat) => ({ user: { parentId: chat.leafId, ...asked } }), asked);
  },
  // A new version keeps the files of the message it replaces.
  editMessage: (chatId, messageId, content, events) => {
    const asked = { content, attachments: messageById(messageId)?.attachments ?? [] };
    return runTurn('edit_message', chatId, events, (chat) => ({ user: { parentId: messageOf(chat, messageId, 'user').parentId, ...asked } }), asked);
  },
  regenerateReply: (chatId, messageId, events) =>
    runTurn('regenerate_reply', chatId, events, (chat) => ({ replyParent: messageOf(chat, messageId, 'assistant').parentId })),
  continueReply: (chatId, messageId, events) => runTurn('continue_reply', chatId, events, (chat) => continuePlan(chat, messageId)),
  branchReply: (chatId, messageId, at, token, events) =>
    runTurn('branch_reply', chatId, events, (chat) => branchPlan(chat, messageId, at, token)),
  compareReplies,
  rerunToolCalls,
  answerToolCall,
  stopGeneration: (chatId) => {
    const gen = state.generating.get(chatId);
    if (gen) gen.stop = true;
    // A call waiting for the user's word ends too.
    const waiting = state.toolWaiting.get(chatId);
    state.toolWaiting.delete(chatId);
    waiting?.(null);
    return null;
  },
} satisfies Partial<Handlers>;
