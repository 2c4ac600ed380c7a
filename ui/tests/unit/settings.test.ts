import { describe, expect, it } from 'vitest';
import type { FieldRange, LogitBias, SamplerStage, SamplingParams, SettingsScope } from '../../src/ipc/bindings';
import { saveStatusText, type SaveStatus } from '../../src/lib/autosave.svelte';
import {
  FIELDS,
  SAMPLER_STAGES,
  addBias,
  addItem,
  changedKeys,
  deepEqual,
  describeTarget,
  formatNumber,
  formatRange,
  formatValue,
  makeConstraint,
  matchingPreset,
  moveItem,
  moveStage,
  openingScope,
  parseBiasTarget,
  parseEscapes,
  parseNumber,
  presetSummary,
  rangeHint,
  rangeOf,
  removeAt,
  scopeFor,
  setNever,
  showEscapes,
  sourceKind,
  stageLayout,
  toggleStage,
  unfinishedEdit,
  NEVER_BIAS,
  STAGE_LABELS,
  type ParamKey,
  type ScopeContext,
  type ScopeKind,
} from '../../src/lib/settings';
import { BUILT_IN, CONTRACT, DEFAULTS, params } from './settings-fixtures';
import { table } from './helpers';

/** Ranges to format (their values need not be the backend's). */
const RANGES: FieldRange[] = [
  { key: 'topP', min: 0, max: 1, text: 'between 0 and 1', integer: false },
  { key: 'repeatLastN', min: -1, max: 1_000_000, text: '-1 (whole context) or between 0 and 1000000', integer: true },
  { key: 'presencePenalty', min: -2, max: 2, text: 'between -2 and 2', integer: false },
];

describe('FIELDS', () => {
  it('describes every SamplingParams field with a label and a one-line explanation', () => {
    expect(Object.keys(FIELDS).sort()).toEqual(Object.keys(DEFAULTS).sort());
    for (const [key, info] of Object.entries(FIELDS)) {
      expect(info.label, key).not.toBe('');
      expect(info.help.length, key).toBeGreaterThan(20);
      expect(info.help, key).not.toMatch(/\n/);
    }
  });
});

const MINE = { name: 'Terse', builtIn: false, params: params({ maxTokens: 128, temperature: 0.2, topP: 0.9, minP: 0.05, repeatPenalty: 1.05 }) };

table('matchingPreset: the first preset equal to the params', (p: SamplingParams) => matchingPreset(p, [...BUILT_IN, MINE])?.name ?? null, [
  [DEFAULTS, 'Balanced'],
  [params({ temperature: 0.2, topP: 0.9, minP: 0.05, repeatPenalty: 1.05 }), 'Precise'],
  [BUILT_IN[2].params, 'Creative'],
  [{ ...BUILT_IN[2].params, seed: 7 }, null],
  [MINE.params, 'Terse'],
  [params({ temperature: 0.7 }), null],
  [params({ stop: ['\n'] }), null],
]);

table('presetSummary: what a preset changes, for its tooltip', (i: number) => presetSummary([...BUILT_IN, MINE][i], DEFAULTS), [
  [0, 'Temperature 0.2 · Top-p 0.9 · Repeat penalty 1.05'],
  [1, 'The defaults'],
  [3, 'Temperature 0.2 · Top-p 0.9 · Repeat penalty 1.05 · Max new tokens 128'],
]);

const BOTH: ScopeContext = { chatId: 7, modelPath: '/m.gguf' };
const NO_CHAT: ScopeContext = { chatId: null, modelPath: '/m.gguf' };
const NO_MODEL: ScopeContext = { chatId: 7, modelPath: null };

table('scopeFor', ([kind, context]: [ScopeKind, ScopeContext]) => scopeFor(kind, context), [
  [['chat', BOTH], { kind: 'chat', id: 7 }],
  [['model', BOTH], { kind: 'model', path: '/m.gguf' }],
  [['global', BOTH], { kind: 'global' }],
  [['chat', NO_CHAT], null],
  [['model', NO_MODEL], null],
  [['global', { chatId: null, modelPath: null }], { kind: 'global' }],
]);

table('sourceKind: the label of where the backend says values come from', sourceKind, [
  [{ kind: 'chat', id: 7 }, 'chat'],
  [{ kind: 'model', path: '/m.gguf' }, 'model'],
  [{ kind: 'global' }, 'global'],
  [null, 'defaults'],
]);

