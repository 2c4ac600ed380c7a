// Browser tests of the window's keyboard shortcuts (the table in src/lib/keys.ts, one handler in
// App.svelte), and of what a brand-new user is shown first: each empty state says what to do, with
// the action to do it.
// Run with `npm run test:browser`; screenshots go to tests/browser/output/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MODEL, OUTPUT, TIMEOUT, inBothSchemes, lastAssistant, mockState, shot, useBrowser, waitForStatus, withApp } from './harness.mjs';

useBrowser();

const callsOf = async (page, cmd) => (await mockState(page)).calls.filter((c) => c.cmd === cmd);
/** The data-testid of the focused element ('' when none has one). */
const focused = (page) => page.evaluate(() => document.activeElement?.dataset?.testid ?? '');
const settle = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 60)))));

/** A slow reply: time enough to press keys while it streams. */
const SLOW = { text: 'A slow reply that keeps going, word after word, for quite a while yet. '.repeat(6), chunkSize: 3, delayMs: 30 };
/** A chat with a question and its answer, so the composer is not the only thing on screen. */
const CHAT = {
  chats: [{ id: 1, title: 'Soup', updatedAt: 10 }],
  messages: [
    { id: 1, chatId: 1, role: 'user', content: 'A soup for tonight?', status: 'complete', createdAt: 1, model: null, stats: null },
    { id: 2, chatId: 1, role: 'assistant', content: 'Leek and potato.', status: 'complete', createdAt: 2, model: MODEL.name, stats: null },
  ],
};

/** Send `text` in the open chat and wait until the reply has begun to stream. */
async function startStreaming(page, text = 'Tell me more') {
  await page.getByTestId('composer').fill(text);
  await page.keyboard.press('Enter');
  await page.getByTestId('stop').waitFor();
  await page.waitForFunction(() => {
    const replies = document.querySelectorAll('[data-role="assistant"]');
    return replies[replies.length - 1]?.dataset.status === 'streaming' && replies[replies.length - 1].textContent.length > 8;
  });
}

