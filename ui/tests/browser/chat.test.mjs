// Browser test: the built UI (ui/dist) in headless Chromium with a mocked Tauri IPC: the chat screen's flow,
// streaming, stop, errors, hostile replies, scrolling, the stats line and reading the draft ahead.
// Run with `npm run test:browser` (builds first) or `node --test tests/browser/chat.test.mjs`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MODEL,
  OUTPUT,
  RESULTS,
  TIMEOUT,
  askInChat,
  inBothSchemes,
  lastAssistant,
  messages,
  mockState,
  openApp,
  replyStats,
  shot,
  useBrowser,
  waitForStatus,
  withApp,
} from './harness.mjs';
import { CONTRACT } from '../contract.mjs';
import { REPLY_MD, assertNothingRan, assertSanitized, inSettings, sampleStream, text, waitForSave } from './chat-helpers.mjs';

useBrowser();

describe('Hearth chat screen', () => {
  test('chat flow: model name, new chat, streaming reply with stats, Shift+Enter', { timeout: TIMEOUT }, async () => {
    const { page, context, problems } = await openApp({
      replies: [
        { text: REPLY_MD, chunkSize: 5, delayMs: 25 },
        { text: 'Two lines received. 👍', chunkSize: 3, delayMs: 15 },
      ],
    });
    try {
      assert.equal(await page.getByTestId('model-name').textContent(), MODEL.name);
      await page.getByText('No chats yet').waitFor();

      await page.getByTestId('new-chat').click();
      await page.getByTestId('chat-item').first().waitFor();
      assert.equal(await page.getByTestId('chat-item').count(), 1);
      await page.getByText(`Say hello to ${MODEL.name}`).waitFor();
      assert.equal(await page.getByTestId('send').isDisabled(), true, 'send disabled while empty');

      // The composer is focused after creating a chat; Enter sends. (One input event: keys typed one
      // by one on a loaded machine may pass the read-ahead's quiet time and be read before Enter.)
      await page.keyboard.insertText('Any cozy ideas for tonight?');
      assert.equal(await page.getByTestId('send').isDisabled(), false);
      await page.keyboard.press('Enter');

      const user = messages(page).first();
      await user.waitFor();
      assert.equal(await user.getAttribute('data-role'), 'user');
      assert.equal(await user.getByTestId('message-content').textContent(), 'Any cozy ideas for tonight?');
      assert.equal(await page.getByTestId('composer').inputValue(), '', 'composer cleared');

      // Streaming: Stop replaces Send, text grows over several frames, then completes.
      await page.getByTestId('stop').waitFor();
      assert.equal(await page.getByTestId('send').count(), 0);
      await page.screenshot({ path: `${RESULTS}/chat-streaming.png` });
      const { lengths, status } = await sampleStream(page);
      assert.equal(status, 'complete');
      assert.ok(lengths.filter((n) => n > 0).length >= 3, `text should appear progressively, saw lengths ${lengths}`);

      const reply = lastAssistant(page);
      assert.equal(await reply.locator('strong').first().textContent(), 'three', 'markdown rendered');
      assert.equal(await reply.locator('ol > li').count(), 3);
      assert.match(await reply.locator('pre code').textContent(), /print\(idea\)/);
      // A new chat's first reply: nothing of it was cached.
      assert.match(await reply.getByTestId('message-stats').textContent(), /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms$/);
      assert.equal(await reply.getByTestId('message-status').count(), 0, 'no label on a complete reply');
      await page.getByTestId('send').waitFor();

      // The backend titled the chat from the first message.
      await page.getByTestId('chat-item').filter({ hasText: 'Any cozy ideas for tonight?' }).waitFor();
      assert.equal(await page.getByTestId('chat-title').textContent(), 'Any cozy ideas for tonight?');

      // Shift+Enter inserts a newline instead of sending; the composer grows with its lines (its
      // text is laid out apart from the page: `contain: strict`), shrinks as they are deleted.
      const composerHeight = () => page.getByTestId('composer').evaluate((el) => el.getBoundingClientRect().height);
      await page.getByTestId('composer').click();
      const oneLine = await composerHeight();
      await page.keyboard.type('line one');
      await page.keyboard.press('Shift+Enter');
      await page.keyboard.type('line two');
      const twoLines = await composerHeight();
      assert.ok(twoLines > oneLine + 10, `the composer grew with a second line (${oneLine} -> ${twoLines})`);
      for (let i = 0; i < 'line two'.length + 1; i++) await page.keyboard.press('Backspace');
      assert.equal(await composerHeight(), oneLine, 'one line again once the second was deleted');
      await page.keyboard.press('Shift+Enter');
      await page.keyboard.type('line two');
      assert.equal(await composerHeight(), twoLines);
      assert.equal(await page.getByTestId('composer').inputValue(), 'line one\nline two');
      assert.equal(await messages(page).count(), 2, 'Shift+Enter did not send');
      await page.keyboard.press('Enter');
      await waitForStatus(messages(page).nth(3), 'complete');
      assert.equal(await composerHeight(), oneLine, 'one line again once sent');
      assert.equal(await messages(page).nth(2).getByTestId('message-content').innerText(), 'line one\nline two');
      assert.equal((await lastAssistant(page).getByTestId('message-content').textContent()).trim(), 'Two lines received. 👍');
      // The same chat again: its cache was still in place.
      assert.match(await lastAssistant(page).getByTestId('message-stats').textContent(), /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms · \d+ cached$/);

      const { calls, contractErrors } = await mockState(page);
      assert.deepEqual(contractErrors, []);
      const sends = calls.filter((c) => c.cmd === 'send_message');
      assert.equal(sends.length, 2);
      assert.equal(sends[1].payload.content, 'line one\nline two');
      assert.match(sends[0].payload.onEvent, /^__CHANNEL__:\d+$/);
      assert.deepEqual(problems, [], 'no console errors or CSP violations');
    } finally {
      await context.close();
    }
  });

  test('Stop during a slow reply leaves a "stopped" label', { timeout: TIMEOUT }, async () => {
    const { page, context, problems } = await openApp({
      replies: [{ text: 'This reply is very slow and goes on and on and on and on for a long time.', chunkSize: 2, delayMs: 120 }],
    });
    try {
      await page.getByTestId('new-chat').click();
      await page.getByTestId('composer').fill('Tell me a long story');
      await page.getByTestId('send').click();
      const reply = lastAssistant(page);
      await reply.waitFor();
      await page.waitForFunction(
        () => document.querySelector('[data-role="assistant"] [data-testid="message-content"]')?.textContent.length > 4,
      );
      await page.getByTestId('stop').click();
      await waitForStatus(reply, 'stopped');
      assert.equal(await reply.getByTestId('message-status').textContent(), 'Stopped');
      const text = await reply.getByTestId('message-content').textContent();
      assert.ok(text.length > 0 && text.length < 60, `partial text kept: "${text}"`);
      await page.getByTestId('send').waitFor();
      assert.equal(await page.getByTestId('stop').count(), 0);
      const { calls, contractErrors } = await mockState(page);
      assert.deepEqual(contractErrors, []);
      const stop = calls.find((c) => c.cmd === 'stop_generation');
      assert.deepEqual(Object.keys(stop.payload), ['chatId']);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('a rejected invoke shows its message in the error banner', { timeout: TIMEOUT }, async () => {
    const { page, context } = await openApp();
    try {
      await page.getByTestId('new-chat').click();
      await page.evaluate(() => {
        window.__hearthMock.failNext.send_message = { kind: 'noModel', message: 'No model is loaded. Choose a GGUF file first.' };
      });
      await page.getByTestId('composer').fill('hello?');
      await page.keyboard.press('Enter');
      const banner = page.getByTestId('error-banner');
      await banner.waitFor();
      const text = await banner.textContent();
      assert.match(text, /No model is loaded\. Choose a GGUF file first\./);
      assert.doesNotMatch(text, /object Object|noModel|\{/);
      await page.screenshot({ path: `${RESULTS}/error.png` });
      assert.equal(await page.getByTestId('composer').inputValue(), 'hello?', 'draft restored when nothing was sent');

      await page.getByTestId('error-dismiss').click();
      await banner.waitFor({ state: 'detached' });

      // Failures outside sending are reported the same way.
      await page.evaluate(() => {
        window.__hearthMock.failNext.create_chat = { kind: 'store', message: 'Could not open the database.' };
      });
      await page.getByTestId('new-chat').click();
      await page.getByTestId('error-banner').filter({ hasText: 'Could not open the database.' }).waitFor();
    } finally {
      await context.close();
    }
  });

  test('a hostile reply executes nothing (sanitizer checked without the CSP)', { timeout: TIMEOUT }, async () => {
    const hostile = [
      'Look: <img src=x onerror="window.__pwned = \'img\'">',
      '<script>window.__pwned = "script"</script>',
      '<svg onload="window.__pwned = \'svg\'"></svg>',
      '<a href="javascript:void(window.__pwned=\'link\')" id="jslink">click me</a>',
      '[md link](javascript:void(window.__pwned=\'md\'))',
      '<iframe srcdoc="<script>parent.__pwned=\'iframe\'</script>"></iframe>',
      'done',
    ].join('\n\n');
    const { page, context } = await openApp({ replies: [{ text: hostile, chunkSize: 16, delayMs: 10 }] }, { query: '?nocsp' });
    try {
      await page.getByTestId('new-chat').click();
      await page.getByTestId('composer').fill('be evil');
      await page.keyboard.press('Enter');
      const reply = lastAssistant(page);
      await waitForStatus(reply, 'complete');
      await assertNothingRan(page, 300, 'no injected handler or script ran');
      await assertSanitized(reply.getByTestId('message-content'), /done/);
      await assertNothingRan(page, 200, 'no javascript: link ran');
    } finally {
      await context.close();
    }
  });

  test('follows the bottom while streaming unless the user scrolled up', { timeout: TIMEOUT }, async () => {
    const long = Array.from({ length: 60 }, (_, i) => `Line ${i + 1} of a long answer.`).join('\n\n');
    const { page, context } = await openApp({ replies: [{ text: long, chunkSize: 12, delayMs: 12 }, { text: long, chunkSize: 12, delayMs: 12 }] });
    const gap = () =>
      page.getByTestId('message-list').evaluate((el) => ({ fromBottom: el.scrollHeight - el.scrollTop - el.clientHeight, top: el.scrollTop }));
    try {
      await page.getByTestId('new-chat').click();
      await page.getByTestId('composer').fill('long please');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.querySelector('[data-testid="message-list"]').scrollHeight > 1500);
      assert.ok((await gap()).fromBottom < 60, 'stays at the bottom while streaming');
      await waitForStatus(lastAssistant(page), 'complete');
      assert.ok((await gap()).fromBottom < 60, 'at the bottom when done');

      await page.getByTestId('composer').fill('again');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length === 4);
      await page.waitForTimeout(150);
      await page.getByTestId('message-list').hover();
      await page.mouse.wheel(0, -400);
      await page.waitForTimeout(100);
      const before = await gap();
      assert.ok(before.fromBottom > 300, `scrolled up (${before.fromBottom}px from bottom)`);
      await page.waitForTimeout(400);
      const later = await gap();
      assert.ok(Math.abs(later.top - before.top) < 5, 'not pulled back down while the user reads');
      assert.ok(later.fromBottom > before.fromBottom, 'content kept growing below');
      await waitForStatus(lastAssistant(page), 'complete');
    } finally {
      await context.close();
    }
  });

  test('a send starts nothing that repaints every frame while the model reads the prompt', { timeout: TIMEOUT }, async () => {
    // The model reads the prompt on the cores the window draws on: an animation or a transition
    // started by the send (a message's buttons fading as another becomes the last) repaints the
    // window every frame meanwhile. (Hovering may still fade them in.)
    const chats = [{ id: 1, title: 'Soup for tonight', updatedAt: 30 }];
    const messages = [
      { id: 11, chatId: 1, role: 'user', content: 'Something with leeks?', status: 'complete', createdAt: 1, model: null, stats: null },
      { id: 12, chatId: 1, role: 'assistant', content: 'Leek and potato.', status: 'complete', createdAt: 2, model: MODEL.name, stats: null },
    ];
    const { page, context, problems } = await openApp({ chats, messages, replies: [{ text: 'Yes.', chunkSize: 2, ttftMs: 700, delayMs: 5 }] });
    try {
      await page.getByTestId('chat-item').filter({ hasText: 'Soup for tonight' }).click();
      await lastAssistant(page).getByTestId('message-actions').waitFor();
      await page.getByTestId('composer').fill('And a bread to go with it?');
      const running = page.evaluate(
        () =>
          new Promise((resolve) => {
            const seen = new Set();
            const until = performance.now() + 600;
            const look = () => {
              for (const a of document.getAnimations()) {
                if (a.playState !== 'running') continue;
                const target = a.effect?.target;
                seen.add(`${a.transitionProperty ?? a.animationName} on ${target?.className ?? target?.tagName}`);
              }
              if (performance.now() < until) requestAnimationFrame(look);
              else resolve([...seen]);
            };
            requestAnimationFrame(look);
          }),
      );
      await page.keyboard.press('Enter');
      assert.deepEqual(await running, [], 'nothing animates between Enter and the first token');
      await waitForStatus(lastAssistant(page), 'complete');
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('artefacts to look at: screenshots (light and dark)', { timeout: TIMEOUT }, async () => {
    const chats = [
      { id: 1, title: 'Weekend by the fire', updatedAt: 30 },
      { id: 2, title: 'Explain Rust lifetimes', updatedAt: 20 },
      { id: 3, title: 'Sourdough starter schedule', updatedAt: 10 },
    ];
    const stats = replyStats();
    const history = [
      { id: 11, chatId: 1, role: 'user', content: 'Plan a slow, cozy Saturday evening at home.', status: 'complete', createdAt: 1, model: null, stats: null },
      { id: 12, chatId: 1, role: 'assistant', content: REPLY_MD, status: 'complete', createdAt: 2, model: MODEL.name, stats },
      { id: 13, chatId: 1, role: 'user', content: 'Make the poem about rain.', status: 'complete', createdAt: 3, model: null, stats: null },
      {
        id: 14, chatId: 1, role: 'assistant', content: 'Soft rain on the roof,\nthe kettle begins to', status: 'stopped', createdAt: 4, model: MODEL.name,
        stats: { ...stats, completionTokens: 9, decodeTps: 39.2 },
      },
    ];
    await inBothSchemes({ chats, messages: history }, async (page) => {
      await waitForStatus(lastAssistant(page), 'stopped');
      await page.getByTestId('composer').fill('What should I cook?');
      await shot(page, `chat`);
    });
    // Empty state of a fresh install.
    const { page, context } = await openApp({ model: null });
    try {
      await page.getByText('No model loaded').waitFor();
      await page.screenshot({ path: `${RESULTS}/empty.png` });
    } finally {
      await context.close();
    }
  });

  test('a reply that left earlier messages out says so under it', { timeout: TIMEOUT }, async () => {
    const TEMPLATE_NOTICE =
      "The model's chat template refuses a system prompt (System role not supported); it was put at the start of the first message instead";
    const stats = replyStats({ promptTokens: 8100, cachedTokens: 7900, completionTokens: 42, ttftMs: 95, decodeTps: 38.5, promptSource: 'live' });
    const history = [
      { id: 11, chatId: 1, role: 'user', content: 'Summarize what we decided so far.', status: 'complete', createdAt: 1, model: null, stats: null },
      { id: 12, chatId: 1, role: 'assistant', content: 'We settled on **rain** as the theme.', status: 'complete', createdAt: 2, model: MODEL.name, stats: { ...stats, droppedMessages: 1 } },
      { id: 13, chatId: 1, role: 'user', content: 'And the title?', status: 'complete', createdAt: 3, model: null, stats: null },
      { id: 14, chatId: 1, role: 'assistant', content: 'Let me think about that.', status: 'complete', createdAt: 4, model: MODEL.name, stats },
    ];
    const config = {
      chats: [{ id: 1, title: 'A very long conversation', updatedAt: 30 }],
      messages: history,
      replies: [{ text: '“Soft Rain on the Roof” fits the mood.', chunkSize: 6, delayMs: 10, droppedMessages: 3, templateNotice: TEMPLATE_NOTICE }],
    };
    await inBothSchemes(config, async (page) => {
      const replies = page.locator('[data-testid="message"][data-role="assistant"]');
      await replies.first().getByTestId('message-dropped').waitFor();
      assert.equal(await replies.first().getByTestId('message-dropped').textContent().then((t) => t.trim()), '1 earlier message left out to fit the context');
      assert.equal(await replies.nth(1).getByTestId('message-dropped').count(), 0, 'nothing said when nothing was left out');

      await page.getByTestId('composer').fill('Suggest a title.');
      await page.keyboard.press('Enter');
      await waitForStatus(lastAssistant(page), 'complete');
      const notice = lastAssistant(page).getByTestId('message-dropped');
      assert.equal((await notice.textContent()).trim(), '3 earlier messages left out to fit the context');
      assert.match(await notice.getAttribute('title'), /context/);
      // How the prompt was written, when the chat template could not be used as it is: the engine's words.
      assert.equal((await lastAssistant(page).getByTestId('message-template-notice').textContent()).trim(), TEMPLATE_NOTICE);
      assert.equal(await replies.first().getByTestId('message-template-notice').count(), 0);
      await shot(page, `chat-dropped`);
    });
  });

  test('switching chats: the stats line says where the cached prompt came from', { timeout: TIMEOUT }, async () => {
    const chats = [
      { id: 1, title: 'Soup for tonight', updatedAt: 30 },
      { id: 2, title: 'Explain Rust lifetimes', updatedAt: 20 },
      { id: 3, title: 'Sourdough starter schedule', updatedAt: 10 },
    ];
    // Chat 3 was answered before a restart, by a version that did not say where its prompt came from.
    const old = replyStats({ promptTokens: 40, completionTokens: 12, ttftMs: 150, decodeTps: 40.2 });
    const history = [
      { id: 31, chatId: 3, role: 'user', content: 'When do I feed the starter?', status: 'complete', createdAt: 1, model: null, stats: null },
      { id: 32, chatId: 3, role: 'assistant', content: 'Twice a day, at 9 and 21.', status: 'complete', createdAt: 2, model: MODEL.name, stats: old },
    ];
    const config = { chats, messages: history, cachesOnDisk: [3], defaultReply: { text: 'Noted.', chunkSize: 3, delayMs: 5 } };
    const statsLine = (page) => lastAssistant(page).getByTestId('message-stats');
    const ask = async (page, title, question) => {
      await askInChat(page, title, question);
      return { text: await statsLine(page).textContent(), title: await statsLine(page).getAttribute('title') };
    };
    const figures = '\\d+ tokens · [\\d.]+ tok/s · TTFT \\d+ ms';
    await inBothSchemes(config, async (page) => {
      // Chat 1's first reply: nothing cached, nothing said.
      let line = await ask(page, 'Soup for tonight', 'Something with leeks?');
      assert.match(line.text, new RegExp(`^${figures}$`));
      assert.equal(line.title, 'Prompt: 24 tokens · Reply: 2 tokens');
      // Chat 1 again: its cache was live.
      line = await ask(page, 'Soup for tonight', 'And a bread to go with it?');
      assert.match(line.text, new RegExp(`^${figures} · 8 cached$`));
      assert.match(line.title, /\(8 cached\)[^]*still held this chat's cache/);
      // Chat 2 answers in between: chat 1's cache is put away in RAM, and comes back from there.
      line = await ask(page, 'Explain Rust lifetimes', 'What does \'a mean?');
      assert.match(line.text, new RegExp(`^${figures}$`));
      line = await ask(page, 'Soup for tonight', 'How long does it simmer?');
      assert.match(line.text, new RegExp(`^${figures} · 8 restored from RAM$`));
      assert.match(line.title, /\(8 restored from RAM\)[^]*kept in RAM while another chat answered/);
      // Chat 3's cache was spilled before the restart: read back from disk. Its older reply says nothing.
      line = await ask(page, 'Sourdough starter schedule', 'And on weekends?');
      assert.match(line.text, new RegExp(`^${figures} · 8 restored from disk$`));
      assert.match(line.title, /\(8 restored from disk\)[^]*read back from disk/);
      const replies = page.locator('[data-testid="message"][data-role="assistant"]');
      assert.equal(await replies.first().getByTestId('message-stats').textContent(), '12 tokens · 40.2 tok/s · TTFT 150 ms');
      await shot(page, `chat-cache-disk`, { dir: OUTPUT });
      // Chat 1's replies, one under the other: new, live, RAM.
      await page.getByTestId('chat-item').filter({ hasText: 'Soup for tonight' }).click();
      await page.getByTestId('chat-title').filter({ hasText: 'Soup for tonight' }).waitFor();
      const statsLines = page.locator('[data-testid="message"][data-role="assistant"] [data-testid="message-stats"]');
      await statsLines.filter({ hasText: 'restored from RAM' }).waitFor();
      const lines = await statsLines.allTextContents();
      assert.deepEqual(lines.map((l) => l.replace(/^.* ms/, '…')), ['…', '… · 8 cached', '… · 8 restored from RAM']);
      await shot(page, `chat-cache-source`, { dir: OUTPUT });

      const sources = await page.evaluate(() => window.__hearthMock.messages.filter((m) => m.stats).map((m) => [m.chatId, m.stats.promptSource]));
      assert.deepEqual(sources, [[3, 'new'], [1, 'new'], [1, 'live'], [2, 'new'], [1, 'ram'], [3, 'disk']]);
    });
  });

  test('the stats line says how many drafted tokens were accepted, only when speculative decoding drafted some', { timeout: TIMEOUT }, async () => {
    // Saved replies: what each one's stats line ends with after the figures (null: nothing more), and its tooltip's last line.
    const { draftedTokens, acceptedTokens, ...beforeDrafts } = replyStats({ completionTokens: 12, decodeTps: 40.2, ttftMs: 150 });
    const CASES = [
      { stats: replyStats({ draftedTokens: 64, acceptedTokens: 41 }), part: '41/64 drafts accepted', detail: 'Speculative decoding guessed 64 tokens ahead; the sampler kept 41 (64%).' },
      { stats: replyStats({ draftedTokens: 12, acceptedTokens: 0 }), part: '0/12 drafts accepted', detail: 'Speculative decoding guessed 12 tokens ahead; the sampler kept 0 (0%).' },
      { stats: replyStats({ cachedTokens: 30, promptSource: 'live', draftedTokens: 8, acceptedTokens: 8 }), part: '30 cached · 8/8 drafts accepted', detail: 'Speculative decoding guessed 8 tokens ahead; the sampler kept 8 (100%).' },
      // Speculation off: nothing said.
      { stats: replyStats(), part: null, detail: 'Prompt: 31 tokens · Reply: 58 tokens' },
      // Saved before replies counted drafts: read as before.
      { stats: beforeDrafts, part: null, detail: 'Prompt: 31 tokens · Reply: 12 tokens' },
    ];
    const history = CASES.flatMap(({ stats }, i) => [
      { id: 10 + 2 * i, chatId: 1, role: 'user', content: `Question ${i + 1}`, status: 'complete', createdAt: 2 * i, model: null, stats: null },
      { id: 11 + 2 * i, chatId: 1, role: 'assistant', content: `Answer ${i + 1}`, status: 'complete', createdAt: 2 * i + 1, model: MODEL.name, stats },
    ]);
    const drafts = { drafted: 20, accepted: 17 };
    const config = {
      chats: [{ id: 1, title: 'Tidy this function', updatedAt: 30 }],
      messages: history,
      // Each reply drafts, as far as the mock goes: the engine reports it only while the chat's settings turn it on.
      replies: [{ text: 'Here it is, unchanged but for the name.', chunkSize: 4, delayMs: 5, drafts }],
      defaultReply: { text: 'Here it is again, renamed.', chunkSize: 4, delayMs: 5, drafts },
    };
    await withApp(config, async (page) => {
      const statsLines = page.locator('[data-testid="message"][data-role="assistant"] [data-testid="message-stats"]');
      await statsLines.nth(CASES.length - 1).waitFor();
      for (const [i, { part, detail }] of CASES.entries()) {
        const line = statsLines.nth(i);
        const text = await line.textContent();
        assert.match(text, /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms/, `reply ${i + 1}`);
        assert.equal(text.replace(/^.* ms(?: · )?/, '') || null, part, `reply ${i + 1}: ${text}`);
        assert.equal((await line.getAttribute('title')).split('\n').at(-1), detail, `reply ${i + 1}'s tooltip`);
      }

      // Live: speculation off, nothing drafted, nothing said.
      await askInChat(page, 'Tidy this function', 'Rename it to parse_line.');
      assert.doesNotMatch(await lastAssistant(page).getByTestId('message-stats').textContent(), /draft/);

      // Prompt lookup on: the next reply says what its drafts came to.
      await inSettings(page, async () => {
        await page.getByTestId('field-speculative-promptLookup').click();
        await waitForSave(page, (p) => p.speculative === 'promptLookup');
      });
      await askInChat(page, 'Tidy this function', 'And once more.');
      assert.match(await lastAssistant(page).getByTestId('message-stats').textContent(), /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms · 8 cached · 17\/20 drafts accepted$/);
      await shot(page, 'chat-drafts', { dir: OUTPUT });
    });
  });

  test('typing reads the draft ahead: paced, growing drafts, none after Enter or while the reply streams', { timeout: TIMEOUT }, async () => {
    const chats = [{ id: 1, title: 'Soup for tonight', updatedAt: 30 }];
    const history = [
      { id: 11, chatId: 1, role: 'user', content: 'Something with leeks?', status: 'complete', createdAt: 1, model: null, stats: null },
      { id: 12, chatId: 1, role: 'assistant', content: 'Leek and potato soup.', status: 'complete', createdAt: 2, model: MODEL.name, stats: replyStats() },
    ];
    const reply = { text: 'About forty minutes with the lid on, then blend it until smooth.', chunkSize: 2, delayMs: 60 };
    await withApp({ chats, messages: history, replies: [reply], readsAhead: true }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Soup for tonight' }).waitFor();
      const prefills = () => page.evaluate(() => window.__hearthMock.prefills);
      await page.getByTestId('composer').focus();

      // Typed slowly, then a pause: the text as it stands goes out once typing stops.
      const first = 'How long should';
      await page.keyboard.type(first, { delay: 90 });
      await page.waitForFunction((d) => window.__hearthMock.prefills.at(-1)?.draft === d, first);
      // More, then Enter at once: what was pending is dropped.
      const question = `${first} it simmer?`;
      await page.keyboard.type(' it simmer?', { delay: 90 });
      await page.keyboard.press('Enter');
      const beforeEnter = (await prefills()).length;

      // Typing while the reply streams reads nothing ahead.
      await waitForStatus(lastAssistant(page), 'streaming');
      await page.keyboard.type('Thanks', { delay: 40 });
      assert.equal(await lastAssistant(page).getAttribute('data-status'), 'streaming', 'typed while the reply streamed');
      await waitForStatus(lastAssistant(page), 'complete');
      await page.waitForTimeout(800); // anything still pending would have gone out by now

      const sent = await prefills();
      assert.equal(sent.length, beforeEnter, 'nothing read ahead after Enter');
      const { calls } = await mockState(page);
      const cmds = calls.map((c) => c.cmd);
      assert.ok(cmds.lastIndexOf('prefill_draft') < cmds.indexOf('send_message'));
      assert.ok(sent.every((p) => p.chatId === 1));
      // Paced: fewer sends than the 26 keys (90 ms apart: about every other key), never closer than
      // the backend's minimum gap (less a timer's jitter); each draft longer than the one before.
      const drafts = sent.map((p) => p.draft);
      const { minGapMs } = CONTRACT.draftPace;
      assert.ok(drafts.length >= 3 && drafts.length < 26, `drafts: ${JSON.stringify(drafts)}`);
      for (let i = 1; i < sent.length; i++) {
        assert.ok(sent[i].at - sent[i - 1].at >= minGapMs - 10, `gap ${sent[i].at - sent[i - 1].at} ms before ${JSON.stringify(drafts[i])}`);
        assert.ok(drafts[i].length > drafts[i - 1].length, JSON.stringify(drafts));
      }
      assert.ok(drafts.every((d) => question.startsWith(d)), JSON.stringify(drafts));
      assert.ok(drafts.includes(first), 'the text as it stood when typing paused');

      // The model read the chat and the draft while the user typed: the reply says so.
      const stats = lastAssistant(page).getByTestId('message-stats');
      assert.match(await stats.textContent(), /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms · 21 read while you typed$/);
      assert.match(await stats.getAttribute('title'), /\(21 read while you typed\)[^]*ahead while you were typing/);
      await shot(page, 'chat-read-while-typed', { dir: OUTPUT });

      // Typing again once the reply is done: read ahead again.
      await page.keyboard.type('!');
      await page.waitForFunction(() => window.__hearthMock.prefills.at(-1)?.draft === 'Thanks!');
    });
  });
});
