// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { RAW_PIECE, rawPieceHtml, rawPieces } from '../../src/lib/raw-pieces';

/** Overlong blocks as the hostile replies write them. */
const BLOCKS: Record<string, string> = {
  'code, short lines': Array.from({ length: 600 }, (_, i) => `    let x${i} = compute(${i}); // line ${i}\n`).join(''),
  'one unbroken line': 'word'.repeat(3_000),
  'a table': '| a | b |\n|---|---|\n' + Array.from({ length: 400 }, (_, i) => `| ${i} | <b>${i * 2}</b> & more |\n`).join(''),
  'blank lines at piece boundaries': ('x'.repeat(RAW_PIECE - 1) + '\n\n\n').repeat(6),
  'emoji on a hard cut': '😀'.repeat(3 * RAW_PIECE),
};

describe('rawPieces', () => {
  it.each(Object.entries(BLOCKS))('%s: the pieces spell the text, and none but the last changes as it grows', (_, block) => {
    let before: string[] = [];
    for (let length = 1; length <= block.length; length += 37) {
      const pieces = rawPieces(block.slice(0, length));
      expect(pieces.join('')).toBe(block.slice(0, length));
      // Every piece that was followed by another is still there, the same.
      expect(pieces.slice(0, before.length - 1)).toEqual(before.slice(0, -1));
      before = pieces;
    }
    const pieces = rawPieces(block);
    expect(pieces.join('')).toBe(block);
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces.slice(0, -1)) {
      expect(piece.length).toBeGreaterThanOrEqual(RAW_PIECE - 1);
      expect(piece.length).toBeLessThanOrEqual(2 * RAW_PIECE);
      expect(piece.endsWith('\n') || piece.length >= 2 * RAW_PIECE - 1).toBe(true);
    }
  });

  it('never cuts a surrogate pair', () => {
    for (const piece of rawPieces(BLOCKS['emoji on a hard cut'])) expect(piece).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
  });

  it('shows each piece as written: escaped, its first line break kept', () => {
    const host = document.createElement('div');
    host.innerHTML = rawPieces(BLOCKS['blank lines at piece boundaries']).map(rawPieceHtml).join('');
    const shown = [...host.querySelectorAll('pre')].map((pre) => pre.textContent).join('');
    expect(shown).toBe(BLOCKS['blank lines at piece boundaries']);
    host.innerHTML = rawPieceHtml('\n<img src=x onerror=alert(1)> & </pre><script>');
    expect(host.querySelectorAll('img, script').length).toBe(0);
    expect(host.querySelector('pre')!.textContent).toBe('\n<img src=x onerror=alert(1)> & </pre><script>');
  });
});
