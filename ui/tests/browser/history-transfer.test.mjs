// Browser tests of export and import of chats: behind the system's file dialogs, cancelled or refused.
// Run with `npm run test:browser` or `node --test tests/browser/history-transfer.test.mjs`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TIMEOUT, collectDialogs, lastAssistant, useBrowser, waitForStatus, withApp } from './harness.mjs';
import { DAY, PWNED, STORY, callsOf, chat, chatItem, message, openChatMenu, text, transfer } from './history-helpers.mjs';

useBrowser();

/** The mock's save dialog picks this folder unless a test says otherwise. */
const DOCUMENTS = '/home/me/Documents';

/** An export file as the backend reads it: one chat from last year, two it cannot take, one note. */
const IMPORT_FILE = {
  chats: [{ title: 'Lisbon trip, 2023', updatedAt: Date.now() - 400 * DAY, messages: [['user', 'Where should we eat?'], ['assistant', 'Try the bifanas near the river.']] }],
  skipped: [
    { chat: 'Recipes <b>bold</b>', reason: PWNED },
    { chat: 'chat 3', reason: 'message 12 follows message 40, which does not come before it' },
  ],
  notes: ['Lisbon trip, 2023: its settings were left out (temperature must be between 0 and 5, got 9)'],
};

describe('Export and import', () => {
  test('export a chat as Markdown from its menu, and all chats as JSON, while a reply streams', { timeout: TIMEOUT }, async () => {
    const slow = { text: 'A long, slow answer that keeps streaming for a while yet.', chunkSize: 2, delayMs: 60 };
    await withApp({ ...STORY, replies: [slow] }, async (page) => {
      await page.getByTestId('composer').fill('One more story?');
      await page.keyboard.press('Enter');
      await page.getByTestId('stop').waitFor();

      await openChatMenu(page, 'Stories');
      await transfer(page, page.getByTestId('chat-export-markdown'), 'export_chats');
      await page.getByTestId('chat-menu-list').waitFor({ state: 'detached' });
      const notice = page.getByTestId('export-notice-text');
      assert.equal(await text(notice), `Exported to ${DOCUMENTS}/Stories.md`);
      assert.equal(await text(page.getByRole('status').filter({ has: notice })), `Exported to ${DOCUMENTS}/Stories.md`);
      assert.deepEqual(await callsOf(page, 'export_chats'), [{ chatIds: [1], format: 'markdown' }]);
      assert.equal(await page.getByTestId('stop').count(), 1, 'the reply is still streaming');
      await page.getByTestId('export-notice-dismiss').click();
      await notice.waitFor({ state: 'detached' });

      await openChatMenu(page, 'Other');
      await transfer(page, page.getByTestId('chat-export-json'), 'export_chats');
      assert.equal(await text(notice), `Exported to ${DOCUMENTS}/Other.json`);

      await transfer(page, page.getByTestId('export-all'), 'export_chats');
      assert.equal(await text(notice), `Exported to ${DOCUMENTS}/hearth-chats.json`);
      assert.deepEqual((await callsOf(page, 'export_chats')).slice(1), [
        { chatIds: [2], format: 'json' },
        { chatIds: null, format: 'json' },
      ]);
      await notice.waitFor({ state: 'detached', timeout: 15_000 }); // it hides itself
      await waitForStatus(lastAssistant(page), 'complete');
      assert.equal(await page.getByTestId('error-banner').count(), 0);
    });
  });

  test("export cancelled shows nothing; a failed one shows the backend's message", { timeout: TIMEOUT }, async () => {
    await withApp({ ...STORY, exportDir: null }, async (page) => {
      await openChatMenu(page, 'Stories');
      await transfer(page, page.getByTestId('chat-export-markdown'), 'export_chats');
      assert.equal(await page.getByTestId('export-notice').count(), 0);
      assert.equal(await page.getByTestId('error-banner').count(), 0);
      assert.deepEqual(await page.evaluate(() => window.__hearthMock.exported), []);

      const message = `could not write ${DOCUMENTS}/Stories.md: No space left on device (os error 28). Nothing was exported; check the disk has room and that you may write there`;
      await page.evaluate((m) => {
        window.__hearthMock.exportDir = '/home/me/Documents';
        window.__hearthMock.failNext.export_chats = { kind: 'file', message: m };
      }, message);
      await openChatMenu(page, 'Stories');
      await transfer(page, page.getByTestId('chat-export-markdown'), 'export_chats');
      assert.equal(await text(page.getByTestId('error-text')), message);
      assert.equal(await page.getByTestId('export-notice').count(), 0);

      // Trying again: the old failure goes; this time it works.
      await openChatMenu(page, 'Stories');
      await transfer(page, page.getByTestId('chat-export-markdown'), 'export_chats');
      assert.equal(await text(page.getByTestId('export-notice-text')), `Exported to ${DOCUMENTS}/Stories.md`);
      assert.equal(await page.getByTestId('error-banner').count(), 0);
    });
  });

  test('import: the report lists skipped chats and reasons as text; the new chat takes its place by date', { timeout: TIMEOUT }, async () => {
    const config = { ...STORY, chats: [chat(1, 'Stories', Date.now()), chat(2, 'Other', Date.now() - 30 * DAY)], importFile: IMPORT_FILE };
    await withApp(config, async (page) => {
      const dialogs = collectDialogs(page);
      await transfer(page, page.getByTestId('import-chats'), 'import_chats');
      const report = page.getByTestId('import-report');
      assert.equal(await text(report.getByTestId('import-summary')), 'Imported 1 chat');
      assert.equal(await report.evaluate((el) => el === document.activeElement), true, 'focus on the report');
      assert.deepEqual(
        await report.getByTestId('import-skipped-chat').evaluateAll((els) => els.map((el) => el.textContent.replace(/\s+/g, ' ').trim())),
        [`Recipes <b>bold</b> ${PWNED}`, 'chat 3 message 12 follows message 40, which does not come before it'],
      );
      assert.equal(await text(report.getByTestId('import-skipped-reason').first()), PWNED);
      assert.equal(await report.locator('img, b').count(), 0, 'no element made from the file');
      assert.equal(await text(report.getByTestId('import-notes')), IMPORT_FILE.notes[0]);
      assert.deepEqual(await callsOf(page, 'import_chats'), [{}]);

      // Listed by its own date: below the chat of a month ago.
      await chatItem(page, 'Lisbon trip, 2023').waitFor();
      const titles = await page.getByTestId('chat-item').allTextContents();
      assert.deepEqual(titles.map((t) => t.trim()), ['Stories', 'Other', 'Lisbon trip, 2023']);
      await chatItem(page, 'Lisbon trip, 2023').click();
      await page.getByTestId('message').filter({ hasText: 'Try the bifanas near the river.' }).waitFor();

      await report.focus();
      await page.keyboard.press('Escape');
      await report.waitFor({ state: 'detached' });
      assert.equal(await page.getByTestId('composer').evaluate((el) => el === document.activeElement), true);
      assert.deepEqual(dialogs, []);
      assert.equal(await page.evaluate(() => window.__pwned), undefined);
    });
  });

  test('import: nothing imported says so; a refused file, its message; cancelled, nothing', { timeout: TIMEOUT }, async () => {
    const allSkipped = { chats: [], skipped: IMPORT_FILE.skipped, notes: [] };
    await withApp({ ...STORY, importFile: allSkipped }, async (page) => {
      await transfer(page, page.getByTestId('import-chats'), 'import_chats');
      const report = page.getByTestId('import-report');
      assert.equal(await text(report.getByTestId('import-summary')), 'Nothing was imported: all 2 chats in the file were skipped');
      assert.equal(await report.getByTestId('import-skipped-chat').count(), 2);
      assert.equal(await report.getByTestId('import-notes').count(), 0);
      await report.getByTestId('import-report-dismiss').click();
      await report.waitFor({ state: 'detached' });

      const refused = 'this file is not a Hearth chat export: its format is "something-else", not "hearth-chats"';
      await page.evaluate((m) => (window.__hearthMock.failNext.import_chats = { kind: 'invalidInput', message: m }), refused);
      await transfer(page, page.getByTestId('import-chats'), 'import_chats');
      assert.equal(await text(page.getByTestId('error-text')), refused);
      assert.equal(await report.count(), 0);

      await page.getByTestId('error-dismiss').click();
      await page.evaluate(() => (window.__hearthMock.importFile = null));
      await transfer(page, page.getByTestId('import-chats'), 'import_chats');
      assert.equal(await report.count(), 0);
      assert.equal(await page.getByTestId('error-banner').count(), 0);
      assert.equal(await page.getByTestId('chat-item').count(), 2);
    });
  });
});
