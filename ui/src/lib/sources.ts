// A reply's sources: the passages its question was given in place of documents too long for the
// model's context (the backend retrieves them and saves them with the question).
import type { Passage, StoredMessage } from '../ipc/bindings';

const NONE: readonly Passage[] = [];

/**
 * The passages `reply` read: those of its question (its parent, a user message among `messages`);
 * none when the documents went whole or there were none. Always the question's own array (or one
 * shared empty one), so a list that recomputes it hands a message nothing new.
 */
export function sourcesOf(
  reply: Pick<StoredMessage, 'role' | 'parentId'>,
  messages: readonly Pick<StoredMessage, 'id' | 'role' | 'passages'>[],
): readonly Passage[] {
  if (reply.role !== 'assistant' || reply.parentId === null) return NONE;
  const question = messages.find((m) => m.id === reply.parentId);
  return question?.role === 'user' ? question.passages : NONE;
}

/** The sources' summary: "5 passages from handbook.md", or "from 2 documents" (told apart by hash: two files may share a name). */
export function sourcesSummary(passages: readonly Pick<Passage, 'hash' | 'name'>[]): string {
  const count = `${passages.length} ${passages.length === 1 ? 'passage' : 'passages'}`;
  const documents = new Set(passages.map((p) => p.hash)).size;
  return documents === 1 ? `${count} from ${passages[0].name}` : `${count} from ${documents} documents`;
}

/** A passage as the sources list names it: "handbook.md · passage 12" (numbered from 1). */
export function passageLabel(passage: Pick<Passage, 'name' | 'ordinal'>): string {
  return `${passage.name} · passage ${passage.ordinal + 1}`;
}
