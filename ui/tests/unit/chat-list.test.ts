import type { ChatSummary } from '../../src/ipc/bindings';
import { chatAfterRemoval, groupChats, replaceChat, sortChats, titleProblem } from '../../src/lib/chat-list';
import { table } from './helpers';

/** A chat from a compact spec: id, updatedAt, pinned. */
const chat = ([id, updatedAt, pinned = false]: [number, number, boolean?]): ChatSummary => ({
  id,
  title: `Chat ${id}`,
  updatedAt,
  pinned,
  systemPrompt: '',
  model: { kind: 'local', model: null },
  modelName: null,
});
const ids = (chats: ChatSummary[]) => chats.map((c) => c.id);

const LIST = sortChats([chat([1, 10]), chat([2, 30]), chat([3, 20, true]), chat([4, 5, true])]);

table('sortChats: pinned first, then newest, then highest id', (specs: [number, number, boolean?][]) => ids(sortChats(specs.map(chat))), [
  [[[1, 10], [2, 30], [3, 20]], [2, 3, 1]],
  [[[1, 10], [2, 30], [3, 20, true]], [3, 2, 1]],
  [[[1, 10, true], [2, 30], [3, 20, true]], [3, 1, 2]],
  [[[1, 10], [2, 10]], [2, 1]],
  [[], []],
]);

table('replaceChat: in place, re-sorted; unknown chats ignored', (c: ChatSummary) => ids(replaceChat(LIST, c)), [
  [chat([1, 99]), [3, 4, 1, 2]],
  [chat([2, 30, true]), [2, 3, 4, 1]],
  [chat([3, 20, false]), [4, 2, 3, 1]],
  [chat([77, 99]), [3, 4, 2, 1]],
]);

table('chatAfterRemoval: the one below, else above, else none', (id: number) => chatAfterRemoval(LIST, id)?.id ?? null, [
  [3, 4],
  [2, 1],
  [1, 2],
  [77, null],
]);

table('chatAfterRemoval of the only chat', (id: number) => chatAfterRemoval([chat([id, 1])], id), [[5, null]]);

table('groupChats: "Pinned" above the rest, empty groups left out', (specs: [number, number, boolean?][]) =>
  groupChats(sortChats(specs.map(chat))).map((g) => [g.label, ids(g.chats)]), [
  [[[1, 10], [2, 20]], [['Chats', [2, 1]]]],
  [[[1, 10, true], [2, 20]], [['Pinned', [1]], ['Chats', [2]]]],
  [[[1, 10, true]], [['Pinned', [1]]]],
  [[], []],
]);

table('titleProblem', titleProblem, [
  ['Trip plans', null],
  ['  x ', null],
  ['', 'A chat needs a title.'],
  ['   \n', 'A chat needs a title.'],
]);
