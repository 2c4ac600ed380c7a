// Browser tests of remote models: the model switcher in the chat header, the model that wrote each
// reply, the Providers settings (add, edit, keys, test, delete), sampling settings a provider does
// not take, and remote failures with what to do about them (Retry, its countdown, the key's settings).
// Run with `npm run test:browser`; screenshots go to tests/browser/output/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MODEL, OUTPUT, TIMEOUT, inBothSchemes, lastAssistant, mockState, shot, useBrowser, waitForStatus, withApp } from './harness.mjs';

useBrowser();

const MINUTE = 60_000;
const OPENAI_MINI = { kind: 'remote', provider: 'openai', model: 'gpt-4o-mini' };
/** A chat that has not answered locally yet: it talks to the loaded model. */
const LOCAL = { kind: 'local', model: null };
const KEY_FILE = {
  kind: 'file',
  path: '/home/me/.local/share/hearth/provider-keys.json',
  reason: 'The keychain did not answer: org.freedesktop.secrets was not provided by any .service files.',
};
const NO_ANTHROPIC_KEY = 'Anthropic needs an API key: add it in Settings → Providers';
const REFUSED_KEY = 'OpenAI refused the API key (401): Incorrect API key provided: sk-wr**ng. Check the key in Settings → Providers';
const rateLimited = (seconds) => ({
  kind: 'rateLimited',
  message: `OpenAI is rate limiting requests (429); it asks to wait ${seconds} s before retrying: Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3.`,
  retryAfterS: seconds,
});
const UNREACHABLE = {
  kind: 'network',
  message: 'could not reach OpenAI at https://api.openai.com/v1: dns error: failed to lookup address information. Check the network connection and the base URL',
};

/** Chat 1 ("Trip to Lisbon"): a question and the local model's answer; `model` is where its next reply comes from. */
function tripChat(model = LOCAL, over = {}) {
  const at = Date.now() - 30 * MINUTE;
  return {
    chats: [{ id: 1, title: 'Trip to Lisbon', updatedAt: 30, model }],
    messages: [
      { id: 11, chatId: 1, role: 'user', content: 'Three things to see in Lisbon?', status: 'complete', createdAt: at, model: null, stats: null },
      {
        id: 12, chatId: 1, role: 'assistant', content: 'The Alfama, the Belém Tower and a tram ride on the 28.', status: 'complete',
        createdAt: at + MINUTE, model: MODEL.name,
        stats: { promptTokens: 30, cachedTokens: 0, completionTokens: 16, ttftMs: 120, decodeTps: 41.2, droppedMessages: 0, cutAtLimit: false, promptSource: 'new', draftedTokens: 0, acceptedTokens: 0 },
      },
    ],
    keys: { openai: 'sk-live-1234' },
    ...over,
  };
}

/** An OpenAI-compatible server on the local network, with a model typed in. */
const deskServer = (over = {}) => ({
  config: {
    id: 'desk-1', name: 'Desk server', kind: 'openAiCompatible', baseUrl: 'http://192.168.1.20:8080/v1', models: ['qwen2.5-7b-instruct'],
    contextLength: null, extensions: false, tokenizerRepo: null, allowPlainHttp: true, ...over,
  },
  key: null,
});

/** The chat's `n`th reply (1-based) on show. */
const reply = (page, n) => page.locator('[data-testid="message"][data-role="assistant"]').nth(n - 1);
const text = async (locator) => (await locator.textContent()).trim();
const callsOf = async (page, cmd) => (await mockState(page)).calls.filter((c) => c.cmd === cmd).map((c) => c.payload);
const mock = (page, key) => page.evaluate((k) => window.__hearthMock[k], key);
const option = (page, provider, model) => page.locator(`[data-testid="model-option"][data-provider="${provider}"][data-model="${model}"]`);
const card = (page, id) => page.locator(`[data-testid="provider-card"][data-provider="${id}"]`);
const field = (page, key) => page.getByTestId(`setting-${key}`);

