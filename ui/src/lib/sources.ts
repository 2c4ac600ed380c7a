// A reply's sources: the passages its question was given in place of documents too long for the
// model's context (the backend retrieves them and saves them with the question).
import type { Passage, StoredMessage } from '../ipc/bindings';

/**
 * The passages each reply read, by its id: those of its question (its parent, a user message);
 * replies whose documents went whole, or had none, are left out. One pass over `messages`, so a
 * list recomputes it once per change, not once per row. Each entry is the question's own array.
 */
export function sourcesByReply(
  messages: readonly Pick<StoredMessage, 'id' | 'role' | 'parentId' | 'passages'>[],
): Map<number, readonly Passage[]> {
  const questions = new Map<number, readonly Passage[]>();
  for (const m of messages) if (m.role === 'user' && m.passages.length > 0) questions.set(m.id, m.passages);
  const sources = new Map<number, readonly Passage[]>();
  for (const m of messages) {
    const passages = m.role === 'assistant' && m.parentId !== null ? questions.get(m.parentId) : undefined;
    if (passages) sources.set(m.id, passages);
  }
  return sources;
}

/** How a question was read: in all (its words with its documents or passages, and its images), and each of its documents read whole, in the order it carries them (null when none were). */
export type QuestionRead = { tokens: number; documents: number[] | null };

/**
 * How many tokens each question was read as, by the question's id: counted by the local model that answered it
 * (its reply's stats). A question whose reply was not counted (remote, or not written yet) is left out; of two
 * replies held, the first counted wins.
 */
export function readTokensByQuestion(
  messages: readonly Pick<StoredMessage, 'role' | 'parentId' | 'stats'>[],
): Map<number, QuestionRead> {
  const read = new Map<number, QuestionRead>();
  for (const m of messages) {
    const tokens = m.stats?.questionTokens;
    if (m.role === 'assistant' && m.parentId !== null && tokens !== undefined && !read.has(m.parentId)) {
      read.set(m.parentId, { tokens, documents: m.stats?.documentTokens ?? null });
    }
  }
  return read;
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
