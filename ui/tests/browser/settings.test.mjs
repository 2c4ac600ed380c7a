// Browser tests of the decoding settings panel: editing a field, presets and resets, lists, logit bias,
// grammar, seed, mirostat and sampler order; a failed read retried; its screenshots.
// Run with `npm run test:browser` or `node --test tests/browser/settings.test.mjs`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { MODEL, TIMEOUT, inBothSchemes, lastAssistant, mockState, openApp, shot, useBrowser, waitForStatus } from './harness.mjs';
import { CONTRACT } from '../contract.mjs';
import { REPLY_MD, fieldValue, openSettings, samplingSaves, waitForSave } from './chat-helpers.mjs';

useBrowser();

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
