import { describe, expect, it } from 'vitest';
import type { KeyStorage, ModelTarget, ProviderConfig, ProviderKind } from '../../src/ipc/bindings';
import {
  KINDS,
  PROVIDER_KINDS,
  SLUG_MAX,
  configOf,
  connectionText,
  formChanged,
  formOf,
  isPlainHttp,
  keyStorageText,
  kindNote,
  newProviderForm,
  newProviderId,
  parseContextLength,
  parseModelList,
  retryLabel,
  sameTarget,
  savedText,
  secondsLeft,
  targetLabel,
  withKind,
  type ProviderForm,
} from '../../src/lib/providers';
import { menuStep } from '../../src/lib/menu';
import { CONTRACT } from '../contract.mjs';
import { table } from './helpers';

/** The base URL the backend gives a new provider of `kind`. */
const defaultUrl = (kind: ProviderKind): string => CONTRACT.providerKinds[kind].defaultBaseUrl;

const config = (over: Partial<ProviderConfig> = {}): ProviderConfig => ({
  id: 'groq-1',
  name: 'Groq',
  kind: 'openAiCompatible',
  baseUrl: 'https://api.groq.com/openai/v1',
  models: ['llama-3.1-8b-instant'],
  contextLength: null,
  extensions: false,
  tokenizerRepo: null,
  allowPlainHttp: false,
  ...over,
});
const form = (over: Partial<ProviderForm> = {}): ProviderForm => ({ ...formOf(config()), ...over });

table(
  'newProviderId: a slug of the name and the first free number',
  ([name, taken]: [string, string[]]) => newProviderId(name, taken),
  [
    [['My vLLM', []], 'my-vllm-1'],
    [['My vLLM', ['my-vllm-1', 'my-vllm-2']], 'my-vllm-3'],
    [['My vLLM', ['my-vllm-2']], 'my-vllm-1'],
    [['  Groq (fast!) ', []], 'groq-fast-1'],
    [['Café Über', []], 'cafe-uber-1'],
    [['', []], 'provider-1'],
    [['日本語', ['provider-1']], 'provider-2'],
    [['x'.repeat(SLUG_MAX + 32), []], `${'x'.repeat(SLUG_MAX)}-1`],
    [[`${'a'.repeat(SLUG_MAX - 1)} b`, []], `${'a'.repeat(SLUG_MAX - 1)}-1`],
  ],
);

const PROVIDER_ID = new RegExp(`^[A-Za-z0-9_-]{1,${CONTRACT.providerIdMaxLength}}$`);

table(`newProviderId: always a valid backend id (1–${CONTRACT.providerIdMaxLength} of A-Za-z0-9-_)`, (name: string) => PROVIDER_ID.test(newProviderId(name, [])), [
  ['OpenRouter', true],
  ['---', true],
  ['a/b\\c d', true],
  ['🔥'.repeat(40), true],
]);

table('parseModelList: comma- or line-separated, trimmed, no blanks or repeats', parseModelList, [
  ['', []],
  ['gpt-4o-mini', ['gpt-4o-mini']],
  [' a, b ,,c ', ['a', 'b', 'c']],
  ['a\nb, a', ['a', 'b']],
  ['Qwen/Qwen2.5-7B-Instruct, llama3', ['Qwen/Qwen2.5-7B-Instruct', 'llama3']],
]);

table('parseContextLength: empty is the default; a whole number of tokens otherwise', parseContextLength, [
  ['', { value: null }],
  ['   ', { value: null }],
  ['8192', { value: 8192 }],
  ['128,000', { value: 128000 }],
  [' 32 768 ', { value: 32768 }],
  ['0', { value: 0 }], // the backend says why 0 is refused
  ['1.5', { problem: 'the context length must be a whole number of tokens (or empty for the default), not "1.5"' }],
  ['-3', { problem: 'the context length must be a whole number of tokens (or empty for the default), not "-3"' }],
  ['lots', { problem: 'the context length must be a whole number of tokens (or empty for the default), not "lots"' }],
  ['5000000000', { problem: 'the context length must be a whole number of tokens (or empty for the default), not "5000000000"' }],
]);

