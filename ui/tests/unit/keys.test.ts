// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { SHORTCUTS, chordLabel, isSendKey, isTextField, matchShortcut, modifierLabel, shortcutLabel } from '../../src/lib/keys';
import { table } from './helpers';

const key = (init: KeyboardEventInit) => new KeyboardEvent('keydown', init);
const MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15';
const LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36';

table('isSendKey', (init: KeyboardEventInit) => isSendKey(key(init)), [
  [{ key: 'Enter' }, true],
  [{ key: 'Enter', shiftKey: true }, false],
  [{ key: 'Enter', isComposing: true }, false],
  [{ key: 'Enter', keyCode: 229 }, false],
  [{ key: 'a' }, false],
]);

// [event, focus in a text field] -> the shortcut pressed
table('matchShortcut', ([init, inText]: [KeyboardEventInit, boolean]) => matchShortcut(key(init), inText), [
  [[{ key: 'O', ctrlKey: true, shiftKey: true }, true], 'newChat'],
  [[{ key: 'o', metaKey: true, shiftKey: true }, false], 'newChat'],
  [[{ key: 'o', ctrlKey: true }, false], null],
  [[{ key: 'n', ctrlKey: true }, true], 'newChat'],
  [[{ key: 'n', metaKey: true }, false], 'newChat'],
  [[{ key: 'N', ctrlKey: true, shiftKey: true }, false], null],
  [[{ key: 'n', ctrlKey: true, altKey: true }, false], null],
  [[{ key: 'Escape', shiftKey: true }, true], 'focusComposer'],
  [[{ key: '/' }, false], 'focusComposer'],
  [[{ key: '/', shiftKey: true }, false], 'focusComposer'], // "/" is Shift+7 on a German layout
  [[{ key: '/' }, true], null], // typed into the text field
  [[{ key: 'Escape' }, true], 'stop'],
  [[{ key: 'Escape' }, false], 'stop'],
  [[{ key: 'Escape', isComposing: true }, true], null], // ends the composition
  [[{ key: 'Escape', keyCode: 229 }, true], null],
  [[{ key: 'Escape', ctrlKey: true }, false], null],
  [[{ key: 'k', ctrlKey: true }, true], 'search'],
  [[{ key: 'K', metaKey: true }, false], 'search'],
  [[{ key: 'k' }, false], null],
  [[{ key: 'k', ctrlKey: true, shiftKey: true }, false], null],
  [[{ key: ',', ctrlKey: true }, true], 'settings'],
  [[{ key: ',', metaKey: true }, false], 'settings'],
  [[{ key: ',' }, false], null],
  [[{ key: '/', ctrlKey: true }, true], 'help'],
  [[{ key: '/', metaKey: true, shiftKey: true }, false], 'help'],
  [[{ key: '?', ctrlKey: true, shiftKey: true }, false], null],
  [[{ key: 'j', ctrlKey: true }, false], null],
  [[{ key: 'Enter' }, false], null],
]);

table('chordLabel', ([id, ua]: [string, string]) => SHORTCUTS.find((s) => s.id === id)!.chords.map((c) => chordLabel(c, ua)), [
  [['newChat', LINUX], ['Ctrl+Shift+O', 'Ctrl+N']],
  [['newChat', MAC], ['⌘⇧O', '⌘N']],
  [['focusComposer', LINUX], ['Shift+Esc', '/']],
  [['focusComposer', MAC], ['⇧Esc', '/']],
  [['stop', LINUX], ['Esc']],
  [['search', MAC], ['⌘K']],
  [['settings', LINUX], ['Ctrl+,']],
  [['help', MAC], ['⌘/']],
]);

table('shortcutLabel', ([id, ua]: [Parameters<typeof shortcutLabel>[0], string]) => shortcutLabel(id, ua), [
  [['newChat', LINUX], 'Ctrl+Shift+O'],
  [['settings', MAC], '⌘,'],
  [['stop', MAC], 'Esc'],
]);

table('modifierLabel', modifierLabel, [
  [MAC, '⌘'],
  [LINUX, 'Ctrl+'],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64)', 'Ctrl+'],
]);

function element(html: string): Element {
  const holder = document.createElement('div');
  holder.innerHTML = html;
  return holder.firstElementChild!;
}

table('isTextField', (html: string) => isTextField(element(html)), [
  ['<textarea></textarea>', true],
  ['<input>', true],
  ['<input type="search">', true],
  ['<input type="number">', true],
  ['<input type="checkbox">', false],
  ['<input type="range">', false],
  ['<select></select>', true],
  ['<button>Go</button>', false],
  ['<div tabindex="-1"></div>', false],
]);

describe('SHORTCUTS', () => {
  it('no two shortcuts share a chord', () => {
    const written = SHORTCUTS.flatMap((s) => s.chords.map((c) => chordLabel(c, LINUX)));
    expect(new Set(written).size).toBe(written.length);
  });

  it('every chord of the table matches its own shortcut', () => {
    for (const s of SHORTCUTS) {
      for (const c of s.chords) {
        const event = key({ key: c.key, ctrlKey: !!c.mod, shiftKey: !!c.shift });
        expect(matchShortcut(event, false), `${s.id}: ${chordLabel(c, LINUX)}`).toBe(s.id);
      }
    }
  });

  it('the window, or no target, is not a text field', () => {
    expect(isTextField(null)).toBe(false);
    expect(isTextField(window)).toBe(false);
  });
});
