// The token inspector (`token_probs`): each local reply's tokens with made-up distributions, derived from its
// text (word-sized pieces; `topProbs` likeliest tokens each, the written one among them, p summing to at most 1;
// the end of the turn last when the model ended the reply), kept as the engine keeps them: for replies the local
// model wrote by sampling while the chat's `topProbs` was above 0 (none for consensus or beam replies, nor for the
// mock's providers' replies: it plays no llama.cpp server, whose replies the backend keeps them for too).
// Saved replies (fixtures) of the loaded model have them derived from their text too, unless `tokenProbs`
// ({ [messageId]: TokenProbs[] }) says otherwise ([] for a reply written before the inspector existed).
import type { TokenProbs } from '../../../src/ipc/bindings';
import { DEFAULT_SAMPLING } from './contract';
import { messageById } from './history';
import type { Handlers } from './ipc';
import { state, type Message } from './state';
import { clone } from './util';

const ALTERNATIVE_WORDS = ['the', 'a', 'this', 'and', 'so', 'it', 'then', 'all', 'one', 'just'];
export const round3 = (x: number) => Math.round(x * 1000) / 1000;
const bits = (ps: number[]) => round3(-ps.filter((q) => q > 0).reduce((sum, q) => sum + q * Math.log2(q), 0));

/**
 * `text` as the engine's tokens (word-sized pieces, line breaks apart), each with `topN` likeliest tokens: the
 * written one first (p 0.42–0.96), then made-up words after the same whitespace, each half the share of the
 * one before (so p sums to at most 1); `ended`: the end of the turn follows. `from` offsets the positions
 * (tokens appended to earlier ones).
 */
export function madeUpTokens(text: string, topN: number, ended: boolean, from = 0): TokenProbs[] {
  const pieces = text.match(/\n|[^\S\n]*\S+|[^\S\n]+/g) ?? [];
  const tokens = pieces.map((piece, n) => {
    const i = from + n;
    const id = 1000 + i * 16;
    const p = round3(0.42 + ((i * 37) % 55) / 100);
    const lead = /^\s*/.exec(piece)![0];
    const words = ALTERNATIVE_WORDS.filter((w) => w !== piece.trim());
    const alternatives = Array.from({ length: Math.max(0, topN - 1) }, (_, k) => ({
      id: id + k + 1, text: `${lead}${words[(i + k) % words.length]}`, p: round3((1 - p) / 2 ** (k + 1)),
    }));
    const top = topN > 0 ? [{ id, text: piece, p }, ...alternatives] : [];
    const rest = 1 - p - alternatives.reduce((sum, a) => sum + a.p, 0);
    return { id, text: piece, p, entropy: bits([p, ...alternatives.map((a) => a.p), rest]), top };
  });
  if (ended) {
    const top = [{ id: 2, text: '', p: 0.93 }, { id: 198, text: '\n', p: 0.05 }, { id: 13, text: '.', p: 0.01 }].slice(0, topN);
    tokens.push({ id: 2, text: '', p: 0.93, entropy: bits([0.93, 0.05, 0.01, 0.01]), top });
  }
  return tokens;
}

/**
 * What token_probs answers for reply `m`: what the engine kept for it, or, for a saved reply (fixture) of the
 * loaded model, tokens made up from its text (`topProbs` at its default); nothing for anything else.
 */
export function tokenProbsOf(m: Message): TokenProbs[] {
  const kept = state.tokenProbs.get(m.id);
  if (kept) return kept;
  if (m.role !== 'assistant' || !state.model || m.model !== state.model.name || m.stats?.consensus || m.stats?.beams) return [];
  return madeUpTokens(m.content, DEFAULT_SAMPLING.topProbs, m.status === 'complete' && !m.stats?.cutAtLimit);
}

export const inspectorCommands = {
  tokenProbs: (messageId) => {
    const m = messageById(messageId);
    return m ? clone(tokenProbsOf(m)) : [];
  },
} satisfies Partial<Handlers>;
