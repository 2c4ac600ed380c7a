// Writing a reply, as the engine streams it: `replyStarted` after its ttft, its text in timed deltas (or offered
// at a fixed rate), its stats (where the cached prompt came from, what speculative decoding drafted and kept), the
// token inspector's data, then `finished` or `failed`. Under the chat's settings: while they say consensus, its
// candidates (a reply's `candidates`, else `mbrCandidates` of them made up around its text) are written out of
// sight, then the one with the highest score arrives whole, its stats carrying them all; under beam search
// likewise, the best min(nBest, beamWidth) replies (a reply's own `beams`, else made up around its text, it the
// best). Speculative decoding's `drafts` ({ drafted, accepted }) are reported for a local reply when the chat's
// settings have it on (0 otherwise, and for remote replies).
import type { BeamHypothesis, ChatEvent, Consensus, ModelTarget, PromptSource, SamplingParams, TokenProbs } from '../../../src/ipc/bindings';
import { decorate } from './history';
import { madeUpTokens, round3 } from './inspector';
import { WINDOW_PACE } from './contract';
import { checkErrorKind } from './ipc';
import { state, type Chat, type Message, type Reply } from './state';
import { clone, delay, now } from './util';

function chunks(text: string, size: number) {
  const out: string[] = [];
  const chars = [...text];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/**
 * A reply offered at a fixed rate (the streaming bench, ui/bench/stream.mjs): a reply with
 * `tokensPerSecond` offers its text's `chunkSize` pieces (tokens) on a timer every `tickMs` (default 4),
 * each tick every token due by then at that rate, and hands them to the window as ChatService does at
 * its fixed pace (contract.json's windowPace): the first at once, then what came meanwhile at most every
 * `fastestMs` (the window paints what arrives at its next frame and paces nothing itself). When each
 * token was offered (performance.now()) is kept in `state.offered`: one { tokensPerSecond, sentAt: [] }
 * per such reply.
 */
async function offerAtRate(pieces: string[], reply: Reply, gen: { stop: boolean }, deliver: (text: string, tokens: number) => void) {
  const log = { tokensPerSecond: reply.tokensPerSecond!, sentAt: [] as number[] };
  state.offered.push(log);
  const start = performance.now();
  let sent = 0;
  let pending = '';
  let count = 0;
  let handedAt = -Infinity;
  const handOver = () => {
    if (count === 0) return;
    deliver(pending, count);
    [pending, count, handedAt] = ['', 0, performance.now()];
  };
  while (sent < pieces.length && !gen.stop) {
    await delay(reply.tickMs ?? 4);
    const due = Math.min(pieces.length, Math.floor(((performance.now() - start) / 1000) * reply.tokensPerSecond!) + 1);
    for (; sent < due && !gen.stop; sent++) {
      pending += pieces[sent];
      count += 1;
      log.sentAt.push(performance.now());
    }
    if (performance.now() - handedAt >= WINDOW_PACE.fastestMs) handOver();
  }
  handOver();
}

/**
 * A consensus reply's candidates, as the engine keeps them: the reply's own `candidates` when it has them,
 * else the settings' `mbrCandidates` made up around `text` (it among them, scored highest); the chosen one is the first
 * with the highest score, as Consensus::choose picks it.
 */
function consensusFor(reply: Reply, text: string, sampling: SamplingParams): Consensus {
  const words = text.split(' ');
  const made = Array.from({ length: sampling.mbrCandidates }, (_, i) => {
    if (i === 1) return { text, score: 0.81 };
    const cut = Math.max(1, words.length - 1 - (i % 3));
    return { text: `${words.slice(0, cut).join(' ')}${i % 2 ? '…' : ' — in short.'}`, score: Math.round((0.72 - 0.04 * i) * 100) / 100 };
  });
  const candidates = clone(reply.candidates ?? made);
  const chosen = candidates.reduce((best, c, i) => (c.score > candidates[best].score ? i : best), 0);
  return { utility: sampling.mbrUtility, chosen, candidates };
}

/**
 * A beam search's best replies, best first, as the engine keeps them: the reply's own `beams`, else
 * min(nBest, beamWidth) made up around `text`, each scored logprob ÷ tokens^lengthPenalty (at the default
 * penalty, `text` is the best).
 */
function beamsFor(reply: Reply, text: string, sampling: SamplingParams): BeamHypothesis[] {
  const words = text.split(' ');
  const length = Math.max(1, (text.match(/\S+/g) ?? []).length);
  const made = Array.from({ length: Math.min(sampling.nBest, sampling.beamWidth) }, (_, i) => {
    const cut = Math.max(1, words.length - i);
    const tokens = Math.max(1, length - i + (i % 2) * 2);
    const logprob = round3(-(2.4 + 1.9 * i) * (tokens / length));
    return { text: i === 0 ? text : `${words.slice(0, cut).join(' ')}${i % 2 ? '…' : '.'}`, logprob, tokens };
  });
  const beams = clone((reply.beams ?? made.map((b) => ({ ...b, score: round3(b.logprob / b.tokens ** sampling.lengthPenalty) }))) as BeamHypothesis[]);
  return reply.beams ? beams : beams.sort((a, b) => b.score - a.score);
}

/** A reply to write (see writeReply). */
export type Writing = {
  cmd: string;
  chat: Chat;
  assistant: Message;
  model: string | undefined;
  reply: Reply;
  text: string;
  failWith: Reply['failWith'];
  sampling: SamplingParams;
  remote: Extract<ModelTarget, { kind: 'remote' }> | null;
  gen: { stop: boolean };
  promptSource: PromptSource;
  /** Tokens the reply already has (a continued or branched one's). */
  planTokens: TokenProbs[] | undefined;
  send: (event: ChatEvent) => void;
  beforeEnd: () => void;
  /** Tools are offered (a local turn's): the turn's round this reply is, from 1. Unset: none are (compare, remote). */
  round?: number;
};

/**
 * Writes `reply` (its `text`, or its failure `failWith`) into the saved `assistant` message as the engine does
 * under `sampling` (its strategy, speculative decoding, topProbs): replyStarted after its ttft, its deltas (a
 * consensus or a beam search's whole at the end, `searching` at each step before), its stats, the token inspector's data, then finished or
 * failed through `send`; `beforeEnd` runs just before that last event. Stops where `gen.stop` says. A reply that ends
 * complete is saved with the calls its script gives (`reply.calls`); while tools are offered (`round`) and rounds
 * are left, it ends its round instead (`roundFinished`, nothing after it, `beforeEnd` not run) and this resolves
 * true: the turn goes on with its calls. Past the chat's rounds (`sampling.maxToolRounds`), the reply is saved again
 * with `stats.toolRoundLimit` set to them, and `roundLimit` (that message) comes before `finished`.
 */
export async function writeReply(w: Writing): Promise<boolean> {
  const { cmd, chat, assistant, model, reply, failWith, sampling, remote, gen, promptSource, planTokens, send, beforeEnd } = w;
  let { text } = w;
  const opening = assistant.content;
  assistant.status = 'streaming';
  assistant.model = model ?? null;

  await delay(reply.ttftMs ?? 40);
  send({ event: 'replyStarted', data: { messageId: assistant.id, model: model!, text: opening } });
  const started = performance.now();
  let tokens = 0;
  // Consensus runs on the local engine only: its candidates are written out of sight, then the chosen one arrives whole.
  const consensus = !remote && !failWith && sampling.strategy === 'consensus' ? consensusFor(reply, text, sampling) : null;
  if (consensus) text = consensus.candidates[consensus.chosen].text;
  // So does beam search: the search runs out of sight, then its best reply arrives whole.
  const beams = !remote && !failWith && sampling.strategy === 'beam' ? beamsFor(reply, text, sampling) : null;
  if (beams) text = beams[0].text;
  const pieces = chunks(text, reply.chunkSize ?? 4);
  const deliver = (piece: string, count = 1) => {
    assistant.content += piece;
    tokens += count;
    send({ event: 'delta', data: { text: piece } });
  };
  if (consensus || beams) {
    for (let i = 0; i < pieces.length; i++) {
      await delay(reply.delayMs ?? 20);
      if (gen.stop) break;
      // Each step but the last says how far the search has got.
      if (i + 1 < pieces.length) send({ event: 'searching', data: { tokens: i + 1 } });
    }
    if (!gen.stop) {
      assistant.content += text;
      tokens = pieces.length;
      send({ event: 'delta', data: { text } });
    }
  } else if (reply.tokensPerSecond) {
    await offerAtRate(pieces, reply, gen, deliver);
  } else {
    for (const piece of pieces) {
      await delay(reply.delayMs ?? 20);
      if (gen.stop) break;
      deliver(piece);
    }
  }
  const seconds = Math.max((performance.now() - started) / 1000, 0.001);
  // Speculative decoding runs on the local engine only, when the chat's settings turn it on.
  const speculating = !remote && sampling.speculative !== 'off';
  const drafts = speculating ? (reply.drafts ?? { drafted: 0, accepted: 0 }) : { drafted: 0, accepted: 0 };
  assistant.stats = {
    promptTokens: 24, cachedTokens: promptSource === 'new' ? 0 : promptSource === 'typed' ? 21 : 8, completionTokens: tokens,
    ttftMs: reply.ttftMs ?? 40, decodeTps: tokens / seconds, droppedMessages: reply.droppedMessages ?? 0,
    cutAtLimit: !gen.stop && (reply.cutAtLimit ?? false), promptSource, draftedTokens: drafts.drafted, acceptedTokens: drafts.accepted,
    ...(reply.templateNotice ? { templateNotice: reply.templateNotice } : {}),
    ...(reply.questionTokens !== undefined && !remote ? { questionTokens: reply.questionTokens } : {}),
    ...(reply.documentTokens !== undefined && !remote ? { documentTokens: reply.documentTokens } : {}),
    ...(consensus && !gen.stop ? { consensus } : {}),
    ...(beams && !gen.stop ? { beams } : {}),
  };
  // The token inspector's data, kept as the engine keeps it: a local reply written by sampling while the
  // chat's topProbs is above 0 (a continued or branched one's after the tokens it already had).
  const ended = !gen.stop && !failWith && !(reply.cutAtLimit ?? false);
  if (!remote && !consensus && !beams && sampling.topProbs > 0) {
    const before = planTokens ?? [];
    state.tokenProbs.set(assistant.id, [...before, ...madeUpTokens(assistant.content.slice(opening.length), sampling.topProbs, ended, before.length)]);
  } else if (planTokens?.length) {
    state.tokenProbs.set(assistant.id, planTokens);
  } else {
    state.tokenProbs.set(assistant.id, []);
  }
  chat.updatedAt = now();
  if (failWith && !gen.stop) {
    beforeEnd();
    assistant.status = 'failed';
    assistant.stats = null;
    checkErrorKind(cmd, failWith);
    send({ event: 'failed', data: { error: failWith, message: decorate(assistant) } });
    return false;
  }
  assistant.status = gen.stop ? 'stopped' : 'complete';
  assistant.toolCalls = assistant.status === 'complete' ? clone((reply.calls ?? []).map((c) => c.call)) : [];
  // What its calls do when they run (again: rerun_tool_calls).
  if (assistant.toolCalls.length > 0) state.callScripts.set(assistant.id, clone(reply.calls!));
  const calling = w.round !== undefined && assistant.toolCalls.length > 0;
  if (calling && w.round! <= sampling.maxToolRounds) {
    send({ event: 'roundFinished', data: { message: decorate(assistant) } });
    return true;
  }
  beforeEnd();
  if (calling) {
    // The turn used its rounds: the reply says so in its saved stats (a reload shows it too).
    assistant.stats = { ...assistant.stats, toolRoundLimit: sampling.maxToolRounds };
    send({ event: 'roundLimit', data: { message: decorate(assistant) } });
  }
  send({ event: 'finished', data: { message: decorate(assistant) } });
  return false;
}
