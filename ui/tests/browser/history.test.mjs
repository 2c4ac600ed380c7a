// Browser tests of the message tree (edit, regenerate, continue, branches, delete), the chat list
// (pin, rename, delete, chat-updated), the system prompt, the virtualised message list, and screenshots
// of them with export, import and search.
// Run with `npm run test:browser`; screenshots go to tests/browser/output/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  OUTPUT,
  TIMEOUT,
  inBothSchemes,
  lastAssistant,
  messages,
  mockState,
  replyStats,
  shot,
  useBrowser,
  waitForStatus,
  withApp,
} from './harness.mjs';
import {
  DAY,
  MINUTE,
  PWNED,
  STORY,
  callsOf,
  chat,
  chatItem,
  history,
  message,
  openChatMenu,
  renderedIds,
  searchFor,
  text,
  transfer,
} from './history-helpers.mjs';

useBrowser();

const contentOf = (locator) => text(locator.getByTestId('message-content'));

/** A chat of `count` messages of varied lengths, the replies in Markdown. */
function longChat(count) {
  const paragraph = 'The quick brown fox jumps over the lazy dog while the kettle hums. ';
  const rows = Array.from({ length: count }, (_, i) =>
    i % 2 === 0
      ? ['user', `Question ${i + 1}: ${paragraph.slice(0, 20 + (i % 5) * 12)}`]
      : ['assistant', `Answer ${i + 1}.\n\n${paragraph.repeat(1 + (i % 4))}${i % 6 === 1 ? '\n\n- one\n- two\n- three' : ''}`],
  );
  return { chats: [chat(1, 'Two thousand messages', 30)], messages: history(1, 1, rows, Date.now() - count * MINUTE) };
}

/** The screenshot scene: a pinned chat with an edited question (2/2) and an interrupted reply. */
function scene() {
  const start = Date.now() - 26 * 60 * MINUTE;
  const reply = 'Sure! Here are **three** cozy ideas:\n\n1. Brew a pot of *spiced tea*\n2. Read by the fire\n3. Write a short poem';
  return {
    chats: [
      chat(1, 'Weekend by the fire', 40, { leafId: 6, pinned: true, systemPrompt: 'You are a warm, concise host.' }),
      chat(2, 'Explain Rust lifetimes', 30),
      chat(3, 'Sourdough starter schedule', 20),
      chat(4, 'Packing list for Lisbon', 10),
    ],
    messages: [
      ...history(1, 1, [['user', 'Plan a slow, cozy Saturday evening at home.'], ['assistant', reply]], start),
      ...history(1, 3, [['user', 'Make the poem about rain.', { parentId: 2 }], ['assistant', 'Rain taps the glass…', { parentId: 3 }]], start + 5 * MINUTE),
      ...history(1, 5, [
        ['user', 'Write the poem about rain, in four short lines.', { parentId: 2 }],
        ['assistant', 'Soft rain on the roof,\nthe kettle begins to', { parentId: 5, status: 'interrupted', stats: replyStats({ interruptedBy: 'the engine was killed (SIGKILL) — most often because the system ran out of memory' }) }],
      ], start + 9 * MINUTE),
      ...history(2, 20, [['user', 'Why does the borrow checker complain when the rain stops?']], start - 3 * 24 * 60 * MINUTE),
      ...history(3, 30, [['assistant', 'Feed it at 8 am and 8 pm; on rainy days it rises slower.']], start - 40 * 24 * 60 * MINUTE),
    ],
  };
}

/** Where the pointer rests for a shot: over `locator`. */
async function over(locator) {
  const box = await locator.boundingBox();
  return [box.x + box.width / 2, box.y + box.height / 2];
}

