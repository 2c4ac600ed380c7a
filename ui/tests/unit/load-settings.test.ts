import { describe, expect, it } from 'vitest';
import type { FieldRange, LoadParams, ModelInfo } from '../../src/ipc/bindings';
import {
  LOAD_FIELDS,
  LOAD_KEYS,
  autoChoice,
  customStart,
  formatLoadValue,
  fromChoice,
  inUse,
  isLoadKey,
  loadNote,
  projectorOptions,
  templateValue,
  unfinishedLoadEdit,
  type AutoChoice,
  type LoadKey,
} from '../../src/lib/load-settings';
import { CONTRACT, LOAD_DEFAULTS, loadParams, model } from './settings-fixtures';
import { table } from './helpers';

describe('LOAD_FIELDS', () => {
  it('describes every LoadParams field with a label, a one-line explanation and a control', () => {
    expect([...LOAD_KEYS].sort()).toEqual(Object.keys(LOAD_DEFAULTS).sort());
    for (const [key, info] of Object.entries(LOAD_FIELDS)) {
      expect(info.label, key).not.toBe('');
      expect(info.help.length, key).toBeGreaterThan(20);
      expect(info.help, key).not.toMatch(/\n/);
    }
  });
  it('edits every load setting the backend gives a range with a number box (whole numbers: all are u32)', () => {
    for (const range of CONTRACT.loadRanges as FieldRange[]) {
      expect(isLoadKey(range.key), range.key).toBe(true);
      expect(['number', 'auto'], range.key).toContain(LOAD_FIELDS[range.key as LoadKey].control.kind);
      expect(range.integer, range.key).toBe(true);
    }
  });
  it('offers every KV cache type and flash attention mode the backend knows', () => {
    const values = (key: LoadKey) => {
      const c = LOAD_FIELDS[key].control;
      return c.kind === 'choice' ? c.options.map((o) => o.value) : [];
    };
    expect(values('kvCacheType')).toEqual(['f16', 'q8_0', 'q4_0']);
    expect(values('flashAttention')).toEqual(['auto', 'on', 'off']);
  });
});

table('formatLoadValue: the default shown next to a field', ([key, value]: [LoadKey, LoadParams[LoadKey]]) => formatLoadValue(key, value), [
  [['nCtx', null], 'auto'],
  [['nCtx', 4096], '4,096'],
  [['nGpuLayers', null], 'auto'],
  [['nGpuLayers', 0], 'none'],
  [['nGpuLayers', 20], '20'],
  [['useMmap', true], 'on'],
  [['useMlock', false], 'off'],
  [['kvCacheType', 'q8_0'], 'q8_0'],
  [['chatTemplate', null], "none (the model's own)"],
  [['chatTemplate', '{{ x }}'], 'override'],
  [['projector', null], 'auto (the one beside the model)'],
  [['projector', '/m/mmproj-x-Q8_0.gguf'], 'mmproj-x-Q8_0.gguf'],
  [['imageMaxTokens', null], "auto (the projector's own)"],
  [['imageMaxTokens', 1024], '1,024'],
]);

table('inUse: what the loaded model runs with, "auto" resolved', ([key, load, over]: [LoadKey, LoadParams, Partial<ModelInfo>?]) => inUse(key, model(load, over)), [
  [['nCtx', loadParams()], 'Auto (8,192 of 8,192 trained)'],
  [['nCtx', loadParams({ nCtx: 4096 })], '4,096 of 8,192 trained'],
  [['nThreads', loadParams()], 'Auto (8)'],
  [['nThreads', loadParams(), { nThreadsBatch: 16 }], 'Auto (8 writing, 16 reading the prompt)'],
  [['nThreads', loadParams({ nThreads: 4 })], '4'],
  [['nGpuLayers', loadParams()], 'Auto'],
  [['nGpuLayers', loadParams({ nGpuLayers: 0 })], 'None'],
  [['flashAttention', loadParams()], 'Auto'],
  [['useMlock', loadParams()], 'Off'],
  [['chatTemplate', loadParams()], "The model's own"],
  [['projector', loadParams(), { projector: '/m/mmproj-x-f16.gguf' }], 'Auto (mmproj-x-f16.gguf)'],
  [['projector', loadParams()], 'Auto (none beside the model: it reads text only)'],
  [['projector', loadParams({ projector: '/m/mmproj-x-Q8_0.gguf' }), { projector: '/m/mmproj-x-Q8_0.gguf' }], 'mmproj-x-Q8_0.gguf'],
  [['projector', loadParams({ projector: '/elsewhere/mmproj-y.gguf' })], 'None: the projector was refused, the model reads text only'],
  [['imageMinTokens', loadParams()], "Auto (the projector's own)"],
  [['imageMaxTokens', loadParams({ imageMaxTokens: 512 })], '512'],
]);

