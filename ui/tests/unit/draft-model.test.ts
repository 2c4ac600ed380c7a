import type { LibraryModel } from '../../src/ipc/bindings';
import { draftChoices, draftMissing } from '../../src/lib/draft-model';
import { table } from './helpers';
import { FACTS, libraryModel } from './library-fixtures';

const model = libraryModel;

const CHAT = model('/m/llama-8b.gguf', 4.9e9, { loaded: true });
const SMALL = model('/m/llama-1b.gguf', 8.1e8);
const BROKEN = model('/m/broken.gguf', 4096, { error: 'broken.gguf is truncated' });
const EMBEDDER = model('/m/minilm.gguf', 4.6e7, { facts: { ...FACTS, architecture: 'bert', embedding: true, hasChatTemplate: false } });
const LIBRARY = [CHAT, SMALL, BROKEN, EMBEDDER];

const NONE = { value: '', label: 'None', disabled: false };
const LISTED = [
  NONE,
  { value: CHAT.path, label: 'llama-8b · 4.9 GB · loaded', disabled: false },
  { value: SMALL.path, label: 'llama-1b · 810.0 MB', disabled: false },
  { value: BROKEN.path, label: 'broken · 4.1 KB · unreadable', disabled: true },
];

table(
  'draftChoices: None, the library\'s chat models by name and size, and a saved file it does not list',
  ([saved, models, listed]: [string | null, LibraryModel[], boolean]) => draftChoices(saved, models, listed),
  [
    [[null, LIBRARY, true], LISTED],
    [[SMALL.path, LIBRARY, true], LISTED],
    [['/gone/tiny.gguf', LIBRARY, true], [...LISTED, { value: '/gone/tiny.gguf', label: 'tiny.gguf (missing)', disabled: false }]],
    // Before the library is read (or when reading failed), a saved file is not called missing.
    [['/gone/tiny.gguf', [], false], [NONE, { value: '/gone/tiny.gguf', label: 'tiny.gguf', disabled: false }]],
    [[null, [], true], [NONE]],
    // An embedding model drafts nothing: not offered, but shown when it is the one saved.
    [[EMBEDDER.path, LIBRARY, true], [...LISTED, { value: EMBEDDER.path, label: 'minilm · 46.0 MB', disabled: false }]],
  ],
);

table(
  'draftMissing: only a saved file, and only once the library was read',
  ([saved, listed]: [string | null, boolean]) => draftMissing(saved, LIBRARY, listed),
  [
    [[null, true], false],
    [[SMALL.path, true], false],
    [['/gone/tiny.gguf', true], true],
    [['/gone/tiny.gguf', false], false],
  ],
);
