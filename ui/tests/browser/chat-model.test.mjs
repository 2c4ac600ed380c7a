// Browser tests of each chat's own local model: opening a chat that talks to another model loads it with
// its progress where the model is named (a later open wins), picking a library model for a chat in the
// header's menu, the model manager's Load binding it to the chat on show, a chat whose model file is gone
// (words, marked, still usable), a turn whose model was unloaded while idle loading it first, the idle
// unload shown at once (watch_model), and what the model and the chats' caches take in memory.
// Run with `npm run test:browser`; screenshots go to tests/browser/output/ (chatmodel-*.png) and /tmp (memory-*.png).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MODEL, OUTPUT, PHI, QWEN_05, TIMEOUT, askInChat, inBothSchemes, lastAssistant, mockState, shot, useBrowser, waitForStatus, withApp } from './harness.mjs';

useBrowser();

const QWEN_NAME = 'qwen2.5-0.5b-instruct-q8_0';
const PHI_NAME = 'Phi-3.5-mini-instruct-Q4_K_M';
const GONE = '/home/me/models/Mistral-7B-Instruct-v0.3-Q4_K_M.gguf';
const GONE_WORDS = `this chat talks to Mistral-7B-Instruct-v0.3-Q4_K_M, whose file is gone (${GONE}); pick another model for it with the model button`;
const local = (model) => ({ kind: 'local', model });

/** "Soup" talks to the loaded model, "Rust" to Qwen, "Bread" to a file that is gone, "Poems" to a provider. */
const CHATS = {
  chats: [
    { id: 1, title: 'Soup for tonight', updatedAt: 40, model: local(MODEL.path) },
    { id: 2, title: 'Explain Rust lifetimes', updatedAt: 30, model: local(QWEN_05) },
    { id: 3, title: 'Sourdough starter', updatedAt: 20, model: local(GONE), modelName: 'Mistral-7B-Instruct-v0.3-Q4_K_M' },
    { id: 4, title: 'Poems', updatedAt: 10, model: { kind: 'remote', provider: 'openai', model: 'gpt-4o-mini' } },
  ],
  messages: [
    { id: 11, chatId: 1, role: 'user', content: 'Something with leeks?', status: 'complete', createdAt: 1, model: null, stats: null },
    { id: 12, chatId: 1, role: 'assistant', content: 'Leek and potato soup.', status: 'complete', createdAt: 2, model: MODEL.name, stats: null },
  ],
  keys: { openai: 'sk-live-1234' },
  defaultReply: { text: 'Noted.', chunkSize: 3, delayMs: 5 },
};

const text = async (locator) => (await locator.textContent()).trim();
const callsOf = async (page, cmd) => (await mockState(page)).calls.filter((c) => c.cmd === cmd).map((c) => c.payload);
const mock = (page, key) => page.evaluate((k) => window.__hearthMock[k], key);
const switcher = (page) => page.getByTestId('model-switcher');
const localOption = (page, path) => page.locator(`[data-testid="model-option"][data-provider="local"][data-path="${path}"]`);

async function openChat(page, title) {
  await page.getByTestId('chat-item').filter({ hasText: title }).click();
  await page.getByTestId('chat-title').filter({ hasText: title }).waitFor();
}

async function openMenu(page) {
  await switcher(page).click();
  await page.getByTestId('model-menu').waitFor();
}

const PATH_OF = { [MODEL.name]: MODEL.path, [QWEN_NAME]: QWEN_05, [PHI_NAME]: PHI };

/** Waits until the header says the model of the chat on show is loaded, named `name`. The header names a chat's
 *  model as soon as the chat opens, before its load starts: the load itself is waited for first. */
async function loadedInHeader(page, name) {
  await page.waitForFunction((path) => window.__hearthMock.model?.path === path, PATH_OF[name]);
  await page.getByTestId('model-loading').waitFor({ state: 'detached' });
  await switcher(page).filter({ hasText: name }).waitFor();
}

