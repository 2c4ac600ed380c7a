// Browser tests of the Compare view: a reply's question answered again with 2–4 settings side by side.
// Run with `npm run test:browser` or `node --test tests/browser/compare.test.mjs`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MODEL,
  TIMEOUT,
  collectDialogs,
  inBothSchemes,
  lastAssistant,
  mockState,
  replyStats,
  shot,
  useBrowser,
  waitForStatus,
  withApp,
} from './harness.mjs';
import { CONTRACT } from '../contract.mjs';
import { REPLY_MD, assertNothingRan, assertSanitized, text } from './chat-helpers.mjs';

useBrowser();

const COMPARE_TEXTS = [
  'Try **the Alfama** first, then the `28` tram up to the castle.',
  'Belém first: the tower, the monastery, then pastéis by the river.',
  'Walk from Chiado to the Bairro Alto.',
];
/** Model output meant to run: an <img onerror>, a <script>, an <svg onload> and javascript: links, among Markdown. */
const HOSTILE_MD = [
  'Try **the Alfama** <img src=x onerror="window.__pwned = \'img\'"> first.',
  '<script>window.__pwned = "script"</script>',
  '<svg onload="window.__pwned = \'svg\'"></svg>',
  '<a href="javascript:void(window.__pwned=\'link\')">click me</a> and [md link](javascript:void(window.__pwned=\'md\'))',
  'done',
].join('\n\n');

/** A chat of one question and its reply; the next answers written are COMPARE_TEXTS in turn (one per column). */
const compareChat = ({ delayMs = 40, texts = COMPARE_TEXTS, question = 'Plan one day in Lisbon.' } = {}) => ({
  chats: [{ id: 1, title: 'A day in Lisbon', updatedAt: 30 }],
  messages: [
    { id: 11, chatId: 1, role: 'user', content: question, status: 'complete', createdAt: 1, model: null, stats: null },
    { id: 12, chatId: 1, role: 'assistant', content: 'Start in the Alfama.', status: 'complete', createdAt: 2, model: MODEL.name, stats: replyStats() },
  ],
  // A user preset that samples greedily: consensus refuses it.
  presets: [{ name: 'Greedy', params: { temperature: 0 } }],
  replies: texts.map((text) => ({ text, chunkSize: 3, delayMs })),
});

const compareDialog = (page) => page.getByTestId('compare');
/** The focused element's test id, and the column it is in. */
const focused = (page) =>
  page.evaluate(() => [document.activeElement?.dataset.testid ?? null, document.activeElement?.closest('[data-column]')?.dataset.column ?? null]);
const compareColumns = (page) => compareDialog(page).getByTestId('compare-column');
const presetParams = (name) => CONTRACT.presets.find((p) => p.name === name).params;

/** Opens Compare on the chat's last reply and waits for its columns. */
async function openCompare(page) {
  const reply = lastAssistant(page);
  await reply.getByTestId('message-content').waitFor();
  await reply.hover();
  await reply.getByTestId('action-compare').click();
  await compareDialog(page).getByTestId('compare-setup').waitFor();
}

/** Every frame, each result column's text length (kept when it changed) until the comparison is done. */
async function sampleColumns(page) {
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        const frames = [];
        const started = performance.now();
        const tick = () => {
          const dialog = document.querySelector('[data-testid="compare"]');
          const columns = [...document.querySelectorAll('[data-testid="compare-results"] [data-testid="compare-column"]')];
          const lengths = columns.map((c) => c.querySelector('[data-testid="column-text"]').textContent.length);
          if (lengths.length > 0 && frames.at(-1)?.join() !== lengths.join()) frames.push(lengths);
          if (dialog?.dataset.phase === 'done') return resolve({ frames, phase: 'done' });
          if (performance.now() - started > 15_000) return resolve({ frames, phase: 'timeout' });
          requestAnimationFrame(tick);
        };
        tick();
      }),
  );
}

