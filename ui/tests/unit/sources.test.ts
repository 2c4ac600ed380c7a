// A reply's sources (lib/sources.ts): the passages its question was given, and how they are named.
import { describe, expect, it } from 'vitest';
import type { Passage, StoredMessage } from '../../src/ipc/bindings';
import { passageLabel, readTokensByQuestion, sourcesByReply, sourcesSummary } from '../../src/lib/sources';
import { table } from './helpers';

const passage = (name: string, ordinal: number, hash = `hash-of-${name}`): Passage => ({ hash, name, ordinal, text: `${name} #${ordinal}` });
const HANDBOOK = [passage('handbook.md', 11), passage('handbook.md', 0)];

type Line = Pick<StoredMessage, 'id' | 'role' | 'parentId' | 'passages'>;
const line = (id: number, role: Line['role'], parentId: number | null, passages: Passage[] = []): Line => ({ id, role, parentId, passages });

/** A path: a question given passages and its reply, a tool round, a follow-up read whole and its reply. */
const PATH = [
  line(1, 'user', null, HANDBOOK),
  line(2, 'assistant', 1),
  line(3, 'tool', 2),
  line(4, 'assistant', 3),
  line(5, 'user', 4),
  line(6, 'assistant', 5),
];

table('sourcesByReply: the passages of the reply’s question', (id: number) => sourcesByReply(PATH).get(id) ?? [], [
  [2, HANDBOOK],
  [1, []], // a question is no reply
  [4, []], // its parent is a tool's result
  [6, []], // a question read whole
]);

describe('sourcesByReply', () => {
  it('hands back the question’s own array and leaves out replies without sources, so a list recomputing it changes nothing', () => {
    const sources = sourcesByReply(PATH);
    expect(sources.get(2)).toBe(PATH[0].passages);
    expect([...sources.keys()]).toEqual([2]);
  });

  it('none when the question is not among the messages held', () => {
    expect(sourcesByReply([...PATH, line(9, 'assistant', 8)]).has(9)).toBe(false);
  });
});

describe('readTokensByQuestion: each question’s tokens, as its reply counted them', () => {
  type Counted = Pick<StoredMessage, 'id' | 'role' | 'parentId' | 'stats'>;
  const stats = (questionTokens?: number, documentTokens?: number[]) => ({ promptTokens: 900, cachedTokens: 0, completionTokens: 4, ttftMs: 1, decodeTps: 1, droppedMessages: 0, cutAtLimit: false, promptSource: 'new' as const, draftedTokens: 0, acceptedTokens: 0, questionTokens, documentTokens });
  const counted = (id: number, role: Counted['role'], parentId: number | null, tokens?: number, documents?: number[]): Counted => ({ id, role, parentId, stats: role === 'assistant' ? stats(tokens, documents) : null });
  const path = [
    counted(1, 'user', null),
    counted(2, 'assistant', 1, 2345, [2300]), // the question, with its document whole
    counted(3, 'tool', 2),
    counted(4, 'assistant', 3), // a round of results: no question
    counted(5, 'user', 4),
    counted(6, 'assistant', 5), // remote: not counted
    counted(7, 'user', 6),
    counted(8, 'assistant', 7, 12),
    counted(9, 'assistant', 7, 14), // another reply held for the same question: the first counted wins
  ];

  it('maps each counted question to its tokens and leaves the others out', () => {
    expect([...readTokensByQuestion(path)]).toEqual([
      [1, { tokens: 2345, documents: [2300] }],
      [7, { tokens: 12, documents: null }],
    ]);
  });
});

table('sourcesSummary: how many, from which document', sourcesSummary, [
  [[passage('handbook.md', 3)], '1 passage from handbook.md'],
  [HANDBOOK, '2 passages from handbook.md'],
  [[...HANDBOOK, passage('faq.txt', 2)], '3 passages from 2 documents'],
  // Two files of the same name are two documents.
  [[passage('notes.md', 0, 'a'), passage('notes.md', 0, 'b')], '2 passages from 2 documents'],
]);

table('passageLabel: the document and the passage, numbered from 1', passageLabel, [
  [passage('handbook.md', 11), 'handbook.md · passage 12'],
  [passage('faq.txt', 0), 'faq.txt · passage 1'],
]);