describe('Opening a chat loads its model', () => {
  test('with its progress in the header and the composer; the chat that talks to the loaded one loads nothing', { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHATS, loadStepMs: 200 }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Soup for tonight' }).waitFor();
      await switcher(page).filter({ hasText: MODEL.name }).waitFor();
      assert.equal(await page.getByTestId('model-loading').count(), 0);

      await openChat(page, 'Explain Rust lifetimes');
      await page.getByTestId('model-loading').waitFor();
      assert.equal(await text(page.getByTestId('model-name')), QWEN_NAME);
      await page.waitForFunction(() => Number(document.querySelector('[data-testid="model-loading"]')?.textContent.replace('%', '')) >= 35);
      assert.match(await page.getByTestId('composer').getAttribute('placeholder'), new RegExp(`^Loading ${QWEN_NAME}… \\d+%$`));
      assert.match(await switcher(page).getAttribute('title'), new RegExp(`^Loading ${QWEN_NAME}… \\d+%$`));
      await loadedInHeader(page, QWEN_NAME);
      assert.equal(await page.getByTestId('composer').getAttribute('placeholder'), `Message ${QWEN_NAME}`);
      assert.equal((await mock(page, 'model')).path, QWEN_05);
      assert.deepEqual((await callsOf(page, 'load_chat_model')).map((p) => p.chatId), [1, 2]);

      // Back: the first chat's model loads again; a remote chat loads nothing.
      await openChat(page, 'Soup for tonight');
      await loadedInHeader(page, MODEL.name);
      assert.equal((await mock(page, 'model')).path, MODEL.path);
      await openChat(page, 'Poems');
      await switcher(page).filter({ hasText: 'gpt-4o-mini · OpenAI' }).waitFor();
      assert.deepEqual((await callsOf(page, 'load_chat_model')).map((p) => p.chatId), [1, 2, 1]);
      assert.deepEqual(await mock(page, 'turnLoads'), []);
    });
  });

  test('switching chats quickly: the last chat opened gets its model, and no other chat shows its load', { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHATS, loadStepMs: 150 }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Soup for tonight' }).waitFor();
      await openChat(page, 'Explain Rust lifetimes');
      await page.getByTestId('model-loading').waitFor();
      await openChat(page, 'Poems');
      await openChat(page, 'Soup for tonight');
      // What the header says from now on, until the chat's model is loaded again.
      const seen = await page.evaluate(async (path) => {
        const said = new Set();
        const loads = () => window.__hearthMock.calls.filter((c) => c.cmd === 'load_chat_model').length;
        const loading = () => document.querySelector('[data-testid="model-loading"]') !== null;
        while (loads() < 3 || loading() || window.__hearthMock.model?.path !== path) {
          said.add(document.querySelector('[data-testid="model-switcher"]').textContent.trim());
          await new Promise((r) => setTimeout(r, 20));
        }
        return [...said];
      }, MODEL.path);
      assert.ok(seen.every((s) => !s.includes('qwen')), `the header of "Soup" never names Qwen: ${JSON.stringify(seen)}`);
      await loadedInHeader(page, MODEL.name);
      assert.equal((await mock(page, 'model')).path, MODEL.path);
      assert.deepEqual((await callsOf(page, 'load_chat_model')).map((p) => p.chatId), [1, 2, 1]);
    });
  });
});

