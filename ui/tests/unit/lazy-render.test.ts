// @vitest-environment jsdom
import { describe, expect, it, vi } from 'vitest';
import { loadHighlighter } from '../../src/lib/highlight';
import { LazyModule } from '../../src/lib/lazy-module.svelte';
import { renderBlocks } from '../../src/lib/markdown';
import { loadKatex } from '../../src/lib/math';

// KaTeX and highlight.js are fetched at their first use. Until they are here a reply shows
// stand-ins, and the blocks rendered with them are not kept: once the libraries arrive, the same
// source renders typeset. (This file never loads them ahead.)

const SOURCE = ['Energy: $E = mc^2$.', '', '```rust', 'fn main() { let x = 1; }', '```'].join('\n');

describe('replies rendered before KaTeX and highlight.js are here', () => {
  it('show the TeX and plain code, then the typeset formula and highlighted code', async () => {
    const [formula, code] = renderBlocks(SOURCE);
    expect(formula).toContain('<span class="math-pending">$E = mc^2$</span>');
    expect(formula).not.toContain('katex');
    expect(code).toContain('fn main() { let x = 1; }');
    expect(code).not.toContain('hljs-keyword');

    await Promise.all([loadKatex(), loadHighlighter()]);
    const [typeset, highlighted] = renderBlocks(SOURCE);
    expect(typeset).toContain('class="katex"');
    expect(typeset).not.toContain('math-pending');
    expect(highlighted).toContain('<span class="hljs-keyword">fn</span>');
  });
});

describe('LazyModule', () => {
  it('fetches once, on the first get, and answers null until the library is here', async () => {
    const fetch = vi.fn(() => Promise.resolve('lib'));
    const lib = new LazyModule(fetch);
    expect(fetch).not.toHaveBeenCalled();
    expect(lib.get()).toBeNull();
    expect(lib.get()).toBeNull();
    expect(await lib.load()).toBe('lib');
    expect(lib.get()).toBe('lib');
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it('fetches again at the next need after a failed fetch', async () => {
    const fetch = vi.fn().mockRejectedValueOnce(new Error('offline')).mockResolvedValueOnce('lib');
    const lib = new LazyModule<string>(fetch);
    await expect(lib.load()).rejects.toThrow('offline');
    expect(lib.get()).toBeNull();
    expect(await lib.load()).toBe('lib');
    expect(fetch).toHaveBeenCalledTimes(2);
  });
});
