// Decoding settings: field descriptions, presets and scopes, diffing against defaults, hints and list
// editing. Pure functions over plain values; the reactive store is in settings.svelte.ts.
import type {
  BiasTarget,
  Constraint,
  FieldRange,
  LogitBias,
  Preset,
  SamplerStage,
  SamplingParams,
  SettingsScope,
} from '../ipc/bindings';
import { NEVER_BIAS, SAMPLER_STAGES } from '../ipc/contract';
import { fileName, type FieldProblem } from './format';

export { NEVER_BIAS, SAMPLER_STAGES };

export type ParamKey = keyof SamplingParams;

/** The fields edited with a number box (seed is separate: it may be "random"). */
export type NumberKey = {
  [K in ParamKey]: SamplingParams[K] extends number ? K : never;
}[ParamKey];

/** The fields that are on or off. */
export type BoolKey = {
  [K in ParamKey]: SamplingParams[K] extends boolean ? K : never;
}[ParamKey];

export type FieldInfo = {
  label: string;
  /** One line: what the setting does and which value turns it off. */
  help: string;
  /** Step for the number box and slider (whole-number fields, as their range says, step by 1). */
  step?: number;
};

export const FIELDS: Record<ParamKey, FieldInfo> = {
  temperature: {
    label: 'Temperature',
    help: 'Randomness of the pick: lower is focused and repeatable, higher is more varied; 0 always takes the top token.',
    step: 0.05,
  },
  dynatempRange: {
    label: 'Dynamic temperature range',
    help: 'Lets the temperature move up to ± this much with how unsure the model is; 0 turns it off.',
    step: 0.05,
  },
  dynatempExponent: {
    label: 'Dynamic temperature exponent',
    help: 'How sharply uncertainty maps onto the dynamic temperature; 1 is linear.',
    step: 0.1,
  },
  topK: { label: 'Top-k', help: 'Keeps only the k most likely tokens; 0 turns it off.' },
  topP: {
    label: 'Top-p',
    help: 'Keeps the smallest set of likeliest tokens whose probabilities add up to p; 1 turns it off.',
    step: 0.01,
  },
  minP: {
    label: 'Min-p',
    help: "Drops tokens less likely than this fraction of the top token's probability; 0 turns it off.",
    step: 0.01,
  },
  typicalP: {
    label: 'Typical-p',
    help: 'Prefers tokens about as surprising as the model expects on average; 1 turns it off.',
    step: 0.01,
  },
  topNSigma: {
    label: 'Top-nσ',
    help: 'Keeps tokens whose score is within n standard deviations of the best one; 0 turns it off.',
    step: 0.1,
  },
  xtcProbability: {
    label: 'XTC probability',
    help: 'Chance, per token, of removing the most likely choices for less predictable wording; 0 turns it off.',
    step: 0.01,
  },
  xtcThreshold: {
    label: 'XTC threshold',
    help: 'XTC removes tokens above this probability, always keeping the least likely of them.',
    step: 0.01,
  },
  dryMultiplier: {
    label: 'DRY multiplier',
    help: 'Strength of the penalty on tokens that would continue a sequence already in the text; 0 turns DRY off.',
    step: 0.05,
  },
  dryBase: { label: 'DRY base', help: 'How fast the DRY penalty grows with each extra repeated token.', step: 0.05 },
  dryAllowedLength: {
    label: 'DRY allowed length',
    help: 'Repeats up to this many tokens long go unpenalized.',
  },
  dryLastN: {
    label: 'DRY window',
    help: 'How many recent tokens DRY searches for repeats; -1 is the whole context, 0 turns it off.',
  },
  drySequenceBreakers: {
    label: 'DRY sequence breakers',
    help: 'A repeat never spans one of these, so DRY leaves e.g. list markup and line breaks alone.',
  },
  mirostat: {
    label: 'Mirostat',
    help: 'Aims at a steady level of surprise instead of fixed cut-offs; while on, only temperature runs before it.',
  },
  mirostatTau: { label: 'Mirostat τ (target)', help: 'Target surprise per token: lower stays focused, higher wanders.', step: 0.1 },
  mirostatEta: { label: 'Mirostat η (learning rate)', help: 'How quickly Mirostat corrects toward the target.', step: 0.01 },
  repeatPenalty: {
    label: 'Repeat penalty',
    help: 'Makes tokens used in the recent window less likely (scales their scores down); 1 turns it off.',
    step: 0.01,
  },
  repeatLastN: {
    label: 'Penalty window',
    help: 'How many recent tokens the repeat, presence and frequency penalties look at; -1 is the whole context, 0 turns them off.',
  },
  presencePenalty: {
    label: 'Presence penalty',
    help: 'Lowers every token already used by a flat amount, nudging toward new topics; 0 turns it off.',
    step: 0.05,
  },
  frequencyPenalty: {
    label: 'Frequency penalty',
    help: 'Lowers tokens more the more often they were used, curbing repeated words; 0 turns it off.',
    step: 0.05,
  },
  logitBias: {
    label: 'Logit bias',
    help: 'Makes chosen tokens more (positive) or less (negative) likely; "never" forbids them.',
  },
  seed: {
    label: 'Seed',
    help: 'Random draws a new seed for each reply; a fixed seed repeats the same reply for the same prompt and settings.',
  },
  maxTokens: { label: 'Max new tokens', help: 'Longest a single reply may get, in tokens.' },
  ignoreEos: {
    label: 'Ignore end of turn',
    help: 'The model cannot end its reply: it runs until max new tokens or a stop string.',
  },
  stop: { label: 'Stop strings', help: 'The reply ends just before any of these; the stop string itself is not shown.' },
  constraint: {
    label: 'Grammar',
    help: 'Forces the reply to follow a GBNF grammar (its root rule is "root") or to be JSON matching a schema.',
  },
  samplerOrder: { label: 'Sampler order', help: 'The filters run top to bottom; unchecked ones are skipped.' },
  overflow: {
    label: 'When the chat outgrows the context',
    help: 'Stop with a message, drop the middle (keeps the system prompt and first exchange), or drop the oldest turns.',
  },
  maxToolRounds: {
    label: 'Most tool rounds per turn',
    help: 'How many rounds of tool calls one reply may take — the model calls tools, they run, it reads their results — before Hearth stops and says so. Set it per chat, model or preset like any setting.',
  },
  reasoningBudget: {
    label: 'Reasoning budget (tokens)',
    help: "Reasoning models (a <think> block before the answer): -1 lets the model reason as long as it does; 0 asks it not to (a template with a thinking switch, as Qwen3's, is told; a block it opens anyway is closed at once); a number closes its reasoning after that many tokens, and it answers. OpenAI is sent an effort for it, Anthropic extended thinking with it (each provider's note says how).",
  },
  topProbs: {
    label: 'Alternatives kept per token',
    help: "The token inspector: how many of the likeliest tokens are kept beside each token of a reply (the local model's, or a llama.cpp server's), to see what else could have come there and branch from it; 0 keeps none.",
  },
  strategy: {
    label: 'Decoding strategy',
    help: 'Sampling writes the reply token by token as it streams. Consensus samples several replies side by side and keeps the one that agrees most with the others; it appears when all are written. Beam search looks for the likeliest reply (temperature and truncation do not apply; a grammar and logit bias do); it appears when the search ends.',
  },
  mbrCandidates: {
    label: 'Candidates',
    help: 'How many replies consensus samples; more is steadier and slower.',
  },
  mbrUtility: {
    label: 'Compare candidates by',
    help: 'How candidates are compared: chrF (shared character sequences) suits prose; exact match keeps the most frequent answer (self-consistency), for short answers.',
  },
  beamWidth: {
    label: 'Beam width',
    help: "How many partial replies beam search follows at each step; it keeps the likeliest whole reply by the model's log-probability ÷ length^penalty. 1 is greedy.",
  },
  lengthPenalty: {
    label: 'Length penalty',
    help: 'Beam search ranks finished replies by log-probability ÷ length^this: 0 favours short replies, higher values longer ones.',
    step: 0.1,
  },
  earlyStopping: {
    label: 'Early stopping',
    help: 'Beam search ends as soon as beam-width replies are finished, rather than searching on while a longer one could still rank higher.',
  },
  nBest: {
    label: 'Replies kept',
    help: 'How many of the best finished replies beam search keeps with the reply, to compare; at most the beam width (a search finishes no more).',
  },
  speculative: {
    label: 'Speculative decoding',
    help: 'Guesses the next few tokens and checks them all in one step: the reply is the same, only faster when the guesses are right. Prompt lookup guesses from text earlier in the chat (edits, code, quotes); Draft model has a small model write the guesses.',
  },
  draftMax: { label: 'Max draft tokens', help: 'The most tokens guessed ahead per step, while speculative decoding is on.' },
  draftModel: {
    label: 'Draft model',
    help: "A small model that writes the guesses for the chat's model to check. It must share the chat model's vocabulary (usually a smaller model of the same family); the loaded model itself makes no reply faster.",
  },
};

