// The local model each chat talks to, as the window shows it: the file a chat names (or the loaded
// one, for a chat that has not answered locally yet), and the library's files as the chat's model
// menu offers them. Pure functions over plain values; whether a chat's model must be loaded is the
// backend's to say (it loads it before the chat's reply); the store is chat-model.svelte.ts.
import type { LibraryModel, ModelInfo, ModelTarget } from '../ipc/bindings';
import { fileName, formatBytes } from './format';

/** A chat's local target: the file it talks to (null: the loaded one). */
export type LocalTarget = Extract<ModelTarget, { kind: 'local' }>;

/** The file a chat's local replies come from: its own, else the loaded one; null for a remote chat or when none is known. */
export function chatModelPath(target: ModelTarget, loadedPath: string | null): string | null {
  return target.kind === 'local' ? (target.model ?? loadedPath) : null;
}

/**
 * What a chat's local model is called: the loaded model's name when it is the chat's (or the chat names
 * none), else what the backend calls the file it names (`named`: its ChatSummary's `modelName`); null
 * when the chat names none and none is loaded.
 */
export function localName(target: LocalTarget, named: string | null, loaded: Pick<ModelInfo, 'name' | 'path'> | null): string | null {
  if (target.model === null || target.model === loaded?.path) return loaded?.name ?? null;
  return named ?? fileName(target.model);
}

/** One local model of the chat's model menu. */
export type LocalChoice = {
  path: string;
  name: string;
  /** Size, and "loaded" / "unreadable" / "missing" as they apply. */
  note: string;
  /** The chat talks to it. */
  checked: boolean;
  /** Its header is bad: it cannot be loaded. */
  disabled: boolean;
  /** The chat's model, which the library no longer lists (moved or deleted). */
  missing: boolean;
};

/**
 * The library's chat models as the chat's model menu offers them, the chat's own checked (its embedding
 * models are for search by meaning, not offered). A chat's model the library does not list is still shown,
 * by its name (`named`, the chat's `modelName`), marked missing once the library was read (`listed`):
 * before that, nothing is known missing; one that is an embedding model says so.
 */
export function localChoices(
  target: ModelTarget,
  named: string | null,
  models: readonly LibraryModel[],
  loaded: Pick<ModelInfo, 'name' | 'path'> | null,
  listed: boolean,
): LocalChoice[] {
  const loadedPath = loaded?.path ?? null;
  const chosen = chatModelPath(target, loadedPath);
  // An embedding model cannot chat (the engine refuses it): it is offered in Settings → Attachments instead.
  const chatModels = models.filter((m) => !m.facts?.embedding);
  const choices = chatModels.map((m) => ({
    path: m.path,
    name: m.name,
    note: [formatBytes(m.sizeBytes), m.path === loadedPath ? 'loaded' : '', m.error ? 'unreadable' : ''].filter(Boolean).join(' · '),
    checked: m.path === chosen,
    disabled: m.error !== null,
    missing: false,
  }));
  if (chosen !== null && !chatModels.some((m) => m.path === chosen)) {
    const isLoaded = chosen === loadedPath;
    const embedding = models.some((m) => m.path === chosen);
    const missing = listed && !isLoaded && !embedding;
    const name = isLoaded && loaded ? loaded.name : (named ?? fileName(chosen));
    const note = embedding ? 'an embedding model, which cannot chat' : missing ? 'missing' : isLoaded ? 'loaded' : '';
    choices.push({ path: chosen, name, note, checked: true, disabled: missing || embedding, missing });
  }
  return choices;
}

/** A load shown where the chat's model is named: the model (null: the backend picks it), and how far (0..1). */
export type ShownLoad = { name: string | null; fraction: number };

/** "Loading Llama-3.2-3B… 42%". */
export function loadingText({ name, fraction }: ShownLoad): string {
  return `Loading ${name ?? 'the model'}… ${Math.round(fraction * 100)}%`;
}
