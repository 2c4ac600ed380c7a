import type { LibraryModel, ModelFacts } from '../../src/ipc/bindings';

/** A chat model's header facts. */
export const FACTS: ModelFacts = {
  architecture: 'llama',
  parameters: 1e9,
  quantization: 'Q4_K_M',
  contextLength: 8192,
  layers: 16,
  hasChatTemplate: true,
  reasoning: { kind: 'none' },
  embedding: false,
};

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