describe("Picking a chat's local model", () => {
  test("the header's menu lists the library, the chat's model checked; a pick loads it for this chat", { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHATS, loadStepMs: 150 }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Soup for tonight' }).waitFor();
      await openMenu(page);
      await localOption(page, PHI).waitFor();
      const listed = await page.locator('[data-testid="model-option"][data-provider="local"]').evaluateAll((els) =>
        els.map((e) => [e.dataset.model, e.getAttribute('aria-checked'), e.disabled, e.querySelector('.option-note')?.textContent.trim() ?? '']),
      );
      assert.deepEqual(listed, [
        [MODEL.name, 'true', false, '2.0 GB · loaded'],
        [QWEN_NAME, 'false', false, '675.7 MB'],
        [PHI_NAME, 'false', false, '2.4 GB'],
        ['TinyStories-33M-F16', 'false', false, '137.9 MB'],
        ['broken', 'false', true, '4.1 KB · unreadable'],
      ]);

      await localOption(page, PHI).click();
      await page.getByTestId('model-menu').waitFor({ state: 'detached' });
      await page.getByTestId('model-loading').waitFor();
      assert.equal(await text(page.getByTestId('model-name')), PHI_NAME);
      // The menu shows the load too, with Cancel.
      await openMenu(page);
      await page.getByTestId('model-menu').getByTestId('load-progress').waitFor();
      await page.keyboard.press('Escape');
      await loadedInHeader(page, PHI_NAME);
      assert.deepEqual((await callsOf(page, 'use_local_model')).map(({ chatId, path }) => ({ chatId, path })), [{ chatId: 1, path: PHI }]);
      assert.deepEqual((await mock(page, 'chats')).find((c) => c.id === 1).model, local(PHI));
      assert.equal((await mock(page, 'model')).path, PHI);

      // The chat remembers it: away and back, Phi is loaded again for it.
      await openChat(page, 'Explain Rust lifetimes');
      await loadedInHeader(page, QWEN_NAME);
      await openChat(page, 'Soup for tonight');
      await loadedInHeader(page, PHI_NAME);
      await openMenu(page);
      assert.equal(await localOption(page, PHI).getAttribute('aria-checked'), 'true');
      assert.equal(await localOption(page, MODEL.path).getAttribute('aria-checked'), 'false');
    });
  });

  const managerLoads = [
    ['with a local chat open, the model becomes its model', 'Soup for tonight', 'use_local_model', local(PHI)],
    ['with a remote chat open, it is only loaded', 'Poems', 'load_model', CHATS.chats[3].model],
  ];
  for (const [name, title, command, chatModel] of managerLoads) {
    test(`the model manager's Load: ${name}`, { timeout: TIMEOUT }, async () => {
      await withApp(CHATS, async (page) => {
        await openChat(page, title);
        await page.getByTestId('open-models').click();
        const row = page.locator(`[data-testid="library-model"][data-path="${PHI}"]`);
        await row.getByTestId('load-model').click();
        await row.getByTestId('loaded-badge').waitFor();
        assert.equal((await callsOf(page, command)).length, 1);
        assert.equal((await mock(page, 'model')).path, PHI);
        const id = CHATS.chats.find((c) => c.title === title).id;
        assert.deepEqual((await mock(page, 'chats')).find((c) => c.id === id).model, chatModel);
      });
    });
  }
});

