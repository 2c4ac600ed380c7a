// Browser tests of signed updates (src/lib/updates.svelte.ts): the check at start and its dialog,
// the install's progress to the restart, a refused package said in the dialog, and Settings → Updates.
// Run with `npm run test:browser`; screenshots go to tests/browser/output/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { OUTPUT, TIMEOUT, inBothSchemes, mockState, shot, useBrowser, withApp } from './harness.mjs';

useBrowser();

const callsOf = async (page, cmd) => (await mockState(page)).calls.filter((c) => c.cmd === cmd);
const NEWER = {
  version: '0.2.0',
  currentVersion: '0.1.0',
  notes: 'A welcome screen for a first run.\nThe engine rests when no model is loaded.\nFaster starts.',
  date: '2026-11-29T12:00:00Z',
};
const SIGNATURE_REFUSED = {
  kind: 'update',
  message:
    'the downloaded update does not match its signature, so it was not installed (it may have been damaged or tampered with): The signature verification failed',
};

describe('Updates', () => {
  test('a newer version found at start: its notes, then download, install and restart', { timeout: TIMEOUT }, async () => {
    await withApp({ updateAvailable: NEWER, updateTickMs: 120 }, async (page) => {
      const dialog = page.getByTestId('update-dialog');
      await dialog.getByText('Hearth 0.2.0 is available').waitFor();
      await dialog.getByText('You have 0.1.0. Released 2026-11-29.').waitFor();
      assert.equal(await page.getByTestId('update-notes').innerText(), NEWER.notes);
      await page.getByTestId('update-install').click();
      await page.getByTestId('update-progress').getByText(/Downloading… .* of 48\.2 MB/).waitFor();
      assert.equal(await page.getByTestId('update-later').isDisabled(), true, 'no leaving mid-install');
      await shot(page, 'update-downloading', { dir: OUTPUT });
      await page.getByTestId('update-progress').getByText('Signature checked. Installing').waitFor();
      await page.waitForFunction(() => window.__hearthMock.updateRestarted);
    });
    await inBothSchemes({ updateAvailable: NEWER }, async (page) => {
      await page.getByTestId('update-dialog').waitFor();
      await shot(page, 'update-dialog', { dir: OUTPUT });
    });
  });

  test('a download cut off on the way starts again, and the dialog says so', { timeout: TIMEOUT }, async () => {
    await withApp({ updateAvailable: NEWER, updateCutOnce: true, updateTickMs: 120 }, async (page) => {
      await page.getByTestId('update-install').click();
      const progress = page.getByTestId('update-progress');
      await progress.getByText(/^Downloading… .* of 48\.2 MB$/).waitFor();
      await progress.getByText(/^The download was cut off; downloading again \(try 2\)… .* of 48\.2 MB$/).waitFor();
      await shot(page, 'update-retrying', { dir: OUTPUT });
      await progress.getByText('Signature checked. Installing').waitFor();
      await page.waitForFunction(() => window.__hearthMock.updateRestarted);
    });
  });

  test('a package that fails its signature is refused in words; Later keeps this version', { timeout: TIMEOUT }, async () => {
    await withApp({ updateAvailable: NEWER, updateInstallFailure: SIGNATURE_REFUSED, updateTickMs: 20 }, async (page) => {
      await page.getByTestId('update-install').click();
      await page.getByTestId('update-error').getByText('does not match its signature, so it was not installed').waitFor();
      assert.equal(await page.getByTestId('update-install').innerText(), 'Try again');
      await shot(page, 'update-refused', { dir: OUTPUT });
      await page.getByTestId('update-later').click();
      await page.getByTestId('update-dialog').waitFor({ state: 'detached' });
      assert.equal(await page.evaluate(() => window.__hearthMock.updateRestarted), false);
    });
  });

  test('Settings → Updates: no check at start when off, Check now, a refused address, a build without a key', { timeout: TIMEOUT }, async () => {
    await withApp({ updateSettings: { checkAtStart: false, endpoint: 'https://releases.hearth.example/latest.json' } }, async (page) => {
      await page.getByTestId('open-settings').click();
      await page.getByTestId('open-updates').click();
      await page.getByTestId('updates-check').waitFor();
      assert.equal((await callsOf(page, 'check_update')).length, 0, 'no check at start when it is off');
      await page.getByTestId('updates-check').click();
      await page.getByTestId('updates-checked').getByText('Hearth 0.1.0 is the newest version.').waitFor();

      await page.getByTestId('updates-at-start').click();
      await page.waitForFunction(() => window.__hearthMock.updateSettings.checkAtStart === true);

      await page.evaluate(() => {
        window.__hearthMock.updateRefusal = { kind: 'invalidInput', field: 'endpoint', message: '"http://updates.example.org/latest.json" is not an update address: updates come over https (plain http only from this machine)' };
      });
      await page.getByTestId('updates-endpoint').fill('http://updates.example.org/latest.json');
      await page.getByTestId('updates-endpoint').press('Enter');
      await page.getByTestId('updates-endpoint-error').getByText('updates come over https').waitFor();

      await page.evaluate(() => {
        window.__hearthMock.updateCheckFailure = { kind: 'network', message: 'the update server at https://releases.hearth.example/latest.json could not be reached (dns error); Hearth stays as it is' };
      });
      await page.getByTestId('updates-check').click();
      await page.getByTestId('updates-checked').getByText('could not be reached').waitFor();
    });
    await inBothSchemes({}, async (page) => {
      await page.getByTestId('open-settings').click();
      await page.getByTestId('open-updates').click();
      await page.getByTestId('updates-check').waitFor();
      await shot(page, 'settings-updates', { dir: OUTPUT });
    });
    await withApp({ updateEnabled: false }, async (page) => {
      await page.getByTestId('open-settings').click();
      await page.getByTestId('open-updates').click();
      await page.getByTestId('updates-off').getByText('was made without a release key').waitFor();
      assert.equal(await page.getByTestId('updates-check').isDisabled(), true);
      assert.equal((await callsOf(page, 'check_update')).length, 0, 'no check without a key');
    });
  });
});
