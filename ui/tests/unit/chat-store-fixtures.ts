// Shared by the ChatStore's tests (chat-store*.test.ts): a backend whose turn commands the test drives step
// by step, chats and messages, the events a turn streams, and a store set up over them.
import { vi } from 'vitest';
import type { Attachment, CallProgress, ChatEvent, ChatSummary, Decision, ModelInfo, ModelTarget, PendingCall, StoredMessage, TokenProbs } from '../../src/ipc/bindings';
import type { HearthApi } from '../../src/ipc/client';
import { ChatStore } from '../../src/lib/chat.svelte';
import { fakeApi, manualFrames, virtualTimers } from './helpers';
import { model } from './settings-fixtures';

export const MODEL: ModelInfo = model();

export function chat(id: number, title: string, updatedAt: number, model: ModelTarget = { kind: 'local', model: null }): ChatSummary {
  return { id, title, updatedAt, pinned: false, systemPrompt: '', model, modelName: null };
}

export function msg(over: Partial<StoredMessage> & Pick<StoredMessage, 'id' | 'chatId' | 'role'>): StoredMessage {
  return { content: '', status: 'complete', createdAt: 0, model: null, stats: null, parentId: null, siblings: [over.id], tool: null, toolCalls: [], attachments: [], passages: [], ...over };
}

export type TurnKind = 'send' | 'edit' | 'regenerate' | 'continue' | 'branch' | 'rerun';
/** A turn command in flight: the test emits its events and settles it. */
export type PendingTurn = {
  kind: TurnKind;
  chatId: number;
  /** The command's arguments between chatId and the channel (content, messageId…). */
  args: unknown[];
  emit: (e: ChatEvent) => void;
  resolve: () => void;
  reject: (e: unknown) => void;
};

/** An in-memory backend whose turn commands are driven step by step by the test. */
export function fakeBackend(opts: { chats?: ChatSummary[]; messages?: Record<number, StoredMessage[]>; model?: ModelInfo | null } = {}) {
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
    rerunToolCalls: turn('rerun'),
    tokenProbs: vi.fn(async (_messageId: number) => [] as TokenProbs[]),
    stopGeneration: vi.fn(async () => null),
    answerToolCall: vi.fn(async (_chatId: number, _decision: Decision) => null),
    prefillDraft: vi.fn(async (_chatId: number, _draft: string, _files: Attachment[], _stillTyping: boolean) => null),
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

export const settle = () => new Promise((r) => setTimeout(r, 0));

export const ev = {
  modelLoading: (fraction: number, path = MODEL.path, name = MODEL.name): ChatEvent => ({ event: 'modelLoading', data: { path, name, fraction } }),
  userSaved: (m: StoredMessage): ChatEvent => ({ event: 'userSaved', data: { message: m } }),
  replyStarted: (messageId: number, model = MODEL.name, text = ''): ChatEvent => ({ event: 'replyStarted', data: { messageId, model, text } }),
  delta: (text: string): ChatEvent => ({ event: 'delta', data: { text } }),
  searching: (tokens: number): ChatEvent => ({ event: 'searching', data: { tokens } }),
  finished: (m: StoredMessage): ChatEvent => ({ event: 'finished', data: { message: m } }),
  failed: (message: string, m: StoredMessage | null = null): ChatEvent => ({
    event: 'failed',
    data: { error: { kind: 'engine', message }, message: m },
  }),
  roundFinished: (m: StoredMessage): ChatEvent => ({ event: 'roundFinished', data: { message: m } }),
  toolApproval: (call: PendingCall): ChatEvent => ({ event: 'toolApproval', data: call }),
  toolRunning: (reply: number, index: number): ChatEvent => ({ event: 'toolRunning', data: { reply, index } }),
  toolProgress: (reply: number, index: number, progress: CallProgress): ChatEvent => ({ event: 'toolProgress', data: { reply, index, progress } }),
  roundLimit: (m: StoredMessage): ChatEvent => ({ event: 'roundLimit', data: { message: m } }),
};

export async function setup(opts: Parameters<typeof fakeBackend>[0] = {}) {
  const backend = fakeBackend(opts);
  const clock = manualFrames();
  const timers = virtualTimers();
  const store = new ChatStore(backend.api, clock.frames, timers.timers);
  await store.init();
  return { backend, clock, store, timers };
}

/** Chat 1's path: user 1, reply 2, user 3, reply 4 (`over` changes reply 4). */
export function treeSetup(over: Partial<StoredMessage> = {}) {
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

export const ids = (store: ChatStore) => store.messages.map((m) => m.id);
