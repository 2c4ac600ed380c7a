// Browser tests of files attached to a message: picked through the paperclip (a chip each, being read, then
// attached; removed before sending), dropped on the chat (its overlay, Tauri's events and the test hook), a file
// the backend refuses (its reason in words, the text typed kept), sent with the message and shown on it, kept by
// an edit; a document too long to read whole: the reply's sources (the passages its question was given), opened
// one by one as plain text; pasted files (a screenshot with its thumbnail under the app's CSP, sent and shown as an
// image with it; a sent image's thumbnail drawn from the backend's bytes in a chat opened again; a WebP refused; a model without a projector warned about); the count of tokens the model read a question
// as; the limits on attached files in Settings. Run with `npm run test:browser` or
// `node --test tests/browser/attachments.test.mjs`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MODEL, OUTPUT, TIMEOUT, collectDialogs, inBothSchemes, lastAssistant, mockState, shot, useBrowser, waitForStatus, withApp } from './harness.mjs';
import { openSettings, text } from './chat-helpers.mjs';
import { CONTRACT } from '../contract.mjs';
import { openModels, row } from './models-helpers.mjs';

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

/** A chat whose question's document was too long to read whole: it was given 3 passages, the last with markup in it. */
const HANDBOOK = { hash: 'ab'.repeat(32), name: 'handbook.md', kind: 'document', bytes: 480_000, chars: 471_000 };
const passage = (ordinal, text) => ({ hash: HANDBOOK.hash, name: HANDBOOK.name, ordinal, text });
const MARKUP = 'Write tags as text: <img src=x onerror=alert(1)> is shown, never run.';
const PASSAGES = [
  passage(11, 'Leave is booked in the HR portal at least two weeks ahead.\n\nYour manager approves it within three working days.'),
  passage(3, 'Everyone has 25 days of paid leave a year, plus public holidays.'),
  passage(27, MARKUP),
];
const SOURCED = {
  chats: [{ id: 2, title: 'Handbook questions', updatedAt: 10 }],
  messages: [
    { id: 21, chatId: 2, role: 'user', content: 'How do I book leave?', status: 'complete', createdAt: 1, model: null, stats: null, attachments: [HANDBOOK], passages: PASSAGES },
    { id: 22, chatId: 2, role: 'assistant', content: 'Book it in the HR portal two weeks ahead; your manager approves it.', status: 'complete', createdAt: 2, model: MODEL.name, stats: null },
  ],
};

/** A 12×12 PNG (a checkerboard) kept by the backend, and one let go of. */
const CHECKERS = 'iVBORw0KGgoAAAANSUhEUgAAAAwAAAAMCAIAAADZF8uwAAAAHUlEQVR4nGN4Es6PhnRz7qMhhiGrCFMIU9uQVQQARojGkea0qYEAAAAASUVORK5CYII=';
const PHOTO = { hash: 'cd'.repeat(32), name: 'beach.png', kind: 'image', bytes: 103, chars: 0 };
const GONE = { hash: 'ef'.repeat(32), name: 'old-scan.png', kind: 'image', bytes: 2_400_000, chars: 0 };
/** A chat whose question carried both images, besides CHAT. */
const PHOTOS = {
  chats: [{ id: 3, title: 'Holiday photos', updatedAt: 20 }, ...CHAT.chats],
  messages: [
    ...CHAT.messages,
    { id: 31, chatId: 3, role: 'user', content: 'Where was this taken?', status: 'complete', createdAt: 3, model: null, stats: null, attachments: [PHOTO, GONE] },
    { id: 32, chatId: 3, role: 'assistant', content: 'On a beach, by the look of it.', status: 'complete', createdAt: 4, model: MODEL.name, stats: null },
  ],
  attachedImages: { [PHOTO.hash]: CHECKERS },
};

/** The mock's attachment for `path` (mock/attachments.ts): its size and text made up from the path's length. */
const attachmentOf = (page, path) => page.evaluate((p) => Object.values(window.__hearthMock.attachments).find((a) => a.name === p.split('/').at(-1)), path);

