// Shared by the browser tests: the built UI (ui/dist) served with the app's CSP, headless Chromium,
// and the mocked Tauri IPC (mock/, TypeScript typed by the bindings generated from Rust) bundled into
// one script and installed before the app loads, answering from the contract the Rust side generates
// (ui/src/ipc/contract.json, bundled with it).
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { serveStatic } from './static-server.mjs';

const UI = fileURLToPath(new URL('../../', import.meta.url));
/** HEARTH_UI_DIST lets two builds of the UI be tested side by side. */
export const DIST = process.env.HEARTH_UI_DIST || `${UI}dist`;
/** Screenshots of the existing screens. */
export const RESULTS = `${UI}test-results`;
/** Screenshots of the history, chat list and search screens. */
export const OUTPUT = `${UI}tests/browser/output`;
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const TIMEOUT = 60_000;

export const MODEL = { name: 'Llama-3.2-3B-Instruct-Q4_K_M', path: '/home/me/models/Llama-3.2-3B-Instruct-Q4_K_M.gguf', sizeBytes: 2_019_377_696 };

// The mock's library beside MODEL (see defaultLibrary in mock/fixtures.ts).
export const HF = '/home/me/.cache/huggingface/hub';
export const MODELS_DIR = '/home/me/.local/share/hearth/models';
export const QWEN_05 = `${HF}/models--Qwen--Qwen2.5-0.5B-Instruct-GGUF/snapshots/9217f5db79a29953eb74d5343926648285ec7e67/qwen2.5-0.5b-instruct-q8_0.gguf`;
export const PHI = `${MODELS_DIR}/Phi-3.5-mini-instruct-Q4_K_M.gguf`;
export const TINY = `${MODELS_DIR}/TinyStories-33M-F16.gguf`;
export const BROKEN = `${MODELS_DIR}/broken.gguf`;

/** A saved reply's stats, as the backend sends them; `over` changes any of it. */
export const replyStats = (over = {}) => ({
  promptTokens: 31, cachedTokens: 0, completionTokens: 58, ttftMs: 142, decodeTps: 41.73, droppedMessages: 0, cutAtLimit: false, promptSource: 'new',
  draftedTokens: 0, acceptedTokens: 0, ...over,
});

let server;
let browser;

/** The mock backend (mock/index.ts and its parts) as one script, bundled once per process. */
let mockBundle;

/**
 * Bundles the mock with rolldown (Vite's bundler, resolved from Vite's own folder): TypeScript stripped, the
 * parts and contract.json in one IIFE that defines `hearthMock.installMockTauri`. The type check is
 * `npm run check`'s (the mock is in tsconfig.json), not this.
 */
async function bundleMock() {
  const require = createRequire(`${UI}node_modules/vite/package.json`);
  const { rolldown } = await import(pathToFileURL(require.resolve('rolldown')).href);
  const bundle = await rolldown({ input: `${UI}tests/browser/mock/index.ts`, platform: 'browser', logLevel: 'warn' });
  try {
    const { output } = await bundle.generate({ format: 'iife', name: 'hearthMock' });
    return output[0].code;
  } finally {
    await bundle.close();
  }
}

/** The script that installs the mock backend with `config` in a page, before anything of the page runs. */
export async function mockScript(config) {
  mockBundle ??= bundleMock();
  // Inside a function, so that the bundle's `var hearthMock` is no global of the page.
  return `(() => {\n${await mockBundle}\nhearthMock.installMockTauri(${JSON.stringify(config)});\n})();`;
}

/** Build if needed, serve the build and launch Chromium (the browser tests, and ui/bench with `extraArgs`). */
export async function launchBrowser(extraArgs = []) {
  if (!existsSync(`${DIST}/index.html`)) {
    execFileSync(process.execPath, [`${UI}node_modules/vite/bin/vite.js`, 'build'], { cwd: UI, stdio: 'inherit' });
  }
  mkdirSync(RESULTS, { recursive: true });
  mkdirSync(OUTPUT, { recursive: true });
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
      ...extraArgs,
    ],
  });
  return browser.version();
}

