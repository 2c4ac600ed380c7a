import type {
  BeamHypothesis,
  ChatCacheUsage,
  Consensus,
  ImportReport,
  IpcErrorKind,
  MbrUtility,
  MessageStatus,
  ModelInfo,
  PromptSource,
  ReplyStats,
} from '../ipc/bindings';

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A search under way (a beam search, a consensus), whose reply comes whole at its end: "Searching · 12 tokens". */
export function searchProgress(tokens: number): string {
  return `Searching · ${plural(tokens, 'token')}`;
}

/** A duration: "842 ms", "1.25 s", "12.3 s"; "–" when it is not one. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** A finished reply's reasoning, as its block's summary says it: "Thought for 3.4 s · 120 tokens"; '' when
 *  the reply's stats do not say (an older reply, or one still streaming). */
export function formatReasoning(stats: ReplyStats | null | undefined): string {
  const ms = stats?.reasoningMs;
  if (ms === undefined || !Number.isFinite(ms)) return '';
  const time = ms < 1000 ? 'under a second' : `${ms < 10_000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`;
  const tokens = stats?.reasoningTokens;
  return `Thought for ${time}${tokens !== undefined ? ` · ${plural(tokens, 'token')}` : ''}`;
}

const PLAIN_CACHE = { words: 'cached', detail: '' };

/**
 * Where a reply's cached prompt tokens came from: the words after their count on the stats line, and the
 * tooltip's explanation. A new conversation's cached tokens (an opening it shared with what was loaded)
 * read plainly "N cached".
 */
const CACHE_SOURCE: Record<PromptSource, { words: string; detail: string }> = {
  new: PLAIN_CACHE,
  live: { words: 'cached', detail: "The model still held this chat's cache from its last reply." },
  ram: { words: 'restored from RAM', detail: "This chat's cache was kept in RAM while another chat answered, then brought back." },
  disk: {
    words: 'restored from disk',
    detail: "This chat's cache was read back from disk, where it was saved when the model was unloaded or RAM ran short.",
  },
  typed: { words: 'read while you typed', detail: 'The model read this chat and your message ahead while you were typing it.' },
};

/** Stats without a source we know (saved before there was one) read as before: "N cached". */
const cacheSource = (stats: ReplyStats) => CACHE_SOURCE[stats.promptSource] ?? PLAIN_CACHE;

/** Tokens speculative decoding guessed ahead and how many the sampler kept; 0 in stats saved before it existed. */
function drafts(stats: ReplyStats): { drafted: number; accepted: number } {
  return { drafted: stats.draftedTokens ?? 0, accepted: stats.acceptedTokens ?? 0 };
}

/**
 * The candidates a consensus reply was chosen from; null for a sampled reply, stats saved before consensus
 * existed, and a consensus with no candidates.
 */
export function consensusOf(stats: ReplyStats | null | undefined): Consensus | null {
  const consensus = stats?.consensus;
  return consensus && Array.isArray(consensus.candidates) && consensus.candidates.length > 0 ? consensus : null;
}

/** How consensus compared the candidates, in words. */
export const UTILITY_LABELS: Record<MbrUtility, string> = { chrF: 'chrF', exactMatch: 'exact match' };

/** A candidate's score (its mean agreement with the others, 0–1): "0.62"; "–" when it is not a number. */
export function formatScore(score: number): string {
  return Number.isFinite(score) ? score.toFixed(2) : '–';
}

/**
 * The best replies a beam search kept, best first (the first is the reply); null for other replies, stats
 * saved before beam search existed, and a search that kept only the reply (nothing to compare it with).
 */
export function beamsOf(stats: ReplyStats | null | undefined): BeamHypothesis[] | null {
  const beams = stats?.beams;
  return Array.isArray(beams) && beams.length > 1 ? beams : null;
}

/** A log-probability or a beam's score (0 or below): "−5.12" with a real minus sign; "–" when it is not a number. */
export function formatLogprob(value: number): string {
  if (!Number.isFinite(value)) return '–';
  const digits = Math.abs(value).toFixed(2);
  return value < 0 && digits !== '0.00' ? `−${digits}` : digits;
}