describe('Compare view', () => {
  test('set up three columns, run them side by side (streamed, then stats), keep one: the chat shows that version', { timeout: TIMEOUT }, async () => {
    await withApp(compareChat(), async (page) => {
      const dialogs = collectDialogs(page);
      // A reply's hover actions have Compare; a question's have none.
      const button = lastAssistant(page).getByTestId('action-compare');
      assert.equal(await button.getAttribute('aria-label'), 'Compare settings');
      assert.equal(await page.locator('[data-testid="message"][data-role="user"] [data-testid="action-compare"]').count(), 0);
      await openCompare(page);

      // A modal dialog over the window, named, saying which question is answered again; the chat behind it inert.
      const dialog = compareDialog(page);
      assert.equal(await dialog.getAttribute('role'), 'dialog');
      assert.equal(await dialog.getAttribute('aria-modal'), 'true');
      assert.equal(await page.locator(`#${await dialog.getAttribute('aria-labelledby')}`).textContent(), 'Compare replies');
      assert.match(await dialog.getByTestId('compare-question').textContent(), /“?Plan one day in Lisbon\.”?/);
      assert.equal(await page.locator('.app[inert]').count(), 1);
      assert.deepEqual((await mockState(page)).calls.filter((c) => c.cmd === 'get_sampling').map((c) => c.payload), [{ scope: { kind: 'chat', id: 1 } }]);

      // Two columns to start: the chat's settings as they are, and the same by beam search.
      const columns = compareColumns(page);
      assert.equal(await columns.count(), 2);
      assert.deepEqual(await columns.getByTestId('column-summary').allTextContents(), ["This chat's settings", 'Beam search · width 4']);
      assert.deepEqual(await columns.getByTestId('column-base').evaluateAll((els) => els.map((el) => el.value)), ['chat', 'chat']);
      assert.deepEqual(await columns.getByTestId('column-strategy').evaluateAll((els) => els.map((el) => el.value)), ['sampling', 'beam']);
      assert.equal(await columns.getByTestId('column-remove').count(), 0, 'two columns at least');
      assert.deepEqual(await focused(page), ['column-base', '0'], 'the keyboard starts at the first column');
      // The bases: this chat's settings, the built-in presets, the user's.
      assert.deepEqual(
        await columns.first().getByTestId('column-base').locator('option').allTextContents(),
        ["This chat's settings", ...CONTRACT.presets.map((p) => p.name), 'Greedy'],
      );
      assert.deepEqual(await columns.first().getByTestId('column-strategy').locator('option').allTextContents(), ['Sampling', 'Consensus', 'Beam search']);

      // Column 2 starts from Creative, sampled; a third column added: a preset, by beam search.
      await columns.nth(1).getByTestId('column-base').selectOption('preset:Creative');
      await columns.nth(1).getByTestId('column-strategy').selectOption('sampling');
      assert.equal(await columns.nth(1).getByTestId('column-summary').textContent(), 'Creative · temperature 1.1 · top-k 0 · +4 more');
      assert.match(await columns.nth(1).getByTestId('column-summary').getAttribute('title'), /^Starts from the preset Creative; sampling\.\nTemperature 1\.1\nTop-k 0\nTop-p 0\.98\n/);
      await dialog.getByTestId('compare-add').click();
      assert.equal(await columns.count(), 3);
      assert.equal(await columns.nth(2).getByTestId('column-base').inputValue(), 'preset:Precise', 'a new column starts from a preset no column uses');
      await columns.nth(2).getByTestId('column-strategy').selectOption('beam');
      assert.equal(await columns.nth(2).getByTestId('column-summary').textContent(), 'Precise · Beam search · width 4');
      // Four at most, two at least.
      await dialog.getByTestId('compare-add').click();
      assert.equal(await columns.count(), 4);
      assert.equal(await dialog.getByTestId('compare-add').isDisabled(), true);
      assert.equal(await columns.getByTestId('column-remove').count(), 4);
      await columns.nth(3).getByTestId('column-remove').click();
      assert.equal(await columns.count(), 3);
      assert.equal(await dialog.getByTestId('compare-add').isDisabled(), false);

      // Run: compare_replies gets each column's whole settings, its strategy set.
      await dialog.getByTestId('compare-run').click();
      const sampled = sampleColumns(page);
      await dialog.getByTestId('compare-results').waitFor();
      await page.waitForFunction(() => document.activeElement?.dataset.testid === 'compare-stop');
      assert.equal(await dialog.getByTestId('compare-close').isDisabled(), true, 'no closing while the answers are written');
      assert.equal(await dialog.getByTestId('compare-stop').isVisible(), true);
      const { frames, phase } = await sampled;
      assert.equal(phase, 'done');
      const runs = (await mockState(page)).calls.filter((c) => c.cmd === 'compare_replies').map(({ payload: { onEvent, ...args } }) => args);
      assert.deepEqual(runs, [
        {
          chatId: 1,
          messageId: 12,
          variants: [
            { ...CONTRACT.samplingDefaults, strategy: 'sampling' },
            { ...presetParams('Creative'), strategy: 'sampling' },
            { ...presetParams('Precise'), strategy: 'beam' },
          ],
        },
      ]);

      // The two sampled columns streamed side by side: a frame shows both part-written; the beam search arrived whole.
      const final = frames.at(-1);
      assert.ok(final.every((n) => n > 0), `every column has text: ${JSON.stringify(final)}`);
      assert.ok(
        frames.some(([a, b]) => a > 0 && a < final[0] && b > 0 && b < final[1]),
        `columns 1 and 2 grew together: ${JSON.stringify(frames)}`,
      );
      assert.ok(frames.filter(([a]) => a > 0).length >= 4, `column 1 streamed: ${JSON.stringify(frames)}`);
      assert.deepEqual([...new Set(frames.map((f) => f[2]))], [0, final[2]], 'the beam search arrived whole');

      // Each ended with its stats line (the beam search's "beam 1 of 4"), its text rendered as a reply is.
      assert.deepEqual(await columns.getByTestId('column-status').allTextContents(), ['Done', 'Done', 'Done']);
      const stats = await columns.getByTestId('column-stats').allTextContents();
      assert.match(stats[0], /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms( · \d+ cached)?$/);
      assert.match(stats[1], /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms$/);
      assert.match(stats[2], /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms · beam 1 of 4$/);
      assert.match(await columns.nth(2).getByTestId('column-stats').getAttribute('title'), /Beam search: the best of the 4 replies it kept/);
      assert.equal(await columns.nth(0).locator('[data-testid="column-text"] strong').textContent(), 'the Alfama');
      assert.equal(await columns.nth(0).locator('[data-testid="column-text"] code').textContent(), '28');
      assert.equal((await columns.nth(0).getByTestId('column-text').textContent()).trim(), 'Try the Alfama first, then the 28 tram up to the castle.');
      assert.equal((await columns.nth(1).getByTestId('column-text').textContent()).trim(), COMPARE_TEXTS[1]);
      assert.equal((await columns.nth(2).getByTestId('column-text').textContent()).trim(), COMPARE_TEXTS[2]);
      assert.deepEqual(dialogs, []);

      // Done: each can be kept; the last is the one on show until then, and the hint says so.
      assert.equal(await dialog.getAttribute('data-phase'), 'done');
      assert.equal(await columns.getByTestId('column-keep').count(), 3);
      await page.waitForFunction(() => document.activeElement?.dataset.testid === 'column-keep');
      assert.deepEqual(await focused(page), ['column-keep', '0']);
      assert.equal(await columns.nth(2).getByTestId('column-on-show').count(), 1);
      assert.equal(await dialog.getByTestId('column-on-show').count(), 1);
      assert.match(await dialog.getByTestId('compare-hint').textContent(), /Closing without picking leaves column 3's answer on show/);
      // Behind it the chat already shows the last answer, the fourth version of the reply.
      assert.equal((await lastAssistant(page).getByTestId('branch-position').textContent()).trim(), '4/4');
      assert.equal((await lastAssistant(page).getByTestId('message-content').textContent()).trim(), COMPARE_TEXTS[2]);

      // Keep the second: the chat shows it (switch_branch), the view closes, the composer has the focus.
      const kept = Number(await columns.nth(1).getAttribute('data-message-id'));
      await columns.nth(1).getByTestId('column-keep').click();
      await dialog.waitFor({ state: 'detached' });
      assert.deepEqual(
        (await mockState(page)).calls.filter((c) => c.cmd === 'switch_branch').map((c) => c.payload),
        [{ chatId: 1, messageId: kept }],
      );
      const shown = lastAssistant(page);
      await shown.getByTestId('branch-position').filter({ hasText: '3/4' }).waitFor();
      assert.equal(await shown.getAttribute('data-message-id'), String(kept));
      assert.equal((await shown.getByTestId('message-content').textContent()).trim(), COMPARE_TEXTS[1]);
      assert.match(await shown.getByTestId('message-stats').textContent(), /^\d+ tokens · /);
      assert.equal(await page.locator('.app[inert]').count(), 0);
      assert.equal(await page.getByTestId('composer').evaluate((el) => el === document.activeElement), true);
    });
  });

  test('refusals are said in words before anything runs; the column they name is marked', { timeout: TIMEOUT }, async () => {
    await withApp(compareChat(), async (page) => {
      await openCompare(page);
      const dialog = compareDialog(page);
      const columns = compareColumns(page);
      // Consensus from the Greedy preset (temperature 0): the backend refuses it, naming the column.
      await columns.nth(1).getByTestId('column-base').selectOption('preset:Greedy');
      await columns.nth(1).getByTestId('column-strategy').selectOption('consensus');
      assert.equal(await columns.nth(1).getByTestId('column-summary').textContent(), 'Greedy · Consensus · 8 candidates · temperature 0');
      await dialog.getByTestId('compare-run').click();
      const error = dialog.getByTestId('compare-error');
      await error.waitFor();
      assert.equal(
        (await error.textContent()).trim(),
        'Settings 2: temperature must be above 0 for consensus decoding (its candidates are sampled), got 0',
      );
      assert.equal(await error.getAttribute('role'), 'alert');
      assert.equal(await dialog.getAttribute('data-phase'), 'setup');
      assert.deepEqual(await columns.evaluateAll((els) => els.map((el) => el.classList.contains('refused'))), [false, true]);
      assert.equal(await columns.nth(1).getByTestId('column-strategy').getAttribute('aria-invalid'), 'true');
      assert.deepEqual(await focused(page), ['column-base', '1'], 'the column refused has the focus');
      // Nothing ran: no new version of the reply, no banner.
      assert.equal(await page.evaluate(() => window.__hearthMock.messages.length), 2);
      assert.equal(await page.getByTestId('error-banner').count(), 0);
      // Changing the column clears it; then it runs.
      await columns.nth(1).getByTestId('column-strategy').selectOption('sampling');
      assert.equal(await error.count(), 0);
      assert.equal(await columns.nth(1).getAttribute('class').then((c) => c.includes('refused')), false);

      // The mock refuses as the backend does, word for word: how many, and each settings' range.
      const refusal = (variants) =>
        page.evaluate(
          (v) => window.__TAURI_INTERNALS__.invoke('compare_replies', { chatId: 1, messageId: 12, variants: v, onEvent: '__CHANNEL__:999' }).catch((e) => e),
          variants,
        );
      const defaults = CONTRACT.samplingDefaults;
      assert.deepEqual(await refusal([defaults]), { kind: 'invalidInput', message: 'compare 2 to 4 settings, not 1' });
      assert.deepEqual(await refusal([defaults, defaults, defaults, defaults, defaults]), { kind: 'invalidInput', message: 'compare 2 to 4 settings, not 5' });
      assert.deepEqual(await refusal([defaults, { ...defaults, topP: 2 }]), { kind: 'invalidInput', message: 'settings 2: topP must be between 0 and 1, got 2' });
      assert.deepEqual(await refusal([{ ...defaults, temperature: 0, strategy: 'consensus' }, defaults]), {
        kind: 'invalidInput',
        message: 'settings 1: temperature must be above 0 for consensus decoding (its candidates are sampled), got 0',
      });
      assert.deepEqual(await refusal([defaults, { ...defaults, beamWidth: 9 }]), { kind: 'invalidInput', message: 'settings 2: beamWidth must be between 1 and 8, got 9' });
      assert.equal(await page.evaluate(() => window.__hearthMock.messages.length), 2);
    });
  });

  test('Stop (or Esc) stops every column; Esc closes once nothing is written; Compare is off while a reply streams', { timeout: TIMEOUT }, async () => {
    const long = 'This answer is slow and goes on and on, word after word, for a long while yet.';
    await withApp(compareChat({ delayMs: 120, texts: [long, long, 'And a third reply, slowly.'] }), async (page) => {
      await openCompare(page);
      const dialog = compareDialog(page);
      const columns = compareColumns(page);
      // Esc before running closes it, back to the chat with nothing changed.
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      assert.equal(await page.evaluate(() => window.__hearthMock.messages.length), 2);

      await openCompare(page);
      await columns.nth(1).getByTestId('column-strategy').selectOption('sampling');
      await dialog.getByTestId('compare-run').click();
      await page.waitForFunction(
        () => [...document.querySelectorAll('[data-testid="column-text"]')].filter((el) => el.textContent.length > 4).length === 2,
      );
      // Esc while they are written stops them (as it stops a reply), and leaves the view open.
      await page.keyboard.press('Escape');
      await page.locator('[data-testid="compare"][data-phase="done"]').waitFor();
      const stops = (await mockState(page)).calls.filter((c) => c.cmd === 'stop_generation').map((c) => c.payload);
      assert.deepEqual(stops, [{ chatId: 1 }]);
      assert.deepEqual(await columns.getByTestId('column-status').allTextContents(), ['Stopped', 'Stopped']);
      const partial = await columns.getByTestId('column-text').allTextContents();
      assert.ok(partial.every((t) => t.length > 0 && t.trim().length < long.length), `partial answers kept: ${JSON.stringify(partial)}`);
      assert.equal(await columns.getByTestId('column-keep').count(), 2, 'a stopped answer can be kept');
      // Closing without keeping one: the last is on show, as the hint said.
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      const shown = lastAssistant(page);
      await shown.getByTestId('branch-position').filter({ hasText: '3/3' }).waitFor();
      assert.equal(await shown.getAttribute('data-status'), 'stopped');

      // The Stop button, the same way; and Compare is off while a reply streams.
      await openCompare(page);
      await dialog.getByTestId('compare-run').click();
      await page.waitForFunction(() => document.querySelector('[data-testid="column-text"]')?.textContent.length > 4);
      await dialog.getByTestId('compare-stop').click();
      await page.locator('[data-testid="compare"][data-phase="done"]').waitFor();
      await dialog.getByTestId('compare-done').click();
      await dialog.waitFor({ state: 'detached' });
      await page.evaluate(() => window.__hearthMock.replies.push({ text: 'A slow reply to a new question, word by word.', chunkSize: 2, delayMs: 120 }));
      await page.getByTestId('composer').fill('And tomorrow?');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid="message"][data-role="assistant"][data-status="streaming"]').waitFor();
      assert.equal(await page.locator('[data-testid="message"][data-role="assistant"]').first().getByTestId('action-compare').isDisabled(), true);
      await page.getByTestId('stop').click();
      await waitForStatus(lastAssistant(page), 'stopped');
      assert.equal(await lastAssistant(page).getByTestId('action-compare').isDisabled(), false);
    });
  });

  test('hostile model text in a column executes nothing (sanitizer checked without the CSP)', { timeout: TIMEOUT }, async () => {
    // A question that is markup is shown as text; each column's answer goes through the chat's sanitizer.
    const config = compareChat({ delayMs: 10, texts: [HOSTILE_MD, HOSTILE_MD], question: '<img src=x onerror="window.__pwned = \'question\'"> plan?' });
    await withApp(config, async (page) => {
      await openCompare(page);
      const dialog = compareDialog(page);
      assert.equal(await dialog.getByTestId('compare-question').locator('q').textContent(), '<img src=x onerror="window.__pwned = \'question\'"> plan?');
      await compareColumns(page).nth(1).getByTestId('column-strategy').selectOption('sampling');
      await dialog.getByTestId('compare-run').click();
      await page.locator('[data-testid="compare"][data-phase="done"]').waitFor();
      await assertNothingRan(page, 300, 'no injected handler or script ran');
      for (const text of await compareColumns(page).getByTestId('column-text').all()) await assertSanitized(text, /Try the Alfama[^]*done/);
      await assertNothingRan(page, 200, 'no javascript: link ran');
      assert.equal(await dialog.locator('script, iframe, svg:not(button svg)').count(), 0);
    }, { query: '?nocsp' });
  });

  test('artefacts to look at: compare screenshots (light and dark)', { timeout: TIMEOUT }, async () => {
    await inBothSchemes(compareChat({ delayMs: 10, texts: [REPLY_MD, COMPARE_TEXTS[1], COMPARE_TEXTS[2]] }), async (page) => {
      await openCompare(page);
      const dialog = compareDialog(page);
      const columns = compareColumns(page);
      await columns.nth(1).getByTestId('column-base').selectOption('preset:Creative');
      await columns.nth(1).getByTestId('column-strategy').selectOption('sampling');
      await dialog.getByTestId('compare-add').click();
      await columns.nth(2).getByTestId('column-strategy').selectOption('beam');
      await shot(page, `compare-setup`, { mouse: [1170, 750] });
      await dialog.getByTestId('compare-run').click();
      await page.locator('[data-testid="compare"][data-phase="done"]').waitFor();
      await shot(page, `compare-done`, { mouse: [1170, 750] });
    });
  });
});
