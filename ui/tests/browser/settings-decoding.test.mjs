// Browser tests of the decoding settings panel's strategies: speculative decoding (a draft model included),
// consensus, beam search and the token inspector's alternatives.
// Run with `npm run test:browser` or `node --test tests/browser/settings-decoding.test.mjs`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { MODEL, TIMEOUT, inBothSchemes, shot, useBrowser, withApp } from './harness.mjs';
import { CONTRACT } from '../contract.mjs';
import { fieldValue, openSettings, samplingSaves, text, waitForSave } from './chat-helpers.mjs';

useBrowser();

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

/**
 * A whole-number field `key` that starts at the default (`shown`, its `range` said under it): each of `accepted` typed
 * is sent whole (the defaults with it over them), each of `refused` is marked (see typeRefused); Reset sends the defaults.
 */
async function checkWholeField(page, key, { shown, range, accepted, refused }) {
  const DEFAULTS = CONTRACT.samplingDefaults;
  assert.equal(await fieldValue(page, key), shown);
  assert.match(await page.getByTestId(`range-${key}`).textContent(), new RegExp(range));
  assert.equal(await page.getByTestId(`reset-${key}`).isDisabled(), true);
  for (const typed of accepted) {
    await page.getByTestId(`field-${key}`).fill(typed);
    await waitForSave(page, (p) => isDeepStrictEqual(p, { ...DEFAULTS, [key]: Number(typed) }));
    assert.equal(await page.getByTestId(`reset-${key}`).isDisabled(), false);
  }
  for (const r of refused) await typeRefused(page, key, r);
  await page.getByTestId(`reset-${key}`).click();
  await waitForSave(page, (p) => isDeepStrictEqual(p, DEFAULTS));
  await page.getByTestId('settings-error').waitFor({ state: 'detached' });
}

describe('Decoding settings panel', () => {

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
    await withApp({}, async (page) => {
      await openSettings(page);
      // A group of its own, after Advanced and before the local engine's decoding.
      const headings = await page.getByTestId('settings-panel').locator('section > header h3').allTextContents();
      assert.equal(headings[headings.indexOf('Advanced') + 1], 'Token inspector', headings.join(' | '));
      assert.equal(headings[headings.indexOf('Token inspector') + 1], 'Tools', headings.join(' | '));
      assert.equal(headings[headings.indexOf('Tools') + 1], 'Reasoning', headings.join(' | '));
      assert.equal(headings[headings.indexOf('Reasoning') + 1], 'Decoding strategy', headings.join(' | '));
      const setting = page.getByTestId('setting-topProbs');
      assert.equal((await setting.locator('label').textContent()).trim(), 'Alternatives kept per token');
      assert.match(await setting.locator('.help').textContent(), /each token of a reply \(the local model's, or a llama\.cpp server's\).*; 0 keeps none\.$/);
      await checkWholeField(page, 'topProbs', {
        shown: '5',
        range: 'Range 0 – 20',
        accepted: ['0', '20', '1'],
        refused: [
          { typed: '21', error: 'topProbs must be between 0 and 20, got 21', hint: 'Must be between 0 and 20' },
          { typed: '2.5', error: null, hint: 'Enter a whole number' },
        ],
      });
    });
  });

  test('tools: the most rounds of tool calls per turn, 1 to 64, sent whole; refused values are marked', { timeout: TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      await openSettings(page);
      // A group of its own, after the token inspector.
      const headings = await page.getByTestId('settings-panel').locator('section > header h3').allTextContents();
      assert.equal(headings[headings.indexOf('Token inspector') + 1], 'Tools', headings.join(' | '));
      const setting = page.getByTestId('setting-maxToolRounds');
      assert.equal((await setting.locator('label').textContent()).trim(), 'Most tool rounds per turn');
      assert.match(await setting.locator('.help').textContent(), /^How many rounds of tool calls one reply may take .* before Hearth stops and says so\. Set it per chat, model or preset like any setting\.$/);
      assert.match(await page.getByTestId('default-maxToolRounds').textContent(), /Default 8/);
      assert.equal(await page.getByTestId('slider-maxToolRounds').count(), 0, 'a whole-number field has no slider');
      await checkWholeField(page, 'maxToolRounds', {
        shown: String(CONTRACT.samplingDefaults.maxToolRounds),
        range: 'Range 1 – 64',
        accepted: ['1', '64', '3'],
        refused: [
          { typed: '65', error: 'maxToolRounds must be between 1 and 64, got 65', hint: 'Must be between 1 and 64' },
          { typed: '0', error: 'maxToolRounds must be between 1 and 64, got 0', hint: 'Must be between 1 and 64' },
          { typed: '2.5', error: null, hint: 'Enter a whole number' },
        ],
      });
    });
  });

  test('reasoning: the budget, -1 (no limit), 0 (off) or a number of tokens, sent whole; refused values are marked', { timeout: TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      await openSettings(page);
      const setting = page.getByTestId('setting-reasoningBudget');
      assert.equal((await setting.locator('label').textContent()).trim(), 'Reasoning budget (tokens)');
      assert.match(await setting.locator('.help').textContent(), /-1 lets the model reason as long as it does; 0 asks it not to .* OpenAI is sent an effort for it, Anthropic extended thinking with it \(each provider's note says how\)\.$/);
      assert.match(await page.getByTestId('default-reasoningBudget').textContent(), /Default −1/);
      await checkWholeField(page, 'reasoningBudget', {
        shown: String(CONTRACT.samplingDefaults.reasoningBudget),
        range: 'Range −1 – 1,000,000',
        accepted: ['0', '512'],
        refused: [
          { typed: '-2', error: 'reasoningBudget must be -1 (no limit), 0 (off) or up to 1000000, got -2', hint: 'Must be between −1 and 1,000,000' },
          { typed: '1000001', error: 'reasoningBudget must be -1 (no limit), 0 (off) or up to 1000000, got 1000001', hint: 'Must be between −1 and 1,000,000' },
          { typed: '2.5', error: null, hint: 'Enter a whole number' },
        ],
      });
      await setting.scrollIntoViewIfNeeded();
      await shot(page, 'settings-reasoning');
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
});
