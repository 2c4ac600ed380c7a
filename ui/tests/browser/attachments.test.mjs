// Browser tests of documents attached to a message: picked through the paperclip (a chip each, being read, then
// attached; removed before sending), dropped on the chat (its overlay, Tauri's events and the test hook), a file
// the backend refuses (its reason in words, the text typed kept), sent with the message and shown on it, kept by
// an edit. Run with `npm run test:browser` or `node --test tests/browser/attachments.test.mjs`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MODEL, OUTPUT, TIMEOUT, inBothSchemes, mockState, shot, useBrowser, waitForStatus, withApp } from './harness.mjs';
import { text } from './chat-helpers.mjs';

useBrowser();

const DOCS = '/home/me/Documents';
const REPORT = `${DOCS}/q3-report.md`;
const NOTES = `${DOCS}/meeting-notes.txt`;

/** A chat with one question answered. */
const CHAT = {
  chats: [{ id: 1, title: 'Quarterly review', updatedAt: 10 }],
  messages: [
    { id: 11, chatId: 1, role: 'user', content: 'What should the review cover?', status: 'complete', createdAt: 1, model: null, stats: null },
    { id: 12, chatId: 1, role: 'assistant', content: 'Revenue, costs and the plan for next quarter.', status: 'complete', createdAt: 2, model: MODEL.name, stats: null },
  ],
};

/** The mock's attachment for `path` (mock/attachments.ts): its size and text made up from the path's length. */
const attachmentOf = (page, path) => page.evaluate((p) => Object.values(window.__hearthMock.attachments).find((a) => a.name === p.split('/').at(-1)), path);

const composerChips = (page) => page.getByTestId('composer-attachments').getByTestId('attachment');
const chip = (page, name) => composerChips(page).filter({ hasText: name });
const callsOf = async (page, cmd) => (await mockState(page)).calls.filter((c) => c.cmd === cmd).map((c) => c.payload);
const lastUser = (page) => page.locator('[data-testid="message"][data-role="user"]').last();

/** Waits for the reply to the message just sent to be saved. */
async function replied(page) {
  const reply = page.locator('[data-testid="message"][data-role="assistant"]').last();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length >= 4);
  await waitForStatus(reply, 'complete');
}