const composerChips = (page) => page.getByTestId('composer-attachments').getByTestId('attachment');
const chip = (page, name) => composerChips(page).filter({ hasText: name });
const callsOf = async (page, cmd) => (await mockState(page)).calls.filter((c) => c.cmd === cmd).map((c) => c.payload);
const lastUser = (page) => page.locator('[data-testid="message"][data-role="user"]').last();

/** A vision model: the harness's MODEL with its projector beside it. */
const VISION_PROJECTOR = '/home/me/models/mmproj-Llama-3.2-3B-F16.gguf';
const VISION = { ...MODEL, projectors: [VISION_PROJECTOR] };
/** A 1×1 WebP: refused by its header (refusals.json has the backend's words for exactly these bytes). */
const WEBP = 'UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==';
const NO_VISION = 'This model cannot read images — load a vision model (its mmproj-….gguf beside it, or chosen in Settings → Model)';

/** A screenshot-like PNG (a window with a title bar and some content) drawn in the page, in base64. */
const drawnPng = (page) =>
  page.evaluate(() => {
    const canvas = Object.assign(document.createElement('canvas'), { width: 320, height: 200 });
    const g = canvas.getContext('2d');
    g.fillStyle = '#2d6cdf';
    g.fillRect(0, 0, 320, 200);
    g.fillStyle = '#f4f1ec';
    g.fillRect(40, 30, 240, 150);
    g.fillStyle = '#e4570f';
    g.fillRect(40, 30, 240, 22);
    g.fillStyle = '#1d1b19';
    for (let row = 0; row < 5; row++) g.fillRect(60, 70 + row * 20, 120 + ((row * 37) % 80), 8);
    return canvas.toDataURL('image/png').split(',')[1];
  });

/**
 * Pastes into the message box a clipboard holding `files` (each `{ name, type, base64 }`) and, when given, `text`, as
 * the webview's paste event carries it; whether the app took the paste (its default prevented).
 */
const paste = (page, { files = [], text = null }) =>
  page.evaluate(
    ({ files, text }) => {
      const data = new DataTransfer();
      if (text !== null) data.setData('text/plain', text);
      for (const f of files) data.items.add(new File([Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0))], f.name, { type: f.type }));
      const box = document.querySelector('[data-testid="composer"]');
      box.focus();
      const event = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true });
      box.dispatchEvent(event);
      return event.defaultPrevented;
    },
    { files, text },
  );

/** Waits for the reply to the message just sent to be saved. */
async function replied(page) {
  const reply = page.locator('[data-testid="message"][data-role="assistant"]').last();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length >= 4);
  await waitForStatus(reply, 'complete');
}

