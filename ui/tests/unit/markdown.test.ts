// @vitest-environment jsdom
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadHighlighter } from '../../src/lib/highlight';
import { STREAMING_HIGHLIGHT_MAX, renderBlocks, renderMarkdown } from '../../src/lib/markdown';
import { loadKatex } from '../../src/lib/math';

// The window fetches both at their first use (lazy-module.svelte.ts); here they are rendered with.
beforeAll(() => Promise.all([loadKatex(), loadHighlighter()]));

/** Render, then parse the result back into a DOM fragment for structural assertions. */
function rendered(source: string): HTMLElement {
  const host = document.createElement('div');
  host.innerHTML = renderMarkdown(source);
  return host;
}

function allAttributes(root: HTMLElement): string[] {
  return [...root.querySelectorAll('*')].flatMap((el) => [...el.attributes].map((a) => `${a.name}=${a.value}`));
}

const noHandlers = (root: HTMLElement) =>
  expect(allAttributes(root).filter((a) => /^on/i.test(a))).toEqual([]);
const noJsUrls = (root: HTMLElement) =>
  expect(allAttributes(root).filter((a) => /javascript:|vbscript:|data:text/i.test(a))).toEqual([]);
const noTags = (...tags: string[]) => (root: HTMLElement) =>
  expect(tags.flatMap((t) => [...root.querySelectorAll(t)])).toHaveLength(0);

type Case = { name: string; source: string; check: (root: HTMLElement, html: string) => void };

const unsafe: Case[] = [
  { name: 'script element', source: 'hi <script>window.__xss = 1</script> there', check: noTags('script') },
  {
    name: 'script keeps surrounding text',
    source: 'before <script>alert(1)</script> after',
    check: (root) => {
      expect(root.textContent).toContain('before');
      expect(root.textContent).toContain('after');
      expect(root.textContent).not.toContain('alert');
    },
  },
  { name: 'img onerror', source: '<img src=x onerror="window.__xss=1">', check: noHandlers },
  { name: 'onerror in markdown paragraph', source: 'text <img src="x" onerror=alert(1)> more', check: noHandlers },
  { name: 'svg onload', source: '<svg onload="alert(1)"><circle r="4"/></svg>', check: (r) => (noHandlers(r), noTags('svg')(r)) },
  { name: 'body/div event handlers', source: '<div onclick="alert(1)" onmouseover="alert(2)">x</div>', check: noHandlers },
  { name: 'markdown javascript: link', source: '[click me](javascript:alert(1))', check: noJsUrls },
  { name: 'html javascript: link', source: '<a href="javascript:alert(1)">x</a>', check: noJsUrls },
  { name: 'mixed-case javascript: link', source: '<a href=" JaVaScRiPt:alert(1)">x</a>', check: noJsUrls },
  { name: 'entity-encoded javascript: link', source: '<a href="&#106;avascript:alert(1)">x</a>', check: noJsUrls },
  { name: 'vbscript: link', source: '[x](vbscript:msgbox(1))', check: noJsUrls },
  { name: 'data:text/html link', source: '<a href="data:text/html,<script>alert(1)</script>">x</a>', check: noJsUrls },
  { name: 'iframe', source: '<iframe src="https://example.com"></iframe>', check: noTags('iframe') },
  { name: 'object/embed', source: '<object data="x"></object><embed src="x">', check: noTags('object', 'embed') },
  { name: 'form controls', source: '<form action="/x"><input name=a><button>go</button></form>', check: noTags('form', 'input', 'button') },
  { name: 'style element', source: '<style>body{display:none}</style>text', check: noTags('style') },
  {
    name: 'style attribute',
    source: '<div style="position:fixed;inset:0">overlay</div>',
    check: (root) => expect(root.querySelector('[style]')).toBeNull(),
  },
  { name: 'legacy background attribute', source: '<table background="https://example.com/x.png"><tr><td>x</td></tr></table>', check: (root) => expect(root.querySelector('[background]')).toBeNull() },
  { name: 'meta refresh', source: '<meta http-equiv="refresh" content="0;url=https://evil">', check: noTags('meta') },
  {
    name: 'remote image source dropped',
    source: '![tracker](https://example.com/pixel.png)',
    check: (root) => expect(root.querySelector('img')?.getAttribute('src') ?? null).toBeNull(),
  },
];

