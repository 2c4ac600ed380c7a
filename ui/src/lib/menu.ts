// Keyboard moves in the app's pop-up menus (a chat's actions, the model menu).

/** The item index a key moves the focus to in a menu of `count` items (wrapping); null for other keys. */
export function menuStep(key: string, at: number, count: number): number | null {
  if (count === 0) return null;
  switch (key) {
    case 'ArrowDown':
      return at < 0 ? 0 : (at + 1) % count;
    case 'ArrowUp':
      return at < 0 ? count - 1 : (at - 1 + count) % count;
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return null;
  }
}

/** Moves the focus among the enabled items of `menu` for arrows, Home and End; true when it did. */
export function moveMenuFocus(event: KeyboardEvent, menu: HTMLElement | undefined): boolean {
  const items = [...(menu?.querySelectorAll<HTMLElement>('[role^="menuitem"]:not(:disabled)') ?? [])];
  const next = menuStep(event.key, items.indexOf(document.activeElement as HTMLElement), items.length);
  if (next === null) return false;
  event.preventDefault();
  items[next].focus();
  return true;
}