/**
 * One-line summary under a finished reply, e.g. "12 tokens · 85.3 tok/s · TTFT 120 ms · 15 restored from RAM",
 * ending "· 41/64 drafts accepted" when speculative decoding guessed ahead, "· best of 8" for a consensus reply
 * and "· beam 1 of 4" for a beam search's.
 */
export function formatStats(stats: ReplyStats | null | undefined): string {
  // A reply the engine died under has no figures, only the cause (shown as its notice).
  if (!stats || stats.interruptedBy) return '';
  const parts = [plural(stats.completionTokens, 'token')];
  if (Number.isFinite(stats.decodeTps) && stats.decodeTps > 0) parts.push(`${stats.decodeTps.toFixed(1)} tok/s`);
  parts.push(`TTFT ${formatMs(stats.ttftMs)}`);
  // The KV cache's work, in plain sight: prompt tokens the next turn did not have to prefill, and where from.
  if (stats.cachedTokens > 0) parts.push(`${stats.cachedTokens} ${cacheSource(stats).words}`);
  const { drafted, accepted } = drafts(stats);
  if (drafted > 0) parts.push(`${accepted}/${drafted} drafts accepted`);
  const consensus = consensusOf(stats);
  if (consensus) parts.push(`best of ${consensus.candidates.length}`);
  const beams = beamsOf(stats);
  if (beams) parts.push(`beam 1 of ${beams.length}`);
  return parts.join(' · ');
}

/**
 * Longer description for a tooltip: prompt size and cache reuse, where a brought-back cache came from, what
 * speculative decoding's guesses came to, and how a consensus or beam search reply was chosen.
 */
export function formatStatsDetail(stats: ReplyStats | null | undefined): string {
  if (!stats) return '';
  const source = stats.cachedTokens > 0 ? cacheSource(stats) : null;
  const cached = source ? ` (${stats.cachedTokens} ${source.words})` : '';
  const lines = [`Prompt: ${plural(stats.promptTokens, 'token')}${cached} · Reply: ${plural(stats.completionTokens, 'token')}`];
  if (source?.detail) lines.push(source.detail);
  const { drafted, accepted } = drafts(stats);
  if (drafted > 0) {
    const share = Math.round((accepted / drafted) * 100);
    lines.push(`Speculative decoding guessed ${plural(drafted, 'token')} ahead; the sampler kept ${accepted} (${share}%).`);
  }
  const consensus = consensusOf(stats);
  if (consensus) {
    const chosen = consensus.candidates[consensus.chosen];
    const by = UTILITY_LABELS[consensus.utility] ?? consensus.utility;
    const score = chosen ? ` (score ${formatScore(chosen.score)})` : '';
    lines.push(
      `Consensus: the best of ${consensus.candidates.length} candidates by ${by}${score}; tok/s counts every candidate's tokens, TTFT waits for all of them.`,
    );
  }
  const beams = beamsOf(stats);
  if (beams) {
    const [best] = beams;
    lines.push(
      `Beam search: the best of the ${beams.length} replies it kept (score ${formatLogprob(best.score)}, log-probability ${formatLogprob(best.logprob)} over ${plural(best.tokens, 'token')}); tok/s counts every beam's tokens, TTFT waits for the search to end.`,
    );
  }
  return lines.join('\n');
}

/** The notice under a reply that did not see the whole conversation; empty when it did. */
export function formatDropped(stats: ReplyStats | null | undefined): string {
  const n = stats?.droppedMessages ?? 0;
  if (!(n > 0)) return '';
  return `${n} earlier ${n === 1 ? 'message' : 'messages'} left out to fit the context`;
}

