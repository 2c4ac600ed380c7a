// @vitest-environment jsdom
import type { TokensList } from 'marked';
import { describe, expect, it } from 'vitest';
import { GrowingLexer, RAW_BLOCK, SLOW_BLOCK_MIN } from '../../src/lib/growing-lexer';
import { STREAMING_LEXED_MAX, lexMarkdown, renderBlocks } from '../../src/lib/markdown';

/** Replies whose ends change what came before in every way Markdown allows, each grown a few
 *  characters at a time as a stream writes it. */
const REPLIES: Record<string, string> = {
  prose: Array.from({ length: 6 }, (_, i) => `**Step ${i}.** Some *words* with \`code\` and a [link](https://example.com).\n\n`).join(''),
  'setext heading under a paragraph': 'First paragraph.\n\nA title\n===\n\nMore text\n---\n\nEnd.',
  'loose list continued after blank lines': '- one\n- two\n\n- three\n\n  still three\n\n- four\n\nAfter.\n',
  'nested and ordered lists': '1. a\n   - b\n     - c\n2. d\n\n   para in d\n3. e\n\nText.\n\n- [ ] task\n- [x] done\n',
  'code fence with blank lines': 'Before.\n\n```rust\nfn main() {\n\n    let x = 1;\n\n}\n```\n\nAfter.\n\n```\nunclosed\n\nstill code',
  table: 'Intro.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\nAfter the table.\n',
  'blockquote with lazy lines': 'Intro.\n\n> quoted\nlazy line\n\n> second\n\n>> nested\n\nOut.\n',
  'html blocks': 'Intro.\n\n<div>\nblock\n</div>\n\n<span>inline</span> text\n\n<!-- comment -->\n\nEnd.\n',
  'math blocks': 'Intro.\n\n$$\nx^2\n\n+ y\n$$\n\nInline $a+b$ and \\(c\\).\n\n\\[\nd\n\\]\n\nEnd.',
  'reference links defined later': 'See [the docs][docs] and [home].\n\nMore text.\n\n[docs]: https://example.com/docs\n[home]: https://example.com\n\nAfter.',
  'indented code after a paragraph': 'Para.\n\n    indented code\n\n    more\n\nPara two.\n    not code\n\nEnd.',
  'carriage returns': 'One.\r\n\r\nTwo.\r\n\r\n- a\r\n- b\r\n\r\nThree.',
  'headings and rules': '# Title\n\nText.\n\n***\n\n## Sub\n\nText.\n\n___\n\nEnd.',
};

const STEP = 3;

