// @vitest-environment jsdom
import { beforeAll, describe, expect, it } from 'vitest';
import { loadHighlighter } from '../../src/lib/highlight';
import { renderMarkdown } from '../../src/lib/markdown';
import { loadKatex } from '../../src/lib/math';
import { splitReasoning } from '../../src/lib/reasoning';
import { PAYLOADS, violations } from '../xss-payloads.mjs';

// The window fetches both at their first use (lazy-module.svelte.ts); here they are rendered with.
beforeAll(() => Promise.all([loadKatex(), loadHighlighter()]));

/** A reply as Message.svelte shows it: its reasoning, then its answer, each rendered. */
function renderReply(content: string, streaming: boolean): HTMLElement {
  const { reasoning, answer } = splitReasoning(content, streaming);
  const host = document.createElement('div');
  host.innerHTML = (reasoning === null ? '' : renderMarkdown(reasoning)) + renderMarkdown(answer);
  return host;
}

describe('hostile replies render inert', () => {
  it('has at least 60 payloads, each named once', () => {
    expect(PAYLOADS.length).toBeGreaterThanOrEqual(60);
    expect(new Set(PAYLOADS.map((p) => p.name)).size).toBe(PAYLOADS.length);
  });

  it.each(PAYLOADS)('$name', ({ source, code }) => {
    const root = renderReply(source, false);
    expect(violations(root)).toEqual([]);
    if (code !== undefined) {
      const blocks = [...root.querySelectorAll('[data-testid="code-block"] pre code')].map((el) => el.textContent);
      expect(blocks.some((text) => text?.includes(code)), `code blocks: ${JSON.stringify(blocks)}`).toBe(true);
    }
  });

  it.each(PAYLOADS)('$name, every prefix while streaming', ({ source }) => {
    for (let end = 1; end <= source.length; end += 3) {
      const problems = violations(renderReply(source.slice(0, end), true));
      expect(problems, `after ${end} characters`).toEqual([]);
    }
  });
});