/** A provider saved behind the window's back (it reads the list again when the menu or settings open). */
const addProvider = (page, provider) => page.evaluate((p) => window.__hearthMock.providers.push(p), provider);

async function openMenu(page) {
  await page.getByTestId('model-switcher').click();
  await page.getByTestId('model-menu').waitFor();
}

async function send(page, message) {
  await page.getByTestId('composer').fill(message);
  await page.keyboard.press('Enter');
}

async function openProviders(page) {
  await page.getByTestId('open-settings').click();
  await page.getByTestId('open-providers').click();
  await card(page, 'openai').waitFor();
}

describe('Switching a chat between the local model and remote ones', () => {
  test('a local model loaded without a chat template says so in the menu', { timeout: TIMEOUT }, async () => {
    const notice = 'no chat template — using ChatML; choose one in the Model settings';
    await withApp({ ...tripChat(), model: { ...MODEL, notice } }, async (page) => {
      await openMenu(page);
      assert.equal(await text(page.getByTestId('model-notice')), notice);
      await shot(page, 'model-menu-no-template', { dir: OUTPUT, mouse: [600, 700] });
    });
  });

  test('switch to a remote model and back; each reply names the model that wrote it', { timeout: TIMEOUT }, async () => {
    await withApp(tripChat(), async (page) => {
      const switcher = page.getByTestId('model-switcher');
      await page.getByTestId('chat-title').filter({ hasText: 'Trip to Lisbon' }).waitFor();
      assert.equal(await text(page.getByTestId('model-name')), MODEL.name);
      assert.equal(await text(page.getByTestId('message-model')), MODEL.name, 'a local reply names the GGUF model');

      await openMenu(page);
      assert.equal(await switcher.getAttribute('aria-expanded'), 'true');
      await option(page, 'openai', 'gpt-4o-mini').waitFor();
      assert.equal(await option(page, 'local', MODEL.name).getAttribute('aria-checked'), 'true');
      // A provider without a key says so in words, in the menu, with the way to fix it.
      const problem = page.getByTestId('model-menu-error');
      await problem.waitFor();
      assert.equal(await text(problem), NO_ANTHROPIC_KEY);
      await page.getByTestId('model-menu-settings').waitFor();
      assert.deepEqual((await callsOf(page, 'list_provider_models')).map((p) => p.provider).sort(), ['anthropic', 'openai']);

      // Keyboard: the checked model has the focus; arrows move through the library's other models (not the
      // unreadable one), the local group's "Manage models…", then the providers'; Escape closes and gives the focus back.
      assert.equal(await page.evaluate(() => document.activeElement.dataset.path), MODEL.path);
      await option(page, 'local', 'TinyStories-33M-F16').waitFor();
      const focused = [];
      for (let i = 0; i < 5; i++) {
        await page.keyboard.press('ArrowDown');
        focused.push(await page.evaluate(() => document.activeElement.dataset.model ?? document.activeElement.dataset.testid));
      }
      assert.deepEqual(focused, ['qwen2.5-0.5b-instruct-q8_0', 'Phi-3.5-mini-instruct-Q4_K_M', 'TinyStories-33M-F16', 'manage-models', 'gpt-4o-mini']);
      await page.keyboard.press('Escape');
      await page.getByTestId('model-menu').waitFor({ state: 'detached' });
      assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'model-switcher');

      await openMenu(page);
      await option(page, 'openai', 'gpt-4o-mini').click();
      await switcher.filter({ hasText: 'gpt-4o-mini · OpenAI' }).waitFor();
      assert.deepEqual(await callsOf(page, 'set_chat_model'), [{ chatId: 1, target: OPENAI_MINI }]);
      assert.equal(await page.getByTestId('composer').getAttribute('placeholder'), 'Message gpt-4o-mini');

      await send(page, 'And where should I eat?');
      await waitForStatus(reply(page, 2), 'complete');
      assert.equal(await text(reply(page, 2).getByTestId('message-model')), 'gpt-4o-mini (OpenAI)');
      assert.equal(await text(page.getByTestId('message-model').first()), MODEL.name, 'earlier replies keep their model');

      // Back to the local model with the keyboard: Home goes to the library's first, Enter picks it.
      await switcher.focus();
      await page.keyboard.press('Enter');
      await option(page, 'openai', 'gpt-4o-mini').and(page.locator('[aria-checked="true"]')).waitFor();
      await page.keyboard.press('Home');
      await page.keyboard.press('Enter');
      await switcher.filter({ hasText: MODEL.name }).waitFor();
      assert.equal((await callsOf(page, 'set_chat_model')).length, 1, 'a local model is picked with use_local_model');
      assert.deepEqual((await callsOf(page, 'use_local_model')).map(({ chatId, path }) => ({ chatId, path })), [{ chatId: 1, path: MODEL.path }]);
      await send(page, 'Thanks!');
      await waitForStatus(reply(page, 3), 'complete');
      assert.equal(await text(reply(page, 3).getByTestId('message-model')), MODEL.name);
    });
  });

  test('without a chat, picking a model starts one with it; a deleted provider says so', { timeout: TIMEOUT }, async () => {
    const gone = { kind: 'remote', provider: 'my-vllm-1', model: 'qwen2.5-7b' };
    await withApp({ keys: { openai: 'sk-live' } }, async (page) => {
      await page.getByText('No chats yet').waitFor();
      await openMenu(page);
      await option(page, 'openai', 'gpt-4o').click();
      await page.getByTestId('model-switcher').filter({ hasText: 'gpt-4o · OpenAI' }).waitFor();
      assert.equal((await callsOf(page, 'create_chat')).length, 1);
      assert.equal((await callsOf(page, 'set_chat_model'))[0].target.model, 'gpt-4o');
      await page.getByText('Say hello to gpt-4o').waitFor();
    });

    await withApp(tripChat(gone), async (page) => {
      const switcher = page.getByTestId('model-switcher');
      await switcher.filter({ hasText: 'qwen2.5-7b · my-vllm-1' }).waitFor();
      await switcher.and(page.locator('.missing')).waitFor();
      await openMenu(page);
      await page.getByTestId('model-menu-missing').filter({ hasText: '“my-vllm-1” no longer exists' }).waitFor();
      await page.keyboard.press('Escape');
      await send(page, 'Still there?');
      const banner = page.getByTestId('error-text');
      await banner.waitFor();
      assert.equal(await text(banner), 'no provider "my-vllm-1" is configured; pick another model for this chat');
    });
  });
});