describe('A chat whose model file is gone', () => {
  test('says so in words, on the banner, the button and in the menu; the loaded model stays; another model fixes it', { timeout: TIMEOUT }, async () => {
    await withApp(CHATS, async (page) => {
      await openChat(page, 'Sourdough starter');
      const banner = page.getByTestId('error-text');
      await banner.filter({ hasText: 'whose file is gone' }).waitFor();
      assert.equal(await text(banner), GONE_WORDS);
      await switcher(page).and(page.locator('.missing')).waitFor();
      assert.equal(await switcher(page).getAttribute('title'), `Mistral-7B-Instruct-v0.3-Q4_K_M: ${GONE_WORDS}`);
      assert.equal((await mock(page, 'model')).path, MODEL.path);

      await openMenu(page);
      assert.equal(await text(page.getByTestId('model-menu-problem')), `T${GONE_WORDS.slice(1)}`);
      const gone = localOption(page, GONE);
      await gone.filter({ hasText: 'missing' }).waitFor();
      assert.equal(await gone.getAttribute('aria-checked'), 'true');
      assert.equal(await gone.isDisabled(), true);

      // Still usable: another model for it.
      await localOption(page, QWEN_05).click();
      await loadedInHeader(page, QWEN_NAME);
      assert.equal(await switcher(page).evaluate((el) => el.classList.contains('missing')), false);
      await page.getByTestId('composer').fill('How often do I feed it?');
      await page.keyboard.press('Enter');
      await waitForStatus(lastAssistant(page), 'complete');
      assert.equal(await text(lastAssistant(page).getByTestId('message-model')), QWEN_NAME);
    });
  });

  test('a file gone since the menu opened: use_local_model says there is none, and the chat keeps its model', { timeout: TIMEOUT }, async () => {
    await withApp(CHATS, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Soup for tonight' }).waitFor();
      await openMenu(page);
      await localOption(page, PHI).waitFor();
      await page.evaluate((path) => (window.__hearthMock.library = window.__hearthMock.library.filter((m) => m.path !== path)), PHI);
      await localOption(page, PHI).click();
      await page.getByTestId('error-text').filter({ hasText: `there is no model file at ${PHI}` }).waitFor();
      assert.deepEqual((await mock(page, 'chats')).find((c) => c.id === 1).model, local(MODEL.path));
      await switcher(page).filter({ hasText: MODEL.name }).waitFor();
    });
  });
});

describe('A turn whose model was unloaded while idle', () => {
  /** Each turn, started from the chat "Soup for tonight" (its reply is message 12). */
  const turns = [
    ['send', async (page) => {
      await page.getByTestId('composer').fill('And with bacon?');
      await page.keyboard.press('Enter');
    }, 'send_message'],
    ['regenerate', (page) => lastAssistant(page).getByTestId('action-regenerate').click(), 'regenerate_reply'],
  ];
  for (const [name, start, command] of turns) {
    test(`${name}: the chat's model loads first, with its progress, then the turn starts`, { timeout: TIMEOUT }, async () => {
      await withApp({ ...CHATS, loadStepMs: 150 }, async (page) => {
        await page.getByTestId('chat-title').filter({ hasText: 'Soup for tonight' }).waitFor();
        await lastAssistant(page).hover();
        await page.evaluate(() => window.__hearthMock.unloadIdle());
        await start(page);
        await page.getByTestId('model-loading').waitFor();
        assert.equal(await text(page.getByTestId('model-name')), MODEL.name);
        if (name === 'send') {
          await page.getByTestId('message').filter({ hasText: 'And with bacon?' }).waitFor();
          assert.equal(await page.getByTestId('model-loading').count(), 1, 'the message is on show while the model loads');
          await shot(page, 'chatmodel-turn-loading', { dir: OUTPUT, mouse: [300, 600] });
        }
        await waitForStatus(lastAssistant(page).filter({ hasText: CHATS.defaultReply.text }), 'complete');
        // The turn went at once: the backend loaded the chat's model first, its progress on the turn's events.
        const cmds = (await mockState(page)).calls.map((c) => c.cmd);
        assert.equal(cmds.lastIndexOf('load_chat_model'), cmds.indexOf('load_chat_model'), JSON.stringify(cmds));
        assert.ok(cmds.includes(command), JSON.stringify(cmds));
        assert.deepEqual(await mock(page, 'turnLoads'), [MODEL.path], 'the turn loaded it, with progress');
        assert.equal((await mock(page, 'model')).path, MODEL.path);
        assert.equal(await page.getByTestId('model-loading').count(), 0);
      });
    });
  }
});