export const STAGE_LABELS: Record<SamplerStage, string> = {
  penalties: 'Penalties',
  dry: 'DRY',
  topNSigma: 'Top-nσ',
  topK: 'Top-k',
  typicalP: 'Typical-p',
  topP: 'Top-p',
  minP: 'Min-p',
  xtc: 'XTC',
  temperature: 'Temperature',
};

/** The largest seed / token id (u32 on the Rust side). */
export const U32_MAX = 4_294_967_295;

// ---------------------------------------------------------------------------------------------
// Presets (served by the backend: built-ins first, then the user's) and scopes

/** The first preset whose values are exactly `params`, if any. */
export function matchingPreset(params: SamplingParams, presets: readonly Preset[]): Preset | null {
  return presets.find((p) => deepEqual(params, p.params)) ?? null;
}

/** What a preset changes from the defaults, for its tooltip: "Temperature 0.2 · Top-p 0.9". */
export function presetSummary(preset: Preset, defaults: SamplingParams): string {
  const keys = changedKeys(preset.params, defaults);
  if (keys.length === 0) return 'The defaults';
  return keys.map((k) => `${FIELDS[k].label} ${formatValue(k, preset.params[k])}`).join(' · ');
}

export type ScopeKind = SettingsScope['kind'];

/** What the panel edits for: the chat on screen and the loaded model, when there are. */
export type ScopeContext = { chatId: number | null; modelPath: string | null };

