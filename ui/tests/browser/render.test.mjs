// Browser test: replies rendered through the real UI — hostile ones (tests/xss-payloads.mjs) stream
// in and run, load and show nothing they should not; a rich one shows highlighted code with a Copy
// button, KaTeX, a table and a collapsed reasoning block. Screenshots: reply-rich(-dark).png in OUTPUT.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MODEL, OUTPUT, inBothSchemes, lastAssistant, openApp, replyStats, shot, useBrowser } from './harness.mjs';
import { PAYLOADS, violations } from '../xss-payloads.mjs';

useBrowser();

/** Payloads per chat: a chat stays under the message list's virtualisation threshold. */
const PER_CHAT = 20;

/** Send `text` and wait until the reply to it has finished streaming; the reply's locator. */
async function ask(page, text) {
  const before = await lastAssistant(page).getAttribute('data-message-id', { timeout: 100 }).catch(() => null);
  await page.getByTestId('composer').fill(text);
  await page.keyboard.press('Enter');
  // A send empties the composer. An Enter that was not taken has been seen twice in fresh-clone
  // runs (cause not found yet, see the closing note of issue 13): say so and press it again, so
  // this test keeps testing rendering.
  const taken = await page
    .waitForFunction(() => document.querySelector('[data-testid="composer"]')?.value === '', null, { timeout: 3000 })
    .then(() => true, () => false);
  if (!taken) {
    console.log(`the composer kept its text 3 s after Enter (${text}); pressing Enter again`);
    await page.getByTestId('composer').press('Enter');
  }
  await page.waitForFunction(
    (previous) => {
      const replies = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
      const last = replies[replies.length - 1];
      return last && Number(last.dataset.messageId) > 0 && last.dataset.messageId !== previous && last.dataset.status === 'complete';
    },
    before,
    { timeout: 20_000 },
  );
  return lastAssistant(page);
}

/** Everything `violations` finds in a reply's rendered Markdown (reasoning and answer). */
async function problemsIn(reply) {
  const found = [];
  for (const markdown of await reply.locator('.markdown').all()) found.push(...(await markdown.evaluate(violations)));
  return found;
}

