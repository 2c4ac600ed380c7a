// Browser tests of the settings' scopes (global, this model, this chat), user presets and the Model group:
// load settings and reload, the chats' caches and their budgets, the idle unload.
// Run with `npm run test:browser` or `node --test tests/browser/settings-model.test.mjs`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MODEL, OUTPUT, TIMEOUT, askInChat, inBothSchemes, lastAssistant, mockState, shot, useBrowser, waitForStatus, withApp } from './harness.mjs';
import { CONTRACT } from '../contract.mjs';
import { fieldValue, openSettings, text, waitForSave } from './chat-helpers.mjs';

useBrowser();

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

      // Other machines' devices: one host:port a line (commas and spaces also part them), blanks dropped.
      await group.getByTestId('field-rpcServers').fill('192.168.1.20:50052\n  gpu-box.local:50052, \n');
      await page.waitForFunction(() => window.__hearthMock.loadSaves.at(-1)?.rpcServers?.length === 2);
      assert.deepEqual((await mockValue(page, 'loadSaves')).at(-1).rpcServers, ['192.168.1.20:50052', 'gpu-box.local:50052']);

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

  test('model: the GPU is auto or pinned among the GPUs found; a pinned one gone is marked', { timeout: TIMEOUT }, async () => {
    const gpu = (name, description) => ({ name, description, backend: 'CUDA', kind: 'gpu', freeBytes: 24e9, totalBytes: 25e9 });
    const devices = {
      devices: [
        gpu('CUDA0', 'NVIDIA GeForce RTX 4090'),
        gpu('CUDA1', 'NVIDIA GeForce RTX 3060'),
        { name: 'RPC0', description: '192.168.1.20:50052', backend: 'RPC', kind: 'gpu', freeBytes: 8e9, totalBytes: 8e9 },
        { name: 'CPU', description: 'AMD EPYC', backend: 'CPU', kind: 'cpu', freeBytes: 24e9, totalBytes: 25e9 },
      ],
      problems: [],
    };
    await withApp({ devices }, async (page) => {
      await openSettings(page);
      const group = await showModelGroup(page);
      const select = group.getByTestId('field-device');
      await select.locator('option[value="CUDA1"]').waitFor({ state: 'attached' });
      // This machine's GPUs only: the CPU is GPU layers 0, another machine's device an RPC server.
      assert.deepEqual(await select.locator('option').allTextContents(), [
        'Auto (the first found)',
        'NVIDIA GeForce RTX 4090 (CUDA0)',
        'NVIDIA GeForce RTX 3060 (CUDA1)',
      ]);
      assert.equal(await select.inputValue(), 'auto');
      await select.selectOption('CUDA1');
      await page.waitForFunction(() => window.__hearthMock.loadSaves.at(-1)?.device === 'CUDA1');
      await group.getByTestId('reload-notice').waitFor();
      await select.selectOption('auto');
      await page.waitForFunction(() => window.__hearthMock.loadSaves.at(-1)?.device === null);
    });
    await inBothSchemes({ devices, load: { device: 'Vulkan3' } }, async (page) => {
      await openSettings(page);
      const group = await showModelGroup(page);
      const select = group.getByTestId('field-device');
      await select.locator('option[value="Vulkan3"]', { hasText: 'Vulkan3 (not found)' }).waitFor({ state: 'attached' });
      assert.equal(await select.inputValue(), 'Vulkan3');
      await group.getByTestId('setting-device').scrollIntoViewIfNeeded();
      await shot(page, 'settings-model-device', { dir: OUTPUT });
    });
  });

  test('model: the image projector is auto (the one beside the model) or one of those beside it, chosen by hand', { timeout: TIMEOUT }, async () => {
    const f16 = '/home/me/models/mmproj-Llama-3.2-3B-F16.gguf';
    const q8 = '/home/me/models/mmproj-Llama-3.2-3B-Q8_0.gguf';
    await inBothSchemes({ model: { ...MODEL, projectors: [f16, q8] }, reloadMs: 300 }, async (page) => {
      await openSettings(page);
      const group = await showModelGroup(page);
      const select = group.getByTestId('field-projector');
      assert.deepEqual(await select.locator('option').allTextContents(), [
        'Auto (the one beside the model)',
        'mmproj-Llama-3.2-3B-F16.gguf',
        'mmproj-Llama-3.2-3B-Q8_0.gguf',
      ]);
      assert.equal(await text(group.getByTestId('note-projector')), 'In use: Auto (mmproj-Llama-3.2-3B-F16.gguf)');
      await select.selectOption(q8);
      await page.waitForFunction((path) => window.__hearthMock.loadSaves.at(-1)?.projector === path, q8);
      assert.equal(await text(group.getByTestId('note-projector')), 'In use until reload: Auto (mmproj-Llama-3.2-3B-F16.gguf)');
      await group.getByTestId('setting-projector').scrollIntoViewIfNeeded();
      await shot(page, 'settings-model-projector', { dir: OUTPUT });
      await group.getByTestId('reload-model').click();
      await group.getByTestId('reloaded').waitFor();
      assert.equal(await text(group.getByTestId('note-projector')), 'In use: mmproj-Llama-3.2-3B-Q8_0.gguf');
    });
  });

  test('model: an image\'s tokens are the projector\'s own, or bounded by hand', { timeout: TIMEOUT }, async () => {
    await inBothSchemes({ model: { ...MODEL, projector: '/home/me/models/mmproj-Qwen2.5-VL-7B-F16.gguf' } }, async (page) => {
      await openSettings(page);
      const group = await showModelGroup(page);
      for (const key of ['imageMinTokens', 'imageMaxTokens']) {
        assert.equal(await text(group.getByTestId(`default-${key}`)), "Default auto (the projector's own)");
      }
      await group.getByTestId('mode-imageMaxTokens-custom').click();
      assert.equal(await fieldValue(page, 'imageMaxTokens'), '1024', 'Custom starts at a page of text');
      await page.getByTestId('field-imageMaxTokens').fill('768');
      await page.waitForFunction(() => window.__hearthMock.loadSaves.at(-1)?.imageMaxTokens === 768);
      assert.equal(await text(group.getByTestId('note-imageMaxTokens')), "In use until reload: Auto (the projector's own)");
      await group.getByTestId('reload-notice').filter({ hasText: 'Reload the model to apply' }).waitFor();
      await group.getByTestId('setting-imageMaxTokens').scrollIntoViewIfNeeded();
      await shot(page, 'settings-model-image-tokens', { dir: OUTPUT });
      await group.getByTestId('mode-imageMaxTokens-auto').click();
      await page.waitForFunction(() => window.__hearthMock.loadSaves.at(-1)?.imageMaxTokens === null);
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
      await group.getByTestId('field-rpcServers').fill('192.168.1.20:50052');
      await group.getByTestId('field-rpcServers').scrollIntoViewIfNeeded();
      await shot(page, `settings-model-end`);
    });
  });
});