describe('Providers settings', () => {
  test('save a key, test the connection, add a server, a refused URL, forget the key, delete', { timeout: TIMEOUT }, async () => {
    await withApp(tripChat(LOCAL, { keys: {} }), async (page) => {
      await openProviders(page);
      assert.deepEqual(await page.getByTestId('provider-card').evaluateAll((els) => els.map((e) => e.dataset.provider)), ['openai', 'anthropic']);
      const openai = card(page, 'openai');
      assert.equal(await text(openai.getByTestId('provider-key-storage')), 'No key saved: OpenAI needs one.');
      assert.equal(await openai.getByTestId('forget-key').count(), 0);
      assert.equal(await openai.getByTestId('save-provider').isDisabled(), true, 'nothing to save yet');
      assert.equal(await openai.getByTestId('provider-extensions').isDisabled(), true, "llama.cpp's extensions are for OpenAI-compatible servers only");

      await openai.getByTestId('provider-key').fill('sk-test-123');
      await openai.getByTestId('save-provider').click();
      await openai.getByTestId('provider-status').filter({ hasText: 'Saved, with the key.' }).waitFor();
      assert.equal(await text(openai.getByTestId('provider-key-storage')), 'Key saved in the system keychain.');
      assert.equal(await openai.getByTestId('provider-key').inputValue(), '', 'a saved key is never shown again');
      assert.deepEqual(await mock(page, 'keys'), { openai: 'sk-test-123' });
      assert.deepEqual(await callsOf(page, 'set_api_key'), [{ provider: 'openai', key: 'sk-test-123' }]);

      await openai.getByTestId('test-provider').click();
      await openai.getByTestId('provider-status').filter({ hasText: 'Connected: 3 models in 123 ms' }).waitFor();

      // A new OpenAI-compatible server: its id comes from its name.
      await page.getByTestId('add-provider').click();
      const added = page.getByTestId('provider-card').last();
      assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'provider-name');
      await page.keyboard.type('My llama.cpp');
      assert.equal(await added.getAttribute('data-provider'), 'my-llama-cpp-1');
      assert.equal(await added.getByTestId('provider-kind').inputValue(), 'openAiCompatible');
      assert.equal(await added.getByTestId('provider-extensions').isChecked(), true);
      assert.equal(await added.getByTestId('provider-extensions').isDisabled(), false);
      await added.getByTestId('provider-base-url').fill('localhost:8080');
      await added.getByTestId('provider-models').fill('qwen2.5-7b-instruct, llama-3.1-8b');
      await added.getByTestId('provider-context-length').fill('16384');
      await added.getByTestId('provider-tokenizer-repo').fill('Qwen/Qwen2.5-7B-Instruct');
      await added.getByTestId('save-provider').click();
      await added.getByTestId('provider-status').filter({ hasText: 'the base URL "localhost:8080" must start with http:// or https://' }).waitFor();
      await added.getByTestId('provider-base-url').fill('http://localhost:8080/v1');
      await added.getByTestId('provider-extensions').uncheck();
      await added.getByTestId('save-provider').click();
      await card(page, 'my-llama-cpp-1').getByTestId('provider-status').filter({ hasText: 'Saved.' }).waitFor();
      const saved = (await mock(page, 'providers')).find((p) => p.config.id === 'my-llama-cpp-1');
      assert.deepEqual(saved.config, {
        id: 'my-llama-cpp-1', name: 'My llama.cpp', kind: 'openAiCompatible', baseUrl: 'http://localhost:8080/v1',
        models: ['qwen2.5-7b-instruct', 'llama-3.1-8b'], contextLength: 16384, extensions: false, tokenizerRepo: 'Qwen/Qwen2.5-7B-Instruct',
        allowPlainHttp: false,
      });
      assert.equal(await text(added.getByTestId('provider-key-storage')), 'No key saved; local servers usually need none.');
      await added.getByTestId('test-provider').click();
      await added.getByTestId('provider-status').filter({ hasText: 'Connected: 2 models in 123 ms' }).waitFor();

      // Edits: a context length that is not a number is refused here, in words; a rename keeps the id.
      await added.getByTestId('provider-context-length').fill('lots');
      await added.getByTestId('save-provider').click();
      await added.getByTestId('provider-status').filter({ hasText: 'the context length must be a whole number of tokens' }).waitFor();
      await added.getByTestId('provider-context-length').fill('');
      await added.getByTestId('provider-name').fill('Desk server');
      await added.getByTestId('provider-name').press('Enter');
      await added.getByTestId('provider-status').filter({ hasText: 'Saved.' }).waitFor();
      assert.equal(await added.getAttribute('data-provider'), 'my-llama-cpp-1');
      assert.equal((await mock(page, 'providers')).at(-1).config.name, 'Desk server');

      // It moves to another machine on plain HTTP: refused until the user says yes; the key given
      // for the old address is forgotten, and the card says so.
      await added.getByTestId('provider-key').fill('sk-desk-1');
      await added.getByTestId('save-provider').click();
      await added.getByTestId('provider-status').filter({ hasText: 'Saved, with the key.' }).waitFor();
      await added.getByTestId('provider-base-url').fill('http://192.168.1.20:8080/v1');
      await added.getByTestId('save-provider').click();
      await added.getByTestId('provider-status').filter({ hasText: 'http:// to another machine sends your key and chats unencrypted' }).waitFor();
      await added.getByTestId('provider-plain-http').check();
      await shot(page, 'provider-plain-http', { dir: OUTPUT });
      await added.getByTestId('save-provider').click();
      await added.getByTestId('provider-status').filter({ hasText: 'The key was given for the old address and is forgotten' }).waitFor();
      assert.equal(await text(added.getByTestId('provider-key-storage')), 'No key saved; local servers usually need none.');

      await openai.getByTestId('forget-key').click();
      await openai.getByTestId('provider-status').filter({ hasText: 'Key forgotten.' }).waitFor();
      assert.equal(await text(openai.getByTestId('provider-key-storage')), 'No key saved: OpenAI needs one.');
      assert.deepEqual(await mock(page, 'keys'), {});

      await added.getByTestId('delete-provider').click();
      await added.getByTestId('confirm-no').click();
      await added.getByTestId('delete-provider').click();
      await added.getByTestId('confirm-yes').click();
      await card(page, 'my-llama-cpp-1').waitFor({ state: 'detached' });
      assert.deepEqual((await mock(page, 'providers')).map((p) => p.config.id), ['openai', 'anthropic']);

      await page.keyboard.press('Escape');
      await page.getByTestId('settings-panel').waitFor({ state: 'detached' });
    });
  });

  test('Test pressed right after Save (as a script presses them) tests what was saved', { timeout: TIMEOUT }, async () => {
    await withApp(tripChat(), async (page) => {
      await openProviders(page);
      await page.getByTestId('add-provider').click();
      const added = page.getByTestId('provider-card').last();
      await added.getByTestId('provider-name').fill('Laptop server');
      await added.getByTestId('provider-models').fill('phi-4');
      await added.evaluate((el) => {
        el.querySelector('[data-testid="save-provider"]').click();
        el.querySelector('[data-testid="test-provider"]').click();
      });
      await card(page, 'laptop-server-1').getByTestId('provider-status').filter({ hasText: 'Connected: 1 model in 123 ms' }).waitFor();
      assert.deepEqual((await mockState(page)).calls.filter((c) => ['save_provider', 'test_provider'].includes(c.cmd)).map((c) => c.cmd), [
        'save_provider',
        'test_provider',
      ]);
    });
  });

  test('no keychain: the key file and why are said plainly', { timeout: TIMEOUT }, async () => {
    await withApp(tripChat(LOCAL, { keys: {}, keyStorage: KEY_FILE }), async (page) => {
      await openProviders(page);
      const anthropic = card(page, 'anthropic');
      await anthropic.getByTestId('provider-key').fill('sk-ant-123');
      await anthropic.getByTestId('save-provider').click();
      await anthropic.getByTestId('provider-status').filter({ hasText: 'Saved, with the key.' }).waitFor();
      assert.equal(
        await text(anthropic.getByTestId('provider-key-storage')),
        `No keychain answered: the key is saved in ${KEY_FILE.path} (readable only by you). ${KEY_FILE.reason}`,
      );
    });
  });
});