table(
  'openingScope: the scope the values come from, else the global one',
  ([asked, source, context]: [ScopeKind, SettingsScope | null, ScopeContext]) => openingScope(asked, source, context),
  [
    [['chat', { kind: 'chat', id: 7 }, BOTH], 'chat'],
    [['chat', { kind: 'model', path: '/m.gguf' }, BOTH], 'model'],
    [['chat', { kind: 'global' }, BOTH], 'global'],
    [['chat', null, BOTH], 'global'],
    [['model', null, NO_CHAT], 'global'],
    [['chat', { kind: 'global' }, NO_MODEL], 'global'],
    // A scope this context cannot name: the panel stays where it asked.
    [['chat', { kind: 'model', path: '/other.gguf' }, BOTH], 'chat'],
  ],
);

describe('the contract data the panel reads', () => {
  it('has every sampler stage once, each with a label', () => {
    expect([...SAMPLER_STAGES].sort()).toEqual(Object.keys(STAGE_LABELS).sort());
    expect(SAMPLER_STAGES).toEqual(CONTRACT.samplerStageOrder);
  });
  it('takes "never" from the backend', () => {
    expect(NEVER_BIAS).toBe(CONTRACT.logitBiasNever);
  });
  it('has a number field for every range, its default in range (a whole number where the range says so)', () => {
    for (const range of CONTRACT.samplingRanges as FieldRange[]) {
      expect(FIELDS, range.key).toHaveProperty(range.key);
      const value = DEFAULTS[range.key as ParamKey];
      expect(typeof value, range.key).toBe('number');
      if (range.integer) expect(Number.isInteger(value), range.key).toBe(true);
      expect(rangeHint(value as number, range), range.key).toBeNull();
    }
  });
});

table('saveStatusText', (status: SaveStatus) => saveStatusText(status), [
  ['idle', ''],
  ['pending', 'Saving…'],
  ['saving', 'Saving…'],
  ['saved', 'Saved'],
  ['rejected', 'Not saved'],
  ['unfinished', 'Not saved'],
]);

table('deepEqual', ([a, b]: [unknown, unknown]) => deepEqual(a, b), [
  [[1, 1], true],
  [[0.95, 0.95], true],
  [[null, null], true],
  [[null, 0], false],
  [[[], []], true],
  [[['a'], ['a', 'b']], false],
  [[{ kind: 'text', text: 'x' }, { text: 'x', kind: 'text' }], true],
  [[{ kind: 'text', text: 'x' }, { kind: 'text', text: 'y' }], false],
  [[{ a: 1 }, { a: 1, b: undefined }], false],
  [[[1], { 0: 1 }], false],
]);

table('changedKeys', (p: SamplingParams) => changedKeys(p, DEFAULTS), [
  [DEFAULTS, []],
  [params({ topP: 0.9 }), ['topP']],
  [params({ seed: 42, stop: ['</s>'] }), ['seed', 'stop']],
  [params({ samplerOrder: [...SAMPLER_STAGES].reverse() }), ['samplerOrder']],
  [params({ logitBias: [{ target: { kind: 'token', id: 2 }, bias: -100 }] }), ['logitBias']],
  [params({ constraint: { kind: 'gbnf', source: 'root ::= "a"' }, ignoreEos: true }), ['ignoreEos', 'constraint']],
]);

table('rangeOf + formatRange', (key: string) => formatRange(rangeOf(RANGES, key)), [
  ['topP', '0 – 1'],
  ['repeatLastN', '−1 – 1,000,000'],
  ['presencePenalty', '−2 – 2'],
  ['seed', ''],
  ['nonsense', ''],
]);

table('formatNumber', formatNumber, [
  [0, '0'],
  [0.95, '0.95'],
  [1.05, '1.05'],
  [-1, '−1'],
  [1024, '1,024'],
  [1_000_000, '1,000,000'],
  [0.1 + 0.2, '0.3'],
  [Number.NaN, 'NaN'],
]);

table('parseNumber', ([text, integer]: [string, boolean]) => parseNumber(text, integer), [
  [['0.5', false], { value: 0.5 }],
  [[' 2 ', false], { value: 2 }],
  [['-1', true], { value: -1 }],
  [['−1', true], { value: -1 }],
  [['1e3', true], { value: 1000 }],
  [['.5', false], { value: 0.5 }],
  [['0.', false], { value: 0 }],
  [['', false], { error: 'Enter a number' }],
  [['-', true], { error: 'Enter a number' }],
  [['abc', false], { error: 'Enter a number' }],
  [['Infinity', false], { error: 'Enter a number' }],
  [['2.5', true], { error: 'Enter a whole number' }],
]);

table('rangeHint', ([value, key]: [number, string]) => rangeHint(value, rangeOf(RANGES, key)), [
  [[0.5, 'topP'], null],
  [[0, 'topP'], null],
  [[1, 'topP'], null],
  [[2, 'topP'], 'Must be between 0 and 1'],
  [[-0.1, 'topP'], 'Must be between 0 and 1'],
  [[-2, 'repeatLastN'], 'Must be between −1 and 1,000,000'],
  [[Number.NaN, 'topP'], 'Must be between 0 and 1'],
  [[123, 'seed'], null],
]);

