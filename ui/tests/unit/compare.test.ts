import { describe, expect, it } from 'vitest';
import type { Preset } from '../../src/ipc/bindings';
import {
  CHAT_BASE_LABEL,
  MAX_COLUMNS,
  baseKey,
  baseParams,
  buildVariants,
  columnSummary,
  defaultColumns,
  nextColumn,
  parseBaseKey,
  refusedColumn,
  variantOf,
  type CompareContext,
} from '../../src/lib/compare';
import { BUILT_IN, DEFAULTS, params } from './settings-fixtures';

const greedy: Preset = { name: 'Greedy', params: params({ temperature: 0 }), builtIn: false };
const ctx = (chat = params(), presets: Preset[] = [...BUILT_IN, greedy]): CompareContext => ({ chat, presets });

describe('compare: bases and variants', () => {
  it('says a base as a <select> value and reads it back', () => {
    expect(baseKey(null)).toBe('chat');
    expect(baseKey('Creative')).toBe('preset:Creative');
    expect(parseBaseKey('chat')).toBeNull();
    expect(parseBaseKey('preset:Creative')).toBe('Creative');
    expect(parseBaseKey(baseKey('preset: odd:name'))).toBe('preset: odd:name');
  });

  it("starts from the chat's settings or a preset's; a preset that is gone falls back to the chat's", () => {
    const chat = params({ temperature: 0.5, maxTokens: 64 });
    const creative = BUILT_IN.find((p) => p.name === 'Creative')!;
    expect(baseParams(null, ctx(chat))).toBe(chat);
    expect(baseParams('Creative', ctx(chat))).toBe(creative.params);
    expect(baseParams('Deleted', ctx(chat))).toBe(chat);
  });

  it('sends the whole settings of its base with its strategy, a fresh copy each time', () => {
    const chat = params({ temperature: 0.5, stop: ['###'] });
    const variant = variantOf({ base: null, strategy: 'beam' }, ctx(chat));
    expect(variant).toEqual({ ...chat, strategy: 'beam' });
    expect(variant).not.toBe(chat);
    variant.stop.push('more');
    expect(chat.stop).toEqual(['###']);
    expect(chat.strategy).toBe('sampling');

    const creative = BUILT_IN.find((p) => p.name === 'Creative')!;
    const variants = buildVariants(
      [
        { base: null, strategy: 'sampling' },
        { base: 'Creative', strategy: 'consensus' },
        { base: 'Greedy', strategy: 'beam' },
      ],
      ctx(chat),
    );
    expect(variants).toEqual([
      { ...chat, strategy: 'sampling' },
      { ...creative.params, strategy: 'consensus' },
      { ...greedy.params, strategy: 'beam' },
    ]);
    // Every field of SamplingParams is there: the backend takes them whole.
    for (const v of variants) expect(Object.keys(v).sort()).toEqual(Object.keys(DEFAULTS).sort());
  });

  it("opens with the chat's settings as they are and the same with beam search (sampling for a chat that searches)", () => {
    expect(defaultColumns(params())).toEqual([
      { base: null, strategy: 'sampling' },
      { base: null, strategy: 'beam' },
    ]);
    expect(defaultColumns(params({ strategy: 'consensus' }))).toEqual([
      { base: null, strategy: 'consensus' },
      { base: null, strategy: 'beam' },
    ]);
    expect(defaultColumns(params({ strategy: 'beam' }))).toEqual([
      { base: null, strategy: 'beam' },
      { base: null, strategy: 'sampling' },
    ]);
  });

  it('adds a column from the first built-in preset no column starts from, then the chat again', () => {
    const presets = [...BUILT_IN, greedy];
    const columns = defaultColumns(params());
    expect(nextColumn(columns, presets)).toEqual({ base: BUILT_IN[0].name, strategy: 'sampling' });
    expect(nextColumn([...columns, { base: BUILT_IN[0].name, strategy: 'beam' }], presets)).toEqual({ base: BUILT_IN[1].name, strategy: 'sampling' });
    const all = BUILT_IN.map((p) => ({ base: p.name, strategy: 'sampling' as const }));
    expect(nextColumn(all, presets)).toEqual({ base: null, strategy: 'sampling' });
    expect(MAX_COLUMNS).toBe(4);
  });
});

