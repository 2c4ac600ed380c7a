// Shared by the history's browser tests (history*.test.mjs): chats and their messages as fixtures, the
// chat list's menu, file transfers and search.
import { MODEL, messages, mockState, replyStats } from './harness.mjs';

export const MINUTE = 60_000;

/** A chat's messages from [role, content, extra?] rows, ids from `firstId`; linear unless `extra.parentId` says otherwise. */
export function history(chatId, firstId, rows, startAt = Date.now() - 3 * 60 * MINUTE) {
  return rows.map(([role, content, extra = {}], i) => ({
    id: firstId + i,
    chatId,
    role,
    content,
    status: 'complete',
    createdAt: startAt + i * MINUTE,
    model: role === 'assistant' ? MODEL.name : null,
    stats: role === 'assistant' ? replyStats() : null,
    ...extra,
  }));
}

export const chat = (id, title, updatedAt, extra = {}) => ({ id, title, updatedAt, ...extra });

/** Chat 1: a question, its answer, "Tell a story" and a reply to it. */
export const STORY = {
  chats: [chat(1, 'Stories', 30), chat(2, 'Other', 20)],
  messages: history(1, 1, [
    ['user', 'Hi there'],
    ['assistant', 'Hello! How can I help?'],
    ['user', 'Tell a story'],
    ['assistant', 'Once upon a time, a fox lived by the river.'],
  ]),
};

export const message = (page, id) => page.locator(`[data-testid="message"][data-message-id="${id}"]`);

export const text = async (locator) => (await locator.textContent()).trim();

export const callsOf = async (page, cmd) => (await mockState(page)).calls.filter((c) => c.cmd === cmd).map((c) => c.payload);

/** Ids of the message elements in the DOM, in order. */
export const renderedIds = (page) => messages(page).evaluateAll((els) => els.map((el) => Number(el.dataset.messageId)));

export const chatItem = (page, title) => page.getByTestId('chat-item').filter({ hasText: title });

export const rowOf = (page, title) => page.locator('li').filter({ has: chatItem(page, title) });

export async function openChatMenu(page, title) {
  const row = rowOf(page, title);
  await row.hover();
  await row.getByTestId('chat-menu').click();
  await page.getByTestId('chat-menu-list').waitFor();
}

export const DAY = 24 * 60 * MINUTE;

export const PWNED = '<img src=x onerror=alert(1)>';

/** Wait until no file dialog is open: the export or import has ended, whichever way. */
export const transferDone = (page) => page.locator('[data-testid="transfer"][aria-busy="false"]').waitFor();

/** Click `button`, and wait until the command it sent has been answered. */
export async function transfer(page, button, cmd) {
  const before = (await callsOf(page, cmd)).length;
  await button.click();
  await page.waitForFunction(([c, n]) => window.__hearthMock.calls.filter((x) => x.cmd === c).length > n, [cmd, before]);
  await transferDone(page);
}

export async function searchFor(page, query) {
  await page.getByTestId('search-input').fill(query);
  await page.waitForFunction(
    (q) => window.__hearthMock.calls.some((c) => c.cmd === 'search_messages' && c.payload.query === q),
    query.trim(),
  );
  await page.locator('[data-testid="search-results"][data-state="answered"]').waitFor();
}
