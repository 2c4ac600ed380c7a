/** Enter without Shift, and not the Enter that ends an IME composition: "send" in every text box. */
export function isSendKey(event: KeyboardEvent): boolean {
  return event.key === 'Enter' && !event.shiftKey && !isComposing(event);
}

/** A key pressed while an input method composes text belongs to the composition. */
function isComposing(event: KeyboardEvent): boolean {
  return event.isComposing || event.keyCode === 229;
}

/** How shortcuts with Ctrl (Cmd on macOS) are written on this platform: "⌘" or "Ctrl+", then the key. */
export function modifierLabel(userAgent: string = navigator.userAgent): string {
  return /Mac|iPhone|iPad/.test(userAgent) ? '⌘' : 'Ctrl+';
}

export type ShortcutId = 'newChat' | 'focusComposer' | 'stop' | 'search' | 'settings' | 'help';

/** One way to press a shortcut. */
export type Chord = {
  /** `KeyboardEvent.key`; letters in lower case. */
  key: string;
  /** Ctrl, or Cmd on macOS (either is taken on every platform). */
  mod?: boolean;
  shift?: boolean;
  /** Not while typing in a text field, where the key is a character. */
  outsideText?: boolean;
};

export type Shortcut = { id: ShortcutId; description: string; chords: Chord[] };

/**
 * Every shortcut of the window, in the order the help lists them. The window's one keydown
 * handler (App.svelte) matches them; what each does, and when, is decided there.
 */
export const SHORTCUTS: readonly Shortcut[] = [
  { id: 'newChat', description: 'New chat', chords: [{ key: 'o', mod: true, shift: true }, { key: 'n', mod: true }] },
  { id: 'focusComposer', description: 'Focus the message box', chords: [{ key: 'Escape', shift: true }, { key: '/', outsideText: true }] },
  { id: 'stop', description: 'Stop the reply being written', chords: [{ key: 'Escape' }] },
  { id: 'search', description: 'Search messages', chords: [{ key: 'k', mod: true }] },
  { id: 'settings', description: 'Settings', chords: [{ key: ',', mod: true }] },
  { id: 'help', description: 'Keyboard shortcuts', chords: [{ key: '/', mod: true }] },
];

/**
 * A chord is pressed by `event`: the same key and Ctrl/Cmd, never Alt (AltGr types characters).
 * Shift must match for letters and named keys; a punctuation key's character already says whether
 * the user's layout needed Shift for it ("/" is Shift+7 on a German keyboard).
 */
function pressed(chord: Chord, event: KeyboardEvent, inText: boolean): boolean {
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
  const punctuation = chord.key.length === 1 && !/[a-z0-9]/.test(chord.key);
  return (
    key === chord.key &&
    (event.ctrlKey || event.metaKey) === !!chord.mod &&
    !event.altKey &&
    (punctuation || event.shiftKey === !!chord.shift) &&
    !(chord.outsideText && inText)
  );
}

/** The shortcut `event` presses, if any; `inText`: focus is in a text field. Never during IME composition. */
export function matchShortcut(event: KeyboardEvent, inText: boolean): ShortcutId | null {
  if (isComposing(event)) return null;
  return SHORTCUTS.find((s) => s.chords.some((c) => pressed(c, event, inText)))?.id ?? null;
}

const NON_TEXT_INPUTS = new Set(['button', 'checkbox', 'color', 'file', 'hidden', 'image', 'radio', 'range', 'reset', 'submit']);

/** Keys typed at `target` are text: a text box, a text area, a select or editable content. */
export function isTextField(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target instanceof HTMLInputElement) return !NON_TEXT_INPUTS.has(target.type);
  return target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement || target.isContentEditable === true;
}

const KEY_NAMES: Record<string, string> = { Escape: 'Esc' };

/** How `chord` is written: "⌘⇧O" on macOS, "Ctrl+Shift+O" elsewhere. */
export function chordLabel(chord: Chord, userAgent?: string): string {
  const mod = modifierLabel(userAgent);
  const mac = mod === '⌘';
  const shift = chord.shift ? (mac ? '⇧' : 'Shift+') : '';
  const key = KEY_NAMES[chord.key] ?? chord.key.toUpperCase();
  return `${chord.mod ? mod : ''}${shift}${key}`;
}

/** How shortcut `id` is written in tooltips: its first chord ("Ctrl+Shift+O"). */
export function shortcutLabel(id: ShortcutId, userAgent?: string): string {
  const shortcut = SHORTCUTS.find((s) => s.id === id)!;
  return chordLabel(shortcut.chords[0], userAgent);
}
