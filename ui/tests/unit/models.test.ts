import { describe, expect, it } from 'vitest';
import type { Download, FitEstimate, HubTokenStatus, LibraryModel, ModelFacts, RepoQuant } from '../../src/ipc/bindings';
import {
  FIT_CONTEXT_RANGE,
  bytesText,
  countText,
  defaultFitContext,
  deleteWords,
  downloadDetail,
  downloadPercent,
  downloadStateText,
  errorKind,
  etaText,
  factsList,
  fitContextProblem,
  fitWords,
  importText,
  isActive,
  isGguf,
  messageText,
  paramsText,
  partsText,
  quantBits,
  repoMeta,
  repoParts,
  sortQuants,
  speedText,
  sumBytes,
  tokenStorageText,
  updatedText,
} from '../../src/lib/models';
import { formatNumber } from '../../src/lib/settings';
import { CONTRACT } from '../contract.mjs';
import { table } from './helpers';

const GB = 1e9;
const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);
const DAY = 86_400_000;

const download = (over: Partial<Download> = {}): Download => ({
  id: 'dl-1',
  repo: 'HuggingFaceTB/SmolLM2-135M-Instruct-GGUF',
  quant: 'Q8_0',
  files: ['smollm2-135m-instruct-q8_0.gguf'],
  state: 'running',
  doneBytes: 1.2 * GB,
  totalBytes: 4.1 * GB,
  bytesPerSecond: 23.4e6,
  etaSeconds: 120,
  attempt: 1,
  maxAttempts: 8,
  retryInS: null,
  error: null,
  modelPath: null,
  ...over,
});

const facts = (over: Partial<ModelFacts> = {}): ModelFacts => ({
  architecture: 'llama',
  parameters: 134_515_008,
  quantization: 'Q4_1',
  contextLength: 8192,
  layers: 30,
  hasChatTemplate: true,
  reasoning: { kind: 'none' },
  embedding: false,
  ...over,
});

const fit = (over: Partial<FitEstimate> = {}): FitEstimate => ({
  facts: facts(),
  contextLength: 8192,
  weightsBytes: 2.1 * GB,
  kvCacheBytes: 0.5 * GB,
  computeBytes: 0.3 * GB,
  totalBytes: 2.9 * GB,
  freeRamBytes: 12.4 * GB,
  freeVramBytes: null,
  verdict: { kind: 'fits' },
  ...over,
});

const quant = (q: string, sizeBytes: number, parts = 1): RepoQuant => ({
  quant: q,
  files: Array.from({ length: parts }, (_, i) => `${q}-${i + 1}.gguf`),
  projector: null,
  sizeBytes,
});

table('bytesText: 0 included', bytesText, [
  [0, '0 B'],
  [512, '512 B'],
  [1_234_567, '1.2 MB'],
  [4.1 * GB, '4.1 GB'],
]);

table('speedText: nothing when nothing moves', speedText, [
  [23.4e6, '23.4 MB/s'],
  [850_000, '850.0 KB/s'],
  [0, ''],
  [Number.NaN, ''],
]);

table('etaText: seconds, then minutes rounded up, then hours', etaText, [
  [null, ''],
  [-1, ''],
  [Number.POSITIVE_INFINITY, ''],
  [0.2, '1 s left'],
  [45, '45 s left'],
  [59.5, '1 min left'],
  [60, '1 min left'],
  [61, '2 min left'],
  [120, '2 min left'],
  [3599, '1 h left'],
  [3600, '1 h left'],
  [3900, '1 h 5 min left'],
  [25 * 3600, 'more than a day left'],
]);

table('paramsText: as models are named', paramsText, [
  [134_515_008, '135M'],
  [494_032_768, '494M'],
  [68_530_000, '69M'],
  [1_711_376_384, '1.7B'],
  [3_212_749_824, '3.2B'],
  [8_030_261_248, '8B'],
  [70_553_706_496, '71B'],
  [999_999_999, '1B'],
  [850_000, '850K'],
  [999, '999'],
  [null, ''],
  [0, ''],
]);

table('countText: downloads and likes', countText, [
  [0, '0'],
  [937, '937'],
  [1000, '1k'],
  [48_211, '48.2k'],
  [301_544, '302k'],
  [999_499, '999k'],
  [999_500, '1M'],
  [1_204_410, '1.2M'],
  [12_345_678, '12.3M'],
]);