describe('Sampling settings a provider does not take', () => {
  test('greyed with the reason as tooltip; asked again when the chat or the provider changes', { timeout: TIMEOUT }, async () => {
    const drafting = { speculative: 'draftModel', draftModel: MODEL.path };
    await withApp(tripChat(OPENAI_MINI, { sampling: drafting }), async (page) => {
      await addProvider(page, deskServer());
      await page.getByTestId('model-switcher').filter({ hasText: 'gpt-4o-mini · OpenAI' }).waitFor();
      await page.getByTestId('open-settings').click();
      await field(page, 'topK').and(page.locator('[data-unsupported="true"]')).waitFor();
      assert.equal(await page.getByTestId('field-topK').isDisabled(), true);
      assert.equal(await field(page, 'topK').getAttribute('title'), "OpenAI (OpenAI's Chat Completions API) has no such setting; it is not sent");
      assert.equal(await text(page.getByTestId('not-sent-topK')), 'Not sent to OpenAI');
      assert.equal(await page.getByTestId('field-mirostat-v1').isDisabled(), true);
      // Speculative decoding runs in the local engine only.
      assert.equal(await page.getByTestId('field-speculative-promptLookup').isDisabled(), true);
      for (const key of ['draftModel', 'draftMax']) {
        assert.equal(await page.getByTestId(`field-${key}`).isDisabled(), true, key);
        assert.equal(await text(page.getByTestId(`not-sent-${key}`)), 'Not sent to OpenAI', key);
      }
      // So does consensus decoding, and the provider's note says so.
      assert.equal(await page.getByTestId('field-strategy-consensus').isDisabled(), true);
      assert.equal(await page.getByTestId('field-mbrCandidates').isDisabled(), true);
      assert.equal(await page.getByTestId('field-mbrUtility-exactMatch').isDisabled(), true);
      assert.equal(await field(page, 'strategy').getAttribute('title'), "done by Hearth's local engine; OpenAI's replies are written without it (it is not sent)");
      assert.equal(await text(page.getByTestId('not-sent-mbrUtility')), 'Not sent to OpenAI');
      // Beam search and the token inspector too.
      assert.equal(await page.getByTestId('field-strategy-beam').isDisabled(), true);
      for (const key of ['beamWidth', 'lengthPenalty', 'earlyStopping', 'nBest', 'topProbs']) {
        assert.equal(await page.getByTestId(`field-${key}`).isDisabled(), true, key);
        assert.equal(await text(page.getByTestId(`not-sent-${key}`)), 'Not sent to OpenAI', key);
      }
      assert.equal(await field(page, 'beamWidth').getAttribute('title'), "done by Hearth's local engine; OpenAI's replies are written without it (it is not sent)");
      assert.equal(await field(page, 'temperature').getAttribute('data-unsupported'), null);
      assert.equal(await page.getByTestId('field-temperature').isDisabled(), false);
      assert.equal(await text(page.getByTestId('support-note-stop')), 'OpenAI takes at most 4 stop strings');
      await page.getByTestId('support-notice').filter({ hasText: 'OpenAI' }).waitFor();
      assert.deepEqual(await callsOf(page, 'sampling_support_for'), [{ target: OPENAI_MINI }]);
      await page.keyboard.press('Escape');

      // Another provider, which is not set to receive llama.cpp's fields; then set to.
      await openMenu(page);
      await option(page, 'desk-1', 'qwen2.5-7b-instruct').click();
      await page.getByTestId('model-switcher').filter({ hasText: 'qwen2.5-7b-instruct · Desk server' }).waitFor();
      await page.getByTestId('open-settings').click();
      await page.getByTestId('not-sent-minP').filter({ hasText: 'Not sent to Desk server' }).waitFor();
      await page.getByTestId('open-providers').click();
      await card(page, 'desk-1').getByTestId('provider-extensions').check();
      await card(page, 'desk-1').getByTestId('save-provider').click();
      await card(page, 'desk-1').getByTestId('provider-status').filter({ hasText: 'Saved.' }).waitFor();
      await page.getByTestId('open-sampling').click();
      await page.getByTestId('support-note-minP').filter({ hasText: 'sent as a llama.cpp server field' }).waitFor();
      assert.equal(await field(page, 'minP').getAttribute('data-unsupported'), null);
      assert.equal(await page.getByTestId('field-minP').isDisabled(), false);
      await page.keyboard.press('Escape');

      // The local model takes everything.
      await openMenu(page);
      await option(page, 'local', MODEL.name).click();
      await page.getByTestId('model-switcher').filter({ hasText: MODEL.name }).waitFor();
      await page.getByTestId('open-settings').click();
      await page.getByTestId('field-topK').waitFor();
      await page.waitForFunction(() => document.querySelectorAll('[data-unsupported="true"]').length === 0);
      assert.equal(await page.getByTestId('support-notice').count(), 0);
    });
  });
});