describe('Memory: the loaded model and the chats\' caches', () => {
  /** Two chats of the loaded model: the one that answered first has its cache put away in RAM (30 MB). */
  const TWO = {
    ...CHATS,
    chats: [...CHATS.chats, { id: 5, title: 'Leftovers', updatedAt: 5, model: local(MODEL.path) }],
  };
  /** The loaded model as the mock has it: its file (1926 MB) and its context of 8192 tokens (256 MB). */
  const HELD = 'weights 1926 MB, context 256 MB';

  async function modelGroup(page) {
    await page.getByTestId('open-settings').click();
    const group = page.getByTestId('model-group');
    await group.getByTestId('memory-parts').waitFor();
    await group.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    return group;
  }
  const memoryLine = async (group) => (await group.getByTestId('memory-usage').innerText()).replace(/\s+/g, ' ').trim();

  test("Settings → Model: the model's weights and context, and the chats' caches in RAM, in all; an idle unload says none is loaded", { timeout: TIMEOUT }, async () => {
    await withApp(TWO, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Soup for tonight' }).waitFor();
      let group = await modelGroup(page);
      await group.getByTestId('memory-parts').filter({ hasText: HELD }).waitFor();
      assert.equal(await memoryLine(group), `In memory 2182 MB ${HELD}`);
      assert.match(await group.getByTestId('memory-usage').getAttribute('title'), /the loaded model's weights .* its context \(the KV cache/);
      await page.getByTestId('close-settings').click();

      // Another chat of the same model answers: the first one's cache is kept in RAM, and counted.
      await askInChat(page, 'Soup for tonight', 'With bacon?');
      await askInChat(page, 'Leftovers', 'Soup again?');
      group = await modelGroup(page);
      await group.getByTestId('cache-ram-usage').filter({ hasText: /^30 MB$/ }).waitFor();
      assert.equal(await memoryLine(group), 'In memory 2212 MB weights 1926 MB, context 256 MB, chat caches 30 MB');
      await shot(page, 'memory-settings', { dir: '/tmp' });

      // Unloaded while idle, with the panel open: said at once, the caches gone to disk.
      await page.evaluate(() => window.__hearthMock.unloadIdle());
      await group.getByTestId('memory-parts').filter({ hasText: /^no model loaded$/ }).waitFor();
      assert.equal(await memoryLine(group), 'In memory none no model loaded');
      await group.getByTestId('cache-disk-usage').filter({ hasText: '60 MB (2 chats)' }).waitFor();
      await group.getByTestId('load-settings-error').filter({ hasText: 'no model is loaded' }).waitFor();
    });
  });

  test('a chat of another model: the model left stays in memory and is counted; going back takes it up at once; 0 MB frees it', { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHATS, loadStepMs: 200 }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Soup for tonight' }).waitFor();
      await openChat(page, 'Explain Rust lifetimes');
      await loadedInHeader(page, QWEN_NAME);
      let group = await modelGroup(page);
      await group.getByTestId('kept-models-usage').filter({ hasText: /^1926 MB$/ }).waitFor();
      assert.match(await memoryLine(group), /, other models 1926 MB$/);
      assert.match(await group.getByTestId('kept-models-budget').getAttribute('aria-label'), /^Memory for other models \(MB\)$/);
      await shot(page, 'memory-kept-model', { dir: '/tmp' });
      await page.getByTestId('close-settings').click();

      // Back to the first chat: its model comes from memory (no load steps), and Qwen is kept in its place.
      await openChat(page, 'Soup for tonight');
      await loadedInHeader(page, MODEL.name);
      assert.equal((await mock(page, 'model')).fromMemory, true);
      group = await modelGroup(page);
      await group.getByTestId('kept-models-usage').filter({ hasText: /^\d+ MB$/ }).waitFor();
      assert.doesNotMatch(await text(group.getByTestId('kept-models-usage')), /^1926 MB$/);

      // No memory for other models: the kept one leaves at once.
      const box = group.getByTestId('kept-models-budget');
      await box.fill('0');
      await box.press('Enter');
      await group.getByTestId('kept-models-usage').filter({ hasText: /^none$/ }).waitFor();
      assert.deepEqual(await mock(page, 'keptModels'), []);
    });
  });

  test('Settings → Model without a model: none loaded, said so', { timeout: TIMEOUT }, async () => {
    await withApp({ model: null }, async (page) => {
      const group = await modelGroup(page);
      await group.getByTestId('memory-parts').filter({ hasText: /^no model loaded$/ }).waitFor();
      assert.equal(await memoryLine(group), 'In memory none no model loaded');
    });
  });

  test("an idle unload shows at once: the header's dot goes hollow, the menu says nothing is in memory; the next message loads it", { timeout: TIMEOUT }, async () => {
    await withApp({ ...CHATS, loadStepMs: 100 }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Soup for tonight' }).waitFor();
      await switcher(page).filter({ hasText: MODEL.name }).waitFor();
      assert.equal(await switcher(page).evaluate((el) => el.classList.contains('unloaded')), false);
      await openMenu(page);
      assert.equal((await page.getByTestId('model-memory').innerText()).replace(/\s+/g, ' ').trim(), 'In memory: 2.3 GB weights 2.0 GB, context 268.4 MB');
      await page.keyboard.press('Escape');
      const asked = (await callsOf(page, 'active_model')).length;

      await page.evaluate(() => window.__hearthMock.unloadIdle());
      await page.locator('[data-testid="model-switcher"].unloaded').waitFor();
      assert.equal(await text(page.getByTestId('model-name')), MODEL.name, 'the chat still names its model');
      assert.match(await switcher(page).getAttribute('title'), /\(not loaded: it loads at this chat's next reply\)/);
      assert.equal((await callsOf(page, 'active_model')).length, asked, 'told, not asked');
      await shot(page, 'memory-idle-unloaded', { dir: '/tmp', mouse: [300, 600] });
      await openMenu(page);
      await localOption(page, MODEL.path).filter({ hasText: '2.0 GB' }).waitFor();
      assert.equal(await text(localOption(page, MODEL.path).locator('.option-note')), '2.0 GB', 'no longer "loaded"');
      assert.equal(await page.getByTestId('model-memory').count(), 0);
      await page.keyboard.press('Escape');

      // The next message loads the chat's model first, with its progress, and the dot is full again.
      await page.getByTestId('composer').fill('And with bacon?');
      await page.keyboard.press('Enter');
      await page.getByTestId('model-loading').waitFor();
      await waitForStatus(lastAssistant(page).filter({ hasText: CHATS.defaultReply.text }), 'complete');
      await loadedInHeader(page, MODEL.name);
      assert.equal(await switcher(page).evaluate((el) => el.classList.contains('unloaded')), false);
    });
  });

  test('artefacts to look at, screenshots: the Model group and the menu with what is in memory (light and dark)', { timeout: 2 * TIMEOUT }, async () => {
    await inBothSchemes(TWO, async (page) => {
      await askInChat(page, 'Soup for tonight', 'With bacon?');
      await askInChat(page, 'Leftovers', 'Soup again?');
      await openMenu(page);
      await page.getByTestId('model-memory').waitFor();
      // Where the layers are, in the engine's words, and its backend in the header.
      await page.getByTestId('model-device').filter({ hasText: 'On the CPU (AMD EPYC)' }).waitFor();
      assert.equal(await text(page.getByTestId('model-backend')), 'CPU');
      await page.getByTestId('model-option').filter({ hasText: 'gpt-4o-mini' }).first().waitFor();
      await shot(page, `memory-menu`, { dir: '/tmp', mouse: [300, 600] });
      await page.keyboard.press('Escape');
      const group = await modelGroup(page);
      await group.getByTestId('memory-parts').filter({ hasText: 'chat caches 30 MB' }).waitFor();
      await group.getByTestId('device').filter({ hasText: 'AMD EPYC' }).waitFor();
      await shot(page, `memory-settings`, { dir: '/tmp', mouse: [300, 600] });
    });
  });
});