describe('Keyboard shortcuts', () => {
  test('Ctrl+Shift+O and Ctrl+N start a new chat with the composer focused', { timeout: TIMEOUT }, async () => {
    await withApp(CHAT, async (page) => {
      await page.getByTestId('search-input').focus();
      await page.keyboard.press('Control+Shift+O');
      await page.getByTestId('empty-chat').waitFor();
      assert.equal((await callsOf(page, 'create_chat')).length, 1);
      assert.equal(await focused(page), 'composer');
      assert.equal(await page.getByTestId('chat-item').count(), 2);

      await page.getByTestId('open-settings').focus();
      await page.keyboard.press('Control+n');
      await page.waitForFunction(() => window.__hearthMock.calls.filter((c) => c.cmd === 'create_chat').length === 2);
      await settle(page);
      assert.equal(await focused(page), 'composer');
    });
  });

  test('Shift+Esc focuses the composer from anywhere; / only from outside text fields', { timeout: TIMEOUT }, async () => {
    await withApp(CHAT, async (page) => {
      const composer = page.getByTestId('composer');
      await page.getByTestId('search-input').fill('soup');
      await page.keyboard.press('Shift+Escape');
      assert.equal(await focused(page), 'composer');

      await page.getByTestId('open-settings').focus();
      await page.keyboard.press('/');
      assert.equal(await focused(page), 'composer');
      assert.equal(await composer.inputValue(), '', 'the "/" that moved focus is not typed');

      // In a text field "/" is a character.
      await page.keyboard.type('a/b');
      assert.equal(await composer.inputValue(), 'a/b');
      await page.getByTestId('search-input').fill('');
      await page.getByTestId('search-input').focus();
      await page.keyboard.press('/');
      assert.equal(await page.getByTestId('search-input').inputValue(), '/');
      assert.equal(await focused(page), 'search-input');
    });
  });

  test('Ctrl+K focuses search, Ctrl+, opens the settings; tooltips name the shortcuts', { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHAT, replies: [SLOW] }, async (page) => {
      await page.keyboard.press('Control+k');
      assert.equal(await focused(page), 'search-input');

      await page.keyboard.press('Control+,');
      await page.getByTestId('settings-panel').waitFor();
      // While a drawer is open the window's shortcuts are off: the drawer has the keyboard.
      await page.keyboard.press('Control+Shift+O');
      await settle(page);
      assert.equal((await callsOf(page, 'create_chat')).length, 0);
      await page.keyboard.press('Escape');
      await page.getByTestId('settings-panel').waitFor({ state: 'detached' });

      assert.equal(await page.getByTestId('new-chat').getAttribute('title'), 'New chat (Ctrl+Shift+O)');
      assert.equal(await page.getByTestId('open-settings').getAttribute('title'), 'Settings (Ctrl+,)');
      await startStreaming(page);
      assert.equal(await page.getByTestId('stop').getAttribute('title'), 'Stop generating (Esc)');
    });
  });

  test('Ctrl+/ opens the shortcuts help listing every shortcut; Esc and × close it and focus returns', { timeout: TIMEOUT }, async () => {
    await withApp(CHAT, async (page) => {
      const help = page.getByTestId('shortcuts-help');
      await page.getByTestId('composer').focus();
      await page.keyboard.press('Control+/');
      await help.waitFor();
      assert.equal(await focused(page), 'shortcuts-help');
      const rows = await help.locator('.row').evaluateAll((els) =>
        els.map((el) => [el.querySelector('dt').textContent, [...el.querySelectorAll('kbd')].map((k) => k.textContent)]),
      );
      assert.deepEqual(rows, [
        ['New chat', ['Ctrl+Shift+O', 'Ctrl+N']],
        ['Focus the message box', ['Shift+Esc', '/']],
        ['Stop the reply being written', ['Esc']],
        ['Search messages', ['Ctrl+K']],
        ['Settings', ['Ctrl+,']],
        ['Keyboard shortcuts', ['Ctrl+/']],
      ]);
      await page.keyboard.press('Escape');
      await help.waitFor({ state: 'detached' });
      assert.equal(await focused(page), 'composer');

      // From the search box, closed with its button: focus goes back to the search box.
      await page.getByTestId('search-input').focus();
      await page.keyboard.press('Control+/');
      await help.waitFor();
      await page.getByTestId('shortcuts-close').click();
      await help.waitFor({ state: 'detached' });
      assert.equal(await focused(page), 'search-input');
      // Ctrl+/ again closes it too.
      await page.keyboard.press('Control+/');
      await help.waitFor();
      await page.keyboard.press('Control+/');
      await help.waitFor({ state: 'detached' });
    });
    await inBothSchemes(CHAT, async (page) => {
      await page.keyboard.press('Control+/');
      await page.getByTestId('shortcuts-help').waitFor();
      await shot(page, `shortcuts-help`, { dir: OUTPUT });
    });
  });

  test('Esc stops a streaming reply (from the composer or the page), not during IME composition', { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHAT, replies: [SLOW, SLOW] }, async (page) => {
      await startStreaming(page);
      // An Escape that ends an IME composition belongs to the composition.
      await page.getByTestId('composer').dispatchEvent('keydown', { key: 'Escape', isComposing: true, bubbles: true });
      await settle(page);
      assert.equal((await callsOf(page, 'stop_generation')).length, 0);

      assert.equal(await focused(page), 'composer');
      await page.keyboard.press('Escape');
      await waitForStatus(lastAssistant(page), 'stopped');
      const stops = await callsOf(page, 'stop_generation');
      assert.deepEqual(stops.map((c) => c.payload), [{ chatId: 1 }]);

      // Focus outside any text field: Esc still stops.
      await startStreaming(page, 'Again');
      await page.getByTestId('chat-title').click();
      await page.keyboard.press('Escape');
      await waitForStatus(lastAssistant(page), 'stopped');
      assert.equal((await callsOf(page, 'stop_generation')).length, 2);
      // Without a reply streaming Esc does nothing.
      await page.keyboard.press('Escape');
      await settle(page);
      assert.equal((await callsOf(page, 'stop_generation')).length, 2);
    });
  });

  test('Esc that closes a drawer, the help or a menu does not also stop the reply', { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHAT, replies: [{ ...SLOW, delayMs: 45 }] }, async (page) => {
      await startStreaming(page);
      await page.keyboard.press('Control+,');
      await page.getByTestId('settings-panel').waitFor();
      await page.keyboard.press('Escape');
      await page.getByTestId('settings-panel').waitFor({ state: 'detached' });

      await page.getByTestId('open-models').click();
      await page.getByTestId('models-panel').waitFor();
      await page.keyboard.press('Escape');
      await page.getByTestId('models-panel').waitFor({ state: 'detached' });

      await page.keyboard.press('Control+/');
      await page.getByTestId('shortcuts-help').waitFor();
      await page.keyboard.press('Escape');
      await page.getByTestId('shortcuts-help').waitFor({ state: 'detached' });

      await page.getByTestId('search-input').fill('soup');
      await page.keyboard.press('Escape'); // clears the query
      await page.keyboard.press('Escape'); // leaves the box

      await settle(page);
      assert.equal(await lastAssistant(page).getAttribute('data-status'), 'streaming', 'still streaming');
      await waitForStatus(lastAssistant(page), 'complete');
      assert.equal((await callsOf(page, 'stop_generation')).length, 0);
    });
  });
});