describe('Remote failures, in words, with what to do', () => {
  test('rate limited: Retry counts down, then regenerates the reply', { timeout: TIMEOUT }, async () => {
    const replies = [{ text: '', failWith: rateLimited(2) }, { text: 'Try Time Out Market, then a pastel de nata in Belém.' }];
    await withApp(tripChat(OPENAI_MINI, { replies }), async (page) => {
      await send(page, 'And where should I eat?');
      const failed = lastAssistant(page);
      await waitForStatus(failed, 'failed');
      assert.equal(await text(failed.getByTestId('reply-error')), rateLimited(2).message);
      assert.equal(await text(failed.getByTestId('message-model')), 'gpt-4o-mini (OpenAI)');
      const retry = failed.getByTestId('retry-reply');
      assert.match(await text(retry), /^Retry in [12] s$/);
      assert.equal(await retry.isDisabled(), true);
      assert.equal(await failed.getByTestId('open-provider-settings').count(), 0);
      assert.equal(await page.getByTestId('error-banner').count(), 0, 'the error is on the reply, not in a banner');
      await retry.filter({ hasText: /^\s*Retry\s*$/ }).waitFor({ timeout: 5000 });
      assert.equal(await retry.isDisabled(), false);
      await retry.click();
      await waitForStatus(reply(page, 2), 'complete');
      assert.match(await text(reply(page, 2).getByTestId('message-content')), /Time Out Market/);
      assert.equal(await text(reply(page, 2).getByTestId('branch-position')), '2/2');
      assert.equal(await page.getByTestId('reply-error').count(), 0);
      assert.equal((await callsOf(page, 'regenerate_reply')).length, 1);
    });
  });

  test('network: the partial reply stays, with the message and Retry at once', { timeout: TIMEOUT }, async () => {
    const replies = [{ text: 'Start with the Alfama at', failWith: UNREACHABLE }];
    await withApp(tripChat(OPENAI_MINI, { replies }), async (page) => {
      await send(page, 'A walking route?');
      const failed = lastAssistant(page);
      await waitForStatus(failed, 'failed');
      assert.equal(await text(failed.getByTestId('message-content')), 'Start with the Alfama at');
      // Shown as a sentence: the backend's message begins in lower case.
      assert.equal(await text(failed.getByTestId('reply-error')), `C${UNREACHABLE.message.slice(1)}`);
      assert.equal(await text(failed.getByTestId('retry-reply')), 'Retry');
      assert.equal(await failed.getByTestId('retry-reply').isDisabled(), false);
      assert.equal(await failed.getByTestId('continue').count(), 1, 'Continue still writes on');
    });
  });

  test('401: "Open provider settings" goes to the key; a new key and Retry', { timeout: TIMEOUT }, async () => {
    await withApp(tripChat(OPENAI_MINI, { keys: { openai: 'sk-wrong' } }), async (page) => {
      await send(page, 'And where should I eat?');
      const failed = lastAssistant(page);
      await waitForStatus(failed, 'failed');
      assert.equal(await text(failed.getByTestId('reply-error')), REFUSED_KEY);
      await failed.getByTestId('open-provider-settings').click();
      await page.getByTestId('open-providers').and(page.locator('[aria-selected="true"]')).waitFor();
      await page.waitForFunction(() => document.activeElement?.dataset.testid === 'provider-key');
      assert.equal(await page.evaluate(() => document.activeElement.closest('[data-testid="provider-card"]').dataset.provider), 'openai');
      await page.keyboard.type('sk-good');
      await page.keyboard.press('Enter');
      await card(page, 'openai').getByTestId('provider-status').filter({ hasText: 'Saved, with the key.' }).waitFor();
      await page.keyboard.press('Escape');
      await failed.getByTestId('retry-reply').click();
      await waitForStatus(reply(page, 2), 'complete');
      assert.equal(await page.getByTestId('reply-error').count(), 0);
    });
  });

  test('no key at all: the reply cannot start; the banner says so and offers the settings', { timeout: TIMEOUT }, async () => {
    const claude = { kind: 'remote', provider: 'anthropic', model: 'claude-3-5-haiku-latest' };
    await withApp(tripChat(claude), async (page) => {
      await send(page, 'And where should I eat?');
      await page.getByTestId('error-text').filter({ hasText: NO_ANTHROPIC_KEY }).waitFor();
      await page.getByTestId('open-provider-settings').click();
      await page.waitForFunction(() => document.activeElement?.closest('[data-testid="provider-card"]')?.dataset.provider === 'anthropic');
    });
  });
});

