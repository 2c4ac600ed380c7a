// Browser tests of search across chats: hostile queries and text stay text, the keyboard, and a hit on
// another branch. Run with `npm run test:browser` or `node --test tests/browser/history-search.test.mjs`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TIMEOUT, useBrowser, withApp } from './harness.mjs';
import { callsOf, chat, history, message, renderedIds, searchFor, text } from './history-helpers.mjs';

useBrowser();

const HOSTILE = `<img src=x onerror="window.__pwned='search'"> look at this`;

describe('Search', () => {
  test('a hostile query and hostile text stay text; Ctrl+K, arrows, Enter and Escape', { timeout: TIMEOUT }, async () => {
    const config = {
      chats: [chat(1, 'Queries', 30), chat(2, 'Markup', 20)],
      messages: [
        ...history(1, 1, [['user', 'How do I search for "foo OR bar* literally?'], ['assistant', 'Quote it: "foo OR bar* is then plain text.']]),
        ...history(2, 10, [['user', HOSTILE], ['assistant', 'That is an image tag.']]),
      ],
    };
    await withApp(config, async (page) => {
      await page.keyboard.press('Control+k');
      assert.equal(await page.getByTestId('search-input').evaluate((el) => el === document.activeElement), true);

      await searchFor(page, '"foo OR bar*');
      const results = page.getByTestId('search-result');
      assert.equal(await results.count(), 2);
      assert.equal(await page.getByTestId('chat-item').count(), 0, 'results replace the chat list');
      const first = results.first();
      assert.match(await text(first.getByTestId('search-snippet')), /"foo OR bar\*/);
      assert.deepEqual(await first.locator('mark').allTextContents(), ['foo', 'OR', 'bar']);
      assert.equal(await first.getAttribute('aria-selected'), 'true');
      await page.keyboard.press('ArrowDown');
      assert.equal(await results.nth(1).getAttribute('aria-selected'), 'true');
      await page.keyboard.press('ArrowDown'); // stays on the last
      assert.equal(await results.nth(1).getAttribute('aria-selected'), 'true');
      await page.keyboard.press('ArrowUp');
      assert.equal(await first.getAttribute('aria-selected'), 'true');

      await searchFor(page, 'onerror');
      const snippet = results.first().getByTestId('search-snippet');
      assert.match(await snippet.textContent(), /<img src=x onerror="window\.__pwned='search'">/);
      assert.deepEqual(await snippet.locator('mark').allTextContents(), ['onerror']);
      assert.equal(await page.getByTestId('search-results').locator('img').count(), 0, 'no element made from the text');
      await page.waitForTimeout(300);
      assert.equal(await page.evaluate(() => window.__pwned), undefined);

      await searchFor(page, 'zebra crossing');
      await page.getByTestId('search-empty').filter({ hasText: 'No messages match' }).waitFor();

      await page.keyboard.press('Escape');
      assert.equal(await page.getByTestId('search-input').inputValue(), '');
      await page.getByTestId('chat-item').first().waitFor();

      // Enter opens the highlighted result.
      await searchFor(page, 'image tag');
      await page.keyboard.press('Enter');
      await page.getByTestId('chat-title').filter({ hasText: 'Markup' }).waitFor();
      await page.locator('[data-message-id="11"] .highlighted, [data-message-id="11"].highlighted').waitFor();
    });
  });

  test('a result on another branch: the chat switches to it and shows it, flashed', { timeout: TIMEOUT }, async () => {
    // Chat 1: 120 messages (a virtualised list); message 3 has a second version (id 900) on another branch.
    const rows = Array.from({ length: 120 }, (_, i) => [i % 2 ? 'assistant' : 'user', `Message ${i + 1} about the weather.`]);
    rows[4] = ['user', 'Did you see the comet last night?'];
    const config = {
      chats: [chat(1, 'Long weather chat', 30, { leafId: 120 }), chat(2, 'Other', 20)],
      messages: [
        ...history(1, 1, rows),
        { ...history(1, 900, [['user', 'What about a lighthouse?']])[0], parentId: 2 },
        { ...history(1, 901, [['assistant', 'Lighthouses guide ships.']])[0], parentId: 900 },
      ],
    };
    await withApp(config, async (page) => {
      await message(page, 120).waitFor();
      await searchFor(page, 'lighthouse');
      const hit = page.getByTestId('search-result').filter({ hasText: 'What about a lighthouse?' });
      await hit.click();
      const found = message(page, 900);
      await found.waitFor();
      // The flash lasts under two seconds: look for it first.
      await page.waitForFunction(() => document.querySelector('[data-testid="message"][data-message-id="900"]')?.classList.contains('highlighted'));
      assert.deepEqual(await callsOf(page, 'switch_branch'), [{ chatId: 1, messageId: 900 }]);
      assert.deepEqual(await renderedIds(page), [1, 2, 900, 901]);
      assert.equal(await text(found.getByTestId('branch-position')), '2/2');

      // A result far up a long chat on the path on show is scrolled to.
      await searchFor(page, 'comet');
      await page.getByTestId('search-result').first().click();
      await page.waitForFunction(() => {
        const el = document.querySelector('[data-message-id="5"]');
        const list = document.querySelector('[data-testid="message-list"]').getBoundingClientRect();
        const box = el?.getBoundingClientRect();
        return box && box.top >= list.top && box.bottom <= list.bottom;
      });
      assert.equal(await callsOf(page, 'switch_branch').then((c) => c.length), 2, 'message 5 was not on the path: switched back');
    });
  });
});