describe('Screenshots', () => {
  test('the device line of a model on a GPU, and one that fell back to the CPU (light and dark)', { timeout: 2 * TIMEOUT }, async () => {
    const gpu = { backend: 'CUDA', device: 'NVIDIA H200', gpuLayers: 30, totalLayers: 30, label: 'NVIDIA H200 (CUDA): all 30 layers' };
    const devices = {
      devices: [
        { name: 'CUDA0', description: 'NVIDIA H200', backend: 'CUDA', kind: 'gpu', freeBytes: 149_557_477_376, totalBytes: 150_109_880_320 },
        { name: 'CPU', description: 'Intel(R) Xeon(R) Processor', backend: 'CPU', kind: 'cpu', freeBytes: 135_148_564_480, totalBytes: 135_148_564_480 },
      ],
      problems: [{ module: 'libggml-vulkan.so', reason: 'cannot be loaded: libvulkan.so.1: cannot open shared object file: No such file or directory' }],
    };
    await inBothSchemes({ ...CHATS, offload: gpu, devices }, async (page) => {
      await loadedInHeader(page, MODEL.name);
      await openMenu(page);
      await page.getByTestId('model-device').filter({ hasText: gpu.label }).waitFor();
      assert.equal(await text(page.getByTestId('model-backend')), 'CUDA');
      await shot(page, `chatmodel-device-gpu`, { dir: OUTPUT, mouse: [300, 600] });
      await page.keyboard.press('Escape');
      await page.getByTestId('open-settings').click();
      const group = page.getByTestId('model-group');
      await group.getByTestId('device').filter({ hasText: 'NVIDIA H200' }).waitFor();
      await group.getByTestId('device-problem').filter({ hasText: 'libvulkan.so.1' }).waitFor();
      await group.getByTestId('devices').evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await shot(page, `chatmodel-devices-settings`, { dir: OUTPUT, mouse: [300, 600] });
    });
    const fellBack = {
      backend: 'CPU', device: 'AMD Ryzen 7 7700', gpuLayers: 0, totalLayers: 32, label: 'On the CPU (AMD Ryzen 7 7700)',
      fallback: 'AMD Radeon RX 6400 (Vulkan) could not hold the model (failed to allocate Vulkan0 buffer of size 2.1 GiB); it runs on the CPU',
    };
    await inBothSchemes({ ...CHATS, offload: fellBack }, async (page) => {
      await loadedInHeader(page, MODEL.name);
      await openMenu(page);
      await page.getByTestId('model-device-fallback').filter({ hasText: 'could not hold the model' }).waitFor();
      await shot(page, `chatmodel-device-fallback`, { dir: OUTPUT, mouse: [300, 600] });
    });
  });

  test('the picker, a chat opening, a file gone (light and dark)', { timeout: 3 * TIMEOUT }, async () => {
    await inBothSchemes({ ...CHATS, loadStepMs: 400 }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Soup for tonight' }).waitFor();
      await openMenu(page);
      await localOption(page, PHI).waitFor();
      await page.getByTestId('model-option').filter({ hasText: 'gpt-4o-mini' }).first().waitFor();
      await shot(page, `chatmodel-picker`, { dir: OUTPUT, mouse: [300, 600] });
      await page.keyboard.press('Escape');

      await openChat(page, 'Explain Rust lifetimes');
      await page.waitForFunction(() => Number(document.querySelector('[data-testid="model-loading"]')?.textContent.replace('%', '')) >= 35);
      await shot(page, `chatmodel-opening`, { dir: OUTPUT, mouse: [300, 600] });
      await openMenu(page);
      await page.getByTestId('model-menu').getByTestId('load-progress').waitFor();
      await shot(page, `chatmodel-opening-menu`, { dir: OUTPUT, mouse: [300, 600] });
      await page.keyboard.press('Escape');
      await loadedInHeader(page, QWEN_NAME);

      await openChat(page, 'Sourdough starter');
      await page.getByTestId('error-text').filter({ hasText: 'whose file is gone' }).waitFor();
      await openMenu(page);
      await page.getByTestId('model-menu-problem').waitFor();
      await shot(page, `chatmodel-missing`, { dir: OUTPUT, mouse: [300, 600] });
    });
  });
});