describe('Attachments', () => {
  test('picked through the paperclip: read, one removed, sent with the text and shown on the message; an edit keeps them', { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHAT, attachPick: [REPORT, NOTES], attachDelayMs: 1500 }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Quarterly review' }).waitFor();
      await page.getByTestId('attach').click();
      // Each file has its chip while it is read; Send waits for them.
      await chip(page, 'q3-report.md').and(page.locator('[data-status="reading"]')).waitFor();
      assert.equal(await composerChips(page).count(), 2);
      await page.getByTestId('composer').fill('Summarise the report.');
      assert.equal(await page.getByTestId('send').isDisabled(), true);
      await chip(page, 'q3-report.md').and(page.locator('[data-status="attached"]')).waitFor();
      await chip(page, 'meeting-notes.txt').and(page.locator('[data-status="attached"]')).waitFor();
      assert.equal(await page.getByTestId('send').isDisabled(), false);
      const report = await attachmentOf(page, REPORT);
      assert.equal(await text(chip(page, 'q3-report.md').getByTestId('attachment-detail')), '3.1 KB');
      assert.equal(await chip(page, 'q3-report.md').getAttribute('title'), `q3-report.md · 3.1 KB · the model reads ${report.chars.toLocaleString('en')} characters of it`);
      // The focus is back in the message box.
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'composer');

      await chip(page, 'meeting-notes.txt').getByTestId('attachment-remove').click();
      assert.deepEqual(await composerChips(page).getByTestId('attachment-label').allTextContents(), ['q3-report.md']);
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'composer', 'the focus goes back to the text');
      await page.keyboard.press('Enter');

      // Sent with the file; the chips leave the composer and show on the message.
      await page.getByTestId('composer-attachments').waitFor({ state: 'detached' });
      await replied(page);
      assert.deepEqual(await callsOf(page, 'send_message').then((calls) => calls.map((c) => [c.content, c.attachments])), [['Summarise the report.', [report]]]);
      const sent = lastUser(page);
      assert.equal(await text(sent.getByTestId('message-content')), 'Summarise the report.');
      assert.deepEqual(await sent.getByTestId('message-attachments').getByTestId('attachment-label').allTextContents(), ['q3-report.md']);
      assert.equal(await sent.getByTestId('attachment-remove').count(), 0);
      const saved = await page.evaluate(() => window.__hearthMock.messages.find((m) => m.content === 'Summarise the report.'));
      assert.deepEqual(saved.attachments, [report]);

      // A new version of the message keeps its file, even without text.
      await sent.hover();
      await sent.getByTestId('action-edit').click();
      await page.getByTestId('edit-input').fill('');
      await page.getByTestId('edit-save').click();
      await page.waitForFunction(() => window.__hearthMock.calls.filter((c) => c.cmd === 'edit_message').length === 1);
      await waitForStatus(page.locator('[data-testid="message"][data-role="assistant"]').last(), 'complete');
      const edited = lastUser(page);
      await edited.getByTestId('message-attachments').waitFor();
      assert.deepEqual(await edited.getByTestId('attachment-label').allTextContents(), ['q3-report.md']);
      assert.equal(await edited.getByTestId('message-content').isVisible(), false, 'a message of files alone has no empty bubble');
    });
  });

  test('dropped on the chat: the overlay while dragging, attached by Tauri\'s drop and the hook, sent without text', { timeout: TIMEOUT }, async () => {
    await withApp(CHAT, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Quarterly review' }).waitFor();
      await page.evaluate(() => window.__hearthMock.emit('tauri://drag-enter', { paths: ['/tmp/a.md'], position: { x: 600, y: 400 } }));
      const overlay = page.getByTestId('chat-drop-overlay');
      await overlay.waitFor();
      assert.match(await text(overlay), /^Drop files to attach them/);
      await page.evaluate(() => window.__hearthMock.emit('tauri://drag-drop', { paths: [`/home/me/Documents/budget.csv`], position: { x: 600, y: 400 } }));
      await overlay.waitFor({ state: 'detached' });
      await chip(page, 'budget.csv').and(page.locator('[data-status="attached"]')).waitFor();

      await page.evaluate((path) => window.__hearthDropPaths([path]), NOTES);
      await chip(page, 'meeting-notes.txt').and(page.locator('[data-status="attached"]')).waitFor();
      // The same file again is one file.
      await page.evaluate((path) => window.__hearthDropPaths([path]), NOTES);
      await page.waitForFunction(() => window.__hearthMock.calls.filter((c) => c.cmd === 'attach_file').length === 3);
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="composer-attachments"] [data-testid="attachment"]').length === 2);

      // Files alone can be sent.
      assert.equal(await page.getByTestId('composer').inputValue(), '');
      await page.getByTestId('send').click();
      await replied(page);
      const [sent] = await callsOf(page, 'send_message');
      assert.equal(sent.content, '');
      assert.deepEqual(sent.attachments.map((a) => a.name), ['budget.csv', 'meeting-notes.txt']);
      assert.deepEqual(await lastUser(page).getByTestId('attachment-label').allTextContents(), ['budget.csv', 'meeting-notes.txt']);
    });
  });

  test('a file the backend refuses: its reason in words, dismissed; the text typed and the other files stay', { timeout: TIMEOUT }, async () => {
    await withApp(CHAT, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Quarterly review' }).waitFor();
      await page.getByTestId('composer').fill('Compare these two.');
      await page.evaluate(() => window.__hearthDropPaths(['/home/me/Documents/report.bin', '/home/me/Documents/q3-report.md']));
      const refused = composerChips(page).and(page.locator('[data-status="refused"]'));
      await refused.waitFor();
      assert.equal(await text(refused), 'report.bin looks like a binary file, not text');
      await chip(page, 'q3-report.md').and(page.locator('[data-status="attached"]')).waitFor();
      assert.equal(await page.getByTestId('composer').inputValue(), 'Compare these two.');
      assert.equal(await page.getByTestId('error-banner').count(), 0, 'said on its chip, not in a banner');

      await refused.getByTestId('attachment-remove').click();
      await refused.waitFor({ state: 'detached' });
      assert.deepEqual(await composerChips(page).getByTestId('attachment-label').allTextContents(), ['q3-report.md']);
      assert.equal(await page.getByTestId('composer').inputValue(), 'Compare these two.');
    });
  });

  test('screenshots: the composer with chips (read, being read, refused) and a sent message with files', { timeout: TIMEOUT }, async () => {
    await inBothSchemes({ ...CHAT, attachPick: [REPORT, NOTES] }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Quarterly review' }).waitFor();
      await page.getByTestId('attach').click();
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="attachment"][data-status="attached"]').length === 2);
      await page.getByTestId('composer').fill('Summarise the report and the notes.');
      await page.keyboard.press('Enter');
      await replied(page);

      await page.evaluate(() => (window.__hearthMock.attachDelayMs = 60_000));
      await page.evaluate(() => void window.__hearthDropPaths(['/home/me/Documents/Annual plan 2025 (final, approved by the board).pdf', '/home/me/Documents/report.bin']));
      await composerChips(page).and(page.locator('[data-status="refused"]')).waitFor();
      await page.getByTestId('composer').fill('And this one?');
      await shot(page, 'attachments-composer', { dir: OUTPUT, mouse: [300, 300] });
      await page.evaluate(() => window.__hearthMock.emit('tauri://drag-enter', { paths: ['/tmp/a.md'], position: { x: 600, y: 400 } }));
      await page.getByTestId('chat-drop-overlay').waitFor();
      await shot(page, 'attachments-drop', { dir: OUTPUT, mouse: [300, 300] });
      await page.evaluate(() => window.__hearthMock.emit('tauri://drag-leave', null));
    });
  });
});
