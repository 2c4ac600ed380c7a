import type { Attachment, StoredMessage } from '../ipc/bindings';
import type { HearthApi, OnChatEvent } from '../ipc/client';

/** What one streamed turn does; each kind is one backend command. */
export type TurnRequest =
  | { kind: 'send'; content: string; attachments: Attachment[] }
  | { kind: 'edit'; messageId: number; content: string }
  | { kind: 'regenerate'; messageId: number }
  | { kind: 'continue'; messageId: number }
  /**
   * A new version of reply `messageId` that keeps its first `at` tokens, takes alternative `token` there and
   * writes on (its opening, as the backend wrote it, comes with `replyStarted`).
   */
  | { kind: 'branch'; messageId: number; at: number; token: number }
  /**
   * The tool calls of reply `messageId` run again, each asked about with its arguments to edit: the results are a
   * new version after the reply, which the model answers.
   */
  | { kind: 'rerun'; messageId: number };

/** The id of the reply shown before the backend named it (`replyStarted`). */
export const PENDING_REPLY_ID = -1;
/** The id of an edited (or sent) user message shown before the backend saved it (`userSaved`). */
export const PENDING_USER_ID = -2;

/**
 * How long to wait for the terminal channel event after a turn command resolved. Tauri delivers
 * channel messages and the command response separately, so the response may win the race.
 */
export const TERMINAL_EVENT_GRACE_MS = 2000;

export function startTurn(api: HearthApi, chatId: number, turn: TurnRequest, onEvent: OnChatEvent): Promise<null> {
  switch (turn.kind) {
    case 'send':
      return api.sendMessage(chatId, turn.content, turn.attachments, onEvent);
    case 'edit':
      return api.editMessage(chatId, turn.messageId, turn.content, onEvent);
    case 'regenerate':
      return api.regenerateReply(chatId, turn.messageId, onEvent);
    case 'continue':
      return api.continueReply(chatId, turn.messageId, onEvent);
    case 'branch':
      return api.branchReply(chatId, turn.messageId, turn.at, turn.token, onEvent);
    case 'rerun':
      return api.rerunToolCalls(chatId, turn.messageId, onEvent);
  }
}

/** Edits, regenerations, branches and re-run calls add a sibling, so the path is read again when they end. */
export function addsSibling(turn: TurnRequest): boolean {
  return turn.kind === 'edit' || turn.kind === 'rerun' || newReplyVersion(turn);
}

/** A new version of a reply beside it (regenerated, or branched from one of its tokens). */
export function newReplyVersion(turn: TurnRequest): turn is Extract<TurnRequest, { kind: 'regenerate' | 'branch' }> {
  return turn.kind === 'regenerate' || turn.kind === 'branch';
}

/**
 * The path to show while `turn` starts: an edit, a regeneration or a branch replaces the message it acts
 * on and everything after it (an edit by the new text, as the newest of its versions; a new version of
 * a reply appears with `replyStarted`); calls run again keep their reply, and what came after it goes
 * (their new results and the answer to them follow).
 */
export function pathDuringTurn(path: StoredMessage[], turn: TurnRequest): StoredMessage[] {
  if (turn.kind !== 'edit' && turn.kind !== 'rerun' && !newReplyVersion(turn)) return path;
  const index = path.findIndex((m) => m.id === turn.messageId);
  if (index < 0) return path;
  if (turn.kind === 'rerun') return path.slice(0, index + 1);
  const kept = path.slice(0, index);
  if (turn.kind === 'edit') {
    const original = path[index];
    kept.push({
      ...original,
      id: PENDING_USER_ID,
      content: turn.content,
      createdAt: Date.now(),
      siblings: [...original.siblings, PENDING_USER_ID],
    });
  }
  return kept;
}

/** The message `id` of `path`, looked for from the end (where a turn's messages are). */
export function findMessage(path: readonly StoredMessage[], id: number): StoredMessage | undefined {
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i].id === id) return path[i];
  }
  return undefined;
}

/** The path with a sent message on show before the backend saved it: while the chat's model loads first. */
export function withPendingSend(path: StoredMessage[], chatId: number, content: string, attachments: Attachment[]): StoredMessage[] {
  const parentId = path.at(-1)?.id ?? null;
  const pending: StoredMessage = {
    id: PENDING_USER_ID,
    chatId,
    role: 'user',
    content,
    status: 'complete',
    createdAt: Date.now(),
    model: null,
    stats: null,
    parentId,
    siblings: [PENDING_USER_ID],
    tool: null,
    toolCalls: [],
    attachments,
    passages: [],
  };
  return [...path, pending];
}

/** Whether "Continue" can write on from `message`: a reply that ended before the model ended it. */
export function canContinue(message: Pick<StoredMessage, 'role' | 'status' | 'stats'>): boolean {
  if (message.role !== 'assistant') return false;
  const unfinished = message.status === 'stopped' || message.status === 'interrupted' || message.status === 'failed';
  return unfinished || (message.status === 'complete' && message.stats?.cutAtLimit === true);
}

/** Where `message` stands among its versions, for "‹ 2/3 ›": 1-based, and the neighbours' ids. */
export function branchPosition(message: Pick<StoredMessage, 'id' | 'siblings'>): {
  index: number;
  count: number;
  previous: number | null;
  next: number | null;
} {
  const { siblings } = message;
  const at = siblings.indexOf(message.id);
  return {
    index: at + 1,
    count: siblings.length,
    previous: at > 0 ? siblings[at - 1] : null,
    next: at >= 0 && at < siblings.length - 1 ? siblings[at + 1] : null,
  };
}
