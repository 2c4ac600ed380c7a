// Browser test: the built UI (ui/dist) in headless Chromium with a mocked Tauri IPC.
// Run with `npm run test:browser` (builds first) or `node --test tests/browser/chat.test.mjs`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { installMockTauri } from './mock-tauri.mjs';
import { serveStatic } from './static-server.mjs';

const UI = fileURLToPath(new URL('../../', import.meta.url));
const DIST = `${UI}dist`;
const RESULTS = `${UI}test-results`;
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const TIMEOUT = 60_000;

const MODEL = { name: 'Llama-3.2-3B-Instruct-Q4_K_M', path: '/home/me/models/Llama-3.2-3B-Instruct-Q4_K_M.gguf', sizeBytes: 2_019_377_696 };

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

let server;
let browser;

before(async () => {
  if (!existsSync(`${DIST}/index.html`)) {
    execFileSync(process.execPath, [`${UI}node_modules/vite/bin/vite.js`, 'build'], { cwd: UI, stdio: 'inherit' });
  }
  mkdirSync(RESULTS, { recursive: true });
  server = await serveStatic(DIST);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Open the app with a fresh mock backend; collects console errors (CSP violations included). */
async function openApp(config = {}, { query = '', colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport: { width: 1180, height: 760 }, deviceScaleFactor: 1, colorScheme });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  await page.addInitScript(installMockTauri, { model: MODEL, ...config });
  await page.goto(server.url + query);
  await page.getByTestId('composer').waitFor();
  return { page, context, problems };
}

const messages = (page) => page.getByTestId('message');
const lastAssistant = (page) => page.locator('[data-testid="message"][data-role="assistant"]').last();

async function waitForStatus(locator, status) {
  await locator.and(locator.page().locator(`[data-status="${status}"]`)).waitFor({ timeout: 15_000 });
}

async function mockState(page) {
  return page.evaluate(() => ({ calls: window.__hearthMock.calls, contractErrors: window.__hearthMock.contractErrors }));
}

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

      // The composer is focused after creating a chat; Enter sends.
      await page.keyboard.type('Any cozy ideas for tonight?');
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
      assert.match(await reply.getByTestId('message-stats').textContent(), /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms$/);
      assert.equal(await reply.getByTestId('message-status').count(), 0, 'no label on a complete reply');
      await page.getByTestId('send').waitFor();

      // The backend titled the chat from the first message.
      await page.getByTestId('chat-item').filter({ hasText: 'Any cozy ideas for tonight?' }).waitFor();
      assert.equal(await page.getByTestId('chat-title').textContent(), 'Any cozy ideas for tonight?');

      // Shift+Enter inserts a newline instead of sending.
      await page.getByTestId('composer').click();
      await page.keyboard.type('line one');
      await page.keyboard.press('Shift+Enter');
      await page.keyboard.type('line two');
      assert.equal(await page.getByTestId('composer').inputValue(), 'line one\nline two');
      assert.equal(await messages(page).count(), 2, 'Shift+Enter did not send');
      await page.keyboard.press('Enter');
      await waitForStatus(messages(page).nth(3), 'complete');
      assert.equal(await messages(page).nth(2).getByTestId('message-content').innerText(), 'line one\nline two');
      assert.equal((await lastAssistant(page).getByTestId('message-content').textContent()).trim(), 'Two lines received. 👍');

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
      const content = reply.getByTestId('message-content');
      await page.waitForTimeout(300); // time for an <img src=x> to fail and fire onerror
      assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no injected handler or script ran');
      await content.getByText('click me').click(); // a sanitized link has no href left to run
      await content.getByText('md link').click();
      await page.waitForTimeout(200);
      assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no javascript: link ran');
      const dom = await content.evaluate((el) => ({
        scripts: el.querySelectorAll('script, iframe, svg').length,
        handlers: [...el.querySelectorAll('*')].flatMap((n) => [...n.attributes].map((a) => a.name)).filter((n) => n.startsWith('on')),
        hrefs: [...el.querySelectorAll('a')].map((a) => a.getAttribute('href')),
        text: el.textContent,
      }));
      assert.equal(dom.scripts, 0);
      assert.deepEqual(dom.handlers, []);
      assert.ok(dom.hrefs.every((h) => h === null || !/javascript:/i.test(h)), `hrefs: ${dom.hrefs}`);
      assert.match(dom.text, /done/);
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

  test('screenshots (light and dark)', { timeout: TIMEOUT }, async () => {
    const chats = [
      { id: 1, title: 'Weekend by the fire', updatedAt: 30 },
      { id: 2, title: 'Explain Rust lifetimes', updatedAt: 20 },
      { id: 3, title: 'Sourdough starter schedule', updatedAt: 10 },
    ];
    const stats = { promptTokens: 31, cachedTokens: 0, completionTokens: 58, ttftMs: 142, decodeTps: 41.73 };
    const history = [
      { id: 11, chatId: 1, role: 'user', content: 'Plan a slow, cozy Saturday evening at home.', status: 'complete', createdAt: 1, model: null, stats: null },
      { id: 12, chatId: 1, role: 'assistant', content: REPLY_MD, status: 'complete', createdAt: 2, model: MODEL.name, stats },
      { id: 13, chatId: 1, role: 'user', content: 'Make the poem about rain.', status: 'complete', createdAt: 3, model: null, stats: null },
      {
        id: 14, chatId: 1, role: 'assistant', content: 'Soft rain on the roof,\nthe kettle begins to', status: 'stopped', createdAt: 4, model: MODEL.name,
        stats: { ...stats, completionTokens: 9, decodeTps: 39.2 },
      },
    ];
    for (const colorScheme of ['light', 'dark']) {
      const { page, context, problems } = await openApp({ chats, messages: history });
      try {
        await page.emulateMedia({ colorScheme });
        await waitForStatus(lastAssistant(page), 'stopped');
        await page.getByTestId('composer').fill('What should I cook?');
        await page.waitForTimeout(300); // let hover/focus transitions settle
        const file = `${RESULTS}/chat${colorScheme === 'dark' ? '-dark' : ''}.png`;
        await page.screenshot({ path: file });
        assert.ok(existsSync(file));
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    }
    // Empty state of a fresh install.
    const { page, context } = await openApp({ model: null });
    try {
      await page.getByText('No model loaded').waitFor();
      await page.screenshot({ path: `${RESULTS}/empty.png` });
    } finally {
      await context.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Decoding settings panel

async function openSettings(page) {
  await page.getByTestId('open-settings').click();
  await page.getByTestId('settings-panel').waitFor();
  await page.getByTestId('field-topP').waitFor();
}

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
      assert.equal(calls.filter((c) => c.cmd === 'get_sampling').length, 1);

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

      await page.getByTestId('preset-creative').click();
      assert.equal(await fieldValue(page, 'temperature'), '1.1');
      assert.equal(await fieldValue(page, 'topK'), '0');
      assert.equal(await page.getByTestId('preset-creative').getAttribute('aria-pressed'), 'true');
      assert.equal(await page.getByTestId('field-seed').count(), 0, 'a preset applies over the defaults: seed is random again');
      await waitForSave(page, (p) => p.temperature === 1.1);
      const creative = (await samplingSaves(page)).at(-1);
      assert.deepEqual(
        [creative.temperature, creative.topP, creative.minP, creative.topK, creative.xtcProbability, creative.xtcThreshold, creative.dryMultiplier],
        [1.1, 0.98, 0.02, 0, 0.5, 0.1, 0.8],
      );
      assert.deepEqual([creative.stop, creative.seed, creative.repeatPenalty], [[], null, 1]);

      await page.getByTestId('reset-temperature').click();
      assert.equal(await fieldValue(page, 'temperature'), '0.8');
      assert.equal(await page.getByTestId('reset-temperature').isDisabled(), true);
      assert.equal(await page.getByTestId('preset-creative').getAttribute('aria-pressed'), 'false');
      await waitForSave(page, (p) => p.temperature === 0.8 && p.topP === 0.98);

      await page.getByTestId('preset-precise').click();
      assert.equal(await fieldValue(page, 'temperature'), '0.2');
      assert.equal(await fieldValue(page, 'repeatPenalty'), '1.05');
      await page.getByTestId('reset-all').click();
      assert.equal(await fieldValue(page, 'temperature'), '0.8');
      assert.equal(await fieldValue(page, 'topP'), '0.95');
      assert.equal(await page.getByTestId('reset-all').isDisabled(), true);
      assert.equal(await page.getByTestId('preset-balanced').getAttribute('aria-pressed'), 'true');
      await waitForSave(page, (p) => p.temperature === 0.8 && p.topP === 0.95 && p.repeatPenalty === 1);

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

  test('settings screenshots (light and dark)', { timeout: TIMEOUT }, async () => {
    const chats = [{ id: 1, title: 'Weekend by the fire', updatedAt: 30 }];
    const history = [
      { id: 11, chatId: 1, role: 'user', content: 'Plan a slow, cozy Saturday evening at home.', status: 'complete', createdAt: 1, model: null, stats: null },
      { id: 12, chatId: 1, role: 'assistant', content: REPLY_MD, status: 'complete', createdAt: 2, model: MODEL.name, stats: null },
    ];
    for (const colorScheme of ['light', 'dark']) {
      const { page, context, problems } = await openApp({ chats, messages: history }, { colorScheme });
      try {
        await openSettings(page);
        await page.getByTestId('field-temperature').fill('0.7');
        await page.getByTestId('field-topP').fill('0.9');
        await waitForSave(page, (p) => p.topP === 0.9);
        await page.getByTestId('field-topP').blur();
        await page.mouse.move(600, 400);
        await page.waitForTimeout(250);
        const file = `${RESULTS}/settings${colorScheme === 'dark' ? '-dark' : ''}.png`;
        await page.screenshot({ path: file });
        assert.ok(existsSync(file));
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    }
  });
});
