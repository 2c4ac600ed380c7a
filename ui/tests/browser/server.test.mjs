// Browser tests of Settings → Server: switching the local OpenAI-compatible server on, its URL and Copy,
// the port (a busy one, one out of range), the network refused without a key, a generated key saved, and
// the recent requests, read again every 2 s while the tab is on show and not after; a model the server
// loaded for a request shown in the header once the window is focused again.
// Run with `npm run test:browser`; screenshots go to tests/browser/output/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CONTRACT } from '../contract.mjs';
import { MODEL, OUTPUT, TIMEOUT, inBothSchemes, mockState, shot, useBrowser, withApp } from './harness.mjs';

useBrowser();

const { port: PORT } = CONTRACT.serverDefaults;
const PORT_RANGE = CONTRACT.serverRanges.find((r) => r.key === 'port');
const BUSY = PORT + 1;
const AT = Date.UTC(2026, 10, 25, 14, 3, 7);
const REQUESTS = [
  { atMs: AT, client: '127.0.0.1:53122', model: 'Llama-3.2-3B-Instruct-Q4_K_M', promptTokens: 812, completionTokens: 64, ms: 1240, status: 200 },
  { atMs: AT - 61_000, client: '192.168.1.34:60211', model: 'gpt-4o', promptTokens: 0, completionTokens: 0, ms: 3, status: 400 },
  { atMs: AT - 125_000, client: '127.0.0.1:53090', model: 'Llama-3.2-3B-Instruct-Q4_K_M', promptTokens: 2048, completionTokens: 17, ms: 845, status: 499 },
];
const CLOCK = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });

const text = async (locator) => (await locator.textContent()).replace(/\s+/g, ' ').trim();
const callsOf = async (page, cmd) => (await mockState(page)).calls.filter((c) => c.cmd === cmd).map((c) => c.payload);

async function openServer(page) {
  await page.getByTestId('open-settings').click();
  await page.getByTestId('open-server').click();
  await page.locator('[data-testid="server-enabled"]:enabled').waitFor();
}

/** Nothing in the tab is wider than the panel: the scroller has no horizontal overflow. */
async function assertFits(page) {
  const { scroll, client } = await page
    .getByTestId('server-requests')
    .evaluate((el) => ({ scroll: el.closest('.scroll').scrollWidth, client: el.closest('.scroll').clientWidth }));
  assert.ok(scroll <= client, `the tab fits its panel (${scroll} <= ${client})`);
}