/** Where the values at a scope come from: a scope's own settings, or the defaults. */
export type Source = ScopeKind | 'defaults';

/**
 * The scopes as the picker shows them, most specific first. Which one a scope inherits from is the
 * backend's to say (`SamplingSettings.source`).
 */
export const SCOPE_KINDS: readonly ScopeKind[] = ['chat', 'model', 'global'];

export const SOURCE_LABELS: Record<Source, string> = {
  chat: 'This chat',
  model: 'This model',
  global: 'All chats',
  defaults: 'Defaults',
};

/** The scope of that kind for `context`; null when there is no chat (or no model) to scope to. */
export function scopeFor(kind: ScopeKind, context: ScopeContext): SettingsScope | null {
  if (kind === 'chat') return context.chatId === null ? null : { kind, id: context.chatId };
  if (kind === 'model') return context.modelPath === null ? null : { kind, path: context.modelPath };
  return { kind: 'global' };
}

/** The label's key for the scope the backend says values come from (null: the defaults). */
export function sourceKind(source: SettingsScope | null): Source {
  return source?.kind ?? 'defaults';
}

/**
 * The scope the panel opens at, given where the values of the most specific scope come from
 * (`source`, as the backend says): that scope, or the global one when they are the defaults. So
 * what is shown is what the next reply uses, and an edit changes it where it is set: a chat with
 * its own settings is edited for itself, and a fresh install edits every chat (as before scopes
 * existed) instead of quietly giving each chat its own copy. A source this context cannot name
 * (another model's scope) leaves the panel at `asked`.
 */
export function openingScope(asked: ScopeKind, source: SettingsScope | null, context: ScopeContext): ScopeKind {
  if (source === null) return 'global';
  return deepEqual(scopeFor(source.kind, context), source) ? source.kind : asked;
}

// ---------------------------------------------------------------------------------------------
// Diffing

export function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Structural equality of JSON-like values (object key order does not matter). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual((a as never)[k], (b as never)[k]))
  );
}

export function isDefault(params: SamplingParams, defaults: SamplingParams, key: ParamKey): boolean {
  return deepEqual(params[key], defaults[key]);
}