table('configOf: the config to save from the form', ([id, f]: [string, ProviderForm]) => configOf(id, f), [
  [['groq-1', form()], { config: config() }],
  [
    ['local-1', { ...newProviderForm(), name: ' Local ', models: 'a, b', contextLength: '4096', tokenizerRepo: ' Qwen/Qwen2.5-7B ' }],
    {
      config: {
        id: 'local-1',
        name: 'Local',
        kind: 'openAiCompatible',
        baseUrl: defaultUrl('openAiCompatible'),
        models: ['a', 'b'],
        contextLength: 4096,
        extensions: true,
        tokenizerRepo: 'Qwen/Qwen2.5-7B',
        allowPlainHttp: false,
      },
    },
  ],
  [['x-1', form({ contextLength: 'big' })], { problem: 'the context length must be a whole number of tokens (or empty for the default), not "big"' }],
]);

table('formChanged: only what the saved config would change counts', ([f, saved]: [ProviderForm, ProviderConfig | null]) => formChanged(f, saved), [
  [[form(), config()], false],
  [[form({ name: ' Groq ' }), config()], false],
  [[form({ models: 'llama-3.1-8b-instant,' }), config()], false],
  [[form({ name: 'Groq 2' }), config()], true],
  [[form({ extensions: true }), config()], true],
  [[form({ contextLength: '8192' }), config()], true],
  [[form({ contextLength: 'nope' }), config()], true],
  [[form({ allowPlainHttp: true }), config()], true],
  [[newProviderForm(), null], true],
]);

table('isPlainHttp: the switch for plain HTTP shows for http:// URLs', isPlainHttp, [
  ['http://192.168.1.20:8000/v1', true],
  [' HTTP://localhost:8080/v1', true],
  ['https://api.groq.com/openai/v1', false],
  ['', false],
]);

table('savedText: a key the backend forgot when the address moved is said', ([withKey, had, has]: [boolean, boolean, boolean]) => savedText(withKey, had, has), [
  [[true, true, true], 'Saved, with the key.'],
  [[false, true, true], 'Saved.'],
  [[false, false, false], 'Saved.'],
  [[false, true, false], 'Saved. The key was given for the old address and is forgotten: enter it again if this server should have it.'],
]);

table('withKind: a base URL at the old default follows the kind; a typed one stays', ([f, kind]: [ProviderForm, ProviderKind]) => withKind(f, kind).baseUrl, [
  [[newProviderForm(), 'openAi'], defaultUrl('openAi')],
  [[form({ kind: 'openAi', baseUrl: defaultUrl('openAi') }), 'anthropic'], defaultUrl('anthropic')],
  [[form({ kind: 'openAi', baseUrl: '' }), 'openAiCompatible'], defaultUrl('openAiCompatible')],
  [[form(), 'openAi'], 'https://api.groq.com/openai/v1'],
]);

describe('the provider kinds', () => {
  it('are the backend\'s, each with its facts from the contract and a label', () => {
    expect([...PROVIDER_KINDS].sort()).toEqual(Object.keys(CONTRACT.providerKinds).sort());
    for (const kind of PROVIDER_KINDS) {
      const { label, ...facts } = KINDS[kind];
      expect(facts).toEqual(CONTRACT.providerKinds[kind]);
      expect(label).not.toBe('');
    }
  });
});

const FILE: KeyStorage = { kind: 'file', path: '/home/me/.local/share/hearth/keys.json', reason: 'no Secret Service is running' };
table(
  'keyStorageText: where the key is, warning when it is in the fallback file',
  ([storage, kind]: [KeyStorage | null, ProviderKind]) => keyStorageText(storage, { name: 'OpenAI', kind }),
  [
    [[{ kind: 'keychain' }, 'openAi'], { text: 'Key saved in the system keychain.', warn: false }],
    [
      [FILE, 'openAi'],
      {
        text: 'No keychain answered: the key is saved in /home/me/.local/share/hearth/keys.json (readable only by you). no Secret Service is running',
        warn: true,
      },
    ],
    [[null, 'openAi'], { text: 'No key saved: OpenAI needs one.', warn: false }],
    [[null, 'anthropic'], { text: 'No key saved: OpenAI needs one.', warn: false }],
    [[null, 'openAiCompatible'], { text: 'No key saved; local servers usually need none.', warn: false }],
  ],
);

