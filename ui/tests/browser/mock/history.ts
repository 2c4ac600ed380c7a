// Chats whose history is a tree, as hearth-store keeps it: parent links and a current leaf per chat. Edits and
// regenerations add versions beside a message, switch_branch shows another, delete_message removes a subtree;
// chats are renamed, pinned, given a system prompt, deleted, and changed in the background (`watch_chats`,
// `__hearthMock.updateChat`).
import type { ChatSummary, Role, StoredMessage } from '../../../src/ipc/bindings';
import { forgetCache } from './caches';
import type { Handlers, Sink } from './ipc';
import { state, type Chat, type Message } from './state';
import { clone, ipcError, now } from './util';

/** Message by id (kept in step with state.messages). */
const byId = new Map<number, Message>();

/** Windows told of chats changed in the background. */
const watchers: Sink<ChatSummary>[] = [];

/** The fixtures as the store has them: without parent links a chat is linear; without `leafId` it shows its last message. */
export function initHistory() {
  const last = new Map<number, number>();
  // As the test gave them (MockConfig): the fields the store derives may be missing.
  for (const m of state.messages) {
    const given = m as Partial<StoredMessage>;
    if (!('parentId' in given)) m.parentId = last.get(m.chatId) ?? null;
    delete given.siblings; // derived on the way out
    m.tool ??= null;
    m.toolCalls ??= [];
    m.attachments ??= [];
    m.passages ??= [];
    last.set(m.chatId, m.id);
    byId.set(m.id, m);
  }
  for (const c of state.chats) {
    const given = c as Partial<Chat>;
    c.pinned ??= false;
    c.systemPrompt ??= '';
    c.model ??= { kind: 'local', model: null };
    if (!('leafId' in given)) c.leafId = last.get(c.id) ?? null;
  }
  state.nextId = Math.max(state.nextId, ...state.messages.map((m) => m.id + 1), ...state.chats.map((c) => c.id + 1));
  state.updateChat = (chatId, patch) => {
    const chat = findChat(chatId);
    Object.assign(chat, patch);
    for (const watcher of watchers) watcher.send(summary(chat));
  };
}

export function findChat(chatId: number): Chat {
  const chat = state.chats.find((c) => c.id === chatId);
  if (!chat) throw ipcError('notFound', `Chat ${chatId} does not exist.`);
  return chat;
}

export const summary = (chat: Chat): ChatSummary =>
  clone({
    id: chat.id,
    title: chat.title,
    updatedAt: chat.updatedAt,
    pinned: chat.pinned,
    systemPrompt: chat.systemPrompt,
    model: chat.model,
    modelName: modelNameOf(chat),
  });

/** What the backend calls the local file `chat` names: its library name (or the loaded model's), else the test's. */
export function modelNameOf(chat: Chat): string | null {
  if (chat.model.kind !== 'local' || chat.model.model === null) return null;
  const path = chat.model.model;
  const named = state.library.find((m) => m.path === path) ?? (state.model?.path === path ? state.model : undefined);
  return named?.name ?? chat.modelName ?? null;
}

/** list_chats' order: pinned first, then the most recently updated. */
const sortedChats = () =>
  [...state.chats].sort((a, b) => Number(b.pinned) - Number(a.pinned) || b.updatedAt - a.updatedAt || b.id - a.id).map(summary);

const childrenOf = (id: number) => state.messages.filter((m) => m.parentId === id);

/** Messages as the backend sends them: with `siblings`, the ids of each one's parent's children, oldest first. */
function withSiblings(messages: Message[]): StoredMessage[] {
  const children = new Map<string, number[]>();
  for (const m of state.messages) {
    const key = `${m.chatId}:${m.parentId}`;
    if (!children.has(key)) children.set(key, []);
    children.get(key)!.push(m.id);
  }
  for (const ids of children.values()) ids.sort((a, b) => a - b);
  return messages.map((m) => ({ ...clone(m), siblings: children.get(`${m.chatId}:${m.parentId}`)! }));
}

export const decorate = (m: Message): StoredMessage => withSiblings([m])[0];

export const messageById = (id: number) => byId.get(id);

/** The chat's first message down to `id`. */
function pathTo(id: number) {
  const path: Message[] = [];
  for (let m = byId.get(id); m; m = m.parentId === null ? undefined : byId.get(m.parentId)) path.push(m);
  return path.reverse();
}