/** The label under a reply that did not end where the model ended it; null when it did. */
export function replyNotice(message: { status: MessageStatus; stats: ReplyStats | null }): string | null {
  switch (message.status) {
    case 'stopped':
      return 'Stopped';
    case 'interrupted': {
      // The engine process died under the reply: say why (llama.cpp's own words), capitalised.
      const cause = message.stats?.interruptedBy;
      if (cause) return `Interrupted — ${cause.charAt(0).toUpperCase()}${cause.slice(1)}`;
      return 'Interrupted — Hearth closed while this reply was being written';
    }
    case 'failed':
      return 'Failed';
    case 'complete':
      return message.stats?.cutAtLimit ? 'Cut off at the length limit' : null;
    default:
      return null;
  }
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const SHORT_DATE = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short' });
const LONG_DATE = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric' });

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", then a date ("12 Mar", "12 Mar 2023"). */
export function relativeDate(ms: number, now: number = Date.now()): string {
  const ago = Math.max(0, now - ms);
  if (ago < MINUTE) return 'just now';
  if (ago < HOUR) return `${Math.floor(ago / MINUTE)} min ago`;
  if (ago < DAY) return `${Math.floor(ago / HOUR)} h ago`;
  const days = Math.floor(ago / DAY);
  if (days === 1) return 'yesterday';
  if (days < 7) return `${days} days ago`;
  const sameYear = new Date(ms).getFullYear() === new Date(now).getFullYear();
  return (sameYear ? SHORT_DATE : LONG_DATE).format(ms);
}

const CLOCK = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });

/** The local time of day of a Unix time in ms, "14:03:07". */
export function formatClock(ms: number): string {
  return CLOCK.format(ms);
}

/** The last part of a path, either separator. */
export function fileName(path: string): string {
  return path.split(/[\\/]/).filter(Boolean).at(-1) ?? path;
}

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes <= 0) return '';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/**
 * Bytes in the unit of the chats' cache budgets, megabytes of 2^20 bytes ("90 MB", "2.5 MB"): what the
 * caches take reads against their budget ("4096 MB of 4096 MB", not "4.3 GB of 4096 MB").
 */
export function formatMegabytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes <= 0) return '';
  const mb = bytes / 2 ** 20;
  return mb < 10 ? `${Math.max(0.1, Number(mb.toFixed(1)))} MB` : `${Math.round(mb)} MB`;
}

/**
 * What each budget limits takes, beside it: the chats' caches in RAM ("60 MB") and on disk ("90 MB (3 chats)"),
 * and the models kept in memory after another was loaded ("98 MB"); "none" for nothing.
 */
export function formatCacheUsage(usage: ChatCacheUsage): { ram: string; disk: string; models: string } {
  const disk = formatMegabytes(usage.bytes);
  return {
    ram: formatMegabytes(usage.ramBytes) || 'none',
    disk: usage.chats === 0 || !disk ? 'none' : `${disk} (${plural(usage.chats, 'chat')})`,
    models: formatMegabytes(usage.keptModelBytes) || 'none',
  };
}

/** What memory holds: in all ("2254 MB") and each part ("weights 1926 MB, context 268 MB"). */
export type Memory = { total: string; parts: string };

/** What memory holds, each figure in `format`; a part of 0 bytes is left out; null when nothing is held. */
export function formatMemory(parts: [name: string, bytes: number][], format: (bytes: number) => string = formatMegabytes): Memory | null {
  const held = parts.filter(([, bytes]) => Number.isFinite(bytes) && bytes > 0);
  if (held.length === 0) return null;
  return {
    total: format(held.reduce((sum, [, bytes]) => sum + bytes, 0)),
    parts: held.map(([name, bytes]) => `${name} ${format(bytes)}`).join(', '),
  };
}

/**
 * What Hearth holds in memory, in the unit of the caches' budgets: the loaded model's weights and context
 * (its KV cache), other chats' caches kept in RAM, and models kept after another was loaded; "no model
 * loaded" among the parts when none is.
 */
