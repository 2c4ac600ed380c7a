// The Compare view's pure parts: what each column starts from and how it decodes, the settings sent for
// it (compare_replies' variants), the one line under it saying what differs from the chat's settings,
// and which column a refusal names. The reactive store is compare.svelte.ts.
import type { Preset, SamplingParams, Strategy } from '../ipc/bindings';
import { FIELDS, changedKeys, clone, formatValue, type ParamKey } from './settings';

/** compare_replies answers with 2 to 4 settings (hearth-core's MAX_COMPARED). */
export const MIN_COLUMNS = 2;
export const MAX_COLUMNS = 4;

/** Where a column's settings start: the chat's current settings (null), or the preset of that name. */
export type Base = string | null;

export type ColumnSetup = { base: Base; strategy: Strategy };

/** What the columns are built from: the chat's settings and the presets, as get_sampling sends them. */
export type CompareContext = { chat: SamplingParams; presets: readonly Preset[] };

export const STRATEGIES: readonly Strategy[] = ['sampling', 'consensus', 'beam'];

export const STRATEGY_LABELS: Record<Strategy, string> = { sampling: 'Sampling', consensus: 'Consensus', beam: 'Beam search' };

/** What the base <select> says for the chat's own settings. */
export const CHAT_BASE_LABEL = "This chat's settings";

/** A base as a <select>'s value: "chat", or "preset:" and the name. */
export function baseKey(base: Base): string {
  return base === null ? 'chat' : `preset:${base}`;
}

export function parseBaseKey(key: string): Base {
  return key.startsWith('preset:') ? key.slice('preset:'.length) : null;
}

/** The settings a base stands for; the chat's when it names a preset that is gone. */
export function baseParams(base: Base, ctx: CompareContext): SamplingParams {
  const preset = base === null ? undefined : ctx.presets.find((p) => p.name === base);
  return preset?.params ?? ctx.chat;
}

/** The whole settings sent for a column: its base's, with its strategy. A fresh copy. */
export function variantOf(column: ColumnSetup, ctx: CompareContext): SamplingParams {
  const params = clone(baseParams(column.base, ctx));
  params.strategy = column.strategy;
  return params;
}

/** compare_replies' `variants`, one per column, in column order. */
export function buildVariants(columns: readonly ColumnSetup[], ctx: CompareContext): SamplingParams[] {
  return columns.map((c) => variantOf(c, ctx));
}

/** The columns a comparison opens with: the chat's settings as they are, and the same with another strategy (beam search, or sampling for a chat that searches). */
export function defaultColumns(chat: SamplingParams): ColumnSetup[] {
  return [
    { base: null, strategy: chat.strategy },
    { base: null, strategy: chat.strategy === 'beam' ? 'sampling' : 'beam' },
  ];
}

/** The column "Add column" adds: the first built-in preset no column starts from yet (else the chat's settings), sampled. */
export function nextColumn(columns: readonly ColumnSetup[], presets: readonly Preset[]): ColumnSetup {
  const used = new Set(columns.map((c) => c.base));
  const preset = presets.find((p) => p.builtIn && !used.has(p.name));
  return { base: preset?.name ?? null, strategy: 'sampling' };
}

/** Settings that one strategy reads and another does not: a difference there changes nothing the column writes. */
const MBR_KEYS: readonly ParamKey[] = ['mbrCandidates', 'mbrUtility'];
const BEAM_KEYS: readonly ParamKey[] = ['beamWidth', 'lengthPenalty', 'earlyStopping', 'nBest'];
/** Beam search ranks by the model's log-probabilities: temperature, truncation, penalties and the sampler's seed do not apply; a grammar and logit bias do. */
const BEAM_READS: ReadonlySet<ParamKey> = new Set<ParamKey>([
  'maxTokens', 'ignoreEos', 'stop', 'constraint', 'logitBias', 'overflow', 'lengthPenalty', 'earlyStopping', 'nBest',
]);
/**
 * Never worth a word in a summary: the strategy has its own, the inspector's alternatives do not change the reply,
 * and a comparison's replies call no tools (so the rounds they may take change nothing either).
 */
const NOT_SUMMARISED: ReadonlySet<ParamKey> = new Set<ParamKey>(['strategy', 'topProbs', 'maxToolRounds']);

function applies(key: ParamKey, strategy: Strategy): boolean {
  if (NOT_SUMMARISED.has(key)) return false;
  switch (strategy) {
    case 'sampling':
      return !MBR_KEYS.includes(key) && !BEAM_KEYS.includes(key);
    case 'consensus':
      return key !== 'mbrCandidates' && !BEAM_KEYS.includes(key);
    case 'beam':
      return BEAM_READS.has(key);
  }
}

/** A field's label as it reads inside a sentence: "temperature", "top-k"; "XTC probability" and "DRY base" keep their capitals. */
function inline(label: string): string {
  return /^[A-Z][a-z]/.test(label) ? label.charAt(0).toLowerCase() + label.slice(1) : label;
}

/** How many differing settings the one line names before "+N more" (the tooltip names them all). */
export const SHOWN_DIFFERENCES = 2;

export type ColumnSummary = {
  /** One line: "Creative · temperature 1.1 · top-k 0 · +4 more", "Beam search · width 4", "This chat's settings". */
  text: string;
  /** Every difference, one a line, for the tooltip. */
  detail: string;
};

/**
 * What a column's settings are, said against the chat's: the preset it starts from, its strategy when that is not plain
 * sampling or not the chat's (with its main figure: a search's width, a consensus's candidates), then the settings that
 * differ from the chat's and that its strategy reads.
 */
export function columnSummary(column: ColumnSetup, ctx: CompareContext): ColumnSummary {
  const variant = variantOf(column, ctx);
  const parts: string[] = [];
  if (column.base !== null) parts.push(column.base);
  const { strategy } = column;
  if (strategy !== 'sampling' || ctx.chat.strategy !== 'sampling') {
    parts.push(STRATEGY_LABELS[strategy]);
    if (strategy === 'beam') parts.push(`width ${variant.beamWidth}`);
    if (strategy === 'consensus') parts.push(`${variant.mbrCandidates} candidates`);
  }
  const differences = changedKeys(variant, ctx.chat)
    .filter((k) => applies(k, strategy))
    .map((k) => `${inline(FIELDS[k].label)} ${formatValue(k, variant[k])}`);
  const shown = differences.length > SHOWN_DIFFERENCES + 1 ? differences.slice(0, SHOWN_DIFFERENCES) : differences;
  const more = differences.length - shown.length;
  const line = [...parts, ...shown, ...(more > 0 ? [`+${more} more`] : [])];
  if (line.length === 0) return { text: CHAT_BASE_LABEL, detail: "The chat's settings as they are." };
  if (differences.length === 0 && parts.length === 1 && column.base !== null) line.push('same as this chat');
  const start = column.base === null ? "Starts from this chat's settings" : `Starts from the preset ${column.base}`;
  const detail = [`${start}; ${STRATEGY_LABELS[strategy].toLowerCase()}.`, ...differences.map((d) => `${d.charAt(0).toUpperCase()}${d.slice(1)}`)];
  return { text: line.join(' · '), detail: detail.join('\n') };
}

/** The column a refusal is about ("settings 2: topP must be …" names the second), or null. */
export function refusedColumn(message: string): number | null {
  const m = /^settings (\d+):/i.exec(message.trim());
  return m ? Number(m[1]) - 1 : null;
}
