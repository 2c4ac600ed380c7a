// Browser tests of Settings → Tools: MCP servers added from pasted mcpServers JSON, one that starts and
// lists its tools, one that fails with its stderr (text, never HTML), a tool switched off (saved in the
// config's disabledTools while the server keeps running), a refused paste in the backend's words, a
// server added with the form (its headers masked), switched off, stopped, edited and removed; a server that
// asks to sign in (OAuth), signed in to, and a sign-in that fails; a server's question mid-call (elicitation).
// Run with `npm run test:browser`; screenshots go to tests/browser/output/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { OUTPUT, TIMEOUT, inBothSchemes, mockState, shot, useBrowser } from './harness.mjs';

useBrowser();

const READ_FILE = {
  name: 'read_file',
  title: 'Read a file',
  description: 'Reads a text file under the allowed folders and returns its contents, with line numbers when asked.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  readOnly: true,
};
const WRITE_FILE = {
  name: 'write_file',
  title: null,
  description: 'Creates or overwrites a file under the allowed folders.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
  readOnly: false,
};
const FAILURE = 'it stopped; it exited with status 3; its last words: "panic: GITHUB_PERSONAL_ACCESS_TOKEN is not set"';
const STDERR = [
  'GitHub MCP Server running on stdio',
  '<b>not bold</b> <img src=x onerror="window.__pwned = true">',
  'goroutine 1 [running]:',
  'main.main()',
  '\t/src/cmd/github-mcp-server/main.go:42 +0x1d4',
  'panic: GITHUB_PERSONAL_ACCESS_TOKEN is not set',
];
/** How each server's start goes in the mock, by name. */
const SCRIPTS = {
  files: { startMs: 900, tools: [READ_FILE, WRITE_FILE] },
  github: { startMs: 600, failed: { message: FAILURE, stderr: STDERR } },
};
const PASTED = {
  mcpServers: {
    files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/Documents'] },
    github: { command: 'docker', args: ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server'], env: { GITHUB_PERSONAL_ACCESS_TOKEN: '' } },
  },
};
const NOT_JSON = 'this is not JSON: expected `,` or `}` at line 1 column 18';

const text = async (locator) => (await locator.textContent()).replace(/\s+/g, ' ').trim();
const callsOf = async (page, cmd) => (await mockState(page)).calls.filter((c) => c.cmd === cmd).map((c) => c.payload);
const row = (page, name) => page.locator(`[data-testid="tool-server"][data-server="${name}"]`);
const mockServers = (page) => page.evaluate(() => window.__hearthMock.toolServers);

async function openTools(page) {
  await page.getByTestId('open-settings').click();
  await page.getByTestId('open-tools').click();
}

/** Nothing in the tab is wider than the panel, and the tab strip fits its row. */
async function assertFits(page) {
  const { scroll, client } = await page.locator('#settings-tab-panel .scroll').evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
  assert.ok(scroll <= client, `the tab fits its panel (${scroll} <= ${client})`);
  const tabs = await page.locator('[role="tablist"][aria-label="Settings sections"]').evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
  assert.ok(tabs.scroll <= tabs.client, `the tabs fit their row (${tabs.scroll} <= ${tabs.client})`);
}

describe('Settings → Tools', () => {
  test('pasted servers start: one ready with its tools, one failed with its stderr; a tool switched off', { timeout: 2 * TIMEOUT }, async () => {
    await inBothSchemes({ toolScripts: SCRIPTS }, async (page) => {
      await openTools(page);
      const empty = page.getByTestId('tools-empty');
      await empty.waitFor();
      assert.match(await text(empty), /No tool servers yet.*MCP server gives the model tools/);
      await assertFits(page);
      await shot(page, 'settings-tools-empty', { dir: OUTPUT });

      // A paste the backend refuses: its words beside the box, nothing added.
      await page.getByTestId('paste-tool-servers').click();
      const box = page.getByTestId('tool-paste-json');
      assert.equal(await page.getByTestId('tool-paste').getByText('Paste the mcpServers JSON from Claude Desktop, Cursor or LM Studio').count(), 1);
      await page.evaluate((message) => (window.__hearthMock.failNext.add_tool_servers = { kind: 'invalidInput', message, field: 'mcpServers' }), NOT_JSON);
      await box.fill('{"mcpServers": {"a" 1}}');
      await page.getByTestId('tool-paste-add').click();
      const pasteError = page.getByTestId('tool-paste-error');
      await pasteError.waitFor();
      assert.equal(await text(pasteError), `Not added: ${NOT_JSON}`);
      assert.equal(await box.getAttribute('aria-invalid'), 'true');
      await shot(page, 'settings-tools-paste-refused', { dir: OUTPUT });

      // Two servers pasted: added, then each started, shown starting, then where it got.
      const json = JSON.stringify(PASTED, null, 2);
      await box.fill(json);
      await page.getByTestId('tool-paste-add').click();
      await page.getByTestId('tool-paste').waitFor({ state: 'detached' });
      assert.deepEqual((await callsOf(page, 'add_tool_servers')).at(-1), { json });
      const files = row(page, 'files');
      const github = row(page, 'github');
      await files.and(page.locator('[data-state="starting"]')).waitFor();
      assert.equal(await text(files.getByTestId('tool-server-state')), 'Starting…');
      assert.equal(await text(files.getByTestId('tool-server-runs')), 'npx -y @modelcontextprotocol/server-filesystem /home/me/Documents');
      assert.deepEqual((await callsOf(page, 'restart_tool_server')).map((p) => p.name).sort(), ['files', 'github']);
      assert.equal(await empty.count(), 0);

      await github.and(page.locator('[data-state="failed"]')).waitFor();
      assert.equal(await text(github.getByTestId('tool-server-state')), 'Failed');
      // The backend's words, as a sentence.
      assert.equal(await text(github.getByTestId('tool-server-failure')), `I${FAILURE.slice(1)}`);
      const stderr = github.getByTestId('tool-server-stderr');
      assert.equal(await text(stderr.locator('summary')), 'Its last output (6 lines)');
      await stderr.locator('summary').click();
      const lines = github.getByTestId('tool-server-stderr-lines');
      await lines.waitFor();
      // Text, never HTML: the server's words as it wrote them, nothing of them made into elements.
      assert.equal(await lines.textContent(), STDERR.join('\n'));
      assert.equal(await lines.locator('*').count(), 0);
      assert.equal(await page.evaluate(() => window.__pwned), undefined);
      assert.equal(await github.getByTestId('tool-server-stop').count(), 0, 'nothing runs to stop');
      assert.equal(await text(github.getByTestId('tool-server-restart')), 'Restart');

      await files.and(page.locator('[data-state="ready"]')).waitFor();
      assert.equal(await text(files.getByTestId('tool-server-state')), 'Ready · 2 tools');
      await files.getByTestId('tool-server-tools-toggle').click();
      const tools = files.getByTestId('tool');
      assert.equal(await tools.count(), 2);
      assert.match(await text(tools.nth(0)), /^read_file Read a file read-only Reads a text file/);
      assert.equal(await tools.nth(0).getByTestId('tool-read-only').count(), 1);
      assert.equal(await tools.nth(1).getByTestId('tool-read-only').count(), 0);
      assert.deepEqual(await files.getByTestId('tool-enabled').evaluateAll((boxes) => boxes.map((b) => b.checked)), [true, true]);
      assert.equal(await files.getByTestId('tool-server-stop').count(), 1);
      await assertFits(page);
      await shot(page, 'settings-tools', { dir: OUTPUT });

      // A tool switched off: the whole list saved, the tool in the config's disabledTools; the server runs on.
      const saves = (await callsOf(page, 'save_tool_servers')).length;
      await tools.nth(1).getByTestId('tool-enabled').uncheck();
      await page.waitForFunction((n) => window.__hearthMock.calls.filter((c) => c.cmd === 'save_tool_servers').length > n, saves);
      const sent = (await callsOf(page, 'save_tool_servers')).at(-1).servers;
      assert.deepEqual(sent.map((c) => c.name), ['files', 'github']);
      assert.deepEqual(sent[0].disabledTools, ['write_file']);
      assert.deepEqual(sent[1].disabledTools, []);
      assert.deepEqual(sent[0].transport, { kind: 'stdio', ...PASTED.mcpServers.files, env: {}, cwd: null });
      await files.getByText('1 switched off').waitFor();
      assert.deepEqual((await mockServers(page)).map((s) => [s.config.name, s.config.disabledTools, s.state.state]), [
        ['files', ['write_file'], 'ready'],
        ['github', [], 'failed'],
      ]);
      assert.equal(await tools.nth(1).getByTestId('tool-enabled').isChecked(), false);
      assert.equal(await text(files.getByTestId('tool-server-state')), 'Ready · 2 tools');
      await shot(page, 'settings-tools-tool-off', { dir: OUTPUT });

      // And on again.
      await tools.nth(1).getByTestId('tool-enabled').check();
      await page.waitForFunction(() => window.__hearthMock.toolServers[0].config.disabledTools.length === 0);
    });
  });

  test('the form adds an HTTP server with masked headers; switched off, stopped, edited, removed', { timeout: 2 * TIMEOUT }, async () => {
    const files = {
      config: { name: 'files', transport: { kind: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me'], env: { LOG_LEVEL: 'debug' }, cwd: null }, enabled: true, disabledTools: [] },
      state: { state: 'ready', tools: [READ_FILE] },
    };
    await inBothSchemes({ toolServers: [files], toolScripts: { tracker: { startMs: 400, tools: [{ ...READ_FILE, name: 'search_issues', title: null, readOnly: true }] } } }, async (page) => {
      await openTools(page);
      const first = row(page, 'files');
      await first.waitFor();
      assert.equal(await text(first.getByTestId('tool-server-state')), 'Ready · 1 tool');

      // The form: a URL and a header, its value masked until shown.
      await page.getByTestId('add-tool-server').click();
      const form = page.getByTestId('tool-server-form');
      await form.getByTestId('tool-form-name').fill('tracker');
      await form.getByTestId('tool-form-kind-http').click();
      await form.getByTestId('tool-form-url').fill('https://mcp.tracker.example/mcp');
      const headers = form.getByTestId('tool-form-headers');
      await headers.fill('Authorization: Bearer tr_secret_123\nX-Team:  core ');
      assert.ok(await headers.evaluate((el) => el.classList.contains('masked')), 'the headers are masked');
      await shot(page, 'settings-tools-form', { dir: OUTPUT });

      // A line that is not `Name: value`: refused here, without repeating the line (it may hold a secret).
      await headers.fill('Authorization Bearer tr_secret_123');
      await form.getByTestId('tool-form-save').click();
      assert.equal(await text(form.getByTestId('tool-form-error')), 'Not saved: header line 1 is not Name: value');
      assert.equal((await callsOf(page, 'save_tool_servers')).length, 0);

      await headers.fill('Authorization: Bearer tr_secret_123\nX-Team:  core ');
      await form.getByTestId('tool-form-save').click();
      await form.waitFor({ state: 'detached' });
      const sent = (await callsOf(page, 'save_tool_servers')).at(-1).servers;
      assert.deepEqual(sent, [
        files.config,
        { name: 'tracker', transport: { kind: 'http', url: 'https://mcp.tracker.example/mcp', headers: { Authorization: 'Bearer tr_secret_123', 'X-Team': 'core' } }, enabled: true, disabledTools: [] },
      ]);
      const tracker = row(page, 'tracker');
      await tracker.and(page.locator('[data-state="ready"]')).waitFor();
      assert.equal(await text(tracker.getByTestId('tool-server-runs')), 'HTTP https://mcp.tracker.example/mcp');
      assert.ok(!(await page.getByTestId('settings-panel').textContent()).includes('tr_secret_123'), 'no header value on show');

      // Switched off: saved, its state Off, nothing to start or stop.
      await first.getByTestId('tool-server-enabled').click();
      await first.and(page.locator('[data-state="off"]')).waitFor();
      assert.equal(await text(first.getByTestId('tool-server-state')), 'Off');
      assert.equal((await callsOf(page, 'save_tool_servers')).at(-1).servers[0].enabled, false);
      assert.equal(await first.getByTestId('tool-server-restart').count(), 0);
      assert.equal(await first.getByTestId('tool-server-stop').count(), 0);

      // Stopped: it starts again when a chat needs its tools.
      await tracker.getByTestId('tool-server-stop').click();
      await tracker.and(page.locator('[data-state="idle"]')).waitFor();
      assert.equal(await text(tracker.getByTestId('tool-server-state')), 'Starts when needed');
      assert.equal(await text(tracker.getByTestId('tool-server-restart')), 'Start');
      assert.deepEqual((await callsOf(page, 'stop_tool_server')).at(-1), { name: 'tracker' });
      await shot(page, 'settings-tools-off-and-idle', { dir: OUTPUT });

      // Edit: the form shows what is saved (the environment masked); a changed argument saved in place.
      await first.getByTestId('tool-server-edit').click();
      const edit = first.getByTestId('tool-server-form');
      assert.equal(await edit.getByTestId('tool-form-command').inputValue(), 'npx');
      assert.equal(await edit.getByTestId('tool-form-args').inputValue(), '-y\n@modelcontextprotocol/server-filesystem\n/home/me');
      assert.equal(await edit.getByTestId('tool-form-env').inputValue(), 'LOG_LEVEL=debug');
      await edit.getByTestId('tool-form-args').fill('-y\n@modelcontextprotocol/server-filesystem\n/home/me/Documents');
      await shot(page, 'settings-tools-edit', { dir: OUTPUT });
      await edit.getByTestId('tool-form-save').click();
      await edit.waitFor({ state: 'detached' });
      const edited = (await callsOf(page, 'save_tool_servers')).at(-1).servers[0];
      assert.deepEqual(edited.transport.args, ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/Documents']);
      assert.equal(edited.enabled, false, 'the switch stays as it was');
      assert.equal(edited.transport.env.LOG_LEVEL, 'debug');

      // Removed, after the inline confirm.
      await tracker.getByTestId('tool-server-remove').click();
      await tracker.getByTestId('inline-confirm').waitFor();
      await tracker.getByTestId('confirm-yes').click();
      await tracker.waitFor({ state: 'detached' });
      assert.deepEqual((await callsOf(page, 'save_tool_servers')).at(-1).servers.map((c) => c.name), ['files']);
      await assertFits(page);
    });
  });

  test('a server that asks to sign in: Sign in opens the browser, and once signed in it starts with its token', { timeout: 2 * TIMEOUT }, async () => {
    const linear = {
      config: { name: 'linear', transport: { kind: 'http', url: 'https://mcp.linear.example/mcp', headers: {} }, enabled: true, disabledTools: [] },
      state: { state: 'signIn' },
    };
    const tools = [{ ...READ_FILE, name: 'list_issues', title: 'List issues', readOnly: true }];
    await inBothSchemes({ toolServers: [linear], toolScripts: { linear: { signIn: true, signInMs: 1200, tools } } }, async (page) => {
      await openTools(page);
      const server = row(page, 'linear');
      await server.waitFor();
      assert.equal(await text(server.getByTestId('tool-server-state')), 'Sign-in needed');
      assert.match(await text(server.getByTestId('tool-server-sign-in')), /asks you to sign in: Hearth opens its sign-in page in your browser/);
      await shot(page, 'settings-tools-sign-in', { dir: OUTPUT });

      await server.getByTestId('tool-server-sign-in-button').click();
      await server.getByText('Finish signing in in your browser…').waitFor();
      assert.equal(await server.getByTestId('tool-server-sign-in-button').isDisabled(), true, 'one sign-in at a time');
      await server.and(page.locator('[data-state="ready"]')).waitFor();
      assert.equal(await text(server.getByTestId('tool-server-state')), 'Ready · 1 tool');
      assert.deepEqual((await callsOf(page, 'sign_in_tool_server')).map((p) => p.name), ['linear']);
      const saved = (await mockServers(page)).find((s) => s.config.name === 'linear');
      assert.deepEqual(saved.config.transport.headers, {}, 'the sign-in is kept apart from its headers');
    });
  });

  test('a machine client: its id and secret or key, a refused secret shown on the server, the right one signs it in', { timeout: 2 * TIMEOUT }, async () => {
    const vault = {
      config: { name: 'vault', transport: { kind: 'http', url: 'https://mcp.corp.example/mcp', headers: {} }, enabled: true, disabledTools: [] },
      state: { state: 'signIn' },
    };
    const tools = [{ ...READ_FILE, name: 'read_secret', title: 'Read a secret', readOnly: true }];
    await inBothSchemes({ toolServers: [vault], toolScripts: { vault: { signIn: true, signInMs: 400, machineSecret: 's3cret', tools } } }, async (page) => {
      await openTools(page);
      const server = row(page, 'vault');
      await server.getByTestId('machine-client-toggle').click();
      await server.getByTestId('machine-client-id').fill('  hearth-desktop ');
      // A private key: its PEM box and its algorithm.
      await server.getByTestId('machine-client-proof').getByText('Private key').click();
      await server.getByTestId('machine-client-key').waitFor();
      assert.equal(await server.getByTestId('machine-client-algorithm').inputValue(), 'ES256');
      await shot(page, 'settings-tools-machine-client', { dir: OUTPUT });
      await server.getByTestId('machine-client-proof').getByText('Secret').click();
      const secret = server.getByTestId('machine-client-secret');
      assert.equal(await secret.getAttribute('type'), 'password');

      // A secret the authorization server refuses: the server shows why, and the form stays to try again.
      await secret.fill('wrong');
      await server.getByTestId('machine-client-sign-in').click();
      await server.getByText('Signing in without a page…').waitFor();
      await server.and(page.locator('[data-state="failed"]')).waitFor();
      assert.match(await text(server.getByTestId('tool-server-failure')), /Signing in failed: the authorization server refused the client/);
      assert.equal(await server.getByTestId('machine-client-id').inputValue(), '  hearth-desktop ', 'the form keeps what was typed');
      await server.getByTestId('machine-client-secret').fill('s3cret');
      await server.getByTestId('machine-client-sign-in').click();
      await server.and(page.locator('[data-state="ready"]')).waitFor();
      assert.equal(await server.getByTestId('machine-client').count(), 0, 'signed in: no form');
      const given = await page.evaluate(() => window.__hearthMock.machineSignIns);
      assert.deepEqual(given, [
        { name: 'vault', credentials: { kind: 'secret', clientId: 'hearth-desktop', clientSecret: 'wrong' } },
        { name: 'vault', credentials: { kind: 'secret', clientId: 'hearth-desktop', clientSecret: 's3cret' } },
      ]);
    });
  });

  test('an enterprise identity: the identity provider, its client and the token it issued sign the user in', { timeout: TIMEOUT }, async () => {
    const ledger = {
      config: { name: 'ledger', transport: { kind: 'http', url: 'https://mcp.corp.example/ledger', headers: {} }, enabled: true, disabledTools: [] },
      state: { state: 'signIn' },
    };
    const tools = [{ ...READ_FILE, name: 'read_ledger', title: 'Read the ledger', readOnly: true }];
    await inBothSchemes({ toolServers: [ledger], toolScripts: { ledger: { signIn: true, signInMs: 200, idpToken: 'ada.id-token', tools } } }, async (page) => {
      await openTools(page);
      const server = row(page, 'ledger');
      await server.getByTestId('machine-client-toggle').click();
      await server.getByTestId('machine-client-proof').getByText('Identity provider').click();
      await server.getByTestId('machine-client-id').fill('hearth-enterprise');
      assert.equal(await server.getByTestId('machine-client-secret').getAttribute('placeholder'), 'none: a public client');
      await server.getByTestId('machine-client-idp').fill(' https://login.corp.example ');
      await server.getByTestId('machine-client-idp-id').fill('hearth-at-idp');
      assert.equal(await server.getByTestId('machine-client-idp-secret').getAttribute('type'), 'password');
      await server.getByTestId('machine-client-idp-kind').getByText('Refresh token').click();
      await server.getByTestId('machine-client-idp-kind').getByText('ID token').click();
      await server.getByTestId('machine-client-idp-token').fill('ada.id-token\n');
      await shot(page, 'settings-tools-enterprise-identity', { dir: OUTPUT });
      await server.getByTestId('machine-client-sign-in').click();
      await server.and(page.locator('[data-state="ready"]')).waitFor();
      assert.equal(await text(server.getByTestId('tool-server-state')), 'Ready · 1 tool');
      const given = await page.evaluate(() => window.__hearthMock.machineSignIns);
      assert.deepEqual(given, [adaAt('ledger', 'ada.id-token', 'idToken')]);
    });
  });

  /** Ada's enterprise identity as the backend is given it for server `name`, with the identity provider's token. */
  const adaAt = (name, idpToken, idpTokenKind) => ({
    name,
    credentials: {
      kind: 'enterprise',
      clientId: 'hearth-enterprise',
      clientSecret: '',
      idpIssuer: 'https://login.corp.example',
      idpClientId: 'hearth-at-idp',
      idpClientSecret: '',
      idpToken,
      idpTokenKind,
    },
  });

  /** Opens the organisation's sign-in under `server` and gives Ada's enterprise identity, all but its token. */
  async function fillIdentity(server) {
    await server.getByTestId('machine-client-toggle').click();
    await server.getByTestId('machine-client-proof').getByText('Identity provider').click();
    await server.getByTestId('machine-client-id').fill('hearth-enterprise');
    await server.getByTestId('machine-client-idp').fill('https://login.corp.example');
    await server.getByTestId('machine-client-idp-id').fill('hearth-at-idp');
  }

  test('an enterprise identity without a token: the user signs in at the identity provider\'s page', { timeout: TIMEOUT }, async () => {
    const desk = {
      config: { name: 'desk', transport: { kind: 'http', url: 'https://mcp.corp.example/desk', headers: {} }, enabled: true, disabledTools: [] },
      state: { state: 'signIn' },
    };
    const tools = [{ ...READ_FILE, name: 'read_desk', title: 'Read the desk', readOnly: true }];
    const script = { signIn: true, signInMs: 400, idpToken: 'ada-idp-refresh', tools };
    await inBothSchemes({ toolServers: [desk], toolScripts: { desk: script } }, async (page) => {
      await openTools(page);
      const server = row(page, 'desk');
      await fillIdentity(server);
      // "Sign in there" is the default: no token to paste, the page opens instead.
      assert.equal(await server.getByTestId('machine-client-idp-token').count(), 0);
      await server.getByTestId('machine-client-idp-page').waitFor();
      const button = server.getByTestId('machine-client-sign-in');
      assert.equal(await text(button), 'Sign in at the provider');
      await shot(page, 'settings-tools-enterprise-sign-in-there', { dir: OUTPUT });
      await button.click();
      await server.getByText('Finish signing in at your identity provider, in your browser…').waitFor();
      await server.and(page.locator('[data-state="ready"]')).waitFor();
      assert.equal(await text(server.getByTestId('tool-server-state')), 'Ready · 1 tool');
      const given = await page.evaluate(() => window.__hearthMock.machineSignIns);
      assert.deepEqual(given, [adaAt('desk', 'ada-idp-refresh', 'refreshToken')]);
    });
    // Refused at the identity provider: said under the server, which still asks to sign in.
    const refused = { ...script, signInFailed: 'the sign-in was refused: User is not assigned to the client application.' };
    await inBothSchemes({ toolServers: [desk], toolScripts: { desk: refused } }, async (page) => {
      await openTools(page);
      const server = row(page, 'desk');
      await fillIdentity(server);
      await server.getByTestId('machine-client-sign-in').click();
      const error = server.getByTestId('tool-server-action-error');
      await error.waitFor();
      assert.equal(await text(error), 'Not done: signing in failed: the sign-in was refused: User is not assigned to the client application.');
      assert.equal(await server.getAttribute('data-state'), 'signIn');
    });
  });

  test('a sign-in that fails says why, in the backend\'s words, and can be tried again', { timeout: TIMEOUT }, async () => {
    const linear = {
      config: { name: 'linear', transport: { kind: 'http', url: 'https://mcp.linear.example/mcp', headers: {} }, enabled: true, disabledTools: [] },
      state: { state: 'signIn' },
    };
    const script = { signIn: true, signInMs: 100, signInFailed: 'no sign-in came back within 5 minutes; sign in again' };
    await inBothSchemes({ toolServers: [linear], toolScripts: { linear: script } }, async (page) => {
      await openTools(page);
      const server = row(page, 'linear');
      await server.getByTestId('tool-server-sign-in-button').click();
      const error = server.getByTestId('tool-server-action-error');
      await error.waitFor();
      assert.equal(await text(error), 'Not done: signing in failed: no sign-in came back within 5 minutes; sign in again');
      assert.equal(await server.getByTestId('tool-server-sign-in-button').isDisabled(), false);
    });
  });

  test('a server\'s question mid-call: its form with its defaults, checked as typed, sent; another declined', { timeout: 2 * TIMEOUT }, async () => {
    const fields = [
      { name: 'name', title: 'Your name', description: 'As on your card', required: true, kind: { kind: 'text', format: null, minLength: null, maxLength: null }, default: null },
      { name: 'email', title: 'Email', description: null, required: false, kind: { kind: 'text', format: 'email', minLength: null, maxLength: null }, default: null },
      { name: 'guests', title: 'Guests', description: null, required: false, kind: { kind: 'number', integer: true, minimum: 1, maximum: 8 }, default: 2 },
      { name: 'table', title: 'Table', description: null, required: false, kind: { kind: 'choice', options: [{ value: 'in', label: 'Inside' }, { value: 'out', label: 'Terrace' }] }, default: 'in' },
      { name: 'notify', title: 'Text me when it is ready', description: null, required: false, kind: { kind: 'boolean' }, default: true },
    ];
    const questions = [
      { id: 7, server: 'bistro', message: 'To book the table, the restaurant needs:\n<b>not bold</b>', fields, link: null },
      { id: 8, server: 'bistro', message: 'Add a dessert?', fields: [], link: null },
    ];
    await inBothSchemes({ toolQuestions: questions }, async (page) => {
      const dialog = page.getByTestId('tool-question');
      await dialog.waitFor();
      assert.equal(await text(dialog.getByTestId('tool-question-server')), 'bistro');
      assert.equal(await dialog.getByTestId('tool-question-message').innerText(), 'To book the table, the restaurant needs:\n<b>not bold</b>', 'the server\'s words, as text');
      assert.equal(await text(dialog.getByTestId('tool-question-more')), '1 more after this');
      const input = (name) => dialog.locator(`[data-field="${name}"] [data-testid="question-input"]`);
      assert.equal(await input('guests').inputValue(), '2');
      assert.equal(await input('table').inputValue(), 'in');
      assert.equal(await input('notify').isChecked(), true);

      // Checked as typed: a required field left empty, a number out of its range.
      await input('guests').fill('12');
      await input('guests').blur();
      assert.equal(await text(dialog.locator('[data-field="guests"] [data-testid="question-problem"]')), 'At most 8');
      await dialog.getByTestId('tool-question-send').click();
      assert.equal(await text(dialog.locator('[data-field="name"] [data-testid="question-problem"]')), 'Required');
      assert.equal(await mockState(page).then((m) => m.calls.filter((c) => c.cmd === 'answer_tool_question').length), 0, 'nothing sent that does not fit');
      await shot(page, 'tool-question', { dir: OUTPUT });

      await input('name').fill('Ada Lovelace');
      await input('email').fill('ada@example.com');
      await input('guests').fill('4');
      await input('table').selectOption('out');
      await dialog.getByTestId('tool-question-send').click();
      await dialog.getByTestId('tool-question-message').filter({ hasText: 'Add a dessert?' }).waitFor();
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="tool-question"]').length === 1); // the first one's fade
      await dialog.getByTestId('tool-question-decline').click();
      await dialog.waitFor({ state: 'detached' });
      const answers = await page.evaluate(() => window.__hearthMock.questionAnswers);
      assert.deepEqual(answers, [
        { id: 7, answer: { action: 'accept', content: { name: 'Ada Lovelace', email: 'ada@example.com', guests: 4, table: 'out', notify: true } } },
        { id: 8, answer: { action: 'decline' } },
      ]);
    });
  });

  test('a server\'s link: the address whole, as text, its host apart, a warning; opened only on Open, kept when it cannot be', { timeout: 2 * TIMEOUT }, async () => {
    const link = (id, url, host, warning = null) => ({ id, server: 'bistro', message: 'Link your bistro account to book.', fields: [], link: { url, host, warning } });
    const questions = [
      link(9, 'https://bistro.example/link?session=7&next=https://other.example/', 'bistro.example'),
      link(10, 'https://xn--bstro-cta.example/pay', 'xn--bstro-cta.example', 'its name is written in another alphabet (xn--…): it may imitate a site you know'),
    ];
    await inBothSchemes({ toolQuestions: questions, browserFails: 'xdg-open is not installed' }, async (page) => {
      const dialog = page.getByTestId('tool-question');
      await dialog.waitFor();
      const url = dialog.getByTestId('question-link-url');
      assert.equal(await text(url), 'https://bistro.example/link?session=7&next=https://other.example/');
      assert.equal(await text(dialog.getByTestId('question-link-host')), 'bistro.example');
      assert.equal(await dialog.locator('a').count(), 0, 'nothing in a question is a link to click');
      assert.equal(await dialog.getByTestId('question-link-warning').count(), 0);
      const open = dialog.getByTestId('tool-question-send');
      assert.equal(await text(open), 'Open in browser');
      await shot(page, 'tool-question-link', { dir: OUTPUT });

      // No browser: the question stays, and says why.
      await open.click();
      assert.equal(await text(dialog.getByTestId('tool-question-error')), 'Not opened: the browser could not be opened: xdg-open is not installed');
      assert.equal(await page.evaluate(() => window.__hearthMock.toolQuestions.length), 2);
      await page.evaluate(() => (window.__hearthMock.browserFails = null));
      await open.click();
      await dialog.getByTestId('question-link-host').filter({ hasText: 'xn--bstro-cta.example' }).waitFor();
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="tool-question"]').length === 1); // the first one's fade
      assert.equal(await text(dialog.getByTestId('question-link-warning')), 'Look twice at this address: its name is written in another alphabet (xn--…): it may imitate a site you know.');
      await shot(page, 'tool-question-link-warning', { dir: OUTPUT });
      await dialog.getByTestId('tool-question-decline').click();
      await dialog.waitFor({ state: 'detached' });
      const mock = await page.evaluate(() => ({ opened: window.__hearthMock.opened, questionAnswers: window.__hearthMock.questionAnswers }));
      assert.deepEqual(mock.opened, ['https://bistro.example/link?session=7&next=https://other.example/']);
      assert.deepEqual(mock.questionAnswers, [
        { id: 9, answer: { action: 'accept', content: {} } },
        { id: 10, answer: { action: 'decline' } },
      ]);
    });
  });
});
