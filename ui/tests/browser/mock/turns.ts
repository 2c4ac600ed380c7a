// Turns: send, edit, regenerate, continue and branch share one streaming path (runTurn); compare_replies answers a
// reply's question once per settings, side by side; stop_generation stops what runs. A reply comes from `replies`
// (FIFO), then `defaultReply` (see reply.ts for how it is written). Remote chats' replies fail as their provider
// does (no key, a refused key "sk-wrong"; rate limits and network errors through a reply's `failWith`).
import type { ChatEvent, CompareEvent, IpcError, SamplingParams, TokenProbs } from '../../../src/ipc/bindings';
import { takeCache } from './caches';
import { append, decorate, findChat, messageOf } from './history';
import { tokenProbsOf } from './inspector';
import { argsRefused, checkErrorKind, type Handlers, type Sink } from './ipc';
import { prepareChatModel } from './loading';
import { startRemote } from './providers';
import { writeReply } from './reply';
import { checkSamplingShape, getSampling } from './sampling';
import { state, type Chat, type Message } from './state';
import { clone, delay, ipcError } from './util';

/** What a turn saves before its reply: a user message, or where the reply goes (beside a reply, in one, or a branch of one). */
type Plan = {
  user?: { parentId: number | null; content: string };
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

/** ChatService's Turn::Branch (branch_at), refusals word for word. */
const branchPlan = (chat: Chat, messageId: number, at: number, token: number): Plan => {
  const original = messageOf(chat, messageId, 'assistant');
  const tokens = tokenProbsOf(original);
  const position = tokens[at];
  if (!position) throw ipcError('invalidInput', 'this reply has no token probabilities kept at that position');
  const alternative = position.top.find((t) => t.id === token);
  if (!alternative) throw ipcError('invalidInput', 'that token was not among the alternatives at this position');
  const kept = tokens.slice(0, at).map((t) => t.text).join('');
  if (!original.content.startsWith(kept)) throw ipcError('invalidInput', "the reply's text no longer matches its tokens");
  const chosen = { ...clone(position), id: alternative.id, text: alternative.text, p: alternative.p };
  return { branch: { parentId: original.parentId, text: kept + alternative.text, model: original.model }, tokens: [...clone(tokens.slice(0, at)), chosen] };
};

/**
 * A turn of chat `chatId`: refused while another runs, its chat's model readied first, then `plan` says what is
 * saved; the reply is written (writeReply) and its events go to `events`. `content`: the message typed, refused
 * when empty.
 */
async function runTurn(cmd: string, chatId: number, events: Sink<ChatEvent>, plan: (chat: Chat) => Plan, content?: string) {
  const chat = findChat(chatId);
  if (content !== undefined && content.trim() === '') throw ipcError('invalidInput', 'the message is empty');
  const remote = chat.model.kind === 'remote' ? chat.model : null;
  if (state.generating.size > 0) throw ipcError('busy', 'A reply is already being generated.');
  await prepareChatModel(chat, events);
  if (!remote && !state.model) throw ipcError('noModel', 'No model is loaded.');
  const planned = plan(chat);
  // Remote providers keep no cache of ours: their prompts always come as new.
  const promptSource = remote ? 'new' : takeCache(chat.id);
  const reply = state.replies.shift() ?? state.defaultReply;
  const gen = { stop: false };
  state.generating.set(chat.id, gen);

  const user = planned.user && append(chat, planned.user.parentId, { role: 'user', content: planned.user.content });
  await delay(5);
  if (user) events.send({ event: 'userSaved', data: { message: decorate(user) } });

  let model = state.model?.name;
  let { text, failWith } = reply;
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
  await writeReply({
    cmd, chat, assistant, model, reply, text, failWith, sampling, remote, gen, promptSource, planTokens: planned.tokens,
    send: (event) => events.send(event),
    beforeEnd: () => state.generating.delete(chat.id),
  });
  events.end();
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
  sendMessage: (chatId, content, events) =>
    runTurn('send_message', chatId, events, (chat) => ({ user: { parentId: chat.leafId, content } }), content),
  editMessage: (chatId, messageId, content, events) =>
    runTurn('edit_message', chatId, events, (chat) => ({ user: { parentId: messageOf(chat, messageId, 'user').parentId, content } }), content),
  regenerateReply: (chatId, messageId, events) =>
    runTurn('regenerate_reply', chatId, events, (chat) => ({ replyParent: messageOf(chat, messageId, 'assistant').parentId })),
  continueReply: (chatId, messageId, events) => runTurn('continue_reply', chatId, events, (chat) => continuePlan(chat, messageId)),
  branchReply: (chatId, messageId, at, token, events) =>
    runTurn('branch_reply', chatId, events, (chat) => branchPlan(chat, messageId, at, token)),
  compareReplies,
  stopGeneration: (chatId) => {
    const gen = state.generating.get(chatId);
    if (gen) gen.stop = true;
    return null;
  },
} satisfies Partial<Handlers>;
