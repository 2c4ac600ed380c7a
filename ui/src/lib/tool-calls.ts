// Tool calls in a chat: what a reply's text shows of the calls it writes, where each call of the turn
// under way stands (asked, allowed, running with its progress, denied), which results answer which
// calls, and the words for a call's result. Which calls a saved reply made is Rust's to say
// (`StoredMessage.toolCalls`); the window never reads a call's JSON to decide anything.
import type { CallProgress, Decision, PendingCall, StoredMessage, ToolCallRef, ToolRun, ToolRunEnd, UnavailableServer } from '../ipc/bindings';
import { TOOL_CALL_MARKS } from '../ipc/contract';
import { plural } from './format';

/** A call block of a reply's text, as far as it has arrived. */
export type WrittenBlock = {
  /** The tool's name as the block says it, for a label only; null until it has arrived. */
  name: string | null;
  /** The closing mark has arrived. */
  closed: boolean;
};

export type ReplyText = {
  /** The text outside the call blocks: the reply's prose. */
  prose: string;
  blocks: WrittenBlock[];
};

type Marks = { open: string; close: string };

/**
 * Splits a reply's text at the tool call marks: its prose (the text outside the blocks, joined) and
 * its blocks. `streaming`: a tail that may be the start of an opening mark is held back, so that
 * "<tool_" never flashes as text.
 */
export function splitToolCalls(text: string, streaming: boolean, marks: Marks = TOOL_CALL_MARKS): ReplyText {
  if (!text.includes(marks.open)) {
    const prose = streaming ? withoutPartialMark(text, marks.open) : text;
    return { prose, blocks: [] };
  }
  let prose = '';
  const blocks: WrittenBlock[] = [];
  let rest = text;
  for (;;) {
    const open = rest.indexOf(marks.open);
    if (open < 0) {
      prose += streaming ? withoutPartialMark(rest, marks.open) : rest;
      break;
    }
    prose += rest.slice(0, open);
    const after = rest.slice(open + marks.open.length);
    const close = after.indexOf(marks.close);
    if (close < 0) {
      blocks.push({ name: nameIn(after), closed: false });
      break;
    }
    blocks.push({ name: nameIn(after.slice(0, close)), closed: true });
    rest = after.slice(close + marks.close.length);
  }
  return { prose: prose.trim(), blocks };
}

/** `text` less a tail that may be the start of `mark`. */
function withoutPartialMark(text: string, mark: string): string {
  for (let n = Math.min(mark.length - 1, text.length); n > 0; n--) {
    if (mark.startsWith(text.slice(-n))) return text.slice(0, -n);
  }
  return text;
}

const NAME = /"name"\s*:\s*"([^"\\]{1,80})"/;

/** The tool a block names, for its chip's label only (never to decide anything). */
function nameIn(body: string): string | null {
  return NAME.exec(body)?.[1] ?? null;
}

/** The chip of a call being written: "Calling read_file…". */
export function callingLabel(block: WrittenBlock): string {
  return `Calling ${block.name ?? 'a tool'}…`;
}

// --- The calls of the turn under way. ---

/**
 * Where a call of the turn under way stands: `asking` the user; answered (`allowed`, waiting to run,
 * or `denied`); `running`; `ran` (its result comes with the others, once every call has had its turn).
 */
export type CallPhase = 'asking' | 'allowed' | 'denied' | 'running' | 'ran';

export type LiveCall = {
  index: number;
  phase: CallPhase;
  /** What the backend asked about it (null when the tool was allowed for the session: nothing was asked). */
  pending: PendingCall | null;
  /** The tool's last report of its progress. */
  progress: CallProgress | null;
};

/** The live calls of the turn under way, by the reply that wrote them. */
export type LiveCalls = Record<number, LiveCall[]>;

/** `calls` with call `index` of `reply` changed by `change` (made first if need be); earlier running calls have ended. */
function withCall(calls: LiveCalls, reply: number, index: number, change: (call: LiveCall) => LiveCall): LiveCalls {
  const list = (calls[reply] ?? []).map((c) => (c.index < index && c.phase === 'running' ? { ...c, phase: 'ran' as const } : c));
  const at = list.findIndex((c) => c.index === index);
  const before: LiveCall = at >= 0 ? list[at] : { index, phase: 'allowed', pending: null, progress: null };
  const next = change(before);
  const updated = at >= 0 ? list.map((c, i) => (i === at ? next : c)) : [...list, next].sort((a, b) => a.index - b.index);
  return { ...calls, [reply]: updated };
}

/** `toolApproval`: the backend waits for the user's word on this call. */
export function callAsked(calls: LiveCalls, pending: PendingCall): LiveCalls {
  return withCall(calls, pending.reply, pending.index, (c) => ({ ...c, phase: 'asking', pending }));
}

/** The user answered: allowed (it runs next) or denied. */
export function callAnswered(calls: LiveCalls, reply: number, index: number, decision: Decision): LiveCalls {
  return withCall(calls, reply, index, (c) => ({ ...c, phase: decision.decision === 'deny' ? 'denied' : 'allowed' }));
}

/** The answer did not reach the backend: the call is asked again. */
export function callAskedAgain(calls: LiveCalls, reply: number, index: number): LiveCalls {
  return withCall(calls, reply, index, (c) => ({ ...c, phase: c.pending ? 'asking' : c.phase }));
}

/** `toolRunning`. */
export function callRunning(calls: LiveCalls, ref: ToolCallRef): LiveCalls {
  return withCall(calls, ref.reply, ref.index, (c) => ({ ...c, phase: 'running' }));
}