/** The fields whose value differs from the default, in declaration order. */
export function changedKeys(params: SamplingParams, defaults: SamplingParams): ParamKey[] {
  return (Object.keys(FIELDS) as ParamKey[]).filter((k) => !isDefault(params, defaults, k));
}

// ---------------------------------------------------------------------------------------------
// Ranges, numbers and hints

export function rangeOf(ranges: readonly FieldRange[], key: string): FieldRange | undefined {
  return ranges.find((r) => r.key === key);
}

/** A range contract.json has for certain: a missing one is a stale contract, said at once. */
export function requiredRange(ranges: readonly FieldRange[], key: string): FieldRange {
  const range = rangeOf(ranges, key);
  if (!range) throw new Error(`contract.json has no range for ${key}`);
  return range;
}

/** Numbers as people read them: "0.95", "1,000,000", "−1". */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const text = Math.abs(n).toLocaleString('en-US', { maximumFractionDigits: 6 });
  return n < 0 ? `−${text}` : text;
}

/** "0 – 1"; empty when the backend sent no range for the field. */
export function formatRange(range: FieldRange | undefined): string {
  return range ? `${formatNumber(range.min)} – ${formatNumber(range.max)}` : '';
}

/** Parse a number box's text: the number, or why it is not usable. */
export function parseNumber(text: string, integer = false): { value: number } | { error: string } {
  const t = text.trim().replace(/^−/, '-');
  if (t === '' || t === '-' || t === '.') return { error: 'Enter a number' };
  const value = Number(t);
  if (!Number.isFinite(value)) return { error: 'Enter a number' };
  if (integer && !Number.isInteger(value)) return { error: 'Enter a whole number' };
  return { value };
}

/** A hint for a value outside the range the backend accepts; null when it is fine. */
export function rangeHint(value: number, range: Pick<FieldRange, 'min' | 'max'> | undefined): string | null {
  if (!range || (value >= range.min && value <= range.max)) return null;
  return `Must be between ${formatNumber(range.min)} and ${formatNumber(range.max)}`;
}

/** The default shown next to a field, e.g. "0.95", "random", "none". */
export function formatValue(key: ParamKey, value: SamplingParams[ParamKey]): string {
  if (value === null) return key === 'seed' ? 'random' : 'none';
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (typeof value === 'string') return key === 'draftModel' ? fileName(value) : value;
  if (Array.isArray(value)) {
    if (value.length === 0) return 'none';
    if (key === 'samplerOrder') {
      return deepEqual(value, SAMPLER_STAGES) ? 'all, in llama.cpp order' : value.map((s) => STAGE_LABELS[s as SamplerStage]).join(' → ');
    }
    if (key === 'logitBias') return `${value.length} ${value.length === 1 ? 'entry' : 'entries'}`;
    return (value as string[]).map(showEscapes).join('  ');
  }
  return constraintLabel((value as Constraint).kind);
}


export function constraintLabel(kind: ConstraintKind): string {
  return kind === 'gbnf' ? 'GBNF grammar' : kind === 'jsonSchema' ? 'JSON schema' : 'None';
}

export function isParamKey(key: string): key is ParamKey {
  return key in FIELDS;
}

// ---------------------------------------------------------------------------------------------
// Grammar

export type ConstraintKind = 'none' | Constraint['kind'];

export function constraintKind(c: Constraint | null): ConstraintKind {
  return c?.kind ?? 'none';
}

export function makeConstraint(kind: ConstraintKind, source: string): Constraint | null {
  if (kind === 'none') return null;
  return { kind, source };
}

/**
 * Why these params cannot be sent as they are (an unfinished edit the backend would only
 * reject), and the field; null when they can. Range checks are left to the backend, which owns them.
 */