table(
  'projectorOptions: auto, each projector beside the model, and one chosen elsewhere, marked',
  ([found, chosen]: [string[], string | null]) => projectorOptions(found, chosen).map((o) => [o.value, o.label]),
  [
    [[[], null], [['auto', 'Auto (the one beside the model)']]],
    [
      [['/m/mmproj-f16.gguf', '/m/mmproj-q8.gguf'], '/m/mmproj-q8.gguf'],
      [
        ['auto', 'Auto (the one beside the model)'],
        ['/m/mmproj-f16.gguf', 'mmproj-f16.gguf'],
        ['/m/mmproj-q8.gguf', 'mmproj-q8.gguf'],
      ],
    ],
    [
      [['/m/mmproj-f16.gguf'], '/o/mmproj-z.gguf'],
      [
        ['auto', 'Auto (the one beside the model)'],
        ['/m/mmproj-f16.gguf', 'mmproj-f16.gguf'],
        ['/o/mmproj-z.gguf', 'mmproj-z.gguf (not beside the model)'],
      ],
    ],
  ],
);

table(
  'loadNote: what is in use until a reload, or what auto resolved to',
  ([key, screen, loaded]: [LoadKey, LoadParams, LoadParams]) => loadNote(key, screen, model(loaded)),
  [
    [['nCtx', loadParams(), loadParams()], { text: 'In use: Auto (8,192 of 8,192 trained)', pending: false }],
    [['nCtx', loadParams({ nCtx: 4096 }), loadParams()], { text: 'In use until reload: Auto (8,192 of 8,192 trained)', pending: true }],
    [['nCtx', loadParams(), loadParams({ nCtx: 2048 })], { text: 'In use until reload: 2,048 of 8,192 trained', pending: true }],
    [['nThreads', loadParams(), loadParams()], { text: 'In use: Auto (8)', pending: false }],
    [['nBatch', loadParams(), loadParams()], null],
    [['kvCacheType', loadParams({ kvCacheType: 'q4_0' }), loadParams()], { text: 'In use until reload: F16', pending: true }],
    [['useMmap', loadParams({ useMmap: false }), loadParams()], { text: 'In use until reload: On', pending: true }],
  ],
);

table('autoChoice', ([value, none]: [number | null, boolean]) => autoChoice(value, none), [
  [[null, false], 'auto'],
  [[4096, false], 'custom'],
  [[0, true], 'none'],
  [[0, false], 'custom'],
  [[12, true], 'custom'],
]);

table('fromChoice', ([choice, custom]: [AutoChoice, number]) => fromChoice(choice, custom), [
  [['auto', 4096], null],
  [['none', 4096], 0],
  [['custom', 4096], 4096],
]);

table('customStart: a Custom number starts at what is in use', ([key, load]: [LoadKey, LoadParams]) => customStart(key, model(load)), [
  [['nCtx', loadParams()], 8192],
  [['nThreads', loadParams()], 8],
  [['nGpuLayers', loadParams()], 32],
  [['nGpuLayers', loadParams({ nGpuLayers: 0 })], 32],
  [['nGpuLayers', loadParams({ nGpuLayers: 20 })], 20],
  [['imageMinTokens', loadParams()], 256],
  [['imageMaxTokens', loadParams()], 1024],
  [['imageMaxTokens', loadParams({ imageMaxTokens: 400 })], 400],
]);

table('templateValue: blank text is the model\'s own template', templateValue, [
  ['', null],
  ['  \n ', null],
  ['{{ messages }}', '{{ messages }}'],
  [' {{ x }} ', ' {{ x }} '],
]);

table('unfinishedLoadEdit: numbers the backend cannot even parse are not sent', (p: LoadParams) => unfinishedLoadEdit(p), [
  [loadParams(), null],
  [loadParams({ nCtx: 4096, nGpuLayers: 0 }), null],
  [loadParams({ nCtx: -1 }), { message: 'Context length must be a whole number from 0 to 4,294,967,295.', field: 'nCtx' }],
  [loadParams({ nBatch: 5e9 }), { message: 'Batch size must be a whole number from 0 to 4,294,967,295.', field: 'nBatch' }],
]);