describe('The message tree', () => {
  test('edit: "2/2", the arrows go back to "1/2" and forward; Escape cancels, Shift+Enter adds a line', { timeout: TIMEOUT }, async () => {
    await withApp({ ...STORY, replies: [{ text: 'A fox napped. The end.', chunkSize: 4, delayMs: 10 }] }, async (page) => {
      const story = message(page, 3);
      await story.waitFor();

      // Escape cancels without saving anything.
      await story.getByTestId('action-edit').click();
      const input = story.getByTestId('edit-input');
      assert.equal(await input.inputValue(), 'Tell a story');
      await page.keyboard.press('Shift+Enter');
      await page.keyboard.type('please');
      assert.equal(await input.inputValue(), 'Tell a story\nplease');
      await page.keyboard.press('Escape');
      await input.waitFor({ state: 'detached' });
      assert.equal(await contentOf(story), 'Tell a story');

      // Enter saves and sends: the new version replaces the old one and everything after it.
      await story.getByTestId('action-edit').click();
      await input.fill('Tell a very short story');
      await page.keyboard.press('Enter');
      const edited = messages(page).nth(2);
      await waitForStatus(messages(page).nth(3), 'complete');
      assert.equal(await messages(page).count(), 4);
      assert.equal(await contentOf(edited), 'Tell a very short story');
      assert.equal(await contentOf(lastAssistant(page)), 'A fox napped. The end.');
      assert.equal(await text(edited.getByTestId('branch-position')), '2/2');
      assert.equal(await edited.getByTestId('branch-next').isDisabled(), true, 'the newest version is the last');
      const newId = Number(await edited.getAttribute('data-message-id'));
      const [edit] = await callsOf(page, 'edit_message');
      assert.deepEqual({ ...edit, onEvent: undefined }, { chatId: 1, messageId: 3, content: 'Tell a very short story', onEvent: undefined });

      await edited.getByTestId('branch-prev').click();
      await page.getByTestId('branch-position').filter({ hasText: '1/2' }).waitFor();
      assert.equal(await contentOf(messages(page).nth(2)), 'Tell a story');
      assert.equal(await contentOf(lastAssistant(page)), 'Once upon a time, a fox lived by the river.');
      assert.equal(await messages(page).nth(2).getByTestId('branch-prev').isDisabled(), true);

      await messages(page).nth(2).getByTestId('branch-next').click();
      await page.getByTestId('branch-position').filter({ hasText: '2/2' }).waitFor();
      assert.equal(await contentOf(lastAssistant(page)), 'A fox napped. The end.');
      assert.deepEqual((await callsOf(page, 'switch_branch')).map((p) => p.messageId), [3, newId]);
    });
  });

  test('regenerate: the new reply streams beside the old one; buttons wait while it streams', { timeout: TIMEOUT }, async () => {
    await withApp({ ...STORY, replies: [{ text: 'Another tale, told slowly and with care.', chunkSize: 3, delayMs: 40 }] }, async (page) => {
      await message(page, 4).getByTestId('action-regenerate').click();
      await page.getByTestId('stop').waitFor();
      assert.equal(await message(page, 4).count(), 0, 'the old reply left the path');
      assert.equal(await message(page, 3).getByTestId('action-edit').isDisabled(), true, 'no second turn while one runs');
      assert.equal(await text(lastAssistant(page).getByTestId('branch-position')), '2/2');
      await waitForStatus(lastAssistant(page), 'complete');
      assert.equal(await contentOf(lastAssistant(page)), 'Another tale, told slowly and with care.');
      assert.equal(await message(page, 3).getByTestId('action-edit').isDisabled(), false);

      await lastAssistant(page).getByTestId('branch-prev').click();
      await message(page, 4).waitFor();
      assert.equal(await text(message(page, 4).getByTestId('branch-position')), '1/2');
      assert.deepEqual(await callsOf(page, 'regenerate_reply').then((c) => c.map((p) => p.messageId)), [4]);
    });
  });

  test('continue: a stopped reply writes on in the same message; interrupted and cut-off replies offer it too', { timeout: TIMEOUT }, async () => {
    const unfinished = [
      ['stopped', {}, 'Stopped'],
      ['interrupted', {}, 'Interrupted — Hearth closed while this reply was being written'],
      [
        'interrupted',
        { stats: replyStats({ interruptedBy: 'the model crashed: GGML_ASSERT(n_tokens > 0) failed in llama-batch.cpp:310' }) },
        'Interrupted — The model crashed: GGML_ASSERT(n_tokens > 0) failed in llama-batch.cpp:310',
      ],
      ['complete', { stats: replyStats({ cutAtLimit: true }) }, 'Cut off at the length limit'],
    ];
    for (const [status, extra, notice] of unfinished) {
      const config = {
        chats: [chat(1, 'Poems', 30)],
        messages: history(1, 1, [['user', 'A poem about rain'], ['assistant', 'Soft rain on the roof,', { status, ...extra }]]),
        replies: [{ text: ' the kettle begins to sing.', chunkSize: 4, delayMs: 10 }],
      };
      await withApp(config, async (page) => {
        const reply = message(page, 2);
        assert.equal(await text(reply.getByTestId('message-status')), notice);
        await reply.getByTestId('continue').click();
        await reply.getByTestId('message-content').filter({ hasText: 'begins to sing.' }).waitFor();
        await waitForStatus(reply, 'complete');
        assert.equal(await contentOf(reply), 'Soft rain on the roof, the kettle begins to sing.');
        assert.equal(await messages(page).count(), 2, 'no new message');
        assert.equal(await reply.getByTestId('continue').count(), 0);
        assert.deepEqual((await callsOf(page, 'continue_reply')).map((p) => p.messageId), [2]);
      });
    }
  });

  test('delete: an inline confirm, then the message and what follows go; a deleted version gives way to the other', { timeout: TIMEOUT }, async () => {
    const tree = {
      chats: [chat(1, 'Stories', 30, { leafId: 6 })],
      messages: [
        ...STORY.messages,
        ...history(1, 5, [['user', 'Tell a poem', { parentId: 2 }], ['assistant', 'Roses are red.', { parentId: 5 }]]),
      ],
    };
    await withApp(tree, async (page) => {
      const poem = message(page, 5);
      assert.equal(await text(poem.getByTestId('branch-position')), '2/2');
      await poem.getByTestId('action-delete').click();
      const confirm = poem.getByTestId('inline-confirm');
      assert.equal(await text(confirm.locator('.question')), 'Delete this message and everything after it?');
      await page.keyboard.press('Escape'); // focus is on Cancel
      await confirm.waitFor({ state: 'detached' });
      assert.equal(await poem.getByTestId('action-delete').evaluate((el) => el === document.activeElement), true);

      await poem.getByTestId('action-delete').click();
      await confirm.getByTestId('confirm-yes').click();
      await message(page, 3).waitFor();
      assert.deepEqual(await renderedIds(page), [1, 2, 3, 4], 'the remaining version and its reply');
      assert.equal(await page.getByTestId('branch-switcher').count(), 0);

      await message(page, 3).getByTestId('action-delete').click();
      await page.getByTestId('confirm-yes').click();
      await message(page, 3).waitFor({ state: 'detached' });
      assert.deepEqual(await renderedIds(page), [1, 2]);
      assert.deepEqual((await callsOf(page, 'delete_message')).map((p) => p.messageId), [5, 3]);
    });
  });
});

