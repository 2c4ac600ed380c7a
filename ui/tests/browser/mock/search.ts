// Message search, as hearth-store has it: case-insensitive substrings of the query's words, all of them, in
// every chat, newest first; each hit with a snippet of its text as parts, the matches marked.
import type { SearchHit, SnippetPart } from '../../../src/ipc/bindings';
import { findChat } from './history';
import type { Handlers } from './ipc';
import { state } from './state';

const SNIPPET_BEFORE = 40;
const SNIPPET_AFTER = 120;
const MAX_HITS = 50;

function snippet(text: string, words: string[]): SnippetPart[] {
  const lower = text.toLowerCase();
  const first = Math.min(...words.map((w) => lower.indexOf(w)));
  const start = Math.max(0, first - SNIPPET_BEFORE);
  const end = Math.min(text.length, first + SNIPPET_AFTER);
  const hit = new Array<boolean>(end - start).fill(false);
  for (const w of words) {
    for (let at = lower.indexOf(w, start); at >= 0 && at < end; at = lower.indexOf(w, at + 1)) {
      for (let i = at; i < Math.min(at + w.length, end); i++) hit[i - start] = true;
    }
  }
  const parts: SnippetPart[] = [];
  for (let i = 0; i < hit.length; i++) {
    const ch = text[start + i];
    const last = parts.at(-1);
    if (last && last.hit === hit[i]) last.text += ch;
    else parts.push({ text: ch, hit: hit[i] });
  }
  if (start > 0) parts.unshift({ text: '…', hit: false });
  if (end < text.length) parts.push({ text: '…', hit: false });
  return parts;
}

function searchMessages(query: string) {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const hits: SearchHit[] = [];
  if (words.length === 0) return hits;
  for (const m of [...state.messages].reverse()) {
    if (hits.length === MAX_HITS) break;
    const lower = m.content.toLowerCase();
    if (m.status === 'streaming' || !words.every((w) => lower.includes(w))) continue;
    const chat = findChat(m.chatId);
    hits.push({ chatId: m.chatId, chatTitle: chat.title, messageId: m.id, role: m.role, snippet: snippet(m.content, words), createdAt: m.createdAt });
  }
  return hits;
}

export const searchCommands = { searchMessages } satisfies Partial<Handlers>;