describe('Settings → Server', () => {
  test('on, its URL copied; a busy port; the network refused without a key, then allowed with a generated one; recent requests', { timeout: 2 * TIMEOUT }, async () => {
    await inBothSchemes({ serverRequests: REQUESTS, busyPorts: [BUSY] }, async (page) => {
      const origin = new URL(page.url()).origin;
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
      await openServer(page);
      const enabled = page.getByTestId('server-enabled');
      const url = page.getByTestId('server-url');
      const port = page.getByTestId('server-port');
      const network = page.getByTestId('server-network');
      const key = page.getByTestId('server-key');
      const keyState = page.getByTestId('server-key-state');

      // Off by default, on the contract's port; the requests newest first, non-2xx in the error colour.
      assert.equal(await enabled.isChecked(), false);
      assert.equal(await text(page.getByTestId('server-state')), 'Off');
      assert.equal(await url.count(), 0);
      assert.equal(await port.inputValue(), String(PORT));
      assert.equal(await network.isChecked(), false);
      assert.equal(await text(keyState), 'No key');
      const rows = page.getByTestId('server-request');
      assert.equal(await rows.count(), 3);
      const cells = (await rows.nth(0).locator('td').allTextContents()).map((t) => t.trim());
      assert.deepEqual(cells, [CLOCK.format(AT), '127.0.0.1:53122', 'Llama-3.2-3B-Instruct-Q4_K_M', '812 → 64', '1.24 s', '200']);
      assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.status)), ['200', '400', '499']);
      const statusCells = rows.locator('td:last-child');
      assert.deepEqual(await statusCells.evaluateAll((tds) => tds.map((td) => td.classList.contains('failed'))), [false, true, true]);
      assert.equal(await statusCells.nth(2).getAttribute('title'), 'HTTP 499: the client went away mid-reply');
      // A long model name is cut short in its cell, whole in its tooltip.
      const model = rows.nth(0).locator('td').nth(2);
      assert.equal(await model.getAttribute('title'), 'Llama-3.2-3B-Instruct-Q4_K_M');
      assert.ok(await model.evaluate((td) => td.scrollWidth > td.clientWidth), 'the model name is truncated');
      await assertFits(page);
      await shot(page, `settings-server-off`, { dir: OUTPUT });

      // On: its URL, copied whole.
      await enabled.click();
      await url.filter({ hasText: `http://127.0.0.1:${PORT}/v1` }).waitFor();
      assert.equal(await text(page.getByTestId('server-state')), 'Running');
      const copy = page.getByTestId('copy-server-url');
      await copy.click();
      await copy.filter({ hasText: 'Copied' }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `http://127.0.0.1:${PORT}/v1`);
      assert.deepEqual((await callsOf(page, 'set_server')).at(-1), { settings: { enabled: true, port: PORT, network: false, saveRequests: false, allowedOrigins: [] } });
      // Saving requests as chats: off by default, one switch.
      const save = page.getByTestId('server-save-requests');
      assert.equal(await save.isChecked(), false);
      await save.click();
      await page.waitForFunction(() => window.__hearthMock.server.settings.saveRequests === true);
      assert.equal(await save.isChecked(), true);
      await shot(page, `settings-server-on`, { dir: OUTPUT });

      // A port another program holds: saved, and the server says why it is not running.
      await port.fill(String(BUSY));
      assert.equal((await callsOf(page, 'set_server')).length, 2, 'nothing sent while typing');
      await port.press('Enter');
      const problem = page.getByTestId('server-problem');
      await problem.filter({ hasText: `port ${BUSY} is in use by another program: choose another port` }).waitFor();
      assert.equal(await url.count(), 0);
      assert.equal(await text(page.getByTestId('server-state')), 'Not running');
      await shot(page, `settings-server-busy-port`, { dir: OUTPUT });

      // Past the contract's range: not sent, the box marked.
      await port.fill(String(PORT_RANGE.max + 1));
      await port.blur();
      const portError = page.getByTestId('server-port-error');
      assert.equal(await text(portError), `Not saved: the port must be ${PORT_RANGE.text}`);
      assert.equal(await port.getAttribute('aria-invalid'), 'true');
      assert.equal((await callsOf(page, 'set_server')).length, 3);

      await port.fill(String(PORT));
      await port.press('Enter');
      await url.filter({ hasText: `http://127.0.0.1:${PORT}/v1` }).waitFor();
      assert.equal(await problem.count(), 0);
      assert.equal(await portError.count(), 0);
      assert.equal(await port.getAttribute('aria-invalid'), 'false');

      // The network without a key: refused, the switch back off and marked, the backend's words.
      await network.click();
      const networkError = page.getByTestId('server-network-error');
      await networkError.waitFor();
      assert.equal(await text(networkError), 'Not saved: set an API key first: programs on other machines must send it');
      assert.equal(await network.isChecked(), false);
      assert.equal(await network.getAttribute('aria-invalid'), 'true');
      await shot(page, `settings-server-network-refused`, { dir: OUTPUT });

      // A blank key: refused, the field marked.
      await key.fill('   ');
      await page.getByTestId('save-server-key').click();
      const keyError = page.getByTestId('server-key-error');
      await keyError.waitFor();
      assert.equal(await text(keyError), 'Not saved: the key is empty');
      assert.equal(await key.getAttribute('aria-invalid'), 'true');

      // Generate: a key shown to be copied before saving; saved, it is gone from the window.
      await page.getByTestId('generate-server-key').click();
      const generated = await key.inputValue();
      assert.match(generated, /^sk-hearth-[0-9a-f]{32}$/);
      assert.equal(await key.getAttribute('type'), 'text');
      await shot(page, `settings-server-key-generated`, { dir: OUTPUT });
      await page.getByTestId('save-server-key').click();
      await keyState.filter({ hasText: 'A key is saved' }).waitFor();
      assert.deepEqual((await callsOf(page, 'set_server_key')).at(-1), { key: generated });
      assert.equal(await key.inputValue(), '');
      assert.equal(await key.getAttribute('type'), 'password');
      assert.equal(await networkError.count(), 0, 'the refusal went with the change that went through');
      assert.equal(await keyError.count(), 0);

      // Now the network: every interface; programs here still use the loopback address.
      await network.click();
      await page.waitForFunction(() => window.__hearthMock.server.settings.network === true);
      await url.filter({ hasText: `http://127.0.0.1:${PORT}/v1` }).waitFor();
      assert.equal(await network.isChecked(), true);
      assert.equal(await network.getAttribute('aria-invalid'), 'false');

      // The key stays while the network is allowed.
      await page.getByTestId('remove-server-key').click();
      await keyError.waitFor();
      assert.equal(await text(keyError), 'Not saved: the server is open to the network: turn that off before removing its key');
      assert.equal(await text(keyState), 'A key is saved');
      assert.equal(await key.getAttribute('aria-invalid'), 'false', 'the empty field is not what was refused');
      await assertFits(page);
      await shot(page, `settings-server-network`, { dir: OUTPUT });

      // Web pages: none may use it until their origin is listed; a typed one that is not an origin
      // is refused in words, an allowed one is kept as browsers send it.
      await page.getByTestId('add-allowedOrigins-input').fill('chat.example.org/app');
      await page.getByTestId('add-allowedOrigins').click();
      await page.getByTestId('server-allowedOrigins-error').filter({ hasText: 'is not a web origin' }).waitFor();
      await page.getByTestId('remove-allowedOrigins-0').click();
      await page.getByTestId('add-allowedOrigins-input').fill('HTTPS://Chat.Example.org/');
      await page.getByTestId('add-allowedOrigins').click();
      await page.waitForFunction(() => window.__hearthMock.server.settings.allowedOrigins.join() === 'https://chat.example.org');
      await page.getByTestId('list-allowedOrigins').filter({ hasText: /^https:\/\/chat\.example\.org/ }).waitFor();
      await shot(page, `settings-server-origins`, { dir: OUTPUT });
    });
  });

  test('the requests are read every 2 s while the tab is on show, not after; a port being typed is left alone', { timeout: TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      await openServer(page);
      await page.getByTestId('no-server-requests').filter({ hasText: 'No requests yet' }).waitFor();
      await page.getByTestId('server-port').fill('80');

      await page.evaluate((r) => window.__hearthMock.server.requests.unshift(r), REQUESTS[0]);
      await page.getByTestId('server-request').waitFor({ timeout: 5000 });
      assert.equal(await page.getByTestId('server-port').inputValue(), '80', 'a read leaves the text being typed alone');

      // Another tab, then the panel closed: no more reads.
      await page.getByTestId('open-providers').click();
      const reads = (await callsOf(page, 'get_server')).length;
      await page.waitForTimeout(2500);
      assert.equal((await callsOf(page, 'get_server')).length, reads, 'no reads while another tab is on show');
      await page.getByTestId('open-server').click();
      await page.getByTestId('server-request').waitFor();
      assert.equal((await callsOf(page, 'get_server')).length, reads + 1, 'read at once when shown again');
      await page.getByTestId('close-settings').click();
      await page.getByTestId('settings-panel').waitFor({ state: 'detached' });
      const closed = (await callsOf(page, 'get_server')).length;
      await page.waitForTimeout(2500);
      assert.equal((await callsOf(page, 'get_server')).length, closed, 'no reads once the panel is closed');
    });
  });

  test('a model the server loaded for a request is in the header once the window is focused again', { timeout: TIMEOUT }, async () => {
    await withApp({}, async (page) => {
      const name = page.getByTestId('model-name');
      assert.equal(await name.textContent(), MODEL.name);
      await page.evaluate(() => {
        window.__hearthMock.model = { ...window.__hearthMock.model, name: 'Qwen2.5-7B-Instruct-Q4_K_M' };
      });
      await page.evaluate(() => window.dispatchEvent(new Event('focus')));
      await name.filter({ hasText: 'Qwen2.5-7B-Instruct-Q4_K_M' }).waitFor();
    });
  });
});