export function formatMemoryUsage(usage: Pick<ChatCacheUsage, 'modelBytes' | 'contextBytes' | 'ramBytes' | 'keptModelBytes'>): Memory {
  const all = formatMemory([
    ['weights', usage.modelBytes],
    ['context', usage.contextBytes],
    ['chat caches', usage.ramBytes],
    ['other models', usage.keptModelBytes],
  ]);
  if (all && (usage.modelBytes > 0 || usage.contextBytes > 0)) return all;
  return { total: all?.total ?? 'none', parts: [all?.parts, 'no model loaded'].filter(Boolean).join('; ') };
}

/** What the loaded model takes in memory, as its sizes are shown elsewhere (GB): its weights and its context when known. */
export function formatModelMemory(model: Pick<ModelInfo, 'sizeBytes' | 'kvBytes'>): Memory | null {
  return formatMemory([['weights', model.sizeBytes], ['context', model.kvBytes ?? 0]], formatBytes);
}

/**
 * Turn anything a rejected invoke (or a failed event) can carry into words for the user.
 * IPC errors are `{ kind, message }` objects; never show a raw object.
 */
export function errorMessage(error: unknown): string {
  if (typeof error === 'string') return error.trim() || 'Something went wrong.';
  if (error instanceof Error) return error.message || 'Something went wrong.';
  if (error && typeof error === 'object') {
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string' && message.trim()) return message.trim();
    const kind = (error as { kind?: unknown }).kind;
    if (typeof kind === 'string') return KIND_FALLBACK[kind as IpcErrorKind] ?? 'Something went wrong.';
  }
  return 'Something went wrong.';
}

/** Why a value cannot be saved, and the field it concerns (the name the window's types use). */
export type FieldProblem = { message: string; field: string };

/**
 * The fields an error is about, as the backend names them in `IpcError.field` (comma-separated
 * when a rule spans fields), each by its top-level name ("logitBias.bias" → "logitBias"); empty
 * when it names none.
 */
export function errorFields(error: unknown): string[] {
  const field = error && typeof error === 'object' ? (error as { field?: unknown }).field : undefined;
  if (typeof field !== 'string') return [];
  return field
    .split(',')
    .map((f) => f.trim().split('.')[0])
    .filter((f) => f !== '');
}

/** A message shown on its own as a sentence: its first letter upper-case (backend errors begin in
 * lower case, as they are also composed into longer messages). */
export function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Words for each error kind the backend has (bindings' IpcErrorKind: the compiler checks none is missing). */
const KIND_FALLBACK: Record<IpcErrorKind, string> = {
  notFound: 'That item no longer exists.',
  invalidInput: 'The request was not valid.',
  noModel: 'No model is loaded.',
  busy: 'A reply is already being generated.',
  engine: 'The model failed to generate a reply.',
  store: 'Could not read or write the chat history.',
  file: 'Could not read or write the file.',
  providerAuth: 'The provider refused the API key.',
  rateLimited: 'The provider is rate limiting requests; wait a little.',
  network: 'The provider could not be reached.',
  provider: 'The provider could not give a reply.',
  keychain: 'The system keychain could not be used.',
  hubAuth: 'Hugging Face refused access: this model needs a token with access to it.',
  diskFull: 'The disk is full.',
  download: 'The download failed.',
  update: 'The update was not installed; Hearth stays as it is.',
};

/** The first line of an import's report: how many chats came in, or why none did. */
export function importSummary(report: ImportReport): string {
  const imported = report.imported.length;
  const skipped = report.skipped.length;
  if (imported > 0) return `Imported ${plural(imported, 'chat')}`;
  if (skipped === 0) return 'Nothing was imported: the file holds no chats';
  if (skipped === 1) return 'Nothing was imported: the chat in the file was skipped';
  return `Nothing was imported: all ${skipped} chats in the file were skipped`;
}

/** Sidebar/header title for a chat; the backend titles a chat from its first user message. */
export function chatTitle(title: string | null | undefined): string {
  const t = (title ?? '').trim();
  return t || 'New chat';
}

/** Shown next to "No model loaded". */
export const NO_MODEL_HINT = 'Load a GGUF model to start chatting.';