describe('updatedText and repoMeta', () => {
  it('says when a repository was updated, relatively', () => {
    expect(updatedText(new Date(NOW - 3 * DAY - 3_600_000).toISOString(), NOW)).toBe('updated 3 days ago');
    expect(updatedText(new Date(NOW - 5 * 3_600_000).toISOString(), NOW)).toBe('updated 5 h ago');
    expect(updatedText(null, NOW)).toBe('');
    expect(updatedText('not a date', NOW)).toBe('');
  });

  it('puts downloads, likes and the update on one line; singular when one', () => {
    const updatedAt = new Date(NOW - DAY).toISOString();
    expect(repoMeta({ downloads: 48_211, likes: 37, updatedAt }, NOW)).toBe('48.2k downloads · 37 likes · updated yesterday');
    expect(repoMeta({ downloads: 1, likes: 1, updatedAt: null }, NOW)).toBe('1 download · 1 like');
  });
});

table('repoParts', repoParts, [
  ['Qwen/Qwen2.5-7B-Instruct-GGUF', { owner: 'Qwen', name: 'Qwen2.5-7B-Instruct-GGUF' }],
  ['gpt2', { owner: '', name: 'gpt2' }],
]);

table('partsText: only for split files', partsText, [
  [['a.gguf'], ''],
  [['a-1.gguf', 'a-2.gguf', 'a-3.gguf'], '3 parts'],
]);

table('quantBits', quantBits, [
  ['Q4_K_M', 4],
  ['q8_0', 8],
  ['IQ3_XXS', 3],
  ['TQ1_0', 1],
  ['MXFP4', 4],
  ['F16', 16],
  ['BF16', 16],
  ['F32', 32],
  ['UD-Q4_K_XL', null],
  ['other', null],
]);

describe('sortQuants', () => {
  it('orders by bits, then size, then name; unknown names last; leaves the input alone', () => {
    const input = [
      quant('F16', 270 * 1e6, 2),
      quant('Q8_0', 145 * 1e6),
      quant('mystery', 10 * 1e6),
      quant('Q4_1', 98 * 1e6),
      quant('Q4_0', 91 * 1e6),
      quant('IQ4_XS', 91 * 1e6),
      quant('BF16', 270 * 1e6),
    ];
    expect(sortQuants(input).map((q) => q.quant)).toEqual(['IQ4_XS', 'Q4_0', 'Q4_1', 'Q8_0', 'BF16', 'F16', 'mystery']);
    expect(input[0].quant).toBe('F16');
  });
});

table('sumBytes: one unit across the sum', ([bytes, total]: [number, number]) => sumBytes(bytes, total), [
  [[2.1 * GB, 2.9 * GB], '2.1 GB'],
  [[0.3 * GB, 2.9 * GB], '0.3 GB'],
  [[0.04 * GB, 2.9 * GB], '0.04 GB'],
  [[0, 2.9 * GB], '0.0 GB'],
  [[98_402_592, 327e6], '98 MB'],
]);

describe('fitWords', () => {
  it('fits: green, with the sum against free RAM', () => {
    expect(fitWords(fit())).toEqual({
      tone: 'fits',
      verdict: 'Fits in memory',
      detail: 'weights 2.1 GB + KV cache 0.5 GB at 8,192 tokens + compute 0.3 GB = 2.9 GB of 12.4 GB free RAM',
    });
  });

  it('some layers on the GPU: amber, and the VRAM said first', () => {
    const words = fitWords(fit({ verdict: { kind: 'gpuLayers', layers: 24, totalLayers: 28 }, freeVramBytes: 6 * GB }));
    expect(words.tone).toBe('partial');
    expect(words.verdict).toBe('Fits with 24 of 28 layers on GPU');
    expect(words.detail).toMatch(/= 2\.9 GB of 6\.0 GB free VRAM and 12\.4 GB free RAM$/);
  });

  it('too large: red', () => {
    expect(fitWords(fit({ verdict: { kind: 'tooLarge' } }))).toMatchObject({ tone: 'tooLarge', verdict: 'Too large for this machine' });
  });

  it('small models in MB', () => {
    const small = fit({ weightsBytes: 98_402_592, kvCacheBytes: 188_743_680, computeBytes: 40e6, totalBytes: 327_146_272 });
    expect(fitWords(small).detail).toBe('weights 98 MB + KV cache 189 MB at 8,192 tokens + compute 40 MB = 327 MB of 12.4 GB free RAM');
  });
});

