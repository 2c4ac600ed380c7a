import { isSearchShortcut, isSendKey, modifierLabel } from '../../src/lib/keys';
import { table } from './helpers';

const key = (init: KeyboardEventInit) => new KeyboardEvent('keydown', init);

table('isSendKey', (init: KeyboardEventInit) => isSendKey(key(init)), [
  [{ key: 'Enter' }, true],
  [{ key: 'Enter', shiftKey: true }, false],
  [{ key: 'Enter', isComposing: true }, false],
  [{ key: 'Enter', keyCode: 229 }, false],
  [{ key: 'a' }, false],
]);

table('isSearchShortcut', (init: KeyboardEventInit) => isSearchShortcut(key(init)), [
  [{ key: 'k', ctrlKey: true }, true],
  [{ key: 'k', metaKey: true }, true],
  [{ key: 'K', ctrlKey: true }, true],
  [{ key: 'k' }, false],
  [{ key: 'k', ctrlKey: true, shiftKey: true }, false],
  [{ key: 'j', ctrlKey: true }, false],
]);

table('modifierLabel', modifierLabel, [
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15', '⌘'],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36', 'Ctrl+'],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64)', 'Ctrl+'],
]);
