/** Enter without Shift, and not the Enter that ends an IME composition: "send" in every text box. */
export function isSendKey(event: KeyboardEvent): boolean {
  return event.key === 'Enter' && !event.shiftKey && !event.isComposing && event.keyCode !== 229;
}

/** Ctrl+K, or Cmd+K on macOS: focus the search box. */
export function isSearchShortcut(event: KeyboardEvent): boolean {
  return event.key.toLowerCase() === 'k' && (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey;
}

/** How shortcuts with Ctrl (Cmd on macOS) are written on this platform: "⌘" or "Ctrl+", then the key. */
export function modifierLabel(userAgent: string = navigator.userAgent): string {
  return /Mac|iPhone|iPad/.test(userAgent) ? '⌘' : 'Ctrl+';
}