describe('The chat list', () => {
  test('pin, rename (empty refused, Escape cancels), delete the open chat, chat-updated', { timeout: TIMEOUT }, async () => {
    const config = {
      chats: [chat(1, 'Weekend by the fire', 30), chat(2, 'Explain Rust lifetimes', 20), chat(3, 'Sourdough starter', 10)],
      messages: history(2, 20, [['user', 'What is a lifetime?']]),
    };
    await withApp(config, async (page) => {
      const titles = () => page.getByTestId('chat-item').allTextContents().then((t) => t.map((s) => s.trim()));
      assert.equal(await page.getByTestId('chat-group-pinned').count(), 0);

      await openChatMenu(page, 'Sourdough starter');
      await page.getByTestId('chat-pin').click();
      await page.getByTestId('chat-group-pinned').filter({ hasText: 'Sourdough starter' }).waitFor();
      assert.deepEqual(await titles(), ['Sourdough starter', 'Weekend by the fire', 'Explain Rust lifetimes']);
      await openChatMenu(page, 'Sourdough starter');
      assert.equal(await text(page.getByTestId('chat-pin')), 'Unpin');
      await page.keyboard.press('Escape');
      await page.getByTestId('chat-menu-list').waitFor({ state: 'detached' });

      await openChatMenu(page, 'Explain Rust lifetimes');
      await page.getByTestId('chat-rename').click();
      const input = page.getByTestId('chat-rename-input');
      assert.equal(await input.inputValue(), 'Explain Rust lifetimes');
      await input.fill('   ');
      await page.keyboard.press('Enter');
      assert.equal(await text(page.getByTestId('chat-rename-error')), 'A chat needs a title.');
      await page.keyboard.press('Escape');
      await input.waitFor({ state: 'detached' });
      await openChatMenu(page, 'Explain Rust lifetimes');
      await page.getByTestId('chat-rename').click();
      await input.fill('Rust lifetimes, slowly');
      await page.keyboard.press('Enter');
      await chatItem(page, 'Rust lifetimes, slowly').waitFor();
      assert.deepEqual(await callsOf(page, 'rename_chat'), [{ chatId: 2, title: 'Rust lifetimes, slowly' }]);

      // Deleting the open chat opens the one below it.
      assert.equal(await text(page.getByTestId('chat-title')), 'Weekend by the fire');
      await openChatMenu(page, 'Weekend by the fire');
      await page.getByTestId('chat-delete').click();
      const confirm = page.getByTestId('inline-confirm');
      assert.equal(await text(confirm.locator('.question')), 'Delete this chat and all its messages?');
      await confirm.getByTestId('confirm-yes').click();
      await page.getByTestId('chat-title').filter({ hasText: 'Rust lifetimes, slowly' }).waitFor();
      assert.equal(await contentOf(messages(page).first()), 'What is a lifetime?');
      assert.deepEqual(await titles(), ['Sourdough starter', 'Rust lifetimes, slowly']);

      // The backend titles a chat on its own: the entry changes in place and moves up.
      await page.getByTestId('new-chat').click();
      await page.getByTestId('chat-item').filter({ hasText: 'New chat' }).waitFor();
      const created = (await mockState(page)).calls.filter((c) => c.cmd === 'create_chat').length;
      assert.equal(created, 1);
      const newId = Number(await chatItem(page, 'New chat').getAttribute('data-chat-id'));
      await page.evaluate((id) => window.__hearthMock.updateChat(id, { title: 'Bread for Sunday', updatedAt: Date.now() + 60_000 }), newId);
      await chatItem(page, 'Bread for Sunday').waitFor();
      assert.equal(await text(page.getByTestId('chat-title')), 'Bread for Sunday');
      assert.deepEqual(await titles(), ['Sourdough starter', 'Bread for Sunday', 'Rust lifetimes, slowly']);

      // Deleting the last chat leaves the empty state.
      for (const title of ['Sourdough starter', 'Bread for Sunday', 'Rust lifetimes, slowly']) {
        await openChatMenu(page, title);
        await page.getByTestId('chat-delete').click();
        await page.getByTestId('confirm-yes').click();
        await chatItem(page, title).waitFor({ state: 'detached' });
      }
      await page.getByText('No chats yet').waitFor();
    });
  });

  test('system prompt: edited from the header, saved, shown as set', { timeout: TIMEOUT }, async () => {
    await withApp(STORY, async (page) => {
      assert.equal(await page.getByTestId('system-prompt-set').count(), 0);
      await page.getByTestId('open-system-prompt').click();
      const input = page.getByTestId('system-prompt-input');
      assert.equal(await input.evaluate((el) => el === document.activeElement), true);
      assert.equal(await page.getByTestId('system-prompt-save').isDisabled(), true, 'nothing changed yet');
      await input.fill('Answer in one sentence.');
      await page.getByTestId('system-prompt-save').click();
      await page.getByTestId('system-prompt-editor').waitFor({ state: 'detached' });
      await page.getByTestId('system-prompt-set').waitFor();
      assert.deepEqual(await callsOf(page, 'set_system_prompt'), [{ chatId: 1, prompt: 'Answer in one sentence.' }]);

      await page.getByTestId('open-system-prompt').click();
      assert.equal(await input.inputValue(), 'Answer in one sentence.');
      await input.fill('Something else');
      await page.keyboard.press('Escape');
      await page.getByTestId('system-prompt-editor').waitFor({ state: 'detached' });
      assert.equal((await callsOf(page, 'set_system_prompt')).length, 1, 'Escape saves nothing');
    });
  });
});

