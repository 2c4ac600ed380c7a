// The library of GGUF files (`library`), as the backend lists it: each with its source, facts or why it cannot be
// loaded, the loaded one marked; imports (copied into the models folder or linked where they are; `importPick`
// for the open dialog), deletion and "show in folder" (`revealed`).
import type { ImportMode, LibraryModel } from '../../../src/ipc/bindings';
import { spillCaches } from './caches';
import { MODELS_DIR, facts } from './fixtures';
import type { Handlers } from './ipc';
import { state, type LibraryFile } from './state';
import { clone, ipcError, variants } from './util';

const IMPORT_MODES = variants<ImportMode>({ copy: true, link: true });

const libraryEntry = (m: LibraryFile): LibraryModel => ({ ...clone(m), loaded: state.model?.path === m.path });

export function libraryModel(path: string) {
  const m = state.library.find((x) => x.path === path);
  if (!m) throw ipcError('notFound', `${path} is not in the library`);
  return m;
}

/** A file is there while the library lists it, or while it is loaded. */
export const fileExists = (path: string) => state.library.some((m) => m.path === path) || state.model?.path === path;

function importModel(cmd: string, path: string, mode: ImportMode) {
  if (!IMPORT_MODES.includes(mode)) {
    state.contractErrors.push(`${cmd}: mode should be "copy" or "link", got ${JSON.stringify(mode)}`);
    throw `invalid args \`mode\` for command \`${cmd}\``;
  }
  const file = path.split('/').at(-1)!;
  if (!/\.gguf$/i.test(file) || file.includes('not-a-model')) {
    throw ipcError('invalidInput', `${file} is not a GGUF file: it starts with "PK\\u0003\\u0004" where a GGUF file starts with "GGUF"`);
  }
  const target = mode === 'copy' ? `${MODELS_DIR}/${file}` : path;
  const existing = state.library.find((m) => m.path === target);
  if (existing) return libraryEntry(existing);
  const quant = /(I?Q\d\w*|F16|BF16|F32)\.gguf$/i.exec(file)?.[1]?.toUpperCase() ?? null;
  const m: LibraryFile = {
    path: target, name: file.replace(/\.gguf$/i, ''), source: mode === 'copy' ? 'copied' : 'linked', repo: null, sizeBytes: 1_708_582_752,
    facts: facts('gemma2', 2_614_341_888, quant, 8192, 26), error: null,
  };
  state.library.push(m);
  return libraryEntry(m);
}

export const libraryCommands = {
  listLibrary: () => state.library.map(libraryEntry),
  importModel: (path, mode) => importModel('import_model', path, mode),
  importModelDialog: (mode) => {
    if (state.importPick === null) {
      if (!IMPORT_MODES.includes(mode)) state.contractErrors.push(`import_model_dialog: bad mode ${JSON.stringify(mode)}`);
      return null;
    }
    return importModel('import_model_dialog', state.importPick, mode);
  },
  deleteModel: (path) => {
    const m = libraryModel(path);
    if (state.model?.path === m.path) {
      spillCaches();
      state.model = null;
    }
    state.library = state.library.filter((x) => x !== m);
    return null;
  },
  revealModel: (path) => {
    state.revealed.push(libraryModel(path).path);
    return null;
  },
} satisfies Partial<Handlers>;
