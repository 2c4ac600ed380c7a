// @vitest-environment jsdom
import katex from 'katex';
import { Marked } from 'marked';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { renderMarkdown } from '../../src/lib/markdown';
import { loadHighlighter } from '../../src/lib/highlight';
import { katexStyle, loadKatex, mathExtensions } from '../../src/lib/math';

// The window fetches both at their first use (lazy-module.svelte.ts); here they are rendered with.
beforeAll(() => Promise.all([loadKatex(), loadHighlighter()]));

/** The formulas marked finds in `source`, written back as $…$ (inline) or $$…$$ (display). */
function formulas(source: string): string[] {
  const found: string[] = [];
  const md = new Marked(
    { gfm: true, breaks: true, async: false },
    { extensions: mathExtensions((f) => (found.push(f.display ? `$$${f.tex}$$` : `$${f.tex}$`), '')) },
  );
  md.parse(source);
  return found;
}

function check(source: string, expected: string[]) {
  expect(formulas(source)).toEqual(expected);
}

const raw = String.raw;

describe('math delimiters', () => {
  const cases: [string, string, string[]][] = [
    ['inline', 'where $a+b$ is', ['$a+b$']],
    ['two inline', '$a$ and $b$', ['$a$', '$b$']],
    ['currency pair', 'It costs $5 and $10.', []],
    ['currency with cents', 'It costs $5, or $6.50 with tax', []],
    ['currency per period', 'price: $5.99/month or $50/year', []],
    ['currency after letters', 'US$5 and US$10', []],
    ['currency, then a formula', 'a $5 tip and $x$', ['$x$']],
    ['space after the opening $', '$ x$', []],
    ['space before the closing $', '$x $', []],
    ['digit after the closing $', '$x$5', []],
    ['escaped dollar is text', raw`\$5 and $x$`, ['$x$']],
    ['escaped dollar inside', raw`$a \$ b$`, [raw`$a \$ b$`]],
    ['paren delimiters', raw`so \(x^2\) holds`, ['$x^2$']],
    ['bracket delimiters', raw`so \[x^2\] holds`, ['$$x^2$$']],
    ['double dollars inline', 'so $$x^2$$ holds', ['$$x^2$$']],
    ['display block', '$$\n\\int_0^1 x\\,dx\n$$', [raw`$$\int_0^1 x\,dx$$`]],
    ['display block of brackets', '\\[\na = b\n\\]', ['$$a = b$$']],
    ['display block right after a line', 'text\n$$\na\n$$\nmore', ['$$a$$']],
    ['code span', 'use `$x$` here', []],
    ['fenced code', '```\n$x$ and $$y$$\n```', []],
    ['indented code', '    $$x$$', []],
    ['table cell', '| a |\n|---|\n| $x$ |', ['$x$']],
    ['emphasis around', '**$x$**', ['$x$']],
    ['empty display', '$$ $$', []],
    ['unclosed inline (mid-stream)', 'so $x^', []],
    ['unclosed display (mid-stream)', '$$\n\\frac{a}', []],
    ['no blank line inside', '\\(a\n\nb\\)', []],
  ];
  it.each(cases)('%s', (_name, source, expected) => check(source, expected));
});

describe('math rendering', () => {
  afterEach(() => vi.restoreAllMocks());

  const rendered = (source: string) => {
    const host = document.createElement('div');
    host.innerHTML = renderMarkdown(source);
    return host;
  };

  it('typesets inline and display math', () => {
    const root = rendered('Euler: $e^{i\\pi}+1=0$\n\n$$\\sum_{k=1}^n k = \\frac{n(n+1)}{2}$$');
    expect(root.querySelectorAll('.katex')).toHaveLength(2);
    expect(root.querySelectorAll('.katex-display')).toHaveLength(1);
    expect(root.querySelector('.katex-error')).toBeNull();
    expect(root.querySelector('p')?.textContent).toContain('Euler:');
  });

  it('keeps KaTeX inline styles and MathML, without the TeX source as text', () => {
    const root = rendered('$\\frac{a}{b}$');
    expect(root.querySelector('.katex [style]')).not.toBeNull();
    expect(root.querySelector('.katex math mfrac')).not.toBeNull();
    expect(root.textContent).not.toContain('\\frac');
  });

  it('shows invalid TeX as its source in the error style', () => {
    const root = rendered('bad: $\\frac{a$ ok');
    expect(root.querySelector('.katex-error')?.textContent).toBe('\\frac{a');
    expect(root.textContent).toContain('ok');
  });

  it('renders unsupported trust-only commands as inert text', () => {
    const root = rendered('$\\href{https://example.com}{x}$ $\\includegraphics{a.png}$');
    expect(root.querySelectorAll('a, img')).toHaveLength(0);
  });

  it('memoizes by (tex, display)', () => {
    const spy = vi.spyOn(katex, 'renderToString');
    const tex = 'q_{memo} + 1';
    for (let i = 0; i < 5; i++) rendered(`$${tex}$ and $$${tex}$$ frame ${i}`);
    expect(spy.mock.calls.map((c) => [c[0], c[1]?.displayMode])).toEqual([
      [tex, false],
      [tex, true],
    ]);
  });

  it('typesets with bounded, untrusted options', () => {
    const spy = vi.spyOn(katex, 'renderToString');
    rendered('$options_{check}$');
    expect(spy.mock.calls[0][1]).toMatchObject({ throwOnError: false, trust: false, strict: 'ignore', maxSize: 20, maxExpand: 500 });
  });

  it('keeps only the style declarations KaTeX writes', () => {
    expect(katexStyle('height:0.8em;vertical-align:-0.2em')).toBe('height:0.8em;vertical-align:-0.2em');
    expect(katexStyle('position:relative;top:-3em')).toBe('position:relative;top:-3em');
    expect(katexStyle('position:fixed;inset:0')).toBe('');
    expect(katexStyle('background:url(http://127.0.0.1:9/leak);color:red')).toBe('color:red');
    expect(katexStyle('background-color:url(x)')).toBe('');
    expect(katexStyle('width:expression(alert(1))')).toBe('');
    expect(katexStyle('color:var(--x)')).toBe('');
  });
});
