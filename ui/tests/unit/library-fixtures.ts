import type { LibraryModel } from '../../src/ipc/bindings';

/** A library entry for `path` ("/m/llama-8b.gguf" is named "llama-8b"), readable, not loaded unless `over` says. */
export const libraryModel = (path: string, sizeBytes: number, over: Partial<LibraryModel> = {}): LibraryModel => ({
  path,
  name: path.split('/').at(-1)!.replace('.gguf', ''),
  source: 'modelsFolder',
  repo: null,
  sizeBytes,
  facts: null,
  error: null,
  loaded: false,
  ...over,
});
