// @vitest-environment jsdom
import hljs from 'highlight.js/lib/core';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { COPIED_MS, copyCodeOnClick } from '../../src/lib/code-block';
import { highlightCode, loadHighlighter } from '../../src/lib/highlight';
import { renderMarkdown } from '../../src/lib/markdown';
import { Lru } from '../../src/lib/memo';
import { loadKatex } from '../../src/lib/math';

// The window fetches both at their first use (lazy-module.svelte.ts); here they are rendered with.
beforeAll(() => Promise.all([loadKatex(), loadHighlighter()]));

function rendered(source: string): HTMLElement {
  const host = document.createElement('div');
  host.innerHTML = renderMarkdown(source);
  return host;
}

type Block = { label: string; code: string; highlighted: boolean; language: string | null };

function blocks(source: string): Block[] {
  return [...rendered(source).querySelectorAll('[data-testid="code-block"]')].map((block) => {
    const code = block.querySelector('pre code')!;
    return {
      label: block.querySelector('.code-lang')!.textContent!,
      code: code.textContent!,
      highlighted: code.querySelector('[class^="hljs-"]') !== null,
      language: /language-(\S+)/.exec(code.className)?.[1] ?? null,
    };
  });
}

function check(source: string, expected: Block[]) {
  expect(blocks(source)).toEqual(expected);
}

describe('code blocks', () => {
  afterEach(() => vi.restoreAllMocks());

  const rust = 'fn main() {\n    println!("<b>&amp;</b>");\n}';
  const cases: [string, string, Block[]][] = [
    ['a known language', '```rust\n' + rust + '\n```', [{ label: 'rust', code: rust, highlighted: true, language: 'rust' }]],
    ['an alias', '```py\ndef f(): pass\n```', [{ label: 'py', code: 'def f(): pass', highlighted: true, language: 'py' }]],
    ['info string after the language', '```ts title="a.ts"\nconst a = 1;\n```', [{ label: 'ts', code: 'const a = 1;', highlighted: true, language: 'ts' }]],
    ['an unknown language is plain', '```klingon\nQapla <b>\n```', [{ label: 'klingon', code: 'Qapla <b>', highlighted: false, language: null }]],
    ['no language, prose stays plain', '```\njust some words\n```', [{ label: 'text', code: 'just some words', highlighted: false, language: null }]],
    [
      'unclosed fence mid-stream',
      'Here:\n\n```python\nfor x in xs:\n    print(',
      [{ label: 'python', code: 'for x in xs:\n    print(', highlighted: true, language: 'python' }],
    ],
    ['indented code', 'text\n\n    let a = 1;', [{ label: 'text', code: 'let a = 1;', highlighted: false, language: null }]],
    [
      'two blocks, text between',
      '```json\n{"a": 1}\n```\nand\n```diff\n-a\n+b\n```',
      [
        { label: 'json', code: '{"a": 1}', highlighted: true, language: 'json' },
        { label: 'diff', code: '-a\n+b', highlighted: true, language: 'diff' },
      ],
    ],
  ];
  it.each(cases)('%s', (_name, source, expected) => check(source, expected));

  it('has a header with the label and a Copy button, and no wrapper of its own', () => {
    const root = rendered('```go\npackage main\n```');
    const block = root.firstElementChild!;
    expect(block.getAttribute('data-testid')).toBe('code-block');
    const button = block.querySelector('.code-header > button')!;
    expect(button.getAttribute('data-testid')).toBe('copy-code');
    expect(button.getAttribute('type')).toBe('button');
    expect(button.textContent).toBe('Copy');
  });

  it('guesses the language of small blocks only', () => {
    const guess = vi.spyOn(hljs, 'highlightAuto');
    const small = 'import os\nfor name in os.listdir("."):\n    if name.endswith(".py"):\n        print(name)\n';
    highlightCode(small, '');
    expect(guess).toHaveBeenCalledTimes(1);
    highlightCode(small.repeat(40), '');
    expect(guess).toHaveBeenCalledTimes(1);
  });

  it('highlights a finished block once while the reply keeps streaming', () => {
    const spy = vi.spyOn(hljs, 'highlight');
    const reply = '```rust\nlet memo_once = 1;\n```\n\nThen more prose follows, word by word.\n\n```rust\nlet memo_last = 2;\n```';
    for (let i = 1; i <= reply.length; i++) renderMarkdown(reply.slice(0, i));
    const codes = spy.mock.calls.map((c) => c[0] as string);
    expect(codes.filter((c) => c === 'let memo_once = 1;')).toHaveLength(1);
    // The block grows until its fence closes: each state once, not once per frame after.
    expect(new Set(codes).size).toBe(codes.length);
  });
});

describe('the copy button', () => {
  afterEach(() => vi.useRealTimers());

  it('copies the exact code and says "Copied" for a moment', async () => {
    vi.useFakeTimers();
    const writeText = vi.fn(async (_text: string) => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    const code = 'if a < b && c > "d" {\n\treturn \'&amp;\';\n}\n';
    const host = rendered('```c\n' + code + '```\n\n```\nsecond\n```');
    document.body.append(host);
    const detach = copyCodeOnClick(host);
    try {
      const button = host.querySelector<HTMLButtonElement>('[data-testid="copy-code"]')!;
      button.click();
      expect(writeText).toHaveBeenCalledWith(code.slice(0, -1));
      await vi.waitFor(() => expect(button.textContent).toBe('Copied'));
      expect(button.classList.contains('copied')).toBe(true);
      vi.advanceTimersByTime(COPIED_MS);
      expect(button.textContent).toBe('Copy');
      host.querySelectorAll<HTMLButtonElement>('[data-testid="copy-code"]')[1].click();
      expect(writeText).toHaveBeenLastCalledWith('second');
      host.querySelector('pre')!.click();
      expect(writeText).toHaveBeenCalledTimes(2);
    } finally {
      detach();
      host.remove();
    }
  });
});

describe('Lru', () => {
  it('forgets the least recently used entry past its bounds', () => {
    const lru = new Lru<number>(2, 100);
    let computed = 0;
    const get = (key: string) => lru.get(key, () => ++computed);
    expect([get('a'), get('b'), get('a'), get('c'), get('a'), get('b')]).toEqual([1, 2, 1, 3, 1, 4]);
    const small = new Lru<string>(10, 5);
    small.get('abc', () => 'x');
    small.get('def', () => 'y');
    expect(small.size).toBe(1);
    small.get('toolong', () => 'z');
    expect(small.size).toBe(1);
  });
});