table('defaultFitContext: the model\'s own, else the one the backend assumes', defaultFitContext, [
  [facts(), 8192],
  [facts({ contextLength: null }), CONTRACT.fitContextFallback],
  [facts({ contextLength: 0 }), CONTRACT.fitContextFallback],
]);

describe('fitContextProblem: a fit is checked at a context a model may be loaded with', () => {
  const nCtx = CONTRACT.loadRanges.find((r: { key: string }) => r.key === 'nCtx');
  it('takes the load settings\' range from the contract', () => {
    expect(FIT_CONTEXT_RANGE).toEqual(nCtx);
  });
  it('accepts whole numbers in it, both ends included', () => {
    for (const ok of [nCtx.min, 4096, nCtx.max]) expect(fitContextProblem(ok)).toBeNull();
  });
  it('says the range otherwise', () => {
    const problem = `The context length is a whole number of tokens, between ${formatNumber(nCtx.min)} and ${formatNumber(nCtx.max)}.`;
    for (const bad of [nCtx.min - 1, nCtx.max + 1, 4096.5, Number.NaN]) expect(fitContextProblem(bad)).toBe(problem);
  });
});

describe('factsList', () => {
  it('says each fact as it reads on its own, with its label', () => {
    expect(factsList(facts()).map((f) => [f.label, f.value])).toEqual([
      ['Architecture', 'llama'],
      ['Parameters', '135M parameters'],
      ['Quantization', 'Q4_1'],
      ['Context length', '8,192-token context'],
      ['Chat template', 'chat template'],
    ]);
  });

  it('says how the model reasons where its template does', () => {
    const reasoning = (format: ModelFacts['reasoning']) => factsList(facts({ reasoning: format })).find((f) => f.key === 'reasoning')?.value;
    expect(reasoning({ kind: 'thinkTags', switchable: true })).toBe('reasons, can be switched off');
    expect(reasoning({ kind: 'thinkTags', switchable: false })).toBe('reasons');
    expect(reasoning({ kind: 'channels' })).toBe('reasons in channels');
    expect(reasoning({ kind: 'none' })).toBeUndefined();
  });

  it('says an embedding model is one, in place of its chat template', () => {
    const values = factsList(facts({ architecture: 'bert', embedding: true, hasChatTemplate: false })).map((f) => f.value);
    expect(values).toContain('embedding model, for search by meaning');
    expect(values).not.toContain('no chat template');
  });

  it('leaves out what the header does not say, never the chat template', () => {
    const bare = facts({ architecture: null, parameters: null, quantization: null, contextLength: null, hasChatTemplate: false });
    expect(factsList(bare)).toEqual([{ key: 'hasChatTemplate', label: 'Chat template', value: 'no chat template' }]);
  });
});

table('isActive: not finished yet', (state: Download['state']) => isActive({ state }), [
  ['queued', true],
  ['running', true],
  ['paused', true],
  ['retrying', true],
  ['verifying', true],
  ['done', false],
  ['failed', false],
  ['cancelled', false],
]);

table('downloadPercent', (d: Partial<Download>) => downloadPercent(download(d)), [
  [{ doneBytes: 0 }, 0],
  [{ doneBytes: 1.2 * GB, totalBytes: 4.1 * GB }, 29],
  [{ doneBytes: 4.1 * GB }, 100],
  [{ doneBytes: 5 * GB }, 100],
  [{ totalBytes: 0, doneBytes: 0 }, 0],
  [{ state: 'done', doneBytes: 0, totalBytes: 0 }, 100],
]);

table('downloadStateText', (d: Partial<Download>) => downloadStateText(download(d)), [
  [{ state: 'queued' }, 'Queued'],
  [{ state: 'running' }, 'Downloading'],
  [{ state: 'paused' }, 'Paused'],
  [{ state: 'retrying', retryInS: 4, attempt: 2 }, 'Retrying in 4 s (attempt 2 of 8)…'],
  [{ state: 'retrying', retryInS: 0, attempt: 3 }, 'Retrying (attempt 3 of 8)…'],
  [{ state: 'retrying', retryInS: null, attempt: 3 }, 'Retrying (attempt 3 of 8)…'],
  [{ state: 'verifying' }, 'Verifying (checksum)…'],
  [{ state: 'done' }, 'Done'],
  [{ state: 'failed' }, 'Failed'],
  [{ state: 'cancelled' }, 'Cancelled'],
]);

