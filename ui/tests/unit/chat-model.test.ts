import type { ModelTarget } from '../../src/ipc/bindings';
import { chatModelPath, loadingText, localChoices, localName, type LocalChoice, type LocalTarget } from '../../src/lib/chat-model';
import { table } from './helpers';
import { FACTS, libraryModel } from './library-fixtures';

const model = libraryModel;

const LLAMA = model('/m/llama-8b.gguf', 4.9e9);
const SMALL = model('/m/llama-1b.gguf', 8.1e8);
const BROKEN = model('/m/broken.gguf', 4096, { error: 'broken.gguf is truncated' });
const EMBEDDER = model('/m/minilm.gguf', 4.6e7, { facts: { ...FACTS, architecture: 'bert', embedding: true, hasChatTemplate: false } });
const LIBRARY = [LLAMA, SMALL, BROKEN, EMBEDDER];
const GONE = '/m/gone-7b.gguf';
/** The loaded model, as the engine names it. */
const LOADED = { name: 'Llama 8B Instruct', path: LLAMA.path };

const LOCAL: LocalTarget = { kind: 'local', model: null };
const file = (path: string): LocalTarget => ({ kind: 'local', model: path });
const REMOTE: ModelTarget = { kind: 'remote', provider: 'openai', model: 'gpt-4o-mini' };

table('chatModelPath: its own file, else the loaded one', ([target, loaded]: [ModelTarget, string | null]) => chatModelPath(target, loaded), [
  [[file(SMALL.path), LLAMA.path], SMALL.path],
  [[LOCAL, LLAMA.path], LLAMA.path],
  [[LOCAL, null], null],
  [[REMOTE, LLAMA.path], null],
]);

/** What the backend calls GONE (its chat's `modelName`). */
const GONE_NAME = 'gone-7b';

table(
  "localName: the loaded model's name when it is the chat's, else what the backend calls its file",
  ([target, named, loaded]: [LocalTarget, string | null, typeof LOADED | null]) => localName(target, named, loaded),
  [
    [[file(LLAMA.path), 'llama-8b', LOADED], LOADED.name],
    [[LOCAL, null, LOADED], LOADED.name],
    [[file(SMALL.path), 'llama-1b', LOADED], 'llama-1b'],
    [[file(SMALL.path), 'llama-1b', null], 'llama-1b'],
    [[LOCAL, null, null], null],
  ],
);

/** The choices as [name, note, checked, disabled, missing]. */
const brief = (choices: LocalChoice[]) => choices.map((c) => [c.name, c.note, c.checked, c.disabled, c.missing]);

/** LIBRARY as listed, the file `checked` checked; LLAMA says it is loaded when `loaded`. */
const listed = (checked: string | null, loaded = true) => [
  ['llama-8b', loaded ? '4.9 GB · loaded' : '4.9 GB', checked === LLAMA.path, false, false],
  ['llama-1b', '810.0 MB', checked === SMALL.path, false, false],
  ['broken', '4.1 KB · unreadable', false, true, false],
];

table(
  "localChoices: the library's chat models, the chat's own checked; a file the library lost is still shown",
  ([target, loaded, known]: [ModelTarget, typeof LOADED | null, boolean]) =>
    brief(localChoices(target, target.kind === 'local' && target.model === GONE ? GONE_NAME : null, LIBRARY, loaded, known)),
  [
    [[file(SMALL.path), LOADED, true], listed(SMALL.path)],
    [[LOCAL, LOADED, true], listed(LLAMA.path)],
    [[file(GONE), LOADED, true], [...listed(null), ['gone-7b', 'missing', true, true, true]]],
    // Before the library was read, nothing is known missing.
    [[file(GONE), null, false], [...listed(null, false), ['gone-7b', '', true, false, false]]],
    [[REMOTE, LOADED, true], listed(null)],
    // An embedding model is not offered; a chat set to one says why it cannot be used.
    [[file(EMBEDDER.path), LOADED, true], [...listed(null), ['minilm.gguf', 'an embedding model, which cannot chat', true, true, false]]],
  ],
);

table(
  'localChoices: the loaded model the library does not list is the chat\'s, by its name',
  ([target, loaded]: [ModelTarget, typeof LOADED]) => brief(localChoices(target, null, [], loaded, true)),
  [
    [[LOCAL, LOADED], [[LOADED.name, 'loaded', true, false, false]]],
    [[file(LLAMA.path), LOADED], [[LOADED.name, 'loaded', true, false, false]]],
  ],
);

table('loadingText', loadingText, [
  [{ name: 'llama-1b', fraction: 0 }, 'Loading llama-1b… 0%'],
  [{ name: 'llama-1b', fraction: 0.424 }, 'Loading llama-1b… 42%'],
  [{ name: null, fraction: 1 }, 'Loading the model… 100%'],
]);
