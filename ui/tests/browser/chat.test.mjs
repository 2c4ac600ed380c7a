// Browser test: the built UI (ui/dist) in headless Chromium with a mocked Tauri IPC.
// Run with `npm run test:browser` (builds first) or `node --test tests/browser/chat.test.mjs`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import {
  MODEL,
  OUTPUT,
  RESULTS,
  TIMEOUT,
  askInChat,
  collectDialogs,
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

useBrowser();

const REPLY_MD = [
  'Sure! Here are **three** cozy ideas:',
  '',
  '1. Brew a pot of *spiced tea*',
  '2. Read by the fire',
  '3. Write a short poem',
  '',
  'And a tiny script:',
  '',
  '```python',
  'for idea in ideas:',
  '    print(idea)',
  '```',
].join('\n');

/** Model output that would run as HTML. */
const HOSTILE = '<img src=x onerror=alert(1)>';

/** A consensus reply's candidates, in the order they were sampled; the second agreed most with the others. */
const CANDIDATES = [
  { text: 'Lisbon in a day: the Alfama at dawn, then the 28 tram up to the castle.', score: 0.58 },
  { text: 'Start in the Alfama, ride the 28 tram to the castle,\nand end at the Belém Tower.', score: 0.71 },
  { text: HOSTILE, score: 0.12 },
  { text: 'Alfama, tram 28, Belém Tower: one day is enough for all three.', score: 0.64 },
];

/** A chat whose first reply was chosen by consensus (its stats keep the candidates), its second sampled. */
const consensusChat = () => ({
  chats: [{ id: 1, title: 'A day in Lisbon', updatedAt: 30 }],
  messages: [
    { id: 11, chatId: 1, role: 'user', content: 'Plan one day in Lisbon.', status: 'complete', createdAt: 1, model: null, stats: null },
    {
      id: 12, chatId: 1, role: 'assistant', content: CANDIDATES[1].text, status: 'complete', createdAt: 2, model: MODEL.name,
      stats: replyStats({ consensus: { utility: 'chrF', chosen: 1, candidates: CANDIDATES } }),
    },
    { id: 13, chatId: 1, role: 'user', content: 'Where do I eat?', status: 'complete', createdAt: 3, model: null, stats: null },
    { id: 14, chatId: 1, role: 'assistant', content: 'Try a tasca in the Mouraria.', status: 'complete', createdAt: 4, model: MODEL.name, stats: replyStats() },
  ],
});

/** A beam search's best replies, best first (the first is the reply); the third is hostile model output. */
const BEAMS = [
  { text: 'Start in the Alfama, then take the 28 tram to the castle.', logprob: -5.1234, score: -0.4269, tokens: 12 },
  { text: 'Start in the Alfama.', logprob: -3.1, score: -0.5167, tokens: 6 },
  { text: HOSTILE, logprob: -7.2, score: -0.6, tokens: 12 },
  { text: 'Take the 28 tram.', logprob: -4.4, score: -0.7333, tokens: 6 },
];

/** A chat whose first reply was found by beam search (its stats keep the best replies), its second sampled. */
const beamChat = () => ({
  chats: [{ id: 1, title: 'A day in Lisbon', updatedAt: 30 }],
  messages: [
    { id: 11, chatId: 1, role: 'user', content: 'Plan one day in Lisbon.', status: 'complete', createdAt: 1, model: null, stats: null },
    { id: 12, chatId: 1, role: 'assistant', content: BEAMS[0].text, status: 'complete', createdAt: 2, model: MODEL.name, stats: replyStats({ beams: BEAMS }) },
    { id: 13, chatId: 1, role: 'user', content: 'Where do I eat?', status: 'complete', createdAt: 3, model: null, stats: null },
    { id: 14, chatId: 1, role: 'assistant', content: 'Try a tasca in the Mouraria.', status: 'complete', createdAt: 4, model: MODEL.name, stats: replyStats() },
  ],
});

/** The reply the inspector looks at: its tokens made up by the mock from its text (word-sized, line breaks apart). */
const INSPECTED = 'Start in the Alfama,\nthen ride the 28 tram.';
/** Model output as tokens: hostile text as a token of its own and as an alternative. */
const HOSTILE_REPLY = `Use \`${HOSTILE}\` here.`;
const HOSTILE_TOKENS = [
  { id: 7, text: 'Use', p: 0.9, entropy: 0.6, top: [{ id: 7, text: 'Use', p: 0.9 }, { id: 8, text: 'Try', p: 0.05 }] },
  { id: 9, text: ' `', p: 0.4, entropy: 1.4, top: [{ id: 10, text: HOSTILE, p: 0.5 }, { id: 9, text: ' `', p: 0.4 }] },
  { id: 11, text: HOSTILE, p: 0.07, entropy: 2.9, top: [{ id: 12, text: ' <script>alert(2)</script>', p: 0.6 }, { id: 11, text: HOSTILE, p: 0.07 }] },
  { id: 13, text: '`', p: 0.97, entropy: 0.2, top: [{ id: 13, text: '`', p: 0.97 }] },
  { id: 14, text: ' here.', p: 0.55, entropy: 1.1, top: [{ id: 14, text: ' here.', p: 0.55 }, { id: 15, text: ' there.', p: 0.3 }] },
  { id: 2, text: '', p: 0.99, entropy: 0.1, top: [{ id: 2, text: '', p: 0.99 }] },
];

/** A chat of local replies: one the mock has tokens for, one written before the inspector existed, one with hostile tokens. */
const inspectorChat = () => ({
  chats: [{ id: 1, title: 'Tram or walk', updatedAt: 30 }],
  messages: [
    { id: 11, chatId: 1, role: 'user', content: 'How do I see Lisbon?', status: 'complete', createdAt: 1, model: null, stats: null },
    { id: 12, chatId: 1, role: 'assistant', content: INSPECTED, status: 'complete', createdAt: 2, model: MODEL.name, stats: replyStats() },
    { id: 13, chatId: 1, role: 'user', content: 'And last year?', status: 'complete', createdAt: 3, model: null, stats: null },
    { id: 14, chatId: 1, role: 'assistant', content: 'Written before the inspector.', status: 'complete', createdAt: 4, model: MODEL.name, stats: replyStats() },
    { id: 15, chatId: 1, role: 'user', content: 'Show me some markup.', status: 'complete', createdAt: 5, model: null, stats: null },
    { id: 16, chatId: 1, role: 'assistant', content: HOSTILE_REPLY, status: 'complete', createdAt: 6, model: MODEL.name, stats: replyStats() },
  ],
  tokenProbs: { 14: [], 16: HOSTILE_TOKENS },
  // What a branch writes on with.
  replies: [{ text: ' onwards to Belém.', chunkSize: 3, delayMs: 40 }],
});

/** What token_probs answers for `messageId`, asked of the mock directly. */
const tokenProbs = (page, messageId) => page.evaluate((id) => window.__TAURI_INTERNALS__.invoke('token_probs', { messageId: id }), messageId);

/** Sample the last assistant bubble's text every frame until its status leaves "streaming". */
async function sampleStream(page) {
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        const lengths = [];
        const started = performance.now();
        const tick = () => {
          const bubbles = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
          const last = bubbles[bubbles.length - 1];
          if (last) {
            const len = last.querySelector('[data-testid="message-content"]').textContent.length;
            if (lengths.at(-1) !== len) lengths.push(len);
            if (last.dataset.status !== 'streaming') return resolve({ lengths, status: last.dataset.status });
          }
          if (performance.now() - started > 15_000) return resolve({ lengths, status: 'timeout' });
          requestAnimationFrame(tick);
        };
        tick();
      }),
  );
}

/** The saved replies of a chat whose first reply was chosen from others (consensus, beam search), its second sampled. */
async function chosenAndPlain(page) {
  const replies = page.locator('[data-testid="message"][data-role="assistant"]');
  await replies.nth(1).getByTestId('message-stats').waitFor();
  return [replies.nth(0), replies.nth(1)];
}

/** `reply`'s stats line reads `text`, and the last line of its tooltip is `detail`. */
async function assertStatsLine(reply, text, detail) {
  const line = reply.getByTestId('message-stats');
  assert.equal(await line.textContent(), text);
  assert.equal((await line.getAttribute('title')).split('\n').at(-1), detail);
}

/**
 * Opens `reply`'s panel (`kind`: 'candidates' or 'beams') with its button, closed at first and reading `label`: the
 * button says it is open and names the panel it controls, a list of `count` items. Returns the button and the panel.
 */
async function openPanel(reply, kind, label, count) {
  const toggle = reply.getByTestId(`${kind}-toggle`);
  assert.equal((await toggle.textContent()).trim(), label);
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  assert.equal(await reply.page().getByTestId(kind).count(), 0);
  await toggle.click();
  const panel = reply.getByTestId(kind);
  await panel.waitFor();
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  assert.equal(await panel.getAttribute('id'), await toggle.getAttribute('aria-controls'));
  assert.equal(await panel.locator('ol > li').count(), count, 'a list, one item per candidate or beam');
  return { toggle, panel };
}

/** Model output is text: `text` (an item of `panel`) shows the hostile markup as written, and nothing of it ran. */
async function assertShownAsText(panel, text, dialogs) {
  assert.equal(await text.textContent(), HOSTILE);
  assert.equal(await panel.locator('img').count(), 0);
  await panel.page().waitForTimeout(100);
  assert.deepEqual(dialogs, []);
}

/** Sends `question` in the open chat; its reply, `text`, arrives whole after the typing dots (no streaming). Returns it. */
async function askWhole(page, question, text) {
  await page.getByTestId('composer').fill(question);
  await page.keyboard.press('Enter');
  await lastAssistant(page).getByTestId('typing').waitFor();
  const { lengths, status } = await sampleStream(page);
  assert.equal(status, 'complete');
  assert.equal(lengths.filter((n) => n > 0).length, 1, `no streaming: the reply arrives whole (lengths seen: ${lengths})`);
  const live = lastAssistant(page);
  assert.equal((await live.getByTestId('message-content').textContent()).trim(), text);
  return live;
}

/**
 * Clicks `content`'s hostile links (the sanitizer left them no href to run) and checks what is left of model
 * Markdown there: no script, iframe or svg, no on* attribute, no javascript: link; its text matches `text`.
 */
async function assertSanitized(content, text) {
  await content.getByText('click me').click();
  await content.getByText('md link').click();
  const dom = await content.evaluate((el) => ({
    scripts: el.querySelectorAll('script, iframe, svg').length,
    handlers: [...el.querySelectorAll('*')].flatMap((n) => [...n.attributes].map((a) => a.name)).filter((n) => n.startsWith('on')),
    hrefs: [...el.querySelectorAll('a')].map((a) => a.getAttribute('href')),
    text: el.textContent,
  }));
  assert.equal(dom.scripts, 0);
  assert.deepEqual(dom.handlers, []);
  assert.ok(dom.hrefs.every((h) => h === null || !/javascript:/i.test(h)), `hrefs: ${dom.hrefs}`);
  assert.match(dom.text, text);
}