/** The path a chat shows: from its first message to its leaf. */
export const shownPath = (chat: Chat) => (chat.leafId === null ? [] : withSiblings(pathTo(chat.leafId)));

/** Follows the newest child down from `id`. */
function newestLeaf(id: number) {
  for (;;) {
    const kids = childrenOf(id);
    if (kids.length === 0) return id;
    id = Math.max(...kids.map((k) => k.id));
  }
}

/** Message `id` of `chat` (of `role`, when given), or the backend's refusal. */
export function messageOf(chat: Chat, id: number, role?: Role) {
  const m = byId.get(id);
  if (!m || m.chatId !== chat.id) throw ipcError('notFound', `Message ${id} does not exist.`);
  if (role && m.role !== role) throw ipcError('invalidInput', `message ${id} is not a ${role} message of this chat`);
  return m;
}

/** Keeps `m` in the store. */
export function store(m: Message) {
  state.messages.push(m);
  byId.set(m.id, m);
}

/** Adds a message under `parentId` and shows its branch; the first user message titles the chat. */
export function append(chat: Chat, parentId: number | null, fields: Pick<Message, 'role' | 'content'> & Partial<Message>) {
  const m: Message = { id: state.nextId++, chatId: chat.id, parentId, status: 'complete', createdAt: now(), model: null, stats: null, tool: null, toolCalls: [], attachments: [], passages: [], ...fields };
  store(m);
  chat.leafId = m.id;
  chat.updatedAt = now();
  if (!chat.title && m.role === 'user') chat.title = m.content.split('\n')[0].slice(0, 48);
  return m;
}

function switchBranch(chatId: number, messageId: number) {
  const chat = findChat(chatId);
  messageOf(chat, messageId);
  chat.leafId = newestLeaf(messageId);
  return shownPath(chat);
}

/** Deletes the message's subtree; a path through it moves to the newest remaining sibling's branch, else ends at the parent. */
function deleteMessage(chatId: number, messageId: number) {
  const chat = findChat(chatId);
  const message = messageOf(chat, messageId);
  const onPath = chat.leafId !== null && pathTo(chat.leafId).some((m) => m.id === message.id);
  const siblings = decorate(message).siblings;
  const doomed = new Set([message.id]);
  for (let grew = true; grew; ) {
    const before = doomed.size;
    for (const m of state.messages) if (m.parentId !== null && doomed.has(m.parentId)) doomed.add(m.id);
    grew = doomed.size > before;
  }
  state.messages = state.messages.filter((m) => !doomed.has(m.id));
  for (const id of doomed) byId.delete(id);
  if (onPath) {
    const sibling = [...siblings].reverse().find((id) => id !== message.id);
    chat.leafId = sibling === undefined ? message.parentId : newestLeaf(sibling);
  }
  return shownPath(chat);
}

function deleteChat(chatId: number) {
  findChat(chatId);
  const gen = state.generating.get(chatId);
  if (gen) gen.stop = true;
  state.chats = state.chats.filter((c) => c.id !== chatId);
  state.messages = state.messages.filter((m) => m.chatId !== chatId);
  forgetCache(chatId);
  return null;
}

/** rename_chat, pin_chat, set_system_prompt: one field of the chat, answered with its summary. */
function updateChat<K extends 'title' | 'pinned' | 'systemPrompt'>(chatId: number, key: K, value: Chat[K]) {
  const chat = findChat(chatId);
  chat[key] = value;
  return summary(chat);
}

export const historyCommands = {
  listChats: () => sortedChats(),
  createChat: () => {
    const chat: Chat = { id: state.nextId++, title: '', updatedAt: now(), pinned: false, systemPrompt: '', leafId: null, model: { kind: 'local', model: null } };
    state.chats.push(chat);
    return summary(chat);
  },
  listMessages: (chatId) => shownPath(findChat(chatId)),
  switchBranch,
  deleteMessage,
  renameChat: (chatId, title) => updateChat(chatId, 'title', title.trim()),
  pinChat: (chatId, pinned) => updateChat(chatId, 'pinned', pinned),
  setSystemPrompt: (chatId, prompt) => updateChat(chatId, 'systemPrompt', prompt),
  deleteChat,
  watchChats: (onUpdate) => {
    watchers.push(onUpdate);
    return null;
  },
} satisfies Partial<Handlers>;