describe('compare: the one line under a column', () => {
  const summary = (base: string | null, strategy: 'sampling' | 'consensus' | 'beam', chat = params()) =>
    columnSummary({ base, strategy }, ctx(chat)).text;

  it("names the preset, the strategy with its main figure, and what differs from the chat's settings", () => {
    expect(summary(null, 'sampling')).toBe(CHAT_BASE_LABEL);
    expect(summary(null, 'beam')).toBe('Beam search · width 4');
    expect(summary(null, 'beam', params({ beamWidth: 2, nBest: 2 }))).toBe('Beam search · width 2');
    expect(summary(null, 'consensus')).toBe('Consensus · 8 candidates');
    // Creative changes six settings of the defaults: two named, the rest counted.
    expect(summary('Creative', 'sampling')).toBe('Creative · temperature 1.1 · top-k 0 · +4 more');
    // Precise changes three: all named rather than "+1 more".
    expect(summary('Precise', 'sampling')).toBe('Precise · temperature 0.2 · top-p 0.9 · repeat penalty 1.05');
    expect(summary('Balanced', 'sampling')).toBe('Balanced · same as this chat');
    expect(summary('Greedy', 'consensus')).toBe('Greedy · Consensus · 8 candidates · temperature 0');
  });

  it('is said against the chat’s settings, not the defaults', () => {
    const chat = params({ temperature: 1.1 });
    expect(summary('Creative', 'sampling', chat)).toBe('Creative · top-k 0 · top-p 0.98 · +3 more');
    expect(summary('Balanced', 'sampling', chat)).toBe('Balanced · temperature 0.8');
    // A chat that searches: plain sampling is worth saying.
    expect(summary(null, 'sampling', params({ strategy: 'beam' }))).toBe('Sampling');
  });

  it('leaves out what its strategy does not read', () => {
    // Beam search ranks by log-probability: temperature and truncation do not apply; a length limit does.
    expect(summary('Creative', 'beam')).toBe('Creative · Beam search · width 4');
    const long = { ...greedy, name: 'Long', params: params({ temperature: 0.3, maxTokens: 4096, lengthPenalty: 1.5 }) };
    const text = columnSummary({ base: 'Long', strategy: 'beam' }, ctx(params(), [long])).text;
    expect(text).toBe('Long · Beam search · width 4 · max new tokens 4,096 · length penalty 1.5');
    // Sampling does not read the beam or consensus fields; the inspector's topProbs never changes a reply, nor do
    // the rounds of tool calls (a comparison's replies call none).
    const odd = { ...greedy, name: 'Odd', params: params({ beamWidth: 8, mbrCandidates: 4, topProbs: 0, maxToolRounds: 2 }) };
    expect(columnSummary({ base: 'Odd', strategy: 'sampling' }, ctx(params(), [odd])).text).toBe('Odd · same as this chat');
    expect(columnSummary({ base: 'Odd', strategy: 'consensus' }, ctx(params(), [odd])).text).toBe('Odd · Consensus · 4 candidates');
  });

  it('lists every difference for the tooltip', () => {
    const { detail } = columnSummary({ base: 'Creative', strategy: 'sampling' }, ctx());
    expect(detail.split('\n')).toEqual([
      'Starts from the preset Creative; sampling.',
      'Temperature 1.1',
      'Top-k 0',
      'Top-p 0.98',
      'Min-p 0.02',
      'XTC probability 0.5',
      'DRY multiplier 0.8',
    ]);
    expect(columnSummary({ base: null, strategy: 'beam' }, ctx()).detail).toBe("Starts from this chat's settings; beam search.");
  });
});

describe('compare: refusals', () => {
  it('finds the column a refusal names', () => {
    expect(refusedColumn('settings 2: topP must be between 0 and 1, got 2')).toBe(1);
    expect(refusedColumn('settings 1: temperature must be above 0 for consensus decoding (its candidates are sampled), got 0')).toBe(0);
    expect(refusedColumn('Settings 3: …')).toBe(2);
    expect(refusedColumn('compare 2 to 4 settings, not 1')).toBeNull();
    expect(refusedColumn('this chat is already generating a reply; wait for it or press Stop')).toBeNull();
  });
});