/** After `ms` (time for an <img src=x> to fail and fire onerror, or a link to run), nothing injected has run. */
async function assertNothingRan(page, ms, message) {
  await page.waitForTimeout(ms);
  assert.equal(await page.evaluate(() => window.__pwned), undefined, message);
}

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

  test('a consensus reply: "best of N" on its stats line, and the candidates it was chosen from listed on demand', { timeout: TIMEOUT }, async () => {
    const config = {
      ...consensusChat(),
      // Written under consensus (the default 8 candidates, made up around this text by the mock, it the best).
      defaultReply: { text: 'The 28 tram, then the Belém Tower at sunset.', chunkSize: 4, delayMs: 5 },
    };
    await withApp(config, async (page) => {
      const dialogs = collectDialogs(page);
      // The consensus reply says how many candidates it was the best of; the sampled one says nothing.
      const [chosen, plain] = await chosenAndPlain(page);
      await assertStatsLine(
        chosen,
        '58 tokens · 41.7 tok/s · TTFT 142 ms · best of 4',
        "Consensus: the best of 4 candidates by chrF (score 0.71); tok/s counts every candidate's tokens, TTFT waits for all of them.",
      );
      assert.doesNotMatch(await plain.getByTestId('message-stats').textContent(), /best of/);
      assert.equal(await plain.getByTestId('candidates-toggle').count(), 0);

      // Closed at first; the button opens the list, in the candidates' order, their scores beside them, the chosen one marked.
      const { toggle, panel } = await openPanel(chosen, 'candidates', '4 candidates', CANDIDATES.length);
      const items = panel.getByTestId('candidate');
      assert.deepEqual(await items.getByTestId('candidate-text').allTextContents(), CANDIDATES.map((c) => c.text));
      assert.deepEqual(await items.getByTestId('candidate-score').allTextContents(), ['0.58', '0.71', '0.12', '0.64']);
      assert.deepEqual(await items.evaluateAll((els) => els.map((el) => el.dataset.chosen ?? null)), [null, 'true', null, null]);
      assert.equal(await panel.getByTestId('candidate-chosen').count(), 1);
      assert.equal((await items.nth(1).getByTestId('candidate-chosen').textContent()).trim(), 'chosen');
      await assertShownAsText(panel, items.nth(2).getByTestId('candidate-text'), dialogs);

      // The button closes it again, from the keyboard too.
      await toggle.focus();
      await page.keyboard.press('Enter');
      await panel.waitFor({ state: 'detached' });
      assert.equal(await toggle.getAttribute('aria-expanded'), 'false');

      // Live, under consensus: the dots while the candidates are written, then the chosen one whole, with its candidates.
      await inSettings(page, async () => {
        await page.getByTestId('field-strategy-consensus').click();
        await waitForSave(page, (p) => p.strategy === 'consensus');
      });
      const live = await askWhole(page, 'And the evening?', config.defaultReply.text);
      assert.match(await live.getByTestId('message-stats').textContent(), /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms( · \d+ cached)? · best of 8$/);
      // Opened at the bottom of the chat, the list stops following the bottom: the button stays where it was clicked.
      const liveToggle = live.getByTestId('candidates-toggle');
      const topBefore = (await liveToggle.boundingBox()).y;
      await liveToggle.click();
      const liveItems = live.getByTestId('candidate');
      await liveItems.first().waitFor();
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 50)))));
      assert.ok(Math.abs((await liveToggle.boundingBox()).y - topBefore) < 2, `the button moved from ${topBefore} to ${(await liveToggle.boundingBox()).y}`);
      assert.equal(await liveItems.count(), 8);
      assert.equal(await liveItems.nth(1).getByTestId('candidate-text').textContent(), config.defaultReply.text);
      assert.equal(await liveItems.nth(1).getAttribute('data-chosen'), 'true');
    });
  });

  test('a beam search reply: "beam 1 of N" on its stats line, and the best replies it found listed on demand', { timeout: TIMEOUT }, async () => {
    const config = { ...beamChat(), defaultReply: { text: 'The 28 tram, then the Belém Tower at sunset.', chunkSize: 4, delayMs: 5 } };
    await withApp(config, async (page) => {
      const dialogs = collectDialogs(page);
      // The beam reply says it is the best of the replies kept; the sampled one says nothing.
      const [found, plain] = await chosenAndPlain(page);
      await assertStatsLine(
        found,
        '58 tokens · 41.7 tok/s · TTFT 142 ms · beam 1 of 4',
        "Beam search: the best of the 4 replies it kept (score −0.43, log-probability −5.12 over 12 tokens); tok/s counts every beam's tokens, TTFT waits for the search to end.",
      );
      assert.doesNotMatch(await plain.getByTestId('message-stats').textContent(), /beam/);
      assert.equal(await plain.getByTestId('beams-toggle').count(), 0);
      assert.equal(await found.getByTestId('candidates-toggle').count(), 0);

      // The same panel as consensus's: closed at first, best first, each with its score and log-probability, the reply marked.
      const { toggle, panel } = await openPanel(found, 'beams', '4 beams', BEAMS.length);
      assert.equal(await panel.getAttribute('aria-label'), 'Beam search replies');
      assert.match(await panel.locator('.intro').textContent(), /best first, ranked by score: the model's log-probability of the reply ÷ its length\^length penalty/);
      const items = panel.getByTestId('beam');
      assert.deepEqual(await items.getByTestId('beam-text').allTextContents(), BEAMS.map((b) => b.text));
      assert.deepEqual(await items.getByTestId('beam-score').allTextContents(), ['−0.43', '−0.52', '−0.60', '−0.73']);
      assert.deepEqual(await items.getByTestId('beam-logprob').allTextContents(), ['−5.12', '−3.10', '−7.20', '−4.40']);
      assert.deepEqual(await items.getByTestId('beam-tokens').allTextContents(), ['12 tokens', '6 tokens', '12 tokens', '6 tokens']);
      assert.deepEqual(await items.evaluateAll((els) => els.map((el) => el.dataset.chosen ?? null)), ['true', null, null, null]);
      assert.deepEqual(await items.locator('.name').allTextContents(), ['Beam 1', 'Beam 2', 'Beam 3', 'Beam 4']);
      await assertShownAsText(panel, items.nth(2).getByTestId('beam-text'), dialogs);
      await toggle.click();
      await panel.waitFor({ state: 'detached' });

      // Live, under beam search: the best reply arrives whole, with min(n-best, width) of them kept.
      await inSettings(page, async () => {
        await page.getByTestId('field-strategy-beam').click();
        await waitForSave(page, (p) => p.strategy === 'beam');
        await page.getByTestId('field-nBest').fill('3');
        await waitForSave(page, (p) => p.nBest === 3);
      });
      const live = await askWhole(page, 'And the evening?', config.defaultReply.text);
      assert.match(await live.getByTestId('message-stats').textContent(), /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms( · \d+ cached)? · beam 1 of 3$/);
      await live.getByTestId('beams-toggle').click();
      assert.equal(await live.getByTestId('beam').count(), 3);
      assert.equal(await live.getByTestId('beam-text').first().textContent(), config.defaultReply.text);
      // Beam search keeps no token probabilities: the inspector says so.
      await live.getByTestId('action-inspect').click();
      assert.match(await live.getByTestId('inspector-empty').textContent(), /^This reply was found by beam search, which keeps no token probabilities/);
    });
  });

  for (const { what, chat, kind, file } of [
    { what: 'consensus candidates', chat: consensusChat, kind: 'candidates', file: 'chat-consensus' },
    { what: 'beam search replies', chat: beamChat, kind: 'beams', file: 'chat-beams' },
  ]) {
    test(`artefacts to look at: ${what} screenshots (light and dark)`, { timeout: TIMEOUT }, async () => {
      await inBothSchemes(chat(), async (page) => {
        const reply = page.locator('[data-testid="message"][data-role="assistant"]').first();
        await reply.getByTestId(`${kind}-toggle`).click();
        await reply.getByTestId(kind).waitFor();
        await reply.evaluate((el) => el.scrollIntoView({ block: 'start' }));
        await shot(page, `${file}`, { mouse: [1100, 700] });
      });
    });
  }

  test('the token inspector: a reply as its tokens, each with its alternatives; choosing one writes a new version from there', { timeout: TIMEOUT }, async () => {
    await withApp(inspectorChat(), async (page) => {
      const dialogs = collectDialogs(page);
      const replies = page.locator('[data-testid="message"][data-role="assistant"]');
      const reply = replies.first();
      await reply.getByTestId('message-content').waitFor();

      // The button in the reply's footer opens the inspector under it.
      const button = reply.getByTestId('action-inspect');
      assert.equal(await button.getAttribute('aria-label'), 'Inspect tokens');
      assert.equal(await button.getAttribute('aria-expanded'), 'false');
      assert.equal(await page.locator('[data-testid="message"][data-role="user"] [data-testid="action-inspect"]').count(), 0, 'questions have none');
      await button.click();
      const inspector = reply.getByTestId('inspector');
      await inspector.getByTestId('inspector-tokens').waitFor();
      assert.equal(await button.getAttribute('aria-expanded'), 'true');
      assert.equal(await inspector.getAttribute('id'), await button.getAttribute('aria-controls'));
      assert.deepEqual((await mockState(page)).calls.filter((c) => c.cmd === 'token_probs').map((c) => c.payload), [{ messageId: 12 }]);

      // One span per token, spelling the reply exactly (spaces and the line break kept); the end of the turn last, without text.
      const kept = await tokenProbs(page, 12);
      const tokens = inspector.getByTestId('token');
      assert.equal(await tokens.count(), kept.length);
      assert.deepEqual(await tokens.allTextContents(), kept.map((t) => t.text));
      assert.equal(await inspector.getByTestId('inspector-tokens').textContent(), INSPECTED);
      assert.equal(await inspector.getByTestId('inspector-count').textContent(), `${kept.length} tokens`);
      assert.equal(await tokens.last().getAttribute('data-end'), 'true');
      assert.equal(await tokens.last().getAttribute('aria-label'), 'End of the reply');
      assert.equal(await tokens.nth(4).locator('.nl').count(), 1, 'the line break has its mark');
      // Tinted by probability (the less likely, the warmer), and the toggle turns it off.
      assert.equal(await inspector.locator('.tokens.tinted').count(), 1);
      const levels = await tokens.evaluateAll((els) => els.map((el) => [...el.classList].find((c) => /^t\d$/.test(c))));
      assert.deepEqual(levels, kept.map((t) => `t${t.p >= 0.9 ? 0 : t.p >= 0.6 ? 1 : t.p >= 0.3 ? 2 : t.p >= 0.1 ? 3 : 4}`));
      const tint = await tokens.first().evaluate((el) => getComputedStyle(el).backgroundColor);
      assert.notEqual(tint, 'rgba(0, 0, 0, 0)', 'a token of p 0.42 is tinted');
      await inspector.getByTestId('inspector-tint').click();
      assert.equal(await inspector.locator('.tokens.tinted').count(), 0);
      assert.equal(await tokens.first().evaluate((el) => getComputedStyle(el).backgroundColor), 'rgba(0, 0, 0, 0)');
      assert.equal(await inspector.getByTestId('inspector-legend').count(), 0);
      await inspector.getByTestId('inspector-tint').click();
      await inspector.getByTestId('inspector-legend').waitFor();

      // Pointed at, a token shows its alternatives: their text (whitespace visible), a bar and the percentage; and the entropy.
      const popover = inspector.getByTestId('token-popover');
      await tokens.nth(2).hover();
      await popover.waitFor();
      assert.equal(await popover.getAttribute('data-at'), '2');
      const the = kept[2];
      assert.equal(await popover.getByTestId('popover-token').textContent(), '␣the');
      assert.equal(await popover.getByTestId('popover-p').textContent(), `${(the.p * 100).toFixed(1)}%`);
      assert.equal(await popover.getByTestId('popover-entropy').textContent(), `entropy ${the.entropy.toFixed(2)} bits`);
      const alternatives = popover.getByTestId('token-alternative');
      assert.equal(await alternatives.count(), the.top.length);
      assert.deepEqual(await alternatives.getByTestId('alternative-text').allTextContents(), the.top.map((a) => a.text.replaceAll(' ', '␣')));
      assert.deepEqual(await alternatives.getByTestId('alternative-p').allTextContents(), the.top.map((a) => `${(a.p * 100).toFixed(1)}%`));
      const widths = await alternatives.locator('.alt-bar > span').evaluateAll((els) => els.map((el) => parseFloat(el.style.width)));
      assert.deepEqual(widths.map((w) => Math.round(w * 10)), the.top.map((a) => Math.round(a.p * 1000)));
      // The token written is marked and cannot be chosen again.
      assert.deepEqual(await alternatives.evaluateAll((els) => els.map((el) => [el.dataset.written ?? null, el.disabled])), the.top.map((a) => [a.id === the.id ? 'true' : null, a.id === the.id]));
      // Below its token, within the panel.
      const [tokenBox, popBox] = [await tokens.nth(2).boundingBox(), await popover.boundingBox()];
      assert.ok(popBox.y >= tokenBox.y + tokenBox.height, `the popover (${popBox.y}) is under the token (${tokenBox.y + tokenBox.height})`);
      // Moving away closes it.
      await page.mouse.move(1100, 40);
      await popover.waitFor({ state: 'detached' });

      // From the keyboard: one token in the tab order, arrows move between tokens, Enter goes to the alternatives, Escape closes.
      assert.equal(await inspector.locator('[data-testid="token"][tabindex="0"]').count(), 1);
      await tokens.first().focus();
      assert.equal(await popover.getAttribute('data-at'), '0');
      await page.keyboard.press('ArrowRight');
      assert.equal(await popover.getAttribute('data-at'), '1');
      assert.equal(await tokens.nth(1).evaluate((el) => el === document.activeElement), true);
      assert.equal(await tokens.nth(1).getAttribute('tabindex'), '0');
      await page.keyboard.press('End');
      assert.equal(await popover.getAttribute('data-at'), String(kept.length - 1));
      assert.equal(await popover.getByTestId('popover-token').textContent(), 'end of reply');
      await page.keyboard.press('Home');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('Enter');
      const focusedAlternative = () => page.evaluate(() => document.activeElement?.dataset.tokenId ?? null);
      const enabled = kept[1].top.filter((a) => a.id !== kept[1].id).map((a) => String(a.id));
      assert.equal(await focusedAlternative(), enabled[0]);
      await page.keyboard.press('ArrowDown');
      assert.equal(await focusedAlternative(), enabled[1]);
      await page.keyboard.press('Escape');
      await popover.waitFor({ state: 'detached' });
      assert.equal(await tokens.nth(1).evaluate((el) => el === document.activeElement), true, 'Escape goes back to the token');

      // A click (a tap) keeps it open while the pointer is elsewhere; a click outside closes it.
      await tokens.nth(5).click();
      await page.mouse.move(1100, 40);
      await page.waitForTimeout(350);
      assert.equal(await popover.getAttribute('data-at'), '5');
      await page.locator('[data-testid="message"][data-role="user"]').first().getByTestId('message-content').click();
      await popover.waitFor({ state: 'detached' });

      // Model output is text: hostile tokens and alternatives are shown as written; nothing of them runs.
      const hostile = replies.nth(2);
      await hostile.getByTestId('action-inspect').click();
      const hostileTokens = hostile.getByTestId('token');
      await hostileTokens.first().waitFor();
      assert.deepEqual(await hostileTokens.allTextContents(), HOSTILE_TOKENS.map((t) => t.text));
      await hostileTokens.nth(1).hover();
      const hostilePopover = hostile.getByTestId('token-popover');
      assert.equal(await hostilePopover.getByTestId('alternative-text').first().textContent(), '<img␣src=x␣onerror=alert(1)>');
      await hostileTokens.nth(2).hover();
      await hostile.locator('[data-testid="token-popover"][data-at="2"]').waitFor();
      assert.equal(await hostilePopover.getByTestId('popover-token').textContent(), '<img␣src=x␣onerror=alert(1)>');
      assert.equal(await hostilePopover.getByTestId('alternative-text').first().textContent(), '␣<script>alert(2)</script>');
      assert.equal(await hostile.getByTestId('inspector').locator('img, script').count(), 0);
      await page.waitForTimeout(100);
      assert.deepEqual(dialogs, []);
      await hostile.getByTestId('inspector-close').click();
      await hostile.getByTestId('inspector').waitFor({ state: 'detached' });
      assert.equal(await hostile.getByTestId('action-inspect').evaluate((el) => el === document.activeElement), true, 'closed: back to its button');

      // A reply with none kept says why, in words.
      const old = replies.nth(1);
      await old.getByTestId('action-inspect').click();
      assert.equal(
        await old.getByTestId('inspector-empty').textContent(),
        'No token probabilities were kept for this reply. They are kept for replies of the local model (and of a llama.cpp server with llama.cpp fields on) while Settings → Sampling → Alternatives kept per token is above 0; other providers’ replies have none, and neither do replies written with it at 0 or before the token inspector existed.',
      );
      assert.equal(await old.getByTestId('token').count(), 0);

      // Choosing an alternative writes a new version of the reply: the tokens before it, it, then on.
      await tokens.nth(2).hover();
      const choice = popover.locator('[data-testid="token-alternative"]:not([disabled])').first();
      const choiceId = Number(await choice.getAttribute('data-token-id'));
      const chosen = the.top.find((a) => a.id === choiceId);
      const opening = kept.slice(0, 2).map((t) => t.text).join('') + chosen.text;
      assert.equal(opening, 'Start in and');
      await choice.click();
      // It streams in as a regenerated reply does: its opening at once, as version 2 of 2.
      await page.waitForFunction((text) => {
        const last = [...document.querySelectorAll('[data-testid="message"][data-role="assistant"]')].at(-1);
        return last?.dataset.status === 'streaming' && last.querySelector('[data-testid="message-content"]').textContent.startsWith(text);
      }, opening);
      assert.equal(await replies.count(), 1, 'the later messages leave the path with the version branched from');
      assert.equal((await lastAssistant(page).getByTestId('branch-position').textContent()).trim(), '2/2');
      const branched = lastAssistant(page);
      await waitForStatus(branched, 'complete');
      assert.equal((await branched.getByTestId('message-content').textContent()).trim(), `${opening} onwards to Belém.`);
      assert.equal((await branched.getByTestId('branch-position').textContent()).trim(), '2/2');
      const call = (await mockState(page)).calls.filter((c) => c.cmd === 'branch_reply').map(({ payload: { onEvent, ...args } }) => args);
      assert.deepEqual(call, [{ chatId: 1, messageId: 12, at: 2, token: chosen.id }]);
      // Its tokens begin with the kept ones and the alternative.
      await branched.getByTestId('action-inspect').click();
      await branched.getByTestId('token').first().waitFor();
      assert.deepEqual((await branched.getByTestId('token').allTextContents()).slice(0, 3), ['Start', ' in', ' and']);
      // The version it came from is one arrow away.
      await branched.getByTestId('branch-prev').click();
      await replies.first().getByTestId('branch-position').filter({ hasText: '1/2' }).waitFor();
      assert.equal((await replies.first().getByTestId('message-content').innerText()).trim(), INSPECTED);
      assert.equal(await replies.count(), 3);
    });
  });

  test('artefacts to look at: token inspector screenshots (light and dark)', { timeout: TIMEOUT }, async () => {
    await inBothSchemes(inspectorChat(), async (page) => {
      const reply = page.locator('[data-testid="message"][data-role="assistant"]').first();
      await reply.getByTestId('action-inspect').click();
      const token = reply.getByTestId('token').nth(3);
      await token.waitFor();
      await reply.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      const box = await token.boundingBox();
      await token.hover();
      await reply.getByTestId('token-popover').waitFor();
      await shot(page, `chat-inspector`, { mouse: [box.x + box.width / 2, box.y + box.height / 2] });
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

// ---------------------------------------------------------------------------------------------
// The Compare view: a reply's question answered again with 2–4 settings side by side.

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

// ---------------------------------------------------------------------------------------------
// Decoding settings panel

async function openSettings(page) {
  await page.getByTestId('open-settings').click();
  await page.getByTestId('settings-panel').waitFor();
  await page.getByTestId('field-topP').waitFor();
}

/** Opens Settings, runs `edit` there, and closes the panel again (Escape). */
async function inSettings(page, edit) {
  await openSettings(page);
  await edit();
  await page.keyboard.press('Escape');
  await page.getByTestId('settings-panel').waitFor({ state: 'detached' });
}

/** A library for picking a draft model: the loaded model, a small one of its family, a damaged file. */
const DRAFT_LIBRARY = [
  { path: MODEL.path, name: MODEL.name, source: 'linked', repo: null, sizeBytes: MODEL.sizeBytes, facts: null, error: null },
  {
    path: '/home/me/models/Llama-3.2-1B-Instruct-Q8_0.gguf', name: 'Llama-3.2-1B-Instruct-Q8_0', source: 'modelsFolder', repo: null,
    sizeBytes: 1_321_082_560, facts: null, error: null,
  },
  {
    path: '/home/me/models/broken.gguf', name: 'broken', source: 'modelsFolder', repo: null, sizeBytes: 4096, facts: null,
    error: 'broken.gguf is truncated: it ends at byte 4096 but its header needs at least byte 70231; download it again',
  },
];

/** The params of every set_sampling call so far. */
const samplingSaves = (page) => page.evaluate(() => window.__hearthMock.samplingSaves);

/** Wait until the last set_sampling call matches `check` and the panel says it was saved. */
async function waitForSave(page, check) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const saves = await samplingSaves(page);
    if (saves.length > 0 && check(saves.at(-1))) break;
    if (Date.now() > deadline) throw new Error(`no matching set_sampling call; last: ${JSON.stringify(saves.at(-1))}`);
    await page.waitForTimeout(40);
  }
  await page.getByTestId('settings-status').filter({ hasText: 'Saved' }).waitFor({ timeout: 5000 });
}

const fieldValue = (page, key) => page.getByTestId(`field-${key}`).inputValue();
const text = async (locator) => (await locator.textContent()).trim();

/** Makes `edit`: a click on `edit.click`, `edit.fill`'s [key, text] typed into the field, or `edit.select`'s [key, value] picked in it. */
async function makeEdit(page, edit) {
  if (edit.click) await page.getByTestId(edit.click).click();
  else if (edit.select) await page.getByTestId(`field-${edit.select[0]}`).selectOption(edit.select[1]);
  else await page.getByTestId(`field-${edit.fill[0]}`).fill(edit.fill[1]);
}

/** Makes `edit` (see makeEdit) and waits until set_sampling got the defaults with `edit.sent` over them, which it returns. */
async function applyEdit(page, edit) {
  await makeEdit(page, edit);
  const expected = { ...CONTRACT.samplingDefaults, ...edit.sent };
  await waitForSave(page, (p) => isDeepStrictEqual(p, expected));
  return expected;
}

/**
 * Types `typed` into `key`'s field, whose hint then says `hint`: a value the backend refuses is sent and its message
 * (`error`) shown word for word; one that cannot be sent (no `error`) never is. Either way the field is marked.
 */
async function typeRefused(page, key, { typed, error, hint }) {
  const before = (await samplingSaves(page)).length;
  await page.getByTestId(`field-${key}`).fill(typed);
  await page.getByTestId(`hint-${key}`).filter({ hasText: hint }).waitFor();
  if (error) {
    await page.getByTestId('settings-error').filter({ hasText: error }).waitFor();
    assert.equal((await samplingSaves(page)).at(-1)[key], Number(typed));
  } else {
    await page.waitForTimeout(450);
    assert.equal((await samplingSaves(page)).length, before, `${typed} is never sent`);
  }
  assert.equal(await page.getByTestId(`field-${key}`).getAttribute('aria-invalid'), 'true');
}

describe('Decoding settings panel', () => {
  test('edit top-p: saved, an out-of-range value shows the backend message, closing flushes', { timeout: TIMEOUT }, async () => {
    const { page, context, problems } = await openApp({ replies: [{ text: 'ok', chunkSize: 2, delayMs: 5 }] });
    try {
      await openSettings(page);
      assert.equal(await fieldValue(page, 'topP'), '0.95');
      assert.match(await page.getByTestId('range-topP').textContent(), /Range 0 – 1/);
      assert.match(await page.getByTestId('default-topP').textContent(), /Default 0\.95/);
      assert.equal(await page.getByTestId('range-seed').count(), 0, 'no range shown for a field without one');
      assert.equal(await page.getByTestId('reset-topP').isDisabled(), true, 'reset disabled at the default');

      await page.getByTestId('field-topP').fill('0.5');
      await waitForSave(page, (p) => p.topP === 0.5);
      assert.equal(await page.getByTestId('reset-topP').isDisabled(), false);
      assert.equal(await page.getByTestId('slider-topP').inputValue(), '0.5', 'slider follows the box');
      const [saved] = await samplingSaves(page);
      const defaults = await page.evaluate(() => window.__hearthMock.defaultSampling);
      assert.deepEqual(Object.keys(saved).sort(), Object.keys(defaults).sort(), 'the whole SamplingParams is sent');

      // Out of range: the backend's message is shown next to the panel, the value stays.
      await page.getByTestId('field-topP').fill('2');
      const error = page.getByTestId('settings-error');
      await error.waitFor();
      assert.match(await error.textContent(), /topP must be between 0 and 1, got 2/);
      assert.equal((await page.getByTestId('settings-status').textContent()).trim(), 'Not saved');
      assert.equal(await page.getByTestId('field-topP').getAttribute('aria-invalid'), 'true');
      assert.match(await page.getByTestId('hint-topP').textContent(), /Must be between 0 and 1/);
      assert.equal(await fieldValue(page, 'topP'), '2');

      // Fixing it clears the error.
      await page.getByTestId('field-topP').fill('0.9');
      await waitForSave(page, (p) => p.topP === 0.9);
      await error.waitFor({ state: 'detached' });

      // A number the backend cannot even parse is never sent.
      const before = (await samplingSaves(page)).length;
      await page.getByTestId('field-topK').fill('2.5');
      await page.getByTestId('hint-topK').filter({ hasText: 'Enter a whole number' }).waitFor();
      await page.waitForTimeout(450);
      assert.equal((await samplingSaves(page)).length, before);
      await page.getByTestId('field-topK').fill('50');
      await waitForSave(page, (p) => p.topK === 50);

      // Close right after an edit (inside the debounce): it is still saved, before the next reply.
      await page.getByTestId('field-temperature').fill('0.3');
      await page.keyboard.press('Escape');
      await page.getByTestId('settings-panel').waitFor({ state: 'detached' });
      await page.getByTestId('new-chat').click();
      await page.getByTestId('composer').fill('hi');
      await page.keyboard.press('Enter');
      await waitForStatus(lastAssistant(page), 'complete');
      const { calls, contractErrors } = await mockState(page);
      const lastSave = calls.map((c) => c.cmd).lastIndexOf('set_sampling');
      assert.equal(calls[lastSave].payload.params.temperature, 0.3);
      assert.ok(lastSave < calls.findIndex((c) => c.cmd === 'send_message'), 'saved before the reply');
      // One read, of the most specific scope (no chat yet: the model's); the backend says where its values come from.
      assert.deepEqual(
        calls.filter((c) => c.cmd === 'get_sampling').map((c) => c.payload.scope.kind),
        ['model'],
      );

      // Reopening shows the saved values; closing with a rejected value says so in the chat.
      await openSettings(page);
      assert.equal(await fieldValue(page, 'topP'), '0.9');
      assert.equal(await fieldValue(page, 'temperature'), '0.3');
      await page.getByTestId('field-minP').fill('-1');
      await page.getByTestId('settings-error').filter({ hasText: 'minP must be between 0 and 1, got -1' }).waitFor();
      await page.getByTestId('close-settings').click();
      await page.getByTestId('error-banner').filter({ hasText: 'Settings not saved: minP must be between 0 and 1, got -1' }).waitFor();

      assert.deepEqual(contractErrors, []);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('presets, per-field reset and reset all', { timeout: TIMEOUT }, async () => {
    const { page, context, problems } = await openApp({ sampling: { stop: ['</s>'], seed: 7 } });
    try {
      await openSettings(page);
      assert.equal(await page.getByTestId('reset-stop').isDisabled(), false, 'loaded values differ from the defaults');
      assert.equal(await fieldValue(page, 'seed'), '7');

      // The backend's presets and defaults (contract.json), as get_sampling serves them.
      const preset = (name) => CONTRACT.presets.find((p) => p.name === name).params;
      const [CREATIVE, PRECISE, DEFAULTS] = [preset('Creative'), preset('Precise'), CONTRACT.samplingDefaults];
      const shown = (page, key) => fieldValue(page, key).then(Number);

      await page.getByTestId('preset-Creative').click();
      assert.equal(await shown(page, 'temperature'), CREATIVE.temperature);
      assert.equal(await shown(page, 'topK'), CREATIVE.topK);
      assert.equal(await page.getByTestId('preset-Creative').getAttribute('aria-pressed'), 'true');
      assert.equal(await page.getByTestId('field-seed').count(), 0, 'a preset applies over the defaults: seed is random again');
      await waitForSave(page, (p) => p.temperature === CREATIVE.temperature);
      assert.deepEqual((await samplingSaves(page)).at(-1), CREATIVE, 'the preset is sent whole, stop strings and seed included');

      await page.getByTestId('reset-temperature').click();
      assert.equal(await shown(page, 'temperature'), DEFAULTS.temperature);
      assert.equal(await page.getByTestId('reset-temperature').isDisabled(), true);
      assert.equal(await page.getByTestId('preset-Creative').getAttribute('aria-pressed'), 'false');
      await waitForSave(page, (p) => p.temperature === DEFAULTS.temperature && p.topP === CREATIVE.topP);

      await page.getByTestId('preset-Precise').click();
      assert.equal(await shown(page, 'temperature'), PRECISE.temperature);
      assert.equal(await shown(page, 'repeatPenalty'), PRECISE.repeatPenalty);
      await page.getByTestId('reset-all').click();
      assert.equal(await shown(page, 'temperature'), DEFAULTS.temperature);
      assert.equal(await shown(page, 'topP'), DEFAULTS.topP);
      assert.equal(await page.getByTestId('reset-all').isDisabled(), true);
      assert.equal(await page.getByTestId('preset-Balanced').getAttribute('aria-pressed'), 'true');
      await waitForSave(page, (p) => isDeepStrictEqual(p, DEFAULTS));

      const { contractErrors } = await mockState(page);
      assert.deepEqual(contractErrors, []);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('lists, logit bias, grammar, seed, mirostat and sampler order', { timeout: TIMEOUT }, async () => {
    const { page, context, problems } = await openApp();
    try {
      await openSettings(page);

      // Stop strings: typed escapes become real characters.
      await page.getByTestId('add-stop-input').fill('\\n\\nUser:');
      await page.getByTestId('add-stop').click();
      await page.getByTestId('add-stop-input').fill('<|eot_id|>');
      await page.keyboard.press('Enter');
      assert.deepEqual(await page.getByTestId('item-stop').locator('code').allTextContents(), ['\\n\\nUser:', '<|eot_id|>']);

      // Logit bias: a "never" row by text and a +2 row by token id.
      await page.getByTestId('bias-target').fill('As an AI');
      assert.equal(await page.getByTestId('bias-never').isChecked(), true);
      await page.getByTestId('add-logitBias').click();
      await page.getByTestId('bias-kind').selectOption('token');
      await page.getByTestId('bias-target').fill('-3');
      assert.equal(await page.getByTestId('add-logitBias').isDisabled(), true, 'not a token id');
      await page.getByTestId('bias-target').fill('128009');
      await page.getByTestId('bias-never').uncheck();
      await page.getByTestId('bias-value').fill('2');
      await page.getByTestId('add-logitBias').click();
      assert.equal(await page.getByTestId('bias-row').count(), 2);
      await waitForSave(page, (p) => p.logitBias.length === 2);
      let saved = (await samplingSaves(page)).at(-1);
      assert.deepEqual(saved.stop, ['\n\nUser:', '<|eot_id|>']);
      assert.deepEqual(saved.logitBias, [
        { target: { kind: 'text', text: 'As an AI' }, bias: -100 },
        { target: { kind: 'token', id: 128009 }, bias: 2 },
      ]);

      // Remove the second stop string and one DRY breaker.
      await page.getByTestId('remove-stop-1').click();
      await page.getByTestId('remove-drySequenceBreakers-0').click();
      await waitForSave(page, (p) => p.stop.length === 1 && p.drySequenceBreakers.length === 3);
      saved = (await samplingSaves(page)).at(-1);
      assert.deepEqual(saved.drySequenceBreakers, [':', '"', '*']);

      // Grammar: an empty grammar is not sent; the panel says what is missing.
      const sent = (await samplingSaves(page)).length;
      await page.getByTestId('grammar-kind-gbnf').click();
      await page.getByTestId('settings-error').filter({ hasText: 'Write a GBNF grammar' }).waitFor();
      assert.equal((await samplingSaves(page)).length, sent);
      await page.getByTestId('field-constraint').fill('root ::= "yes" | "no"');
      await waitForSave(page, (p) => p.constraint?.kind === 'gbnf');
      assert.deepEqual((await samplingSaves(page)).at(-1).constraint, { kind: 'gbnf', source: 'root ::= "yes" | "no"' });

      // Seed, mirostat, ignore end of turn.
      await page.getByTestId('seed-mode-fixed').click();
      await page.getByTestId('field-seed').fill('1234');
      await page.getByTestId('field-mirostat-v2').click();
      await page.getByTestId('field-ignoreEos').check();
      await waitForSave(page, (p) => p.seed === 1234 && p.mirostat === 'v2' && p.ignoreEos === true);

      // Sampler order: uncheck XTC, move temperature above min-p.
      await page.getByTestId('stage-xtc').uncheck();
      await page.getByTestId('stage-up-temperature').click();
      await page.getByTestId('stage-up-temperature').click();
      await waitForSave(page, (p) => !p.samplerOrder.includes('xtc') && p.samplerOrder.at(-1) === 'minP');
      assert.deepEqual((await samplingSaves(page)).at(-1).samplerOrder, ['penalties', 'dry', 'topNSigma', 'topK', 'typicalP', 'topP', 'temperature', 'minP']);
      assert.deepEqual(
        await page.getByTestId('stage-row').evaluateAll((rows) => rows.map((r) => r.dataset.stage)),
        ['penalties', 'dry', 'topNSigma', 'topK', 'typicalP', 'topP', 'temperature', 'minP', 'xtc'],
      );
      await page.getByTestId('reset-samplerOrder').click();
      await waitForSave(page, (p) => p.samplerOrder.length === 9);

      const { contractErrors } = await mockState(page);
      assert.deepEqual(contractErrors, []);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('speculative decoding: the choice and max draft tokens are sent whole; refused values are marked', { timeout: TIMEOUT }, async () => {
    const DEFAULTS = CONTRACT.samplingDefaults;
    // Edits in turn, each with what set_sampling then gets (over the defaults).
    const EDITS = [
      { click: 'field-speculative-promptLookup', sent: { speculative: 'promptLookup' } },
      { fill: ['draftMax', '16'], sent: { speculative: 'promptLookup', draftMax: 16 } },
      { fill: ['draftMax', '1'], sent: { speculative: 'promptLookup', draftMax: 1 } },
      { fill: ['draftMax', '64'], sent: { speculative: 'promptLookup', draftMax: 64 } },
      { click: 'field-speculative-off', sent: { speculative: 'off', draftMax: 64 } },
      { click: 'reset-draftMax', sent: {} },
    ];
    // Values the backend refuses (its message, word for word) or that cannot be sent at all.
    const REFUSED = [
      { typed: '65', error: 'draftMax must be between 1 and 64, got 65', hint: 'Must be between 1 and 64' },
      { typed: '0', error: 'draftMax must be between 1 and 64, got 0', hint: 'Must be between 1 and 64' },
      { typed: '2.5', error: null, hint: 'Enter a whole number' },
    ];
    await withApp({}, async (page) => {
      await openSettings(page);
      assert.equal(await page.getByTestId('field-speculative-off').getAttribute('aria-checked'), 'true');
      assert.equal(await page.getByTestId('field-speculative-promptLookup').textContent().then((t) => t.trim()), 'Prompt lookup');
      assert.equal(await fieldValue(page, 'draftMax'), String(DEFAULTS.draftMax));
      assert.match(await page.getByTestId('range-draftMax').textContent(), /Range 1 – 64/);
      assert.match(await page.getByTestId('default-draftMax').textContent(), /Default 8/);
      assert.equal(await page.getByTestId('slider-draftMax').count(), 0, 'a whole-number field has no slider');
      for (const key of ['speculative', 'draftMax']) assert.equal(await page.getByTestId(`reset-${key}`).isDisabled(), true);

      for (const edit of EDITS) {
        const expected = await applyEdit(page, edit);
        assert.equal(await page.getByTestId(`field-speculative-${expected.speculative}`).getAttribute('aria-checked'), 'true');
        assert.equal(await fieldValue(page, 'draftMax'), String(expected.draftMax));
        assert.equal(await page.getByTestId('reset-speculative').isDisabled(), expected.speculative === DEFAULTS.speculative);
        assert.equal(await page.getByTestId('reset-draftMax').isDisabled(), expected.draftMax === DEFAULTS.draftMax);
      }

      for (const refused of REFUSED) await typeRefused(page, 'draftMax', refused);
      await page.getByTestId('field-draftMax').fill('12');
      await waitForSave(page, (p) => isDeepStrictEqual(p, { ...DEFAULTS, draftMax: 12 }));
      await page.getByTestId('settings-error').waitFor({ state: 'detached' });
    });
  });

  test('speculative decoding with a draft model: picked from the library and sent whole; none is refused and marked', { timeout: TIMEOUT }, async () => {
    const DEFAULTS = CONTRACT.samplingDefaults;
    const [LOADED, SMALL, BROKEN] = DRAFT_LIBRARY.map((m) => m.path);
    const NONE_REFUSED = 'draftModel must be a model file to draft with, got none';
    // Edits in turn: what set_sampling then gets (over the defaults), or the backend's refusal of it.
    const EDITS = [
      { click: 'field-speculative-draftModel', sent: { speculative: 'draftModel' }, refused: NONE_REFUSED },
      { select: ['draftModel', SMALL], sent: { speculative: 'draftModel', draftModel: SMALL } },
      { select: ['draftModel', LOADED], sent: { speculative: 'draftModel', draftModel: LOADED } },
      { select: ['draftModel', ''], sent: { speculative: 'draftModel' }, refused: NONE_REFUSED },
      { select: ['draftModel', SMALL], sent: { speculative: 'draftModel', draftModel: SMALL } },
      { fill: ['draftMax', '4'], sent: { speculative: 'draftModel', draftModel: SMALL, draftMax: 4 } },
      // Off keeps the file, still shown (and reset) rather than saved out of sight.
      { click: 'field-speculative-off', sent: { draftModel: SMALL, draftMax: 4 } },
      { click: 'reset-draftModel', sent: { draftMax: 4 } },
      { click: 'field-speculative-promptLookup', sent: { speculative: 'promptLookup', draftMax: 4 } },
      { click: 'reset-speculative', sent: { draftMax: 4 } },
    ];
    await withApp({ library: DRAFT_LIBRARY }, async (page) => {
      const draftField = page.getByTestId('field-draftModel');
      await openSettings(page);
      assert.deepEqual(
        await page.getByTestId('field-speculative').getByRole('radio').allTextContents().then((t) => t.map((x) => x.trim())),
        ['Off', 'Prompt lookup', 'Draft model'],
      );
      assert.match(await page.getByTestId('setting-speculative').locator('.help').textContent(), /Prompt lookup guesses from text earlier in the chat/);
      assert.equal(await draftField.count(), 0, 'no draft model to pick while speculative decoding is off');

      for (const edit of EDITS) {
        const expected = { ...DEFAULTS, ...edit.sent };
        const where = JSON.stringify(edit);
        if (edit.refused) {
          await makeEdit(page, edit);
          await page.getByTestId('settings-error').filter({ hasText: edit.refused }).waitFor();
          assert.deepEqual((await samplingSaves(page)).at(-1), expected, where);
        } else {
          await applyEdit(page, edit);
          await page.getByTestId('settings-error').waitFor({ state: 'detached' });
        }
        assert.equal(await page.getByTestId(`field-speculative-${expected.speculative}`).getAttribute('aria-checked'), 'true', where);
        assert.equal(await fieldValue(page, 'draftMax'), String(expected.draftMax), where);
        const shown = expected.speculative === 'draftModel' || expected.draftModel !== null;
        assert.equal(await draftField.count(), shown ? 1 : 0, where);
        if (!shown) continue;
        assert.equal(await draftField.inputValue(), expected.draftModel ?? '', where);
        assert.equal(await draftField.getAttribute('aria-invalid'), String(Boolean(edit.refused)), where);
        assert.equal(await page.getByTestId('hint-draftModel').count(), edit.refused ? 1 : 0, where);
        if (edit.refused) assert.equal(await text(page.getByTestId('hint-draftModel')), 'Pick a model to draft with');
        assert.equal(await page.getByTestId('reset-draftModel').isDisabled(), expected.draftModel === null, where);
      }
      assert.equal((await samplingSaves(page)).at(-1).draftModel, null);

      // The library's models by name and size; the loaded one says so, an unreadable one cannot be picked.
      await page.getByTestId('field-speculative-draftModel').click();
      const options = draftField.locator('option');
      assert.deepEqual(await options.evaluateAll((all) => all.map((o) => [o.value, o.textContent.trim(), o.disabled])), [
        ['', 'None', false],
        [LOADED, `${MODEL.name} · 2.0 GB · loaded`, false],
        [SMALL, 'Llama-3.2-1B-Instruct-Q8_0 · 1.3 GB', false],
        [BROKEN, 'broken · 4.1 KB · unreadable', true],
      ]);
      assert.match(await page.getByTestId('setting-draftModel').locator('.help').textContent(), /share the chat model's vocabulary/);
      assert.match(await text(page.getByTestId('default-draftModel')), /^Default none$/);
    });
  });

  test('speculative decoding: a saved draft model the library no longer has is shown, marked missing', { timeout: TIMEOUT }, async () => {
    const GONE = '/home/me/models/Llama-3.2-1B-Instruct-Q4_0.gguf';
    const SMALL = DRAFT_LIBRARY[1].path;
    await withApp({ library: DRAFT_LIBRARY, sampling: { speculative: 'draftModel', draftModel: GONE } }, async (page) => {
      const draftField = page.getByTestId('field-draftModel');
      await openSettings(page);
      await page.getByTestId('hint-draftModel').filter({ hasText: `Not in the library any more: ${GONE}` }).waitFor();
      assert.equal(await draftField.inputValue(), GONE);
      assert.equal(await text(draftField.locator('option:checked')), 'Llama-3.2-1B-Instruct-Q4_0.gguf (missing)');
      assert.equal(await draftField.getAttribute('aria-invalid'), 'true');
      assert.equal(await page.getByTestId('reset-draftModel').isDisabled(), false);
      assert.deepEqual(await samplingSaves(page), [], 'showing it saves nothing');

      await applyEdit(page, { select: ['draftModel', SMALL], sent: { speculative: 'draftModel', draftModel: SMALL } });
      assert.equal(await page.getByTestId('hint-draftModel').count(), 0);
      assert.equal(await draftField.getAttribute('aria-invalid'), 'false');
      assert.equal(await draftField.locator(`option[value="${GONE}"]`).count(), 0, 'once replaced, the missing file is not offered');
    });
  });

  test('speculative decoding: a draft model that cannot draft fails the reply in words', { timeout: TIMEOUT }, async () => {
    const refused = {
      kind: 'invalidInput',
      message:
        'the draft model /home/me/models/gemma-2-2b-it-Q4_K_M.gguf cannot be used: its token 1000 is "▁the" where the model\'s is "ing": another vocabulary. Pick another draft model, or turn speculative decoding off',
    };
    await withApp({ replies: [{ text: '', failWith: refused }] }, async (page) => {
      await page.getByTestId('new-chat').click();
      await page.getByTestId('composer').fill('hello?');
      await page.keyboard.press('Enter');
      await page.getByTestId('error-banner').waitFor();
      // In the backend's words, as every error in the banner (they begin in lower case there).
      assert.equal(await text(page.getByTestId('error-text')), refused.message);
      await shot(page, 'draft-model-failed');
    });
  });

  test('artefacts to look at: speculative decoding screenshots (light and dark)', { timeout: TIMEOUT }, async () => {
    const shoot = (sampling, name) =>
      inBothSchemes({ library: DRAFT_LIBRARY, sampling }, async (page) => {
        await openSettings(page);
        const group = page.getByTestId('setting-speculative');
        await group.evaluate((el) => el.closest('section').scrollIntoView({ block: 'start' }));
        assert.equal(await page.getByTestId(`field-speculative-${sampling.speculative}`).getAttribute('aria-checked'), 'true');
        await shot(page, `${name}`);
      });
    await shoot({ speculative: 'promptLookup', draftMax: 16 }, 'settings-speculative');
    await shoot({ speculative: 'draftModel', draftModel: DRAFT_LIBRARY[1].path }, 'settings-speculative-draft');
    await shoot({ speculative: 'draftModel', draftModel: '/home/me/models/Llama-3.2-1B-Instruct-Q4_0.gguf' }, 'settings-speculative-draft-missing');
  });

  test('decoding strategy: the choice, candidates and utility are sent whole; refused values are marked', { timeout: TIMEOUT }, async () => {
    const DEFAULTS = CONTRACT.samplingDefaults;
    // Edits in turn, each with what set_sampling then gets (over the defaults).
    const EDITS = [
      { click: 'field-strategy-consensus', sent: { strategy: 'consensus' } },
      { fill: ['mbrCandidates', '4'], sent: { strategy: 'consensus', mbrCandidates: 4 } },
      { fill: ['mbrCandidates', '2'], sent: { strategy: 'consensus', mbrCandidates: 2 } },
      { fill: ['mbrCandidates', '16'], sent: { strategy: 'consensus', mbrCandidates: 16 } },
      { click: 'field-mbrUtility-exactMatch', sent: { strategy: 'consensus', mbrCandidates: 16, mbrUtility: 'exactMatch' } },
      { click: 'field-strategy-sampling', sent: { mbrCandidates: 16, mbrUtility: 'exactMatch' } },
      { click: 'reset-mbrCandidates', sent: { mbrUtility: 'exactMatch' } },
      { click: 'reset-mbrUtility', sent: {} },
    ];
    // Values the backend refuses (its message, word for word) or that cannot be sent at all.
    const REFUSED = [
      // 1 before 17: a notice saying "got 17" would pass for one saying "got 1".
      { typed: '1', error: 'mbrCandidates must be between 2 and 16, got 1', hint: 'Must be between 2 and 16' },
      { typed: '17', error: 'mbrCandidates must be between 2 and 16, got 17', hint: 'Must be between 2 and 16' },
      { typed: '2.5', error: null, hint: 'Enter a whole number' },
    ];
    await withApp({}, async (page) => {
      const checked = (testid) => page.getByTestId(testid).getAttribute('aria-checked');
      await openSettings(page);
      // The group sits right before Speculative decoding.
      const headings = await page.getByTestId('settings-panel').locator('section > header h3').allTextContents();
      assert.equal(headings[headings.indexOf('Decoding strategy') + 1], 'Speculative decoding', headings.join(' | '));
      assert.equal(await checked('field-strategy-sampling'), 'true');
      assert.deepEqual(
        await page.getByTestId('field-strategy').getByRole('radio').allTextContents().then((t) => t.map((x) => x.trim())),
        ['Sampling', 'Consensus', 'Beam search'],
      );
      assert.deepEqual(await page.getByTestId('field-mbrUtility').getByRole('radio').allTextContents().then((t) => t.map((x) => x.trim())), ['chrF', 'Exact match']);
      assert.equal(await checked('field-mbrUtility-chrF'), 'true');
      assert.equal(await fieldValue(page, 'mbrCandidates'), String(DEFAULTS.mbrCandidates));
      assert.match(await page.getByTestId('range-mbrCandidates').textContent(), /Range 2 – 16/);
      assert.match(await page.getByTestId('default-mbrCandidates').textContent(), /Default 8/);
      assert.equal(await page.getByTestId('slider-mbrCandidates').count(), 0, 'a whole-number field has no slider');
      assert.match(await page.getByTestId('setting-strategy').locator('.help').textContent(), /keeps the one that agrees most with the others/);
      for (const key of ['strategy', 'mbrCandidates', 'mbrUtility']) assert.equal(await page.getByTestId(`reset-${key}`).isDisabled(), true);

      for (const edit of EDITS) {
        const expected = await applyEdit(page, edit);
        assert.equal(await checked(`field-strategy-${expected.strategy}`), 'true');
        assert.equal(await checked(`field-mbrUtility-${expected.mbrUtility}`), 'true');
        assert.equal(await fieldValue(page, 'mbrCandidates'), String(expected.mbrCandidates));
        for (const key of ['strategy', 'mbrCandidates', 'mbrUtility']) {
          assert.equal(await page.getByTestId(`reset-${key}`).isDisabled(), expected[key] === DEFAULTS[key], `${key} after ${JSON.stringify(edit)}`);
        }
      }

      for (const refused of REFUSED) await typeRefused(page, 'mbrCandidates', refused);
      await page.getByTestId('field-mbrCandidates').fill('12');
      await waitForSave(page, (p) => isDeepStrictEqual(p, { ...DEFAULTS, mbrCandidates: 12 }));
      await page.getByTestId('settings-error').waitFor({ state: 'detached' });

      // Consensus samples its candidates: with temperature 0 the backend refuses it, and the temperature is marked.
      await page.getByTestId('field-temperature').fill('0');
      await waitForSave(page, (p) => isDeepStrictEqual(p, { ...DEFAULTS, mbrCandidates: 12, temperature: 0 }));
      assert.equal(await page.getByTestId('field-temperature').getAttribute('aria-invalid'), 'false');
      await page.getByTestId('field-strategy-consensus').click();
      await page
        .getByTestId('settings-error')
        .filter({ hasText: 'temperature must be above 0 for consensus decoding (its candidates are sampled), got 0' })
        .waitFor();
      assert.deepEqual((await samplingSaves(page)).at(-1), { ...DEFAULTS, mbrCandidates: 12, temperature: 0, strategy: 'consensus' });
      assert.equal(await page.getByTestId('field-temperature').getAttribute('aria-invalid'), 'true');
      assert.match(await page.getByTestId('setting-temperature').getAttribute('class'), /\binvalid\b/);
      assert.equal(await page.getByTestId('field-mbrCandidates').getAttribute('aria-invalid'), 'false');
      // A temperature above 0 is taken, consensus with it.
      await page.getByTestId('field-temperature').fill('0.7');
      await waitForSave(page, (p) => isDeepStrictEqual(p, { ...DEFAULTS, mbrCandidates: 12, temperature: 0.7, strategy: 'consensus' }));
      await page.getByTestId('settings-error').waitFor({ state: 'detached' });
      assert.equal(await page.getByTestId('field-temperature').getAttribute('aria-invalid'), 'false');
    });
  });

  test('artefacts to look at: decoding strategy screenshots (light and dark)', { timeout: TIMEOUT }, async () => {
    await inBothSchemes({ sampling: { strategy: 'consensus', mbrCandidates: 5, mbrUtility: 'exactMatch' } }, async (page) => {
      await openSettings(page);
      const group = page.getByTestId('setting-strategy');
      await group.evaluate((el) => el.closest('section').scrollIntoView({ block: 'start' }));
      assert.equal(await page.getByTestId('field-strategy-consensus').getAttribute('aria-checked'), 'true');
      await shot(page, `settings-consensus`);
    });
  });

  test('beam search: the strategy, width, length penalty, early stopping and replies kept are sent whole; refused values are marked', { timeout: TIMEOUT }, async () => {
    const DEFAULTS = CONTRACT.samplingDefaults;
    const BEAM = ['beamWidth', 'lengthPenalty', 'earlyStopping', 'nBest'];
    // Edits in turn, each with what set_sampling then gets (over the defaults).
    const EDITS = [
      { click: 'field-strategy-beam', sent: { strategy: 'beam' } },
      { fill: ['beamWidth', '8'], sent: { strategy: 'beam', beamWidth: 8 } },
      { fill: ['beamWidth', '1'], sent: { strategy: 'beam', beamWidth: 1 } },
      { fill: ['lengthPenalty', '0'], sent: { strategy: 'beam', beamWidth: 1, lengthPenalty: 0 } },
      { fill: ['lengthPenalty', '2.5'], sent: { strategy: 'beam', beamWidth: 1, lengthPenalty: 2.5 } },
      { click: 'field-earlyStopping', sent: { strategy: 'beam', beamWidth: 1, lengthPenalty: 2.5, earlyStopping: false } },
      { fill: ['nBest', '8'], sent: { strategy: 'beam', beamWidth: 1, lengthPenalty: 2.5, earlyStopping: false, nBest: 8 } },
      { fill: ['nBest', '1'], sent: { strategy: 'beam', beamWidth: 1, lengthPenalty: 2.5, earlyStopping: false, nBest: 1 } },
      { click: 'reset-beamWidth', sent: { strategy: 'beam', lengthPenalty: 2.5, earlyStopping: false, nBest: 1 } },
      { click: 'reset-lengthPenalty', sent: { strategy: 'beam', earlyStopping: false, nBest: 1 } },
      { click: 'field-earlyStopping', sent: { strategy: 'beam', nBest: 1 } },
      { click: 'reset-nBest', sent: { strategy: 'beam' } },
      { click: 'reset-strategy', sent: {} },
    ];
    // Values the backend refuses (its message, word for word, from the contract's ranges) or that cannot be sent at all.
    const REFUSED = [
      { key: 'beamWidth', typed: '9', error: 'beamWidth must be between 1 and 8, got 9', hint: 'Must be between 1 and 8' },
      { key: 'beamWidth', typed: '0', error: 'beamWidth must be between 1 and 8, got 0', hint: 'Must be between 1 and 8' },
      { key: 'beamWidth', typed: '2.5', error: null, hint: 'Enter a whole number' },
      { key: 'lengthPenalty', typed: '3.5', error: 'lengthPenalty must be between 0 and 3, got 3.5', hint: 'Must be between 0 and 3' },
      { key: 'lengthPenalty', typed: '-1', error: 'lengthPenalty must be between 0 and 3, got -1', hint: 'Must be between 0 and 3' },
      { key: 'nBest', typed: '9', error: 'nBest must be between 1 and 8, got 9', hint: 'Must be between 1 and 8' },
      { key: 'nBest', typed: '0', error: 'nBest must be between 1 and 8, got 0', hint: 'Must be between 1 and 8' },
      { key: 'nBest', typed: '1.5', error: null, hint: 'Enter a whole number' },
    ];
    await withApp({}, async (page) => {
      await openSettings(page);
      // In the Decoding strategy group, after consensus's fields.
      const group = page.getByTestId('setting-strategy').locator('xpath=..');
      assert.deepEqual(
        await group.locator(':scope > fieldset').evaluateAll((els) => els.map((el) => el.dataset.testid)),
        ['setting-strategy', 'setting-mbrCandidates', 'setting-mbrUtility', 'setting-beamWidth', 'setting-lengthPenalty', 'setting-earlyStopping', 'setting-nBest'],
      );
      assert.equal(await page.getByTestId('field-strategy-beam').textContent().then((t) => t.trim()), 'Beam search');
      assert.match(
        await page.getByTestId('setting-strategy').locator('.help').textContent(),
        /Beam search looks for the likeliest reply \(temperature and truncation do not apply; a grammar and logit bias do\); it appears when the search ends\.$/,
      );
      const help = (key) => page.getByTestId(`setting-${key}`).locator('.help').textContent();
      assert.match(await help('beamWidth'), /partial replies beam search follows at each step; it keeps the likeliest whole reply by the model's log-probability ÷ length\^penalty/);
      assert.match(await help('lengthPenalty'), /0 favours short replies, higher values longer ones/);
      assert.match(await help('earlyStopping'), /as soon as beam-width replies are finished/);
      assert.match(await help('nBest'), /at most the beam width/);
      for (const [key, range, def] of [['beamWidth', '1 – 8', '4'], ['lengthPenalty', '0 – 3', '1'], ['nBest', '1 – 8', '4']]) {
        assert.equal(await fieldValue(page, key), String(DEFAULTS[key]));
        assert.match(await page.getByTestId(`range-${key}`).textContent(), new RegExp(`Range ${range}`));
        assert.match(await page.getByTestId(`default-${key}`).textContent(), new RegExp(`Default ${def}`));
      }
      assert.equal(await page.getByTestId('slider-beamWidth').count(), 0, 'a whole-number field has no slider');
      assert.equal(await page.getByTestId('slider-lengthPenalty').count(), 1, 'a fraction in a small range has one');
      assert.equal(await page.getByTestId('field-earlyStopping').isChecked(), true);
      assert.match(await page.getByTestId('default-earlyStopping').textContent(), /Default on/);
      for (const key of ['strategy', ...BEAM]) assert.equal(await page.getByTestId(`reset-${key}`).isDisabled(), true);

      for (const edit of EDITS) {
        const expected = await applyEdit(page, edit);
        assert.equal(await page.getByTestId(`field-strategy-${expected.strategy}`).getAttribute('aria-checked'), 'true');
        assert.equal(await page.getByTestId('field-earlyStopping').isChecked(), expected.earlyStopping);
        for (const key of ['beamWidth', 'lengthPenalty', 'nBest']) assert.equal(Number(await fieldValue(page, key)), expected[key], key);
        for (const key of ['strategy', ...BEAM]) {
          assert.equal(await page.getByTestId(`reset-${key}`).isDisabled(), expected[key] === DEFAULTS[key], `${key} after ${JSON.stringify(edit)}`);
        }
      }

      for (const { key, ...refused } of REFUSED) {
        await typeRefused(page, key, refused);
        if (refused.error) assert.deepEqual((await samplingSaves(page)).at(-1), { ...DEFAULTS, [key]: Number(refused.typed) });
        await page.getByTestId(`field-${key}`).fill(String(DEFAULTS[key]));
        await waitForSave(page, (p) => isDeepStrictEqual(p, DEFAULTS));
        await page.getByTestId('settings-error').waitFor({ state: 'detached' });
      }
    });
  });

  test('token inspector: alternatives kept per token, 0 to 20, sent whole; refused values are marked', { timeout: TIMEOUT }, async () => {
    const DEFAULTS = CONTRACT.samplingDefaults;
    await withApp({}, async (page) => {
      await openSettings(page);
      // A group of its own, after Advanced and before the local engine's decoding.
      const headings = await page.getByTestId('settings-panel').locator('section > header h3').allTextContents();
      assert.equal(headings[headings.indexOf('Advanced') + 1], 'Token inspector', headings.join(' | '));
      assert.equal(headings[headings.indexOf('Token inspector') + 1], 'Decoding strategy', headings.join(' | '));
      const setting = page.getByTestId('setting-topProbs');
      assert.equal((await setting.locator('label').textContent()).trim(), 'Alternatives kept per token');
      assert.match(await setting.locator('.help').textContent(), /each token of a reply \(the local model's, or a llama\.cpp server's\).*; 0 keeps none\.$/);
      assert.equal(await fieldValue(page, 'topProbs'), '5');
      assert.match(await page.getByTestId('range-topProbs').textContent(), /Range 0 – 20/);
      for (const typed of ['0', '20', '1']) {
        await page.getByTestId('field-topProbs').fill(typed);
        await waitForSave(page, (p) => isDeepStrictEqual(p, { ...DEFAULTS, topProbs: Number(typed) }));
        assert.equal(await page.getByTestId('reset-topProbs').isDisabled(), false);
      }
      const REFUSED = [
        { typed: '21', error: 'topProbs must be between 0 and 20, got 21', hint: 'Must be between 0 and 20' },
        { typed: '2.5', error: null, hint: 'Enter a whole number' },
      ];
      for (const refused of REFUSED) await typeRefused(page, 'topProbs', refused);
      await page.getByTestId('reset-topProbs').click();
      await waitForSave(page, (p) => isDeepStrictEqual(p, DEFAULTS));
      await page.getByTestId('settings-error').waitFor({ state: 'detached' });
    });
  });

  test('artefacts to look at: beam search settings screenshots (light and dark)', { timeout: TIMEOUT }, async () => {
    await inBothSchemes({ sampling: { strategy: 'beam', beamWidth: 6, lengthPenalty: 0.8, earlyStopping: false } }, async (page) => {
      // Tall enough for the whole group, from the strategy to the replies kept.
      await page.setViewportSize({ width: 1180, height: 1300 });
      await openSettings(page);
      await page.getByTestId('setting-strategy').evaluate((el) => el.closest('section').scrollIntoView({ block: 'start' }));
      assert.equal(await page.getByTestId('field-strategy-beam').getAttribute('aria-checked'), 'true');
      await shot(page, `settings-beam`);
    });
  });

  test('a failed get_sampling can be retried', { timeout: TIMEOUT }, async () => {
    const { page, context } = await openApp();
    try {
      await page.evaluate(() => {
        window.__hearthMock.failNext.get_sampling = { kind: 'store', message: 'Could not read the settings file.' };
      });
      await page.getByTestId('open-settings').click();
      const failed = page.getByTestId('settings-load-error');
      await failed.filter({ hasText: 'Could not read the settings file.' }).waitFor();
      await failed.getByRole('button', { name: 'Retry' }).click();
      await page.getByTestId('field-topP').waitFor();
      await failed.waitFor({ state: 'detached' });
    } finally {
      await context.close();
    }
  });

  test('artefacts to look at: settings screenshots (light and dark)', { timeout: TIMEOUT }, async () => {
    const chats = [{ id: 1, title: 'Weekend by the fire', updatedAt: 30 }];
    const history = [
      { id: 11, chatId: 1, role: 'user', content: 'Plan a slow, cozy Saturday evening at home.', status: 'complete', createdAt: 1, model: null, stats: null },
      { id: 12, chatId: 1, role: 'assistant', content: REPLY_MD, status: 'complete', createdAt: 2, model: MODEL.name, stats: null },
    ];
    const config = {
      chats,
      messages: history,
      sampling: { temperature: 0.7 },
      ownSampling: [[{ kind: 'chat', id: 1 }, { temperature: 0.9, topP: 0.9 }]],
      presets: [{ name: 'Story time', params: { temperature: 1.2, minP: 0.1 } }, { name: 'Terse answers', params: { maxTokens: 200 } }],
    };
    await inBothSchemes(config, async (page) => {
      await openSettings(page);
      await page.getByTestId('scope-own').waitFor();
      await shot(page, `settings-scope-chat`);
      await page.getByTestId('scope-model').click();
      await page.getByTestId('scope-inherited').waitFor();
      await page.getByTestId('save-preset').click();
      await page.getByTestId('preset-name').fill('Rainy evenings');
      await shot(page, `settings-scope-model`);
      await page.keyboard.press('Escape');
      await page.getByTestId('scope-global').click();
      await page.getByTestId('scope-own').waitFor();
      await page.getByTestId('field-topP').fill('0.9');
      await waitForSave(page, (p) => p.topP === 0.9);
      await page.getByTestId('field-topP').blur();
      await shot(page, `settings`);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Scopes, user presets and the Model group

const mockValue = (page, key) => page.evaluate((k) => window.__hearthMock[k], key);
const scopeChecked = (page, kind) => page.getByTestId(`scope-${kind}`).getAttribute('aria-checked');

/** Scroll the Model group to the top of the panel and wait for its fields. */
async function showModelGroup(page) {
  const group = page.getByTestId('model-group');
  await group.getByTestId('field-nBatch').waitFor();
  await group.evaluate((el) => el.scrollIntoView({ block: 'start' }));
  return group;
}

describe('Settings scopes, presets and the Model group', () => {
  test('scopes: inherited until edited, then own; "Use inherited" goes back', { timeout: TIMEOUT }, async () => {
    const chats = [{ id: 1, title: 'Weekend by the fire', updatedAt: 30 }];
    await withApp({ chats, sampling: { temperature: 0.6 } }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Weekend by the fire' }).waitFor();
      await openSettings(page);
      // Nothing is set for this chat or its model: the panel opens where its values come from.
      assert.equal(await scopeChecked(page, 'global'), 'true');
      assert.match(await text(page.getByTestId('scope-note')), /Chats without their own or their model's settings use these/);
      assert.equal(await page.getByTestId('use-inherited').count(), 0, 'all chats have nothing to inherit from');

      await page.getByTestId('scope-chat').click();
      assert.equal(await text(page.getByTestId('scope-inherited')), 'Inherited from: All chats.');
      assert.match(await text(page.getByTestId('scope-note')), /Editing gives this chat its own settings/);
      assert.equal(await fieldValue(page, 'temperature'), '0.6');

      await page.getByTestId('field-topP').fill('0.5');
      await waitForSave(page, (p) => p.topP === 0.5 && p.temperature === 0.6);
      assert.deepEqual((await mockValue(page, 'samplingScopes')).at(-1), { kind: 'chat', id: 1 });
      assert.equal(await text(page.getByTestId('scope-own')), 'Only this chat uses these settings.');

      // The model scope still inherits the global values.
      await page.getByTestId('scope-model').click();
      await page.getByTestId('scope-inherited').filter({ hasText: 'Inherited from: All chats.' }).waitFor();
      assert.equal(await fieldValue(page, 'topP'), '0.95');

      // Reopened, the panel starts where this chat's values now come from.
      await page.keyboard.press('Escape');
      await openSettings(page);
      assert.equal(await scopeChecked(page, 'chat'), 'true');
      assert.equal(await fieldValue(page, 'topP'), '0.5');

      await page.getByTestId('use-inherited').click();
      await page.getByTestId('scope-inherited').filter({ hasText: 'Inherited from: All chats.' }).waitFor();
      assert.equal(await fieldValue(page, 'topP'), '0.95');
      assert.equal(await fieldValue(page, 'temperature'), '0.6');
      const { calls } = await mockState(page);
      assert.deepEqual(calls.filter((c) => c.cmd === 'clear_sampling').map((c) => c.payload), [{ scope: { kind: 'chat', id: 1 } }]);
      assert.deepEqual(await mockValue(page, 'sampling').then(Object.keys), ['sampling']);
    });
  });

  test('user presets: save with Enter, a refused name, delete; built-ins stay', { timeout: TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      await openSettings(page);
      assert.equal(await page.getByTestId('scope-chat').isDisabled(), true, 'no chat selected');
      assert.equal(await page.getByTestId('scope-model').isDisabled(), false);
      for (const name of ['Precise', 'Balanced', 'Creative']) {
        assert.equal(await page.getByTestId(`delete-preset-${name}`).count(), 0, `${name} cannot be deleted`);
      }
      assert.match(await page.getByTestId('preset-Precise').getAttribute('title'), /^Temperature 0\.2 · Top-p 0\.9/);

      await page.getByTestId('field-temperature').fill('0.42');
      await waitForSave(page, (p) => p.temperature === 0.42);
      await page.getByTestId('save-preset').click();
      await page.getByTestId('preset-name').fill('balanced');
      await page.keyboard.press('Enter');
      assert.equal(
        await text(page.getByTestId('preset-error')),
        'choose another name: "balanced" is empty or a built-in preset',
      );

      await page.getByTestId('preset-name').fill('Story time');
      await page.keyboard.press('Enter');
      const mine = page.getByTestId('preset-Story time');
      await mine.waitFor();
      await page.getByTestId('preset-name').waitFor({ state: 'detached' });
      await page.getByTestId('preset-error').waitFor({ state: 'detached' });
      assert.equal(await mine.getAttribute('aria-pressed'), 'true', 'the values on screen are the preset');
      const saved = await mockValue(page, 'presets');
      assert.deepEqual(saved.map((p) => [p.name, p.params.temperature]), [['Story time', 0.42]]);

      await page.getByTestId('preset-Precise').click();
      assert.equal(await fieldValue(page, 'temperature'), '0.2');
      await mine.click();
      assert.equal(await fieldValue(page, 'temperature'), '0.42');
      await waitForSave(page, (p) => p.temperature === 0.42);

      // Escape closes the name box, not the panel.
      await page.getByTestId('save-preset').click();
      await page.keyboard.press('Escape');
      await page.getByTestId('preset-name').waitFor({ state: 'detached' });
      assert.equal(await page.getByTestId('settings-panel').count(), 1);

      await page.getByTestId('delete-preset-Story time').click();
      await mine.waitFor({ state: 'detached' });
      assert.deepEqual(await mockValue(page, 'presets'), []);
    });
  });

  test('model: context length → "Reload" notice → reload → the new value is in use', { timeout: TIMEOUT }, async () => {
    await withApp({ reloadMs: 700 }, async (page) => {
      await openSettings(page);
      const group = await showModelGroup(page);
      assert.equal(await text(group.getByTestId('load-model-name')), MODEL.name);
      assert.equal(await text(group.getByTestId('note-nCtx')), 'In use: Auto (8,192 of 8,192 trained)');
      assert.equal(await text(group.getByTestId('note-nThreads')), 'In use: Auto (8)');
      assert.equal(await text(group.getByTestId('default-nCtx')), 'Default auto');
      assert.equal(await group.getByTestId('reload-notice').count(), 0);
      assert.equal(await group.getByTestId('reset-nCtx').isDisabled(), true);

      await group.getByTestId('mode-nCtx-custom').click();
      assert.equal(await fieldValue(page, 'nCtx'), '8192', 'Custom starts at what is in use');
      await page.getByTestId('field-nCtx').fill('4096');
      const notice = group.getByTestId('reload-notice');
      await notice.filter({ hasText: 'Reload the model to apply' }).waitFor();
      assert.equal(await text(group.getByTestId('note-nCtx')), 'In use until reload: Auto (8,192 of 8,192 trained)');
      assert.equal((await mockValue(page, 'loadSaves')).at(-1).nCtx, 4096);
      await shot(page, 'settings-model-reload');

      await group.getByTestId('reload-model').click();
      await notice.filter({ hasText: 'Reloading' }).waitFor();
      assert.equal(await group.getByTestId('reload-model').isDisabled(), true);
      assert.equal(await page.getByTestId('field-nBatch').isDisabled(), true, 'load fields wait for the reload');
      await shot(page, 'settings-model-reloading');
      // The rest stays usable meanwhile.
      await page.getByTestId('field-topP').fill('0.8');
      await waitForSave(page, (p) => p.topP === 0.8);

      await group.getByTestId('reloaded').waitFor();
      assert.equal(await notice.count(), 0);
      assert.equal(await text(group.getByTestId('note-nCtx')), 'In use: 4,096 of 8,192 trained');
      assert.equal(await page.getByTestId('field-nBatch').isDisabled(), false);
      const { calls } = await mockState(page);
      const cmds = calls.map((c) => c.cmd);
      assert.ok(cmds.lastIndexOf('set_load_settings') < cmds.indexOf('reload_model'));
      assert.ok(cmds.lastIndexOf('active_model') > cmds.indexOf('reload_model'), 'the chat screen reads the model again');
    });
  });

  test('model: refused values and a failed reload show the backend message word for word', { timeout: TIMEOUT }, async () => {
    await withApp({ load: { flashAttention: 'off' }, maxCtx: 16384, reloadMs: 50 }, async (page) => {
      await openSettings(page);
      const group = await showModelGroup(page);
      const error = group.getByTestId('load-error-text');

      await group.getByTestId('field-kvCacheType-q8_0').click();
      await error.filter({ hasText: /^a quantized KV cache needs flash attention \(auto or on\)$/ }).waitFor();
      assert.equal(await text(group.getByTestId('load-status')), 'Not saved');
      assert.equal(await group.getByTestId('setting-kvCacheType').evaluate((el) => el.classList.contains('invalid')), true);
      await group.getByTestId('field-flashAttention-on').click();
      await error.waitFor({ state: 'detached' });
      await group.getByTestId('reload-notice').waitFor();

      await group.getByTestId('field-chatTemplate').fill('{% for m in messages %}{{ m.content }}');
      await error
        .filter({ hasText: 'the chat template does not compile: syntax error: unexpected end of input, expected end of block (in chat:1)' })
        .waitFor();
      assert.equal(await group.getByTestId('reload-model').isDisabled(), true, 'nothing to reload while the values are refused');
      await group.getByTestId('field-chatTemplate').fill('{% for m in messages %}{{ m.content }}{% endfor %}');
      await error.waitFor({ state: 'detached' });
      assert.equal((await mockValue(page, 'loadSaves')).at(-1).chatTemplate, '{% for m in messages %}{{ m.content }}{% endfor %}');
      await group.getByTestId('field-chatTemplate').fill('   ');
      await group.getByTestId('load-status').filter({ hasText: 'Saved' }).waitFor();
      assert.equal((await mockValue(page, 'loadSaves')).at(-1).chatTemplate, null, 'blank means the model\'s own template');

      // Outside the range the backend gives: the field says so as it is typed, the refusal comes word for word.
      await group.getByTestId('mode-nCtx-custom').click();
      const nCtx = CONTRACT.loadRanges.find((r) => r.key === 'nCtx');
      const words = (n) => n.toLocaleString('en-US');
      assert.equal(await text(group.getByTestId('range-nCtx')), `Range ${words(nCtx.min)} – ${words(nCtx.max)}`);
      await page.getByTestId('field-nCtx').fill(String(nCtx.min - 1));
      await group.getByTestId('hint-nCtx').filter({ hasText: `Must be between ${words(nCtx.min)} and ${words(nCtx.max)}` }).waitFor();
      await error.filter({ hasText: `context length must be ${nCtx.text}` }).waitFor();

      // More context than the machine can hold: the backend keeps the model as it was and says so.
      await page.getByTestId('field-nCtx').fill('65536');
      await group.getByTestId('hint-nCtx').waitFor({ state: 'detached' });
      await group.getByTestId('load-status').filter({ hasText: 'Saved' }).waitFor();
      await group.getByTestId('reload-model').click();
      await group
        .getByTestId('reload-error-text')
        .filter({ hasText: /^llama\.cpp could not create a context of 65536 tokens \(out of memory\); the model was loaded again with its previous settings$/ })
        .waitFor();
      assert.equal(await text(group.getByTestId('note-nCtx')), 'In use until reload: Auto (8,192 of 8,192 trained)');
      await group.getByTestId('reload-notice').filter({ hasText: 'Reload the model to apply' }).waitFor();
      await shot(page, 'settings-model-error');
    });
  });

  test('without a model the Model group says so and "This model" is off', { timeout: TIMEOUT }, async () => {
    await withApp({ model: null }, async (page) => {
      await openSettings(page);
      await page.getByTestId('load-settings-error').filter({ hasText: 'Model settings are not available: no model is loaded' }).waitFor();
      assert.equal(await page.getByTestId('scope-model').isDisabled(), true);
    });
  });

  test("model: the chats' caches in memory and on disk, beside their budgets, and Clear", { timeout: TIMEOUT }, async () => {
    const chats = [
      { id: 1, title: 'Soup for tonight', updatedAt: 30 },
      { id: 2, title: 'Explain Rust lifetimes', updatedAt: 20 },
      { id: 3, title: 'Sourdough starter schedule', updatedAt: 10 },
    ];
    const config = { chats, cachesOnDisk: [1, 2, 3], defaultReply: { text: 'Noted.', chunkSize: 3, delayMs: 5 }, reloadMs: 50 };
    await inBothSchemes(config, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Soup for tonight' }).waitFor();
      await openSettings(page);
      const group = await showModelGroup(page);
      const line = group.getByTestId('chat-caches');
      const usage = line.getByTestId('cache-disk-usage');
      const clear = line.getByTestId('clear-chat-caches');
      await usage.filter({ hasText: '90 MB (3 chats)' }).waitFor();
      const { ramMb, diskMb } = CONTRACT.cacheBudgetDefaults;
      assert.equal(await text(line.getByTestId('cache-ram-usage')), 'none');
      assert.equal(await line.getByTestId('cache-ram-budget').inputValue(), String(ramMb));
      assert.equal(await line.getByTestId('cache-disk-budget').inputValue(), String(diskMb));
      assert.equal(
        (await line.getByTestId('chat-caches-usage').innerText()).replace(/\s+/g, ' ').trim(),
        'Chat caches in RAM none of MB Chat caches on disk 90 MB (3 chats) of MB Other models in RAM none of MB Unload the model after idle never min',
      );
      assert.match(await clear.getAttribute('title'), /chats will read their conversation again at their next reply/);
      await shot(page, `settings-chat-caches`, { dir: OUTPUT });

      await clear.click();
      await usage.filter({ hasText: /^none$/ }).waitFor();
      await shot(page, `settings-chat-caches-cleared`, { dir: OUTPUT });
      assert.equal((await mockState(page)).calls.filter((c) => c.cmd === 'clear_chat_caches').length, 1);
      assert.equal(await line.getByTestId('cache-disk-budget').inputValue(), String(diskMb), 'the budgets stay');

      // The chat's next reply reads its conversation again: nothing restored from disk.
      await page.getByTestId('close-settings').click();
      await page.getByTestId('composer').fill('More?');
      await page.keyboard.press('Enter');
      await waitForStatus(lastAssistant(page), 'complete');
      const sources = await page.evaluate(() => window.__hearthMock.messages.filter((m) => m.stats).map((m) => m.stats.promptSource));
      assert.deepEqual(sources, ['new']);

      // Read again when the panel opens, and after a reload (the model going spills the live cache to disk).
      await openSettings(page);
      await showModelGroup(page);
      await usage.filter({ hasText: /^none$/ }).waitFor();
      await group.getByTestId('field-kvCacheType-q8_0').click();
      await group.getByTestId('reload-notice').filter({ hasText: 'Reload the model to apply' }).waitFor();
      await group.getByTestId('reload-model').click();
      await group.getByTestId('reloaded').waitFor();
      await usage.filter({ hasText: '30 MB (1 chat)' }).waitFor();
      const reads = (await mockState(page)).calls.filter((c) => c.cmd === 'chat_cache_usage').length;
      assert.equal(reads, 3, 'read at each opening and after the reload');
    });
  });

  test("model: the caches' budgets are in force at once; 0 MB of memory restores from disk; a refused budget is marked", { timeout: TIMEOUT }, async () => {
    const chats = [
      { id: 1, title: 'Soup for tonight', updatedAt: 30 },
      { id: 2, title: 'Explain Rust lifetimes', updatedAt: 20 },
    ];
    const config = { chats, defaultReply: { text: 'Noted.', chunkSize: 3, delayMs: 5 } };
    const ask = async (page, title, question) => {
      await askInChat(page, title, question);
      return text(lastAssistant(page).getByTestId('message-stats'));
    };
    const disk = CONTRACT.cacheBudgetRanges.find((r) => r.key === 'diskMb');
    await inBothSchemes(config, async (page) => {
      // Chat 2 answering puts chat 1's cache away in memory.
      await ask(page, 'Soup for tonight', 'Something with leeks?');
      await ask(page, 'Explain Rust lifetimes', "What does 'a mean?");
      await openSettings(page);
      const group = await showModelGroup(page);
      const line = group.getByTestId('chat-caches');
      const ramUsage = line.getByTestId('cache-ram-usage');
      const diskUsage = line.getByTestId('cache-disk-usage');
      const ramBudget = line.getByTestId('cache-ram-budget');
      const diskBudget = line.getByTestId('cache-disk-budget');
      await ramUsage.filter({ hasText: /^30 MB$/ }).waitFor();
      assert.equal(await text(diskUsage), 'none');

      // 0 MB of memory, sent on Enter (not at each key): chat 1's cache goes to disk at once.
      await ramBudget.fill('0');
      assert.deepEqual(await mockValue(page, 'budgetSaves'), [], 'nothing sent while typing');
      await ramBudget.press('Enter');
      await diskUsage.filter({ hasText: '30 MB (1 chat)' }).waitFor();
      assert.equal(await text(ramUsage), 'none');
      assert.deepEqual(await mockValue(page, 'cacheBudgets'), { ...CONTRACT.cacheBudgetDefaults, ramMb: 0 });

      // Not a whole number: said so, and not sent.
      await diskBudget.fill('1.5');
      await diskBudget.blur();
      const error = group.getByTestId('chat-caches-error');
      await error.filter({ hasText: 'Enter a whole number' }).waitFor();
      assert.equal(await diskBudget.getAttribute('aria-invalid'), 'true');
      assert.equal((await mockValue(page, 'budgetSaves')).length, 1);

      // Out of range, sent on leaving the box: the backend refuses, word for word, and the box is marked.
      await diskBudget.fill(String(disk.max + 1));
      await diskBudget.blur();
      await error.getByTestId('chat-caches-error-text').filter({ hasText: `the disk space for chat caches must be ${disk.text}` }).waitFor();
      assert.equal(await text(error), `Not saved: the disk space for chat caches must be ${disk.text}`);
      assert.equal(await diskBudget.getAttribute('aria-invalid'), 'true');
      assert.equal(await ramBudget.getAttribute('aria-invalid'), 'false');
      assert.equal(await diskBudget.inputValue(), String(disk.max + 1), 'the refused value stays to be fixed');
      assert.deepEqual(await mockValue(page, 'cacheBudgets'), { ...CONTRACT.cacheBudgetDefaults, ramMb: 0 });
      await shot(page, `settings-chat-caches-refused`, { dir: OUTPUT });

      await diskBudget.fill('2048');
      await diskBudget.press('Tab');
      await error.waitFor({ state: 'detached' });
      assert.equal(await diskBudget.getAttribute('aria-invalid'), 'false');
      assert.deepEqual(await mockValue(page, 'cacheBudgets'), { ...CONTRACT.cacheBudgetDefaults, ramMb: 0, diskMb: 2048 });
      await shot(page, `settings-chat-caches-budgets`, { dir: OUTPUT });

      // With no memory for them, a chat switched back to reads its cache back from disk.
      await page.getByTestId('close-settings').click();
      assert.match(await ask(page, 'Soup for tonight', 'How long does it simmer?'), / · \d+ restored from disk$/);
      assert.match(await ask(page, 'Explain Rust lifetimes', 'And elision?'), / · \d+ restored from disk$/);
      const sources = await page.evaluate(() => window.__hearthMock.messages.filter((m) => m.stats).map((m) => m.stats.promptSource));
      assert.deepEqual(sources, ['new', 'new', 'disk', 'disk']);
    });
  });

  test('model: the idle time before the model is unloaded, saved with the budgets; 0 says never', { timeout: TIMEOUT }, async () => {
    const key = 'unloadIdleMinutes';
    await inBothSchemes({}, async (page) => {
      await openSettings(page);
      const group = await showModelGroup(page);
      const box = group.getByTestId('unload-idle-budget');
      const state = group.getByTestId('unload-idle-state');
      assert.equal(await box.inputValue(), String(CONTRACT.cacheBudgetDefaults[key]));
      assert.equal(await text(state), 'never');
      assert.match(await group.getByText('Unload the model after idle').getAttribute('title'), /the next reply loads its chat's model again/);
      const range = CONTRACT.cacheBudgetRanges.find((r) => r.key === key);
      const line = group.locator('label', { has: page.getByTestId('unload-idle-budget') });
      assert.equal(await line.getAttribute('title'), `Minutes without a reply before the model is unloaded, ${range.text} (default 0 min)`);

      await box.fill('30');
      await box.press('Enter');
      await page.waitForFunction((k) => window.__hearthMock.cacheBudgets[k] === 30, key);
      assert.deepEqual(await mockValue(page, 'cacheBudgets'), { ...CONTRACT.cacheBudgetDefaults, [key]: 30 });
      await page.waitForFunction(() => document.querySelector('[data-testid="unload-idle-state"]').textContent === '');
      await shot(page, `chatmodel-idle`, { dir: OUTPUT });

      await box.fill('0');
      await box.press('Enter');
      await page.waitForFunction((k) => window.__hearthMock.cacheBudgets[k] === 0, key);
      await state.filter({ hasText: 'never' }).waitFor();
    });
  });

  // Each budget's line: a value out of its range (from the contract) is refused in the backend's words, its box marked.
  const refusedWords = {
    ramMb: 'the memory for chat caches',
    diskMb: 'the disk space for chat caches',
    unloadIdleMinutes: 'the idle time before the model is unloaded',
    modelsRamMb: 'the memory for other models',
  };
  const boxes = { ramMb: 'cache-ram-budget', diskMb: 'cache-disk-budget', unloadIdleMinutes: 'unload-idle-budget', modelsRamMb: 'kept-models-budget' };
  for (const range of CONTRACT.cacheBudgetRanges) {
    test(`model: ${range.key} out of its range is refused in words, its box marked; fixed, it is saved`, { timeout: TIMEOUT }, async () => {
      await withApp({}, async (page) => {
        await openSettings(page);
        const group = await showModelGroup(page);
        const box = group.getByTestId(boxes[range.key]);
        await box.fill(String(range.max + 1));
        await box.press('Enter');
        const error = group.getByTestId('chat-caches-error');
        await error.waitFor();
        assert.equal(await text(error), `Not saved: ${refusedWords[range.key]} must be ${range.text}`);
        assert.equal(await box.getAttribute('aria-invalid'), 'true');
        assert.deepEqual(await mockValue(page, 'cacheBudgets'), CONTRACT.cacheBudgetDefaults);
        if (range.key === 'unloadIdleMinutes') await shot(page, 'chatmodel-idle-refused', { dir: OUTPUT });

        await box.fill(String(range.max));
        await box.press('Enter');
        await error.waitFor({ state: 'detached' });
        assert.equal(await box.getAttribute('aria-invalid'), 'false');
        assert.deepEqual(await mockValue(page, 'cacheBudgets'), { ...CONTRACT.cacheBudgetDefaults, [range.key]: range.max });
      });
    });
  }

  test('artefacts to look at: Model group screenshots (light and dark)', { timeout: TIMEOUT }, async () => {
    await inBothSchemes({ load: { nGpuLayers: 0 } }, async (page) => {
      await openSettings(page);
      const group = await showModelGroup(page);
      await group.getByTestId('mode-nCtx-custom').click();
      await page.getByTestId('field-nCtx').fill('16384');
      await group.getByTestId('field-kvCacheType-q8_0').click();
      await group.getByTestId('reload-notice').waitFor();
      await page.getByTestId('field-nCtx').blur();
      await group.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await shot(page, `settings-model`);
      await group.getByTestId('field-chatTemplate').scrollIntoViewIfNeeded();
      await shot(page, `settings-model-end`);
    });
  });
});