describe('Rendering replies', () => {
  test(`${PAYLOADS.length} hostile replies, streamed in small chunks, run nothing and load nothing (sanitizer checked without the CSP)`, { timeout: 300_000 }, async () => {
    // Chunks of 1–4 characters: tags arrive in pieces and every partial state is rendered.
    const replies = PAYLOADS.map((p, i) => ({ text: p.source, chunkSize: 1 + (i % 4), delayMs: 2 }));
    const { page, context, problems } = await openApp({ replies }, { query: '?nocsp' });
    const origin = new URL(page.url()).origin;
    const foreign = [];
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(`${origin}/`) && !url.startsWith('data:')) foreign.push(url);
    });
    const dialogs = [];
    page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      dialog.dismiss().catch(() => {});
    });
    // print() opens no dialog Playwright sees; count all four as a hit.
    await page.evaluate(() => {
      for (const name of ['alert', 'confirm', 'prompt', 'print']) window[name] = () => (window.__xss = `${name}()`);
    });
    const found = [];
    try {
      for (const [i, payload] of PAYLOADS.entries()) {
        if (i % PER_CHAT === 0) {
          await page.getByTestId('new-chat').click();
          await page.getByTestId('composer').waitFor();
          // Ask only once the new chat is on show: asked sooner, the message went to the previous
          // chat (created asynchronously; seen in fresh-clone runs, also at 2b64ae8).
          await page.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length === 0, null, { timeout: 5000 });
        }
        const reply = await ask(page, `payload ${i + 1}`);
        // A sanitized javascript: link has no href left: clicking it must do nothing.
        await reply.locator('.markdown a').evaluateAll((links) => {
          for (const a of links) if (!/^(?:https?:|mailto:)/i.test(a.getAttribute('href') ?? '')) a.click();
        });
        for (const problem of await problemsIn(reply)) found.push(`${payload.name}: ${problem}`);
        if (payload.code !== undefined) {
          const codes = await reply.locator('[data-testid="code-block"] pre code').allTextContents();
          if (!codes.some((c) => c.includes(payload.code))) found.push(`${payload.name}: code shown as ${JSON.stringify(codes)}`);
        }
        const xss = await page.evaluate(() => window.__xss);
        if (xss !== undefined) found.push(`${payload.name}: window.__xss = ${String(xss)}`);
      }
      await page.waitForTimeout(400); // time for any late image error or timer
      assert.equal(await page.evaluate(() => window.__xss), undefined, 'window.__xss stays unset');
      assert.deepEqual(found, []);
      assert.deepEqual(dialogs, [], 'no dialog opened');
      assert.deepEqual(foreign, [], 'nothing requested outside the app');
      assert.deepEqual(problems, [], 'no console errors');
    } finally {
      await context.close();
    }
  });

  const RUST = [
    'fn main() {',
    '    let squares: Vec<u64> = (1..=5).map(|n| n * n).collect();',
    '    println!("{squares:?} <done> & \\"quoted\\"");',
    '}',
  ].join('\n');

  const RICH = [
    '<think>',
    'The user wants a tour of what a reply can hold: **code**, math, a table.',
    '',
    'Quick check first: $3^2 + 4^2 = 5^2$, so the example works.',
    '</think>',
    '',
    'Here is a small tour of what replies can hold.',
    '',
    '```rust',
    RUST,
    '```',
    '',
    "Euler's identity $e^{i\\pi} + 1 = 0$ ties five constants together, and the first $n$ squares add up to",
    '',
    '$$\\sum_{k=1}^{n} k^2 = \\frac{n(n+1)(2n+1)}{6}$$',
    '',
    '| Language | Typing | First released |',
    '|---|---|---|',
    '| Rust | static, strong | 2015 |',
    '| Python | dynamic, strong | 1991 |',
    '| JavaScript | dynamic, weak | 1995 |',
    '',
    'Prices such as $5 and $10 stay plain text.',
  ].join('\n');

  test('a rich reply: highlighted code with Copy, KaTeX, a table, reasoning open while it is written, then as the user leaves it; screenshots', { timeout: 120_000 }, async () => {
    const config = { replies: [{ text: RICH, chunkSize: 4, delayMs: 18 }] };
    await inBothSchemes(config, async (page) => {
      await page.setViewportSize({ width: 1180, height: 1000 });
      const origin = new URL(page.url()).origin;
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
      await page.getByTestId('new-chat').click();
      await page.getByTestId('composer').fill('Show me what a reply can hold.');
      await page.keyboard.press('Enter');

      const reply = lastAssistant(page);
      const details = reply.getByTestId('reasoning');
      const summary = reply.getByTestId('reasoning-summary');
      // Open while the model reasons (read at one instant with the label), closed when the answer starts.
      await page.waitForFunction(() => {
        const block = document.querySelector('[data-testid="reasoning"]');
        return block?.open && block.textContent.includes('Thinking…');
      });
      await summary.filter({ hasText: 'Reasoning' }).waitFor();
      assert.equal(await reply.getAttribute('data-status'), 'streaming', 'the answer is still streaming');
      assert.equal(await details.evaluate((el) => el.open), false, 'collapsed once the answer starts');
      await details.evaluate((el) => (el.__seen = true));
      await summary.click();
      assert.equal(await details.evaluate((el) => el.open), true, 'opens on click');

      await reply.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 15_000 });
      assert.deepEqual(await details.evaluate((el) => [el.open, el.__seen]), [true, true], 'the same element, still open');
      assert.match(await reply.locator('.reasoning-body').textContent(), /Quick check first/);
      assert.equal(await reply.locator('.reasoning-body .katex').count(), 1, 'math in the reasoning too');

      const content = reply.getByTestId('message-content');
      assert.doesNotMatch(await content.textContent(), /<think>|Quick check/, 'the reasoning is not in the answer');

      // Code: highlighted, labelled, copied exactly.
      const block = content.getByTestId('code-block');
      assert.equal(await block.locator('.code-lang').textContent(), 'rust');
      assert.equal(await block.locator('.hljs-keyword').count(), 2, 'fn and let highlighted');
      assert.ok((await block.locator('.hljs-string').count()) >= 1, 'strings highlighted');
      assert.equal(await block.locator('pre code').textContent(), RUST);
      const copy = block.getByTestId('copy-code');
      await copy.click();
      await copy.filter({ hasText: 'Copied' }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), RUST, 'the clipboard holds the exact code');

      // Math: typeset, no errors; currency left alone.
      assert.equal(await content.locator('.katex').count(), 3);
      assert.equal(await content.locator('.katex-display').count(), 1);
      assert.equal(await reply.locator('.katex-error').count(), 0);
      assert.match(await content.textContent(), /Prices such as \$5 and \$10 stay plain text\./);

      // Table.
      const table = content.locator('.table-wrap > table');
      assert.equal(await table.locator('tbody tr').count(), 3);
      assert.deepEqual(await table.locator('th').allTextContents(), ['Language', 'Typing', 'First released']);

      // Nothing the sanitizer should have kept out, and KaTeX's fonts loaded under the CSP.
      assert.deepEqual(await problemsIn(reply), []);
      const fonts = await page.evaluate(() => [...document.fonts].filter((f) => f.status === 'loaded').map((f) => f.family));
      assert.ok(fonts.some((f) => f.includes('KaTeX_Main')), `KaTeX fonts loaded: ${fonts}`);

      await copy.filter({ hasText: /^Copy$/ }).waitFor();
      await page.getByTestId('message-list').evaluate((el) => el.scrollTo(0, 0));
      await shot(page, `reply-rich`, { dir: OUTPUT, mouse: [1100, 980] });
    });
  });

  test('KaTeX and highlight.js are fetched at the first reply that needs them; a saved reply is typeset once they are here', { timeout: 60_000 }, async () => {
    /** The scripts the page has fetched, by file name. */
    const fetched = (page) => page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name.split('/').at(-1)));
    const lazy = (names) => names.filter((n) => /^(katex|highlight)-lib-.*\.js$/.test(n)).map((n) => n.split('-lib-')[0]).sort();

    // At start, with nothing to typeset: neither is fetched.
    const bare = await openApp({});
    try {
      await bare.page.getByTestId('new-chat').waitFor();
      assert.deepEqual(lazy(await fetched(bare.page)), [], 'no formula or code on show, nothing fetched');
      assert.deepEqual(bare.problems, []);
    } finally {
      await bare.context.close();
    }

    // A saved chat with both, rendered before either is here: shown with stand-ins, then typeset.
    const saved = {
      chats: [{ id: 1, title: 'A tour', updatedAt: 30 }],
      messages: [
        { id: 11, chatId: 1, role: 'user', content: 'Show me what a reply can hold.', status: 'complete', createdAt: 1, model: null, stats: null },
        { id: 12, chatId: 1, role: 'assistant', content: RICH, status: 'complete', createdAt: 2, model: MODEL.name, stats: replyStats() },
      ],
    };
    const { page, context, problems } = await openApp(saved);
    try {
      const content = lastAssistant(page).getByTestId('message-content');
      await content.locator('.katex-display').waitFor();
      await content.locator('.hljs-keyword').first().waitFor();
      assert.equal(await content.locator('.katex').count(), 3);
      assert.equal(await content.locator('.math-pending').count(), 0, 'no stand-in left');
      assert.equal(await content.locator('.hljs-keyword').count(), 2);
      assert.deepEqual(lazy(await fetched(page)), ['highlight', 'katex']);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