table('formatValue (the default shown next to a field)', ([key, value]: [ParamKey, SamplingParams[ParamKey]]) => formatValue(key, value), [
  [['topP', 0.95], '0.95'],
  [['maxTokens', 1024], '1,024'],
  [['seed', null], 'random'],
  [['seed', 7], '7'],
  [['constraint', null], 'none'],
  [['constraint', { kind: 'jsonSchema', source: '{}' }], 'JSON schema'],
  [['mirostat', 'off'], 'off'],
  [['mirostat', 'v2'], 'v2'],
  [['ignoreEos', false], 'off'],
  [['stop', []], 'none'],
  [['drySequenceBreakers', ['\n', ':', '"', '*']], '\\n  :  "  *'],
  [['logitBias', [{ target: { kind: 'token', id: 1 }, bias: 1 }]], '1 entry'],
  [['draftModel', null], 'none'],
  [['draftModel', '/home/me/models/qwen2.5-0.5b-q8_0.gguf'], 'qwen2.5-0.5b-q8_0.gguf'],
  [['samplerOrder', [...SAMPLER_STAGES]], 'all, in llama.cpp order'],
  [['samplerOrder', ['minP', 'temperature']], 'Min-p → Temperature'],
]);

table('unfinishedEdit (not sent: the backend would only reject it)', (p: SamplingParams) => unfinishedEdit(p), [
  [DEFAULTS, null],
  [params({ constraint: makeConstraint('gbnf', 'root ::= "yes" | "no"') }), null],
  [params({ constraint: makeConstraint('gbnf', '  \n') }), { message: 'Write a GBNF grammar, or set Grammar to None.', field: 'constraint' }],
  [params({ constraint: makeConstraint('jsonSchema', '') }), { message: 'Write a JSON schema, or set Grammar to None.', field: 'constraint' }],
  [params({ constraint: makeConstraint('jsonSchema', '{"type": "object"}') }), null],
  [params({ constraint: makeConstraint('jsonSchema', '{"type": ') }), { message: 'The JSON schema is not valid JSON.', field: 'constraint' }],
  [params({ constraint: makeConstraint('none', 'root ::= "a"') }), null],
]);

table('showEscapes', showEscapes, [
  ['plain', 'plain'],
  ['\n', '\\n'],
  ['\n\nUser:', '\\n\\nUser:'],
  ['a\tb\r', 'a\\tb\\r'],
  ['back\\slash', 'back\\\\slash'],
]);

table('parseEscapes', parseEscapes, [
  ['plain', 'plain'],
  ['\\n', '\n'],
  ['\\n\\nUser:', '\n\nUser:'],
  ['\\t', '\t'],
  ['\\\\n', '\\n'],
  ['C:\\path', 'C:\\path'],
  ['ends with \\', 'ends with \\'],
]);

describe('escapes round-trip', () => {
  it.each(['\n', 'a\\b', '\\n literally', 'tab\there', '<|im_end|>'])('%j', (s) => {
    expect(parseEscapes(showEscapes(s))).toBe(s);
  });
});

table('addItem', ([list, typed]: [string[], string]) => addItem(list, typed), [
  [[[], '</s>'], ['</s>']],
  [[['a'], 'b'], ['a', 'b']],
  [[['a'], 'a'], ['a']],
  [[['a'], ''], ['a']],
  [[[], '\\n\\n'], ['\n\n']],
  [[['\n'], '\\n'], ['\n']],
  [[[], ' '], [' ']],
]);

table('removeAt', ([list, i]: [string[], number]) => removeAt(list, i), [
  [[['a', 'b', 'c'], 1], ['a', 'c']],
  [[['a'], 0], []],
  [[['a'], 3], ['a']],
]);

table('moveItem', ([list, i, d]: [string[], number, number]) => moveItem(list, i, d), [
  [[['a', 'b', 'c'], 1, -1], ['b', 'a', 'c']],
  [[['a', 'b', 'c'], 1, 1], ['a', 'c', 'b']],
  [[['a', 'b', 'c'], 0, -1], ['a', 'b', 'c']],
  [[['a', 'b', 'c'], 2, 1], ['a', 'b', 'c']],
  [[['a', 'b', 'c'], 5, -1], ['a', 'b', 'c']],
]);