/** A fresh install: no model loaded, no chats, a GPU with 8 GB free (the starter fixture's reason). */
const FRESH = { model: null, freeVramBytes: 8e9 };

/** The tab shown in the drawer `panel`. */
const selectedTab = (page, panel) => page.getByTestId(panel).locator('[role="tab"][aria-selected="true"]').getAttribute('data-testid');

describe('Empty states', () => {
  test('a fresh install (no model, no chats) offers the model for this machine, a file, or an API key', { timeout: TIMEOUT }, async () => {
    await withApp(FRESH, async (page) => {
      const welcome = page.getByTestId('welcome');
      await welcome.getByText('Welcome to Hearth').waitFor();
      // The backend's recommendation, its quantization's size from the hub, and its fit here.
      const starter = page.getByTestId('starter');
      await starter.getByTestId('starter-name').getByText('Qwen2.5 7B Instruct').waitFor();
      await starter.getByText("It fits in your GPU's 8.0 GB free").waitFor();
      await page.getByTestId('starter-fit').getByText('Fits in memory').waitFor();
      assert.deepEqual((await callsOf(page, 'hub_fit'))[0].payload, { repo: 'Qwen/Qwen2.5-7B-Instruct-GGUF', file: 'qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf', contextLength: null });
      await page.getByTestId('empty-get-model').click();
      await page.getByTestId('models-panel').waitFor();
      assert.equal(await selectedTab(page, 'models-panel'), 'models-tab-library');
      await page.keyboard.press('Escape');
      await page.getByTestId('models-panel').waitFor({ state: 'detached' });

      await page.getByTestId('empty-use-provider').click();
      await page.getByTestId('settings-panel').waitFor();
      assert.equal(await selectedTab(page, 'settings-panel'), 'open-providers');
    });
    await inBothSchemes(FRESH, async (page) => {
      await page.getByTestId('starter-fit').waitFor();
      await shot(page, `empty-fresh-install`, { dir: OUTPUT });
    });
  });

  test('the welcome screen downloads its model with progress, loads it, and a chat can start', { timeout: TIMEOUT }, async () => {
    await withApp({ ...FRESH, downloadTickMs: 120 }, async (page) => {
      await page.getByTestId('starter-download').getByText('Download 4.7 GB and start').click();
      const card = page.getByTestId('starter').getByTestId('download');
      await card.getByTestId('download-detail').getByText(/ of /).waitFor();
      await shot(page, 'welcome-downloading', { dir: OUTPUT });
      // Done: loaded without another click, and the welcome gives way to the chats.
      await page.getByTestId('no-chats').getByText('No chats yet', { timeout: 20_000 }).waitFor({ timeout: 20_000 });
      const loads = await callsOf(page, 'load_model');
      assert.equal(loads.length, 1);
      assert.match(loads[0].payload.path, /qwen2\.5-7b-instruct-q4_k_m-00001-of-00002\.gguf$/);
      await page.getByTestId('empty-new-chat').click();
      await page.getByTestId('empty-chat').getByText('Say hello to').waitFor();
    });
  });

  test('offline, the welcome screen says so and tries again; a file the user has is imported and loaded', { timeout: TIMEOUT }, async () => {
    await withApp({ ...FRESH, hubOffline: true }, async (page) => {
      const starter = page.getByTestId('starter');
      await starter.getByTestId('starter-offline').getByText("Hugging Face can't be reached").waitFor();
      assert.equal(await page.getByTestId('starter-download').count(), 0, 'nothing to download offline');
      // Try again asks the hub again; still offline, it says so again.
      await starter.getByTestId('starter-retry').click();
      await page.waitForFunction(() => window.__hearthMock.calls.filter((c) => c.cmd === 'hub_repo_files').length === 2);
      await starter.getByTestId('starter-offline').waitFor();
      // Back online: Try again finds the model and its fit.
      await page.evaluate(() => (window.__hearthMock.hubOffline = false));
      await starter.getByTestId('starter-retry').click();
      await page.getByTestId('starter-fit').waitFor();

      await page.getByTestId('welcome-import').click();
      await page.getByTestId('no-chats').getByText('No chats yet').waitFor();
      const loads = await callsOf(page, 'load_model');
      assert.deepEqual(loads.map((l) => l.payload.path), ['/home/me/Downloads/gemma-2-2b-it-Q4_K_M.gguf']);
      assert.deepEqual((await callsOf(page, 'import_model_dialog')).map((c) => c.payload), [{ mode: 'link' }]);
    });
    await inBothSchemes({ ...FRESH, hubOffline: true }, async (page) => {
      await page.getByTestId('starter-offline').waitFor();
      await shot(page, 'welcome-offline', { dir: OUTPUT });
    });
  });

  test('a file the welcome screen cannot import is said there', { timeout: TIMEOUT }, async () => {
    await withApp({ ...FRESH, importPick: '/home/me/Downloads/not-a-model.gguf' }, async (page) => {
      await page.getByTestId('starter-fit').waitFor();
      await page.getByTestId('welcome-import').click();
      await page.getByTestId('welcome-problem').waitFor();
      assert.equal(await callsOf(page, 'load_model').then((l) => l.length), 0);
    });
  });

  test('a model but no chats: start one; an empty chat without a model: get one, also from the error', { timeout: TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      await page.getByTestId('no-chats').getByText('No chats yet').waitFor();
      await page.getByTestId('empty-new-chat').click();
      await page.getByTestId('empty-chat').getByText(`Say hello to ${MODEL.name}`).waitFor();
      assert.equal(await page.getByTestId('empty-get-model').count(), 0, 'a model is loaded: nothing to get');
    });
    await withApp({ model: null }, async (page) => {
      await page.keyboard.press('Control+Shift+O');
      const empty = page.getByTestId('empty-chat');
      await empty.getByText('No model is loaded yet').waitFor();
      await shot(page, 'empty-chat-no-model', { dir: OUTPUT });
      // Sending anyway: the error says so and offers the way out.
      await page.getByTestId('composer').fill('hello?');
      await page.keyboard.press('Enter');
      await page.getByTestId('error-banner').waitFor();
      await page.getByTestId('banner-get-model').click();
      await page.getByTestId('models-panel').waitFor();
      await page.keyboard.press('Escape');
      await empty.getByTestId('empty-get-model').click();
      await page.getByTestId('models-panel').waitFor();
    });
  });

  test('a search without results says so and leads back to the chats', { timeout: TIMEOUT }, async () => {
    await withApp(CHAT, async (page) => {
      await page.keyboard.press('Control+k');
      await page.keyboard.type('zebra crossing');
      const none = page.getByTestId('search-empty');
      await none.filter({ hasText: 'No messages match “zebra crossing”. Try other or fewer words.' }).waitFor();
      await shot(page, 'empty-search', { dir: OUTPUT });
      await page.getByTestId('search-empty-clear').click();
      await page.getByTestId('chat-item').first().waitFor();
      assert.equal(await page.getByTestId('search-input').inputValue(), '');
      assert.equal(await focused(page), 'search-input');
    });
  });
});