export function unfinishedEdit(params: SamplingParams): FieldProblem | null {
  const c = params.constraint;
  const problem = (message: string): FieldProblem => ({ message, field: 'constraint' });
  if (c && c.source.trim() === '') {
    return problem(c.kind === 'gbnf' ? 'Write a GBNF grammar, or set Grammar to None.' : 'Write a JSON schema, or set Grammar to None.');
  }
  if (c?.kind === 'jsonSchema') {
    try {
      JSON.parse(c.source);
    } catch {
      return problem('The JSON schema is not valid JSON.');
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// String lists (stop strings, DRY sequence breakers)

/** Show invisible characters as escapes: a newline reads "\n". */
export function showEscapes(s: string): string {
  return s.replace(/[\\\n\r\t]/g, (c) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c] ?? c);
}

/** The inverse of showEscapes for typed text: "\n" becomes a newline; other backslashes stay. */
export function parseEscapes(s: string): string {
  return s.replace(/\\([\\nrt])/g, (_, c: string) => ({ '\\': '\\', n: '\n', r: '\r', t: '\t' })[c] ?? c);
}

/** Add a typed entry (escapes allowed); empty entries and duplicates are not added. */
export function addItem(list: readonly string[], typed: string): string[] {
  const item = parseEscapes(typed);
  if (item === '' || list.includes(item)) return [...list];
  return [...list, item];
}

export function removeAt<T>(list: readonly T[], index: number): T[] {
  return list.filter((_, i) => i !== index);
}

/** Move the entry at `index` by `delta` places; out-of-bounds moves change nothing. */
export function moveItem<T>(list: readonly T[], index: number, delta: number): T[] {
  const to = index + delta;
  if (index < 0 || index >= list.length || to < 0 || to >= list.length) return [...list];
  const out = [...list];
  const [item] = out.splice(index, 1);
  out.splice(to, 0, item);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Logit bias

export type BiasKind = BiasTarget['kind'];

/** The target typed in the "add" row, or why it is not usable. */
export function parseBiasTarget(kind: BiasKind, typed: string): { target: BiasTarget } | { error: string } {
  if (kind === 'token') {
    const t = typed.trim();
    if (!/^\d+$/.test(t) || Number(t) > U32_MAX) return { error: 'A token id is a whole number ≥ 0' };
    return { target: { kind: 'token', id: Number(t) } };
  }
  const text = parseEscapes(typed);
  if (text === '') return { error: 'Enter the text to bias' };
  return { target: { kind: 'text', text } };
}

export function isNever(bias: number): boolean {
  return bias <= NEVER_BIAS;
}

/** Turning "never" off leaves a neutral bias to edit. */
export function setNever(entry: LogitBias, never: boolean): LogitBias {
  if (never === isNever(entry.bias)) return entry;
  return { target: entry.target, bias: never ? NEVER_BIAS : 0 };
}

/** Add an entry; one for the same target replaces the old one. */
export function addBias(list: readonly LogitBias[], entry: LogitBias): LogitBias[] {
  return [...list.filter((e) => !deepEqual(e.target, entry.target)), entry];
}

export function describeTarget(target: BiasTarget): string {
  return target.kind === 'token' ? `#${target.id}` : `“${showEscapes(target.text)}”`;
}

// ---------------------------------------------------------------------------------------------
// Sampler order: the panel shows all nine stages; the params hold the checked ones in order.

/**
 * All stages in display order. Keeps `previous` (where unchecked stages sat) when it agrees with
 * `order`; otherwise the checked stages first, then the rest in llama.cpp's order.
 */
export function stageLayout(order: readonly SamplerStage[], previous?: readonly SamplerStage[]): SamplerStage[] {
  if (previous && previous.length === SAMPLER_STAGES.length && deepEqual(previous.filter((s) => order.includes(s)), order)) {
    return [...previous];
  }
  return [...order, ...SAMPLER_STAGES.filter((s) => !order.includes(s))];
}

/** The params' order after checking or unchecking `stage` in `layout`. */
export function toggleStage(order: readonly SamplerStage[], layout: readonly SamplerStage[], stage: SamplerStage, on: boolean): SamplerStage[] {
  return layout.filter((s) => (s === stage ? on : order.includes(s)));
}

/** Move `stage` one place up (-1) or down (+1): the new layout and the params' new order. */
export function moveStage(
  order: readonly SamplerStage[],
  layout: readonly SamplerStage[],
  stage: SamplerStage,
  delta: number,
): { layout: SamplerStage[]; order: SamplerStage[] } {
  const next = moveItem(layout, layout.indexOf(stage), delta);
  return { layout: next, order: next.filter((s) => order.includes(s)) };
}