describe('A long chat', () => {
  test('2,000 messages: only a window is rendered; top, middle and bottom all show messages', { timeout: TIMEOUT }, async () => {
    const COUNT = 2000;
    await withApp({ ...longChat(COUNT), replies: [{ text: 'Still here, and quick.', chunkSize: 4, delayMs: 10 }] }, async (page) => {
      const list = page.getByTestId('message-list');
      await message(page, COUNT).waitFor();
      const metrics = () =>
        list.evaluate((el) => {
          const box = el.getBoundingClientRect();
          const rows = [...el.querySelectorAll('[data-testid="message"]')];
          const inView = rows.filter((r) => {
            const b = r.getBoundingClientRect();
            return b.bottom > box.top && b.top < box.bottom;
          });
          return {
            rendered: rows.length,
            inView: inView.map((r) => Number(r.dataset.messageId)),
            fromBottom: el.scrollHeight - el.scrollTop - el.clientHeight,
          };
        });
      const settle = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 50)))));

      await settle();
      let m = await metrics();
      assert.ok(m.rendered < 80, `only a window is rendered (${m.rendered} of ${COUNT})`);
      assert.ok(m.inView.includes(COUNT), 'opens at the newest message');
      assert.ok(m.fromBottom < 5, `at the bottom (${m.fromBottom}px)`);

      await list.evaluate((el) => (el.scrollTop = 0));
      await settle();
      m = await metrics();
      assert.ok(m.inView.includes(1), `the first message is shown at the top (saw ${m.inView})`);
      assert.ok(m.rendered < 80);

      await list.evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
      await settle();
      await shot(page, 'long-chat-middle', { dir: OUTPUT });
      m = await metrics();
      assert.ok(m.inView.length > 0, 'no blank gap in the middle');
      assert.ok(m.inView[0] > 500 && m.inView[0] < 1500, `somewhere in the middle (${m.inView[0]})`);

      await list.evaluate((el) => (el.scrollTop = el.scrollHeight));
      await settle();
      m = await metrics();
      assert.ok(m.inView.includes(COUNT), 'the last message is shown at the bottom');
      assert.ok(m.fromBottom < 5);

      // Sending follows the reply at the bottom.
      await page.getByTestId('composer').fill('One more?');
      await page.keyboard.press('Enter');
      await lastAssistant(page).getByTestId('message-content').filter({ hasText: 'and quick.' }).waitFor();
      await waitForStatus(lastAssistant(page), 'complete');
      await settle();
      m = await metrics();
      assert.ok(m.fromBottom < 5, 'followed the reply');
      assert.equal(await contentOf(lastAssistant(page)), 'Still here, and quick.');
      assert.ok(m.rendered < 80);
    });
  });
});

