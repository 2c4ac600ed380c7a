import type { ChatSummary } from '../ipc/bindings';

/** The backend's order: pinned chats first, then the most recently updated (newest id on a tie). */
export function sortChats(chats: ChatSummary[]): ChatSummary[] {
  return [...chats].sort(
    (a, b) => Number(b.pinned) - Number(a.pinned) || b.updatedAt - a.updatedAt || b.id - a.id,
  );
}

/** `chats` with `chat` replacing the entry of the same id, re-sorted; unknown chats are ignored. */
export function replaceChat(chats: ChatSummary[], chat: ChatSummary): ChatSummary[] {
  if (!chats.some((c) => c.id === chat.id)) return chats;
  return sortChats(chats.map((c) => (c.id === chat.id ? chat : c)));
}

/** The chat to show once `chatId` is deleted: the one below it, else the one above, else none. */
export function chatAfterRemoval(chats: ChatSummary[], chatId: number): ChatSummary | null {
  const index = chats.findIndex((c) => c.id === chatId);
  if (index < 0) return null;
  return chats[index + 1] ?? chats[index - 1] ?? null;
}

export type ChatGroup = { label: string; chats: ChatSummary[] };

/** The sidebar's sections: "Pinned" (when any) above the rest. */
export function groupChats(chats: ChatSummary[]): ChatGroup[] {
  const groups = [
    { label: 'Pinned', chats: chats.filter((c) => c.pinned) },
    { label: 'Chats', chats: chats.filter((c) => !c.pinned) },
  ];
  return groups.filter((g) => g.chats.length > 0);
}

/** Why `title` cannot name a chat; null when it can. */
export function titleProblem(title: string): string | null {
  return title.trim() ? null : 'A chat needs a title.';
}