table('connectionText', connectionText, [
  [{ models: [{ id: 'a', contextLength: null }, { id: 'b', contextLength: 8192 }, { id: 'c', contextLength: null }], latencyMs: 123.4 }, 'Connected: 3 models in 123 ms'],
  [{ models: [{ id: 'a', contextLength: null }], latencyMs: 88.6 }, 'Connected: 1 model in 89 ms'],
  [{ models: [], latencyMs: 5 }, 'Connected: 0 models in 5 ms'],
]);

const LOCAL: ModelTarget = { kind: 'local', model: null };
const localFile = (model: string): ModelTarget => ({ kind: 'local', model });
const mini = (provider = 'openai'): ModelTarget => ({ kind: 'remote', provider, model: 'gpt-4o-mini' });

table('sameTarget', ([a, b]: [ModelTarget, ModelTarget]) => sameTarget(a, b), [
  [[LOCAL, LOCAL], true],
  [[LOCAL, mini()], false],
  [[mini(), mini()], true],
  [[mini(), mini('groq-1')], false],
  [[mini(), { kind: 'remote', provider: 'openai', model: 'gpt-4o' }], false],
  [[localFile('/m/a.gguf'), localFile('/m/a.gguf')], true],
  [[localFile('/m/a.gguf'), localFile('/m/b.gguf')], false],
  [[localFile('/m/a.gguf'), LOCAL], false],
  [[localFile('gpt-4o-mini'), mini()], false],
]);

const LLAMA = { name: 'Llama-3.2-3B', path: '/m/Llama-3.2-3B-Q4_K_M.gguf' };
table(
  'targetLabel: the header says which model answers',
  ([target, loaded, provider]: [ModelTarget, typeof LLAMA | null, string | null]) =>
    // What the backend calls the file a chat names (its modelName).
    targetLabel(target, target.kind === 'local' && target.model?.includes('qwen') ? 'qwen2.5-0.5b-q8_0' : null, loaded, provider),
  [
    [[LOCAL, LLAMA, null], 'Llama-3.2-3B'],
    [[LOCAL, null, null], 'No model loaded'],
    [[localFile(LLAMA.path), LLAMA, null], 'Llama-3.2-3B'],
    [[localFile('/m/qwen2.5-0.5b-q8_0.gguf'), LLAMA, null], 'qwen2.5-0.5b-q8_0'],
    [[localFile('/m/qwen2.5-0.5b-q8_0.gguf'), null, null], 'qwen2.5-0.5b-q8_0'],
    [[mini(), LLAMA, 'OpenAI'], 'gpt-4o-mini · OpenAI'],
    [[mini('gone'), null, null], 'gpt-4o-mini · gone'],
  ],
);

const NOW = 1_000_000;
table('secondsLeft: whole seconds until the retry, rounded up', ([retryAt, now]: [number | null, number]) => secondsLeft(retryAt, now), [
  [[null, NOW], 0],
  [[NOW + 7000, NOW], 7],
  [[NOW + 6001, NOW], 7],
  [[NOW + 6000, NOW], 6],
  [[NOW + 1, NOW], 1],
  [[NOW, NOW], 0],
  [[NOW - 5000, NOW], 0],
]);

table('retryLabel', retryLabel, [
  [7, 'Retry in 7 s'],
  [1, 'Retry in 1 s'],
  [0, 'Retry'],
]);

table('menuStep: arrows wrap, Home and End jump, other keys do nothing', ([key, at, count]: [string, number, number]) => menuStep(key, at, count), [
  [['ArrowDown', 0, 3], 1],
  [['ArrowDown', 2, 3], 0],
  [['ArrowUp', 0, 3], 2],
  [['ArrowUp', 2, 3], 1],
  [['ArrowDown', -1, 3], 0],
  [['ArrowUp', -1, 3], 2],
  [['Home', 2, 3], 0],
  [['End', 0, 3], 2],
  [['Enter', 1, 3], null],
  [['ArrowDown', -1, 0], null],
]);

table('kindNote: the API beside a provider name that does not already say it', ([name, kind]: [string, ProviderKind]) => kindNote(name, kind), [
  [['OpenAI', 'openAi'], null],
  [['openai ', 'openAi'], null],
  [['Anthropic', 'anthropic'], null],
  [['Work account', 'openAi'], 'OpenAI'],
  [['Groq', 'openAiCompatible'], 'OpenAI-compatible'],
]);