describe('Screenshots', () => {
  test('history, chat list, system prompt and search (light and dark)', { timeout: 2 * TIMEOUT }, async () => {
    await inBothSchemes(scene(), async (page) => {
      const edited = message(page, 5);
      await edited.waitFor();
      const options = (mouse) => ({ dir: OUTPUT, mouse });

      await shot(page, `branch-actions`, options(await over(edited.locator('.bubble'))));
      await shot(page, `interrupted-continue`, options(await over(message(page, 6).getByTestId('continue'))));

      await edited.getByTestId('action-edit').click();
      await edited.getByTestId('edit-input').fill('Write the poem about rain, in four short lines.\nMake it gentle.');
      await shot(page, `edit-in-place`, options([600, 700]));
      await page.keyboard.press('Escape');

      await openChatMenu(page, 'Explain Rust lifetimes');
      await shot(page, `chat-list-menu`, options(await over(page.getByTestId('chat-pin'))));
      await page.getByTestId('chat-delete').click();
      await page.getByTestId('chat-rename-input').or(page.getByTestId('inline-confirm')).waitFor();
      await shot(page, `chat-delete-confirm`, options([600, 700]));
      await page.keyboard.press('Escape');
      await openChatMenu(page, 'Sourdough starter schedule');
      await page.getByTestId('chat-rename').click();
      await page.getByTestId('chat-rename-input').fill('');
      await page.keyboard.press('Enter');
      await shot(page, `chat-rename-refused`, options([600, 700]));
      await page.keyboard.press('Escape');

      await edited.getByTestId('action-delete').click();
      await shot(page, `message-delete-confirm`, options([600, 700]));
      await page.keyboard.press('Escape');

      await page.getByTestId('open-system-prompt').click();
      await shot(page, `system-prompt`, options([600, 700]));
      await page.keyboard.press('Escape');

      await searchFor(page, 'rain');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      await shot(page, `search`, options([600, 700]));
      await page.keyboard.press('Enter'); // the reply on the other branch: "Soft rain on the roof"
      await message(page, 6).and(page.locator('.highlighted')).waitFor();
      await shot(page, `search-opened`, options([600, 700]));
    });
  });

  test('export and import (light and dark)', { timeout: 2 * TIMEOUT }, async () => {
    const importFile = {
      chats: [
        { title: 'Lisbon trip, 2023', updatedAt: Date.now() - 400 * DAY },
        { title: 'Garden planning', updatedAt: Date.now() - 2 * DAY },
      ],
      skipped: [
        { chat: 'Recipes <b>bold</b>', reason: PWNED },
        { chat: 'chat 4', reason: 'message 12 follows message 40, which does not come before it' },
      ],
      notes: ['Garden planning: its settings were left out (temperature must be between 0 and 5, got 9)'],
    };
    await inBothSchemes({ ...scene(), importFile }, async (page) => {
      await message(page, 5).waitFor();
      const options = (mouse) => ({ dir: OUTPUT, mouse });

      await openChatMenu(page, 'Explain Rust lifetimes');
      await shot(page, `chat-menu-export`, options(await over(page.getByTestId('chat-export-markdown'))));
      await transfer(page, page.getByTestId('chat-export-markdown'), 'export_chats');
      await shot(page, `export-notice`, options([600, 300]));
      await page.getByTestId('export-notice-dismiss').click();

      await transfer(page, page.getByTestId('import-chats'), 'import_chats');
      await chatItem(page, 'Garden planning').waitFor();
      await shot(page, `import-report`, options([600, 700]));

      await page.getByTestId('import-report-dismiss').click();
      await page.evaluate((skipped) => (window.__hearthMock.importFile = { chats: [], skipped, notes: [] }), importFile.skipped);
      await transfer(page, page.getByTestId('import-chats'), 'import_chats');
      await page.getByTestId('import-summary').filter({ hasText: 'Nothing was imported' }).waitFor();
      await shot(page, `import-nothing`, options([600, 700]));
    });
  });
});