/** `toolProgress`: the running call's report. */
export function callProgressed(calls: LiveCalls, reply: number, index: number, progress: CallProgress): LiveCalls {
  return withCall(calls, reply, index, (c) => ({ ...c, phase: 'running', progress }));
}

/** The results of `reply`'s calls arrived: none of them runs any more. */
export function callsEnded(calls: LiveCalls, reply: number): LiveCalls {
  const list = calls[reply];
  if (!list?.some((c) => c.phase === 'running' || c.phase === 'allowed')) return calls;
  return { ...calls, [reply]: list.map((c) => (c.phase === 'running' || c.phase === 'allowed' ? { ...c, phase: 'ran' as const } : c)) };
}

/** The call the backend waits for the user's word on, if any. */
export function askingCall(calls: LiveCalls): PendingCall | null {
  for (const list of Object.values(calls)) {
    const asking = list.find((c) => c.phase === 'asking');
    if (asking?.pending) return asking.pending;
  }
  return null;
}

/** A running call's progress as a fraction (0–1) when its total is known; null: how far it is is unknown. */
export function progressFraction(progress: CallProgress | null): number | null {
  if (!progress || progress.total === null || !(progress.total > 0)) return null;
  return Math.min(1, Math.max(0, progress.progress / progress.total));
}

/** A running call's progress in words: "3/10", or "3" when its total is unknown; its message after. */
export function progressText(progress: CallProgress | null): string {
  if (!progress) return '';
  const count = progress.total !== null && progress.total > 0 ? `${trimNumber(progress.progress)}/${trimNumber(progress.total)}` : trimNumber(progress.progress);
  return progress.message ? `${count} · ${progress.message}` : count;
}

const trimNumber = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

// --- Results. ---

/**
 * Each reply's results, by reply id: the tool messages that follow it on the path, in order (the
 * backend saves one per call, in the calls' order, right after the reply).
 */
export function resultsByReply(path: readonly StoredMessage[]): Map<number, StoredMessage[]> {
  const results = new Map<number, StoredMessage[]>();
  let reply: number | null = null;
  for (const message of path) {
    if (message.role === 'tool') {
      if (reply !== null) {
        const list = results.get(reply);
        if (list) list.push(message);
        else results.set(reply, [message]);
      }
    } else {
      reply = message.role === 'assistant' ? message.id : null;
    }
  }
  return results;
}

/** How a call ended, in a word. */
export const END_WORDS: Record<ToolRunEnd, string> = { ran: 'Ran', denied: 'Denied', stopped: 'Stopped', failed: 'Failed' };

/** The time a tool took: "35 ms", "0.4 s", "12.5 s", "2 min 5 s". */
export function formatToolTime(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 100) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** A result's length: "1 character", "850 characters", "1.2k characters", "12.8k characters", "240k characters", "3.4M characters". */
export function formatChars(chars: number): string {
  if (!Number.isFinite(chars) || chars < 0) return '–';
  if (chars < 1000) return plural(chars, 'character');
  const [value, unit] = chars < 1_000_000 ? [chars / 1000, 'k'] : [chars / 1_000_000, 'M'];
  const digits = value < 100 ? value.toFixed(1).replace(/\.0$/, '') : String(Math.round(value));
  return `${digits}${unit} characters`;
}


/** A tool result's line: "Ran · 0.4 s · 1.2k characters · cut for the model" (time only when it ran). */
export function resultFacts(run: ToolRun): string[] {
  const facts: string[] = [];
  if (run.end === 'ran' || run.elapsedMs > 0) facts.push(formatToolTime(run.elapsedMs));
  facts.push(formatChars(run.chars));
  if (run.cut) facts.push('cut for the model');
  return facts;
}

// --- Arguments. ---

/** Arguments as the card shows them: pretty JSON (2 spaces), or the text as it is when it is no JSON. */
export function prettyArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** Arguments on one line, for a collapsed row. */
export function compactArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text.replace(/\s+/g, ' ').trim();
  }
}

/** Why edited arguments cannot be sent (null: they can): they must be JSON. */
export function argumentsProblem(text: string): string | null {
  if (text.trim() === '') return 'The arguments are empty: they must be JSON, e.g. {}.';
  try {
    JSON.parse(text);
    return null;
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return `This is not valid JSON: ${why}`;
  }
}

/**
 * The arguments to answer with: the model's own when the user left them as shown, else the text as
 * the user edited it.
 */
export function argumentsToSend(original: string, shown: string, edited: string): string {
  return edited === shown ? original : edited;
}

/** How a saved reply's call stands when its turn is over or it has no live state. */
export type CallView =
  | { kind: 'live'; call: LiveCall }
  | { kind: 'result'; result: StoredMessage; run: ToolRun }
  /** The turn is under way, its turn has not come. */
  | { kind: 'queued' }
  /** It never ran: the turn used its rounds, or stopped before it. */
  | { kind: 'notRun' };

/** Where call `index` of a reply stands: its live state while its turn runs, else its result, else never run. */
export function callView(index: number, live: readonly LiveCall[] | null, results: readonly StoredMessage[]): CallView {
  const call = live?.find((c) => c.index === index);
  const result = results[index];
  if (result?.tool) return { kind: 'result', result, run: result.tool };
  if (call) return { kind: 'live', call };
  return live ? { kind: 'queued' } : { kind: 'notRun' };
}

/** "Stopped after 8 rounds of tool calls". */
export function roundLimitNotice(rounds: number): string {
  return `Stopped after ${plural(rounds, 'round')} of tool calls`;
}

/** What the window says of the servers a turn could not offer, a line each: "tracker's tools were not offered: it asks to sign in". */
export function unavailableText(servers: readonly UnavailableServer[]): string[] {
  return servers.map(({ server, why }) => `${server}'s tools were not offered: ${why}`);
}
