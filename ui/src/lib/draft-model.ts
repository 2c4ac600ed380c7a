// The draft model of speculative decoding, as the settings panel offers it: the library's GGUF files
// by name, None, and a saved file the library no longer has. Pure functions over plain values.
import type { LibraryModel } from '../ipc/bindings';
import { fileName, formatBytes } from './format';

/** One entry of the draft model's select; `value` is the model's path (a select's values are text). */
export type DraftChoice = { value: string; label: string; disabled: boolean };

/** The select's value for no draft model (null in the settings). */
export const NO_DRAFT = '';

/**
 * Whether `saved` names a file the library no longer lists (moved, deleted). Only said once the
 * library was read (`listed`): before that, or when reading it failed, nothing is known missing.
 */
export function draftMissing(saved: string | null, models: readonly Pick<LibraryModel, 'path'>[], listed: boolean): boolean {
  return listed && saved !== null && !models.some((m) => m.path === saved);
}

/**
 * None, then each library chat model by name and size. The loaded one says so (it is no use as its own
 * draft); one whose header is bad cannot draft at all. A saved file the library does not list is
 * still offered, by its file name, so that it is shown rather than silently replaced by None.
 */
export function draftChoices(saved: string | null, models: readonly LibraryModel[], listed: boolean): DraftChoice[] {
  const choices: DraftChoice[] = [{ value: NO_DRAFT, label: 'None', disabled: false }];
  for (const m of models) {
    if (m.facts?.embedding && m.path !== saved) continue; // it writes no tokens to draft (the engine says so of one saved)
    const notes = [formatBytes(m.sizeBytes), m.loaded ? 'loaded' : '', m.error ? 'unreadable' : ''].filter(Boolean);
    choices.push({ value: m.path, label: [m.name, ...notes].join(' · '), disabled: m.error !== null });
  }
  if (saved !== null && !models.some((m) => m.path === saved)) {
    const name = fileName(saved);
    choices.push({ value: saved, label: listed ? `${name} (missing)` : name, disabled: false });
  }
  return choices;
}