describe('Screenshots', () => {
  const options = (mouse = [600, 700]) => ({ dir: OUTPUT, mouse });

  test('model menu, providers, greyed sampling, failed replies (light and dark)', { timeout: 3 * TIMEOUT }, async () => {
    await inBothSchemes(tripChat(), async (page) => {
      // A server of the third kind, so that the menu shows all three.
      await addProvider(page, deskServer({ contextLength: 32768, extensions: true, tokenizerRepo: 'Qwen/Qwen2.5-7B-Instruct' }));
      await openMenu(page);
      await page.getByTestId('model-menu-error').waitFor();
      await option(page, 'desk-1', 'qwen2.5-7b-instruct').waitFor();
      await shot(page, `model-menu`, options(await center(option(page, 'openai', 'gpt-4o'))));
      await option(page, 'openai', 'gpt-4o-mini').click();

      await openProviders(page);
      await card(page, 'openai').getByTestId('provider-key-storage').filter({ hasText: 'system keychain' }).waitFor();
      await card(page, 'openai').getByTestId('test-provider').click();
      await card(page, 'openai').getByTestId('provider-status').filter({ hasText: 'Connected' }).waitFor();
      await shot(page, `providers-keychain`, options([300, 700]));
      await card(page, 'desk-1').scrollIntoViewIfNeeded();
      await shot(page, `providers-compatible`, options([300, 700]));

      await page.evaluate((file) => (window.__hearthMock.keyStorage = file), KEY_FILE);
      await card(page, 'anthropic').getByTestId('provider-key').fill('sk-ant-123');
      await card(page, 'anthropic').getByTestId('save-provider').click();
      await card(page, 'anthropic').getByTestId('provider-key-storage').filter({ hasText: 'No keychain answered' }).waitFor();
      await card(page, 'anthropic').evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await shot(page, `providers-key-file`, options([300, 700]));

      await page.getByTestId('open-sampling').click();
      await field(page, 'topK').and(page.locator('[data-unsupported="true"]')).waitFor();
      await shot(page, `sampling-remote`, options(await center(page.getByTestId('support-notice'))));
      await field(page, 'topK').evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await shot(page, `sampling-greyed`, options(await center(page.getByTestId('field-topK'))));
      await page.keyboard.press('Escape');
    });

    await inBothSchemes(tripChat(OPENAI_MINI, { replies: [{ text: '', failWith: rateLimited(30) }] }), async (page) => {
      await send(page, 'And where should I eat?');
      await waitForStatus(lastAssistant(page), 'failed');
      await lastAssistant(page).getByTestId('retry-reply').filter({ hasText: /Retry in (29|30) s/ }).waitFor();
      await shot(page, `rate-limited`, options());
    });

    await inBothSchemes(tripChat(OPENAI_MINI, { keys: { openai: 'sk-wrong' } }), async (page) => {
      await send(page, 'And where should I eat?');
      await lastAssistant(page).getByTestId('open-provider-settings').waitFor();
      await shot(page, `auth-failed`, options());
    });
  });
});

/** Where the pointer rests for a shot: over `locator`. */
async function center(locator) {
  const box = await locator.boundingBox();
  return [box.x + box.width / 2, box.y + box.height / 2];
}