describe('downloadStateText counting down', () => {
  it('takes the seconds left as counted here over the ones sent', () => {
    expect(downloadStateText(download({ state: 'retrying', retryInS: 8, attempt: 2 }), 3)).toBe('Retrying in 3 s (attempt 2 of 8)…');
  });
});

table('downloadDetail: speed and time left only while bytes move', (d: Partial<Download>) => downloadDetail(download(d)), [
  [{}, '1.2 GB of 4.1 GB · 23.4 MB/s · 2 min left'],
  [{ etaSeconds: null }, '1.2 GB of 4.1 GB · 23.4 MB/s'],
  [{ bytesPerSecond: 0, etaSeconds: null }, '1.2 GB of 4.1 GB'],
  [{ state: 'paused' }, '1.2 GB of 4.1 GB'],
  [{ state: 'queued', doneBytes: 0 }, '0 B of 4.1 GB'],
  [{ state: 'failed' }, '1.2 GB of 4.1 GB'],
  [{ state: 'done', doneBytes: 4.1 * GB }, '4.1 GB'],
  [{ state: 'cancelled' }, 'The partial file was deleted.'],
]);

table('deleteWords: a linked file is only forgotten', (m: Pick<LibraryModel, 'source' | 'sizeBytes'>) => deleteWords(m), [
  [{ source: 'hubCache', sizeBytes: 2.1 * GB }, { button: 'Delete', question: 'Delete this model file (2.1 GB)?', confirm: 'Delete' }],
  [{ source: 'copied', sizeBytes: 0 }, { button: 'Delete', question: 'Delete this model file?', confirm: 'Delete' }],
  [{ source: 'linked', sizeBytes: 2.1 * GB }, { button: 'Remove', question: 'Remove from library (the file stays)?', confirm: 'Remove' }],
]);

const FILE = { kind: 'file' as const, path: '/home/me/.local/share/hearth/keys.json', reason: 'no Secret Service is running' };
table('tokenStorageText: as a provider key is said', (s: HubTokenStatus) => tokenStorageText(s), [
  [{ stored: true, storage: { kind: 'keychain' } }, { text: 'Token saved in the system keychain.', warn: false }],
  [
    { stored: true, storage: FILE },
    { text: 'No keychain answered: the token is saved in /home/me/.local/share/hearth/keys.json (readable only by you). no Secret Service is running', warn: true },
  ],
  [{ stored: false, storage: null }, { text: 'No token saved: public models need none.', warn: false }],
]);

table('isGguf', isGguf, [
  ['/x/model.gguf', true],
  ['/x/MODEL.GGUF', true],
  ['/x/notes.txt', false],
  ['/x/model.gguf.part', false],
]);

describe('importText', () => {
  const model = (name: string) => ({ name }) as LibraryModel;
  it('names what came in, what failed and why, what was skipped', () => {
    expect(importText({ imported: [model('gemma-2-2b-it-Q4_K_M')], failed: [], skipped: [] })).toEqual({
      tone: 'done',
      text: 'Imported gemma-2-2b-it-Q4_K_M.',
    });
    expect(importText({ imported: [model('a'), model('b')], failed: [], skipped: ['/x/notes.txt'] })).toEqual({
      tone: 'done',
      text: 'Imported 2 models. Only .gguf files can be imported: notes.txt was skipped.',
    });
    expect(importText({ imported: [], failed: [{ path: '/x/bad.gguf', error: 'bad.gguf is not a GGUF file' }], skipped: ['/a.txt', '/b.png'] })).toEqual({
      tone: 'error',
      text: 'bad.gguf was not imported: bad.gguf is not a GGUF file. Only .gguf files can be imported: a.txt, b.png were skipped.',
    });
    expect(importText({ imported: [], failed: [], skipped: [] })).toEqual({ tone: 'error', text: 'Nothing to import.' });
  });
});

table('messageText: a sentence, unless it starts with a name', messageText, [
  ['the download stopped: the disk is full', 'The download stopped: the disk is full'],
  ['could not reach huggingface.co', 'Could not reach huggingface.co'],
  ['broken.gguf is truncated', 'broken.gguf is truncated'],
  ['meta-llama/Llama-3.2-1B-Instruct-GGUF is gated', 'meta-llama/Llama-3.2-1B-Instruct-GGUF is gated'],
  ['Already a sentence.', 'Already a sentence.'],
  ['', ''],
]);

table('errorKind', errorKind, [
  [{ kind: 'hubAuth', message: 'x' }, 'hubAuth'],
  [{ message: 'x' }, null],
  ['plain', null],
  [null, null],
]);