export async function closeBrowser() {
  await browser?.close();
  await server?.close();
}

/** Launch before the file's tests; close after. */
export function useBrowser() {
  before(() => launchBrowser());
  after(closeBrowser);
}

/** Open the app with a fresh mock backend; collects console errors (CSP violations included). */
export async function openApp(config = {}, { query = '', colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport: { width: 1180, height: 760 }, deviceScaleFactor: 1, colorScheme });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  await page.addInitScript({ content: await mockScript({ model: MODEL, ...config }) });
  await page.goto(server.url + query);
  await page.getByTestId('composer').waitFor();
  return { page, context, problems };
}

export const messages = (page) => page.getByTestId('message');
export const lastAssistant = (page) => page.locator('[data-testid="message"][data-role="assistant"]').last();

/** Opens the chat titled `title`, sends `question` and waits until its reply is the last message, finished. */
export async function askInChat(page, title, question) {
  await page.getByTestId('chat-item').filter({ hasText: title }).click();
  await page.getByTestId('chat-title').filter({ hasText: title }).waitFor();
  await page.getByTestId('composer').fill(question);
  await page.keyboard.press('Enter');
  await page.waitForFunction((q) => {
    const [asked, reply] = [...document.querySelectorAll('[data-testid="message"]')].slice(-2);
    return asked?.textContent.includes(q) && reply?.dataset.role === 'assistant' && reply.dataset.status === 'complete';
  }, question);
}

/** From now on, every dialog the page opens (alert, confirm…) is dismissed and its message kept in the array returned. */
export function collectDialogs(page) {
  const dialogs = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  return dialogs;
}

export async function waitForStatus(locator, status) {
  await locator.and(locator.page().locator(`[data-status="${status}"]`)).waitFor({ timeout: 15_000 });
}

export async function mockState(page) {
  return page.evaluate(() => ({ calls: window.__hearthMock.calls, contractErrors: window.__hearthMock.contractErrors }));
}

/** Open the app, run `body`, then check the mock saw no contract violations and the page no errors. */
export async function withApp(config, body, options) {
  const { page, context, problems } = await openApp(config, options);
  try {
    await body(page);
    assert.deepEqual((await mockState(page)).contractErrors, []);
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  } finally {
    await context.close();
  }
}

/** Pages whose every `shot` is saved in both colour schemes. */
const bothSchemes = new WeakSet();

/** Run `shoot` in a fresh app: each `shot` it takes is saved in the light scheme (`<name>.png`), then
 *  the dark one (`<name>-dark.png`). The page's colours follow the scheme through CSS media queries,
 *  so one app serves both (it took a second app opened and brought to the same state). */
export async function inBothSchemes(config, shoot) {
  await withApp(config, async (page) => {
    bothSchemes.add(page);
    await shoot(page);
  });
}

/**
 * Screenshot `<dir>/<name>.png` once hover and focus transitions have settled; `mouse` is where the
 * pointer rests. An artefact for a person to look at, not a comparison with a reference: it checks
 * only that something was drawn and that the dark scheme differs from the light one.
 */
export async function shot(page, name, { dir = RESULTS, mouse = [600, 400] } = {}) {
  await page.mouse.move(...mouse);
  await page.waitForTimeout(250);
  const light = await save(page, `${dir}/${name}.png`);
  if (bothSchemes.has(page)) {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(150); // colour transitions
    const dark = await save(page, `${dir}/${name}-dark.png`);
    await page.emulateMedia({ colorScheme: 'light' });
    assert.ok(!light.equals(dark), `${name}: the dark scheme drew the same picture as the light one`);
  }
}

/** Saves a screenshot; its bytes. A blank page compresses to a few KB: less than 8 KB drew nothing. */
async function save(page, file) {
  const png = await page.screenshot({ path: file });
  assert.ok(existsSync(file));
  assert.ok(png.length > 8_000, `${file}: ${png.length} bytes, an empty picture`);
  return png;
}