describe('Attachments', () => {
  test('picked through the paperclip: read, one removed, sent with the text and shown on the message; an edit keeps them', { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHAT, attachPick: [REPORT, NOTES], attachDelayMs: 1500, replies: [{ text: 'Revenue rose.', questionTokens: 1234, documentTokens: [1180] }] }, async (page) => {
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
      // The reply's count of the question, said under its files.
      assert.equal(await text(sent.getByTestId('message-read-tokens')), 'Read whole · 1,234 tokens');
      // And the document's own, on its chip.
      assert.equal(await text(sent.getByTestId('attachment-detail')), '3.1 KB · 1,180 tokens');
      assert.equal(await sent.getByTestId('attachment').getAttribute('title'), `q3-report.md · 3.1 KB · the model read its ${report.chars.toLocaleString('en')} characters as 1,180 tokens`);
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

  test('a long document says how much of it is indexed while it is read, then is attached', { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHAT, attachPick: [REPORT], attachDelayMs: 2400, attachIndexSteps: 3 }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Quarterly review' }).waitFor();
      await page.getByTestId('attach').click();
      const detail = chip(page, 'q3-report.md').getByTestId('attachment-detail');
      await page.waitForFunction(() => document.querySelector('[data-testid="attachment-detail"]')?.textContent?.includes('Indexing 50%'));
      assert.equal(await chip(page, 'q3-report.md').getAttribute('data-status'), 'reading');
      await shot(page, 'attachments-indexing', { dir: OUTPUT, mouse: [300, 300] });
      await chip(page, 'q3-report.md').and(page.locator('[data-status="attached"]')).waitFor();
      assert.equal(await text(detail), '3.1 KB');
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

  test('a document read by passages: the reply lists them as its sources, each shown as plain text on demand', { timeout: TIMEOUT }, async () => {
    await withApp(SOURCED, async (page) => {
      const dialogs = collectDialogs(page);
      await page.getByTestId('chat-title').filter({ hasText: 'Handbook questions' }).waitFor();
      const sources = lastAssistant(page).getByTestId('sources');
      await sources.waitFor();
      assert.equal(await page.getByTestId('sources').count(), 1, 'under the reply only');
      assert.equal(await text(sources.getByTestId('sources-summary')), '3 passages from handbook.md');
      // The question's chip says its document was not read whole.
      const chipTitle = await lastUser(page).getByTestId('attachment').getAttribute('title');
      assert.equal(chipTitle, 'handbook.md · 480.0 KB · too long to read whole: the model was given the passages that best match the question');

      // Closed at first; opened, a button per passage, numbered from 1.
      const buttons = sources.getByTestId('source');
      assert.equal(await buttons.first().isVisible(), false);
      await sources.getByTestId('sources-summary').click();
      assert.deepEqual(await buttons.allTextContents().then((t) => t.map((s) => s.trim())), [
        'handbook.md · passage 12',
        'handbook.md · passage 4',
        'handbook.md · passage 28',
      ]);
      const panel = sources.getByTestId('source-text');
      assert.equal(await panel.count(), 0);

      await buttons.nth(0).click();
      assert.equal(await text(panel.getByTestId('source-title')), 'handbook.md · passage 12');
      assert.equal(await text(panel.locator('blockquote')), PASSAGES[0].text);
      assert.equal(await buttons.nth(0).getAttribute('aria-expanded'), 'true');

      // Another switches the panel.
      await buttons.nth(1).click();
      assert.equal(await text(panel.getByTestId('source-title')), 'handbook.md · passage 4');
      assert.equal(await text(panel.locator('blockquote')), PASSAGES[1].text);
      assert.deepEqual(await Promise.all([0, 1, 2].map((i) => buttons.nth(i).getAttribute('aria-expanded'))), ['false', 'true', 'false']);

      // Markup in a document is text.
      await buttons.nth(2).click();
      assert.equal(await text(panel.locator('blockquote')), MARKUP);
      assert.equal(await panel.locator('img').count(), 0);

      // Closed from the panel (by keyboard): the focus goes back to its button.
      await panel.getByTestId('source-close').focus();
      await page.keyboard.press('Enter');
      await panel.waitFor({ state: 'detached' });
      assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), 'handbook.md · passage 28');
      await page.waitForTimeout(300); // time for an <img> that made it into the page to fail and fire
      assert.deepEqual(dialogs, []);
    });
  });

  test('pasted: a screenshot is attached with its thumbnail, sent, and shown on the message as an image; a paste of text stays text', { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHAT, model: VISION, attachDelayMs: 600 }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Quarterly review' }).waitFor();
      // Text alone is the text box's: the app leaves the paste be.
      assert.equal(await paste(page, { text: 'some copied words' }), false);

      const png = await drawnPng(page);
      assert.equal(await paste(page, { files: [{ name: '', type: 'image/png', base64: png }] }), true);
      const shot = chip(page, 'pasted-image-1.png');
      await shot.and(page.locator('[data-status="reading"]')).waitFor();
      await shot.and(page.locator('[data-status="attached"]')).waitFor();
      assert.equal(await shot.getAttribute('data-kind'), 'image');
      assert.equal(await shot.getByTestId('attachment-warning').count(), 0, 'a vision model reads it');
      // The thumbnail: a small data: URL the CSP allows (no blob: URL), drawn and loaded.
      const thumbnail = shot.getByTestId('attachment-thumbnail');
      await page.waitForFunction(() => document.querySelector('[data-testid="attachment-thumbnail"]')?.complete);
      const thumbnailSrc = thumbnail.getAttribute('src');
      assert.match(await thumbnail.getAttribute('src'), /^data:image\/png;base64,/);
      assert.equal(await thumbnail.evaluate((img) => img.naturalWidth), 48);
      const [asked] = await callsOf(page, 'attach_bytes');
      assert.deepEqual([asked.name, asked.data], ['pasted-image-1.png', png]);
      assert.equal((await callsOf(page, 'attach_bytes')).length, 1, 'the text paste attached nothing');
      const image = await attachmentOf(page, '/pasted-image-1.png');
      assert.deepEqual([image.kind, image.chars, image.bytes], ['image', 0, atob(png).length]);
      assert.equal(await page.getByTestId('composer').inputValue(), '', 'nothing of the paste went into the text');
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'composer');

      await page.getByTestId('composer').fill('What is on this screen?');
      await page.keyboard.press('Enter');
      await page.getByTestId('composer-attachments').waitFor({ state: 'detached' });
      await replied(page);
      assert.deepEqual((await callsOf(page, 'send_message')).map((c) => c.attachments), [[image]]);
      const sent = lastUser(page).getByTestId('message-attachments').getByTestId('attachment');
      assert.equal(await sent.getAttribute('data-kind'), 'image');
      assert.equal(await text(sent.getByTestId('attachment-label')), 'pasted-image-1.png');
      assert.equal(await sent.getAttribute('title'), `pasted-image-1.png · ${await text(sent.getByTestId('attachment-detail'))} · an image, shown to the model`);
      // The composer's thumbnail goes with the message: nothing is fetched to draw it again.
      assert.equal(await sent.getByTestId('attachment-thumbnail').getAttribute('src'), await thumbnailSrc);
      assert.deepEqual(await callsOf(page, 'get_attached_image'), []);
    });
  });

  test('a sent image\'s chip in a chat opened again: its thumbnail drawn once from the image the backend keeps; one let go of keeps its icon', { timeout: TIMEOUT }, async () => {
    await withApp(PHOTOS, async (page) => {
      const chips = lastUser(page).getByTestId('message-attachments').getByTestId('attachment');
      const photo = chips.filter({ hasText: PHOTO.name });
      await photo.getByTestId('attachment-thumbnail').waitFor();
      await page.waitForFunction(() => document.querySelector('[data-testid="attachment-thumbnail"]')?.complete);
      assert.match(await photo.getByTestId('attachment-thumbnail').getAttribute('src'), /^data:image\/png;base64,/);
      assert.equal(await photo.getByTestId('attachment-thumbnail').evaluate((img) => img.naturalWidth), 48);
      const gone = chips.filter({ hasText: GONE.name });
      assert.equal(await gone.getByTestId('attachment-thumbnail').count(), 0);
      assert.equal(await gone.locator('svg').count(), 1, 'the image icon');
      // Away and back: the chips render again, the images are not asked for again.
      await page.getByTestId('chat-item').filter({ hasText: 'Quarterly review' }).click();
      await page.getByTestId('chat-title').filter({ hasText: 'Quarterly review' }).waitFor();
      await page.getByTestId('chat-item').filter({ hasText: 'Holiday photos' }).click();
      await photo.getByTestId('attachment-thumbnail').waitFor();
      assert.deepEqual((await callsOf(page, 'get_attached_image')).map((c) => c.hash).sort(), [GONE.hash, PHOTO.hash].sort());
    });
  });

  test('pasted: a WebP is refused in the backend\'s words on its own chip; the other file of the paste is attached', { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHAT, model: VISION }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Quarterly review' }).waitFor();
      await page.getByTestId('composer').fill('Compare these.');
      const notes = Buffer.from('# Notes\n\nShip on Friday.').toString('base64');
      await paste(page, { files: [{ name: 'cat.webp', type: 'image/webp', base64: WEBP }, { name: 'notes.md', type: 'text/markdown', base64: notes }] });
      const refused = composerChips(page).and(page.locator('[data-status="refused"]'));
      await refused.waitFor();
      assert.equal(await text(refused), 'cat.webp is a WebP image, which models cannot read yet: save it as PNG or JPEG and attach that');
      await chip(page, 'notes.md').and(page.locator('[data-status="attached"]')).waitFor();
      assert.equal(await chip(page, 'notes.md').getAttribute('data-kind'), 'document');
      assert.equal(await page.getByTestId('composer').inputValue(), 'Compare these.');
      await refused.getByTestId('attachment-remove').click();
      await refused.waitFor({ state: 'detached' });
      assert.deepEqual(await composerChips(page).getByTestId('attachment-label').allTextContents(), ['notes.md']);
    });
  });

  test('pasted into a chat whose model has no projector: the image\'s chip says so, and the send fails in the engine\'s words', { timeout: TIMEOUT }, async () => {
    await withApp(CHAT, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Quarterly review' }).waitFor();
      const notes = Buffer.from('Ship on Friday.').toString('base64');
      await paste(page, { files: [{ name: 'board.png', type: 'image/png', base64: await drawnPng(page) }, { name: 'notes.txt', type: 'text/plain', base64: notes }] });
      const board = chip(page, 'board.png').and(page.locator('[data-status="attached"]'));
      await board.waitFor();
      assert.equal(await text(board.getByTestId('attachment-warning')), NO_VISION);
      assert.ok((await board.getAttribute('title')).endsWith(`an image, shown to the model\n${NO_VISION}`), 'and in its tooltip');
      await chip(page, 'notes.txt').and(page.locator('[data-status="attached"]')).waitFor();
      assert.equal(await chip(page, 'notes.txt').getByTestId('attachment-warning').count(), 0, 'documents are read by any model');

      // Once the model reads images (its projector chosen, the model loaded again), the warning goes.
      await page.evaluate((projector) => (window.__hearthMock.model.projector = projector), VISION_PROJECTOR);
      await page.evaluate(() => window.dispatchEvent(new Event('focus')));
      await board.getByTestId('attachment-warning').waitFor({ state: 'detached' });
      await page.evaluate(() => delete window.__hearthMock.model.projector);
      await page.evaluate(() => window.dispatchEvent(new Event('focus')));
      await board.getByTestId('attachment-warning').waitFor();

      await page.getByTestId('send').click();
      const banner = page.getByTestId('error-banner');
      await banner.waitFor();
      assert.match(await text(banner), /this model cannot read images: load a vision model, with its projector \(mmproj-….gguf\) beside it or chosen in its load settings/);
    });
  });

  test('screenshots: the composer with chips (read, being read, refused) and a sent message with files', { timeout: TIMEOUT }, async () => {
    await inBothSchemes({ ...CHAT, attachPick: [REPORT, NOTES], replies: [{ text: 'Revenue rose 12%; the notes agree.', questionTokens: 2345, documentTokens: [1180, 1090] }] }, async (page) => {
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

  test('screenshots: a pasted screenshot\'s chip with its thumbnail, a refused WebP, a sent image; the warning of a model without a projector', { timeout: TIMEOUT }, async () => {
    await inBothSchemes({ ...CHAT, model: VISION }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Quarterly review' }).waitFor();
      const png = await drawnPng(page);
      await paste(page, { files: [{ name: 'dashboard.png', type: 'image/png', base64: png }] });
      await chip(page, 'dashboard.png').getByTestId('attachment-thumbnail').waitFor();
      await page.getByTestId('composer').fill('What stands out on this dashboard?');
      await page.keyboard.press('Enter');
      await replied(page);

      await paste(page, { files: [{ name: '', type: 'image/png', base64: png }, { name: 'cat.webp', type: 'image/webp', base64: WEBP }] });
      await chip(page, 'pasted-image-1.png').getByTestId('attachment-thumbnail').waitFor();
      await composerChips(page).and(page.locator('[data-status="refused"]')).waitFor();
      await page.getByTestId('composer').fill('And this one?');
      await shot(page, 'attachments-paste', { dir: OUTPUT, mouse: [300, 300] });

      await page.evaluate(() => delete window.__hearthMock.model.projector);
      await page.evaluate(() => window.dispatchEvent(new Event('focus')));
      await chip(page, 'pasted-image-1.png').getByTestId('attachment-warning').waitFor();
      await shot(page, 'attachments-paste-no-vision', { dir: OUTPUT, mouse: [300, 300] });
    });
  });

  test('screenshots: a reply\'s sources, one passage open', { timeout: TIMEOUT }, async () => {
    await inBothSchemes(SOURCED, async (page) => {
      const sources = lastAssistant(page).getByTestId('sources');
      await sources.waitFor();
      await sources.getByTestId('sources-summary').click();
      await sources.getByTestId('source').first().click();
      await sources.getByTestId('source-text').waitFor();
      await shot(page, 'attachments-sources', { dir: OUTPUT, mouse: [300, 300] });
    });
  });
});

describe('Settings → Attachments', () => {
  const limitsOf = (page) => page.evaluate(() => window.__hearthMock.attachmentLimits);
  const boxes = { maxFileMb: 'limit-file', maxImageMegapixels: 'limit-image' };
  const refusedWords = { maxFileMb: 'the largest file', maxImageMegapixels: 'the largest image' };
  for (const range of CONTRACT.attachmentLimitRanges) {
    test(`${range.key} out of its range is refused in words, its box marked; fixed, it is saved`, { timeout: TIMEOUT }, async () => {
      await withApp({}, async (page) => {
        await openSettings(page);
        const group = page.getByTestId('attachment-limits');
        const box = group.getByTestId(boxes[range.key]);
        await box.scrollIntoViewIfNeeded();
        assert.equal(await box.inputValue(), String(CONTRACT.attachmentLimitDefaults[range.key]));
        await box.fill(String(range.max + 1));
        await box.press('Enter');
        const error = group.getByTestId('attachment-limits-error');
        await error.waitFor();
        assert.equal(await text(error), `Not saved: ${refusedWords[range.key]} must be ${range.text}`);
        assert.equal(await box.getAttribute('aria-invalid'), 'true');
        assert.deepEqual(await limitsOf(page), CONTRACT.attachmentLimitDefaults);

        await box.fill(String(range.max));
        await box.press('Enter');
        await error.waitFor({ state: 'detached' });
        assert.equal(await box.getAttribute('aria-invalid'), 'false');
        assert.deepEqual(await limitsOf(page), { ...CONTRACT.attachmentLimitDefaults, [range.key]: range.max });
      });
    });
  }

  /** A library with two embedding models (one whose file the backend cannot read) beside the chat model. */
  const embedder = (name, sizeBytes, layers) => ({
    path: `/home/me/models/${name}.gguf`, name, source: 'modelsFolder', repo: null, sizeBytes, error: null,
    facts: { architecture: 'bert', parameters: 22_565_376, quantization: 'F16', contextLength: 512, layers, hasChatTemplate: false, reasoning: { kind: 'none' }, embedding: true },
  });
  const MINILM = embedder('all-MiniLM-L6-v2.f16', 45_828_576, 6);
  const NOMIC = embedder('nomic-embed-text-v1.5.Q8_0', 146_146_432, 12);
  const EMBEDDING_LIBRARY = [
    { path: MODEL.path, name: MODEL.name, source: 'linked', repo: null, sizeBytes: MODEL.sizeBytes, facts: null, error: null },
    MINILM,
    NOMIC,
  ];

  test('search by meaning: an embedding model is chosen from the library; one the backend refuses says why and nothing changes', { timeout: TIMEOUT }, async () => {
    await withApp({ library: EMBEDDING_LIBRARY }, async (page) => {
      await openSettings(page);
      const group = page.getByTestId('attachment-limits');
      const select = group.getByTestId('embedding-model');
      await select.scrollIntoViewIfNeeded();
      await select.locator('option').nth(2).waitFor({ state: 'attached' });
      const options = await select.locator('option').allTextContents();
      assert.deepEqual(options, ['Off (words alone)', MINILM.name, NOMIC.name], 'only embedding models are offered');
      assert.equal(await select.inputValue(), '');

      await select.selectOption(MINILM.path);
      await group.getByTestId('embedding-model-note').filter({ hasText: 'Checking the model' }).waitFor();
      await page.waitForFunction((path) => window.__hearthMock.embeddingModel === path, MINILM.path);
      await page.waitForFunction(() => !document.querySelector('[data-testid="embedding-model"]').disabled);

      await select.selectOption(NOMIC.path);
      const error = group.getByTestId('embedding-model-error');
      await error.waitFor();
      assert.match(await text(error), /^Search by meaning: \/home\/me\/models\/nomic-embed-text-v1\.5\.Q8_0\.gguf cannot be read: /);
      assert.equal(await page.evaluate(() => window.__hearthMock.embeddingModel), MINILM.path, 'the refused model is not chosen');
      assert.equal(await select.inputValue(), MINILM.path, 'the box shows what is in force');

      await select.selectOption('');
      await error.waitFor({ state: 'detached' });
      assert.equal(await page.evaluate(() => window.__hearthMock.embeddingModel), null);
    });
  });

  test('an embedding model in the library: no Load, what it is for; the chat\'s model menu does not offer it', { timeout: TIMEOUT }, async () => {
    await withApp({ library: EMBEDDING_LIBRARY }, async (page) => {
      await page.getByTestId('model-switcher').click();
      const options = page.getByTestId('model-menu').getByTestId('model-option');
      await options.first().waitFor();
      assert.deepEqual(await options.evaluateAll((all) => all.map((o) => o.dataset.path).filter(Boolean)), [MODEL.path]);
      await page.keyboard.press('Escape');

      await openModels(page, 'library');
      const minilm = row(page, MINILM.path);
      await minilm.waitFor();
      assert.equal(await minilm.getByTestId('load-model').count(), 0);
      assert.equal(await text(minilm.getByTestId('embedding-use')), 'Not a chat model: it finds a document\'s passages by meaning. Choose it in Settings → Attachments.');
      assert.match(await text(minilm), /embedding model, for search by meaning/);
      assert.doesNotMatch(await text(minilm), /chat template/);
      assert.equal(await row(page, MODEL.path).getByTestId('embedding-use').count(), 0);
      await shot(page, 'library-embedding-model', { dir: OUTPUT });
    });
  });

  test('artefacts to look at: search by meaning chosen (light and dark)', { timeout: TIMEOUT }, async () => {
    await inBothSchemes({ library: EMBEDDING_LIBRARY, embeddingModel: MINILM.path }, async (page) => {
      await openSettings(page);
      const group = page.getByTestId('attachment-limits');
      await page.waitForFunction((path) => document.querySelector('[data-testid="embedding-model"]')?.value === path, MINILM.path);
      await group.evaluate((el) => el.scrollIntoView({ block: 'end' }));
      await shot(page, 'settings-attachments-meaning', { dir: OUTPUT });
    });
  });

  test('artefacts to look at: the Attachments group (light and dark)', { timeout: TIMEOUT }, async () => {
    await inBothSchemes({}, async (page) => {
      await openSettings(page);
      const group = page.getByTestId('attachment-limits');
      await group.getByTestId('limit-file').fill('512');
      await group.getByTestId('limit-file').press('Enter');
      await page.waitForFunction(() => window.__hearthMock.attachmentLimits.maxFileMb === 512);
      await group.evaluate((el) => el.scrollIntoView({ block: 'end' }));
      await shot(page, 'settings-attachments', { dir: OUTPUT });
    });
  });
});