table('parseBiasTarget', ([kind, typed]: ['token' | 'text', string]) => parseBiasTarget(kind, typed), [
  [['token', '128009'], { target: { kind: 'token', id: 128009 } }],
  [['token', ' 0 '], { target: { kind: 'token', id: 0 } }],
  [['token', '-1'], { error: 'A token id is a whole number ≥ 0' }],
  [['token', '1.5'], { error: 'A token id is a whole number ≥ 0' }],
  [['token', '4294967296'], { error: 'A token id is a whole number ≥ 0' }],
  [['token', ''], { error: 'A token id is a whole number ≥ 0' }],
  [['text', 'As an AI'], { target: { kind: 'text', text: 'As an AI' } }],
  [['text', ' Sure'], { target: { kind: 'text', text: ' Sure' } }],
  [['text', '\\n'], { target: { kind: 'text', text: '\n' } }],
  [['text', ''], { error: 'Enter the text to bias' }],
]);

const bias = (b: number, text = 'x'): LogitBias => ({ target: { kind: 'text', text }, bias: b });

table('setNever', ([entry, never]: [LogitBias, boolean]) => setNever(entry, never), [
  [[bias(2), true], bias(-100)],
  [[bias(-100), false], bias(0)],
  [[bias(-150), false], bias(0)],
  [[bias(-100), true], bias(-100)],
  [[bias(3), false], bias(3)],
]);

table('addBias (one entry per target)', ([list, entry]: [LogitBias[], LogitBias]) => addBias(list, entry), [
  [[[], bias(-100)], [bias(-100)]],
  [[[bias(1, 'a')], bias(-100, 'b')], [bias(1, 'a'), bias(-100, 'b')]],
  [[[bias(1, 'a'), bias(2, 'b')], bias(-100, 'a')], [bias(2, 'b'), bias(-100, 'a')]],
  [
    [[{ target: { kind: 'token', id: 5 }, bias: 1 }], { target: { kind: 'text', text: '5' }, bias: 1 }],
    [{ target: { kind: 'token', id: 5 }, bias: 1 }, { target: { kind: 'text', text: '5' }, bias: 1 }],
  ],
]);

table('describeTarget', describeTarget, [
  [{ kind: 'token', id: 13 }, '#13'],
  [{ kind: 'text', text: 'Sure' }, '“Sure”'],
  [{ kind: 'text', text: '\n' }, '“\\n”'],
]);

const ALL = [...SAMPLER_STAGES];

table('stageLayout', ([order, previous]: [SamplerStage[], SamplerStage[] | undefined]) => stageLayout(order, previous), [
  [[ALL, undefined], ALL],
  [[['temperature', 'minP'], undefined], ['temperature', 'minP', 'penalties', 'dry', 'topNSigma', 'topK', 'typicalP', 'topP', 'xtc']],
  [[[], undefined], ALL],
  // An unchecked stage keeps its place while the rest agrees with the order...
  [[ALL.filter((s) => s !== 'topK'), ALL], ALL],
  // ...but not once the order changed from elsewhere (a preset, a reset).
  [[['minP', 'topP'], ALL], ['minP', 'topP', 'penalties', 'dry', 'topNSigma', 'topK', 'typicalP', 'xtc', 'temperature']],
]);

table(
  'toggleStage',
  ([order, stage, on]: [SamplerStage[], SamplerStage, boolean]) => toggleStage(order, ALL, stage, on),
  [
    [[ALL, 'topK', false], ALL.filter((s) => s !== 'topK')],
    [[ALL.filter((s) => s !== 'topK'), 'topK', true], ALL],
    [[['minP', 'temperature'], 'topP', true], ['topP', 'minP', 'temperature']],
    [[['minP'], 'minP', false], []],
  ],
);

table(
  'moveStage',
  ([order, layout, stage, delta]: [SamplerStage[], SamplerStage[], SamplerStage, number]) => moveStage(order, layout, stage, delta),
  [
    [
      [ALL, ALL, 'temperature', -1],
      {
        layout: ['penalties', 'dry', 'topNSigma', 'topK', 'typicalP', 'topP', 'minP', 'temperature', 'xtc'],
        order: ['penalties', 'dry', 'topNSigma', 'topK', 'typicalP', 'topP', 'minP', 'temperature', 'xtc'],
      },
    ],
    [[ALL, ALL, 'penalties', -1], { layout: ALL, order: ALL }],
    [[ALL, ALL, 'temperature', 1], { layout: ALL, order: ALL }],
    // Moving an unchecked stage changes only where it sits.
    [
      [['penalties', 'topK'], ALL, 'dry', 1],
      {
        layout: ['penalties', 'topNSigma', 'dry', 'topK', 'typicalP', 'topP', 'minP', 'xtc', 'temperature'],
        order: ['penalties', 'topK'],
      },
    ],
    [
      [['penalties', 'topK'], ALL, 'topK', -1],
      {
        layout: ['penalties', 'dry', 'topK', 'topNSigma', 'typicalP', 'topP', 'minP', 'xtc', 'temperature'],
        order: ['penalties', 'topK'],
      },
    ],
  ],
);
