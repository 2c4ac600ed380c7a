// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { autosize, isInsertion } from '../../src/lib/autosize';
import { table } from './helpers';

// [before, after] -> after is before with text inserted at one place
table('isInsertion', ([before, after]: [string, string]) => isInsertion(before, after), [
  [['', 'a'], true],
  [['hel', 'hell'], true],
  [['held', 'hello, held'], true], // at the start
  [['ac', 'abc'], true], // in the middle
  [['aaa', 'aaaa'], true], // a repeated letter: wherever it went
  [['abc', 'abc'], false],
  [['abc', 'ab'], false],
  [['abc', 'abXY'], false], // longer, but the c was replaced
  [['line one\nline two', 'line one'], false],
  [['short', 'a whole new text'], false],
]);

/**
 * A textarea in jsdom (which lays nothing out) whose text is 20 px a line, 10 characters a line,
 * with 2 px of borders; counts the times it was collapsed to be measured afresh.
 */
function fakeTextarea() {
  const node = document.createElement('textarea');
  let collapses = 0;
  const lines = () => node.value.split('\n').reduce((n, line) => n + Math.max(1, Math.ceil(line.length / 10)), 0);
  const height = () => (node.style.height === 'auto' ? 20 : parseFloat(node.style.height) - 2);
  Object.defineProperty(node, 'scrollHeight', { get: () => lines() * 20 });
  Object.defineProperty(node, 'clientHeight', { get: () => height() });
  Object.defineProperty(node, 'offsetHeight', { get: () => height() + 2 });
  const style = node.style;
  let stored = '';
  Object.defineProperty(style, 'height', {
    get: () => stored,
    set: (v: string) => {
      if (v === 'auto') collapses++;
      stored = v;
    },
  });
  const type = (text: string) => {
    node.value = text;
    node.dispatchEvent(new Event('input'));
  };
  return { node, type, collapses: () => collapses };
}

describe('autosize', () => {
  it('grows as text is typed without collapsing the textarea at each key', () => {
    const { node, type, collapses } = fakeTextarea();
    const action = autosize(node, '');
    expect(node.style.height).toBe('22px');
    const atStart = collapses();
    let text = '';
    for (const char of 'a message that wraps over three lines') {
      text += char;
      type(text);
      action.update(text); // the bound value follows the same key
    }
    expect(node.style.height).toBe('82px'); // 4 lines of 20 px, and the borders
    expect(collapses()).toBe(atStart);
  });

  it('measures afresh when text is removed or replaced', () => {
    const { node, type, collapses } = fakeTextarea();
    const action = autosize(node, '');
    type('a long message of three lines.');
    expect(node.style.height).toBe('62px');
    const before = collapses();
    type('a long'); // deleted
    expect(node.style.height).toBe('22px');
    expect(collapses()).toBe(before + 1);
    node.value = ''; // sent: the draft was cleared by the app
    action.update('');
    expect(node.style.height).toBe('22px');
    expect(collapses()).toBe(before + 2);
  });
});