describe('a growing reply lexed again only at its end', () => {
  for (const [name, reply] of Object.entries(REPLIES)) {
    it(`gives a whole lex's tokens at every length: ${name}`, () => {
      const lexer = new GrowingLexer(lexMarkdown);
      for (let length = 1; length <= reply.length + STEP - 1; length += STEP) {
        const text = reply.slice(0, length);
        // Inline tokens too (a paragraph's links, emphasis): JSON holds the whole tree.
        expect(JSON.stringify(lexer.lexGrowing(text)), `after ${length} characters`).toEqual(JSON.stringify(lexMarkdown(text)));
      }
    });
  }

  it('lexes only the end of a long reply', () => {
    const lexed: number[] = [];
    const lexer = new GrowingLexer((source): TokensList => {
      lexed.push(source.length);
      return lexMarkdown(source);
    });
    const reply = REPLIES.prose.repeat(20);
    for (let length = 1; length <= reply.length; length += 40) lexer.lexGrowing(reply.slice(0, length));
    expect(reply.length).toBeGreaterThan(6_000);
    // Two blocks of this reply are under 200 characters; a whole lex at the end would be 6,000+.
    expect(Math.max(...lexed.slice(-50))).toBeLessThan(300);
  });

  it('keeps texts growing side by side apart (Compare columns, reasoning and answer)', () => {
    const lexer = new GrowingLexer(lexMarkdown);
    const a = REPLIES.prose;
    const b = REPLIES['loose list continued after blank lines'];
    for (let length = 1; length <= Math.max(a.length, b.length); length += 7) {
      for (const reply of [a, b]) {
        const text = reply.slice(0, length);
        expect(JSON.stringify(lexer.lexGrowing(text))).toEqual(JSON.stringify(lexMarkdown(text)));
      }
    }
  });

  it('shows an overlong block being written as written, lexing nothing, until the reply is complete', () => {
    const lexed: number[] = [];
    const lexer = new GrowingLexer((source): TokensList => {
      lexed.push(source.length);
      return lexMarkdown(source);
    }, 8, 1_000);
    const intro = 'An intro paragraph.\n\n';
    const table = '| n | text |\n|---|---|\n' + Array.from({ length: 200 }, (_, i) => `| ${i} | cell ${i} |\n`).join('');
    const reply = intro + table;
    let tokens = lexer.lexGrowing(reply.slice(0, 30));
    for (let length = 30; length <= reply.length; length += 50) tokens = lexer.lexGrowing(reply.slice(0, length));
    tokens = lexer.lexGrowing(reply);
    expect(tokens.map((t) => t.type)).toEqual(['paragraph', 'space', RAW_BLOCK]);
    expect(tokens[2].raw).toBe(table);
    expect(tokens.map((t) => t.raw).join('')).toBe(reply);
    // Once past the limit the table was lexed again only as it grew by a quarter: a few times in all.
    expect(lexed.filter((length) => length > 1_000).length).toBeLessThanOrEqual(6);
  });

  /** A lexer on a clock: an update every `every` ms, a lex costing `cost(length)` ms. */
  function clocked(every: number, cost: (length: number) => number) {
    let now = 0;
    let lexing = 0;
    const lexer = new GrowingLexer(
      (source) => {
        now += cost(source.length);
        lexing += cost(source.length);
        return lexMarkdown(source);
      },
      8,
      1_000,
      () => now,
    );
    const update = (text: string) => {
      now += every;
      return lexer.lexGrowing(text);
    };
    return { update, elapsed: () => now, lexing: () => lexing };
  }

  it('renders what follows an overlong block once that block has ended', () => {
    const { update } = clocked(50, (length) => length / 100);
    const code = '```\n' + Array.from({ length: 100 }, (_, i) => `let x${i} = ${i};\n`).join('') + '```\n\n';
    const reply = code + 'After the code, a paragraph that keeps going for a while. '.repeat(10);
    let tokens = update(reply.slice(0, 10));
    for (let length = 10; length <= reply.length; length += 40) tokens = update(reply.slice(0, length));
    tokens = update(reply);
    expect(tokens.map((t) => t.type)).toEqual(['code', 'space', 'paragraph']);
  });

  it.each([
    ['cheap', () => 2, false],
    ['costly', () => 50, true],
    // A garbage collection or a cold JIT now and then is not what the block costs.
    ['cheap but for a pause now and then', (update: number) => (update % 3 === 0 ? 60 : 2), false],
  ])('shows a %s block being written rendered or raw by what its updates cost', (_, ms: (update: number) => number, raw) => {
    const lexer = new GrowingLexer(lexMarkdown, 8, 8_000);
    const table = '| n | text |\n|---|---|\n' + Array.from({ length: 300 }, (_, i) => `| ${i} | cell ${i} |\n`).join('');
    const reply = 'Intro.\n\n' + table + '\nAfter the table.';
    expect(table.length).toBeGreaterThan(SLOW_BLOCK_MIN);
    expect(table.length).toBeLessThan(8_000);
    let update = 0;
    const shown = (length: number) => {
      const text = reply.slice(0, length);
      const tokens = lexer.lexGrowing(text);
      lexer.spent(text, ms(update++));
      return tokens.filter((t) => t.type !== 'space').map((t) => t.type);
    };
    const last: string[] = [];
    for (let length = 10; length <= reply.length; length += 50) last.push(shown(length).at(-1)!);
    // Short, the table is rendered either way; past SLOW_BLOCK_MIN a costly one is shown raw from
    // then on, never rendered again while it is written.
    expect(last).toContain('table');
    const firstRaw = last.indexOf(RAW_BLOCK);
    expect(firstRaw >= 0).toBe(raw);
    if (raw) expect(last.slice(firstRaw)).not.toContain('table');
  });

  it('lexes an overlong block again no more than its cost allows', () => {
    // Lists nested 200 deep: each lex of the block costs JavaScriptCore hundreds of milliseconds.
    const { update, elapsed, lexing } = clocked(20, (length) => (length > 1_000 ? 300 : 1));
    const lists = Array.from({ length: 200 }, (_, depth) => `${'  '.repeat(depth)}- level ${depth}\n`).join('');
    for (let length = 4; length <= lists.length; length += 16) update(lists.slice(0, length));
    expect(lexing()).toBeGreaterThan(0);
    expect(lexing() / elapsed()).toBeLessThan(1 / 15);
  });

  it('does so for a reply that is one overlong block', () => {
    const lexer = new GrowingLexer(lexMarkdown, 8, 1_000);
    const line = 'lorem'.repeat(1_000);
    for (let length = 4; length <= line.length; length += 400) lexer.lexGrowing(line.slice(0, length));
    const tokens = lexer.lexGrowing(line);
    expect(tokens.map((t) => t.type)).toEqual([RAW_BLOCK]);
    expect(tokens[0].raw).toBe(line);
  });

  it('keeps an overlong block raw while it is written, even when lexed again to see whether it ended', () => {
    const table = '| n | double |\n|---|---|\n' + Array.from({ length: 600 }, (_, i) => `| ${i} | ${i * 2} | the row of ${i} |\n`).join('');
    const reply = 'Intro.\n\n' + table;
    expect(table.length).toBeGreaterThan(2 * STREAMING_LEXED_MAX);
    for (let length = 10; length <= reply.length; length += 97) {
      const blocks = renderBlocks(reply.slice(0, length), { streaming: true });
      const overlong = length - 'Intro.\n\n'.length > STREAMING_LEXED_MAX;
      if (overlong) expect(blocks.some((b) => b.includes('<table'))).toBe(false);
    }
    expect(renderBlocks(reply).at(-1)).toMatch(/<table/);
  });

  it('renders the raw block escaped while streaming and the real block once complete', () => {
    const list = Array.from({ length: 400 }, (_, depth) => `${'  '.repeat(depth % 40)}- level <b>${depth}</b>\n`).join('');
    expect(list.length).toBeGreaterThan(STREAMING_LEXED_MAX);
    const reply = 'Intro.\n\n' + list;
    let blocks: string[] = [];
    for (let length = 10; length <= reply.length; length += 500) blocks = renderBlocks(reply.slice(0, length), { streaming: true });
    blocks = renderBlocks(reply, { streaming: true });
    // In pieces: the first holds the list's start, escaped.
    expect(blocks.find((b) => b.startsWith('<pre class="raw-block">'))).toMatch(/^<pre class="raw-block">\n- level &lt;b&gt;0&lt;\/b&gt;/);
    const done = renderBlocks(reply);
    expect(done.at(-1)).toMatch(/^<ul>/);
  });
});