const safe: Case[] = [
  { name: 'bold', source: '**bold**', check: (root) => expect(root.querySelector('strong')?.textContent).toBe('bold') },
  {
    name: 'fenced code keeps html as text',
    source: '```html\n<script>alert(1)</script>\n```',
    check: (root) => {
      noTags('script')(root);
      expect(root.querySelector('pre code')?.textContent).toContain('<script>alert(1)</script>');
    },
  },
  { name: 'inline code', source: 'use `a < b`', check: (root) => expect(root.querySelector('code')?.textContent).toBe('a < b') },
  {
    name: 'list',
    source: '- one\n- two\n- three',
    check: (root) => expect([...root.querySelectorAll('li')].map((li) => li.textContent)).toEqual(['one', 'two', 'three']),
  },
  {
    name: 'https link opens outside the app',
    source: '[docs](https://example.com/docs)',
    check: (root) => {
      const a = root.querySelector('a')!;
      expect(a.getAttribute('href')).toBe('https://example.com/docs');
      expect(a.getAttribute('target')).toBe('_blank');
      expect(a.getAttribute('rel')).toContain('noopener');
    },
  },
  { name: 'gfm table', source: '| a | b |\n|---|---|\n| 1 | 2 |', check: (root) => expect(root.querySelectorAll('td')).toHaveLength(2) },
  {
    name: 'gfm table in a scrolling box',
    source: '| a | b |\n|---|---|\n| 1 | $x$ |',
    check: (root) => {
      expect(root.querySelector('.table-wrap > table > thead th')?.textContent).toBe('a');
      expect(root.querySelector('.table-wrap td .katex')).not.toBeNull();
    },
  },
  {
    name: 'code block inside a list item',
    source: '1. Run:\n\n   ```bash\n   cargo test\n   ```',
    check: (root) => expect(root.querySelector('li [data-testid="code-block"] code')?.textContent).toBe('cargo test'),
  },
  {
    name: 'math in a heading and a link',
    source: '## Area $\\pi r^2$\n\n[the $x$ axis](https://example.com)',
    check: (root) => {
      expect(root.querySelector('h2 .katex')).not.toBeNull();
      expect(root.querySelector('a .katex')).not.toBeNull();
    },
  },
  {
    name: 'math placeholders are not spelled by text',
    source: 'hearth0s0e and `$x$`',
    check: (root) => {
      expect(root.textContent).toContain('hearth0s0e');
      expect(root.querySelector('code')?.textContent).toBe('$x$');
    },
  },
  { name: 'single newline is a line break', source: 'line one\nline two', check: (root) => expect(root.querySelector('br')).not.toBeNull() },
  {
    name: 'partial markdown while streaming does not throw',
    source: '```js\nconst a = [1, 2',
    check: (root) => expect(root.textContent).toContain('const a'),
  },
];

describe('renderMarkdown strips unsafe content', () => {
  it.each(unsafe)('$name', ({ source, check }) => check(rendered(source), renderMarkdown(source)));
});

describe('renderMarkdown keeps ordinary markdown', () => {
  it.each(safe)('$name', ({ source, check }) => check(rendered(source), renderMarkdown(source)));
});

describe('renderBlocks: one string per top-level block', () => {
  const reply = 'Intro with a [ref][r] link.\n\n```rust\nfn main() {}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[r]: https://example.com\n\nThe end is stre';

  it('joined, is what renderMarkdown renders', () => {
    expect(renderBlocks(reply).join('')).toBe(renderMarkdown(reply));
    expect(renderBlocks(reply)).toHaveLength(4);
  });

  it('a reference defined in a later block links an earlier one', () => {
    expect(renderBlocks(reply)[0]).toContain('href="https://example.com"');
  });

  // Streaming: the reply grows at its end; every earlier block keeps its exact string, so the
  // window leaves its DOM alone.
  it.each([
    ['the last paragraph grows', reply + 'aming', 3],
    ['a new block starts', reply + 'aming.\n\n- one', 3],
    ['a code fence opens', reply + '.\n\n```py\nprint(', 3],
  ])('%s: the finished blocks are unchanged', (_, grown, unchanged) => {
    const before = renderBlocks(reply);
    const after = renderBlocks(grown);
    for (let i = 0; i < unchanged; i++) expect(after[i]).toBe(before[i]);
    expect(after[unchanged]).not.toBe(before[unchanged]);
  });
});

describe('renderBlocks while streaming: a long open code block is highlighted once done', () => {
  // Updates are timed, and a block whose updates took over SLOW_BLOCK_MS twice is shown raw (the
  // growing lexer): on a busy machine highlighting this block can take that long. These cases are
  // about the length rule alone, so the clock stands still.
  beforeEach(() => vi.spyOn(performance, 'now').mockReturnValue(0));
  afterEach(() => vi.restoreAllMocks());
  const code = (lines: number) => Array.from({ length: lines }, (_, i) => `let x${i} = ${i};`).join('\n');
  const long = code(Math.ceil(STREAMING_HIGHLIGHT_MAX / 12) + 10);
  it.each([
    ['a short block streaming', `\`\`\`rust\n${code(5)}`, true, true],
    ['a long block streaming', `\`\`\`rust\n${long}`, true, false],
    ['a long block once done', `\`\`\`rust\n${long}\n\`\`\``, false, true],
    ['a long block that is not the last one', `\`\`\`rust\n${long}\n\`\`\`\n\nAfter.`, true, true],
  ])('%s: highlighted %s', (_, source, streaming, highlighted) => {
    const blocks = renderBlocks(source, { streaming });
    expect(blocks[0]).toContain('data-testid="code-block"');
    expect(blocks[0].includes('hljs-keyword')).toBe(highlighted);
    // The same code either way: only the colouring differs.
    const text = (html: string) => Object.assign(document.createElement('div'), { innerHTML: html }).querySelector('code')!.textContent;
    expect(text(blocks[0])).toBe(text(renderBlocks(source)[0]));
  });
});
