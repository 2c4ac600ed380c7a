// What the end-to-end files share: screenshots, sending a message, waiting for replies, the fake
// provider, adding a provider in Settings and picking a model in the chat header.
import { spawn } from "node:child_process";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import readline from "node:readline";

import { before, after } from "node:test";

import { KEYS, startDriver } from "./webdriver.mjs";

export const OUT = path.join(import.meta.dirname, "output");
export const REPLY = '[data-testid="message"][data-role="assistant"]';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The last reply with `status` whose whole text (its label and buttons included) passes `accept`. */
export const replyWith = (session, status, accept = () => true) =>
  session.waitFor(`${REPLY}[data-status="${status}"]`, { accept, timeoutMs: 120_000 });

/** The written text of the reply with `status`, once it passes `accept`: a message's whole text
 *  holds its model's name and buttons too, enough to pass "more than N characters" unwritten. */
export const replyTextWith = (session, status, accept) =>
  session.waitFor(`${REPLY}[data-status="${status}"] [data-testid="message-content"]`, { accept, timeoutMs: 120_000 });
export const nonEmpty = (text) => text.trim().length > 0;

/** Saves the window as tests/e2e/output/{name}.png. */
export async function shot(session, name) {
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, `${name}.png`), await session.screenshot());
}

/** Types `text` into the composer and sends it with Enter. */
export async function send(session, text) {
  const composer = await session.waitFor('[data-testid="composer"]');
  await session.type(composer, text);
  await session.type(composer, KEYS.enter);
}

/** Waits for the `n`th reply (1-based) to end with `status`; returns its element. */
export async function nthReply(session, n, status) {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    try {
      const replies = await session.findAll(`${REPLY}[data-status]`);
      if (replies.length >= n && (await session.attribute(replies[n - 1], "data-status")) === status) return replies[n - 1];
    } catch (e) {
      if (!String(e.message).includes("stale element")) throw e; // re-rendered meanwhile: look again
    }
    await sleep(100);
  }
  throw new Error(`reply ${n} never became ${status}`);
}

export const modelOf = async (session, element) =>
  (await session.text(await session.within(element, '[data-testid="message-model"]'))).trim();

export const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** Starts hearth-testkit's fake_provider example (OpenAI's and Anthropic's wire formats). */
export async function startFake(fakeProvider) {
  const child = spawn(fakeProvider, [], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise((resolve) => readline.createInterface({ input: child.stdout }).once("line", resolve));
  const [, url, key] = line.match(/listening on (\S+) \(key (\S+)\)/);
  return { child, url, key };
}

/** Picks a model in the header's menu (after a screenshot of the open menu, if `shotName`). */
export async function chooseModel(session, provider, modelId, shotName) {
  await session.click(await session.waitFor('[data-testid="model-switcher"]'));
  const option = provider === "local"
    ? '[data-testid="model-option"][data-provider="local"]'
    : `[data-testid="model-option"][data-provider="${provider}"][data-model="${modelId}"]`;
  const found = await session.waitFor(option);
  if (shotName) await shot(session, shotName);
  await session.press(found);
  if (provider !== "local") {
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes(modelId) });
  }
}

/**
 * Sets Max tokens for every chat in Settings and closes it: a sampled reply's length must not
 * decide how long a test takes.
 */
export async function setMaxTokens(session, n) {
  await session.click(await session.waitFor('[data-testid="open-settings"]'));
  const maxTokens = await session.waitFor('[data-testid="field-maxTokens"]');
  await session.clear(maxTokens);
  await session.type(maxTokens, String(n));
  await session.waitFor('[data-testid="settings-status"]', { accept: (t) => t.includes("Saved") });
  await session.click(await session.waitFor('[data-testid="close-settings"]'));
}

export async function fill(session, card, testid, value) {
  const input = await session.within(card, `[data-testid="${testid}"]`);
  await session.clear(input);
  if (value) await session.type(input, value);
}

/** Adds an OpenAI-compatible provider in Settings → Providers; returns its card and id. */
export async function addProvider(session, { name, url, key = "", models = "" }) {
  await session.click(await session.waitFor('[data-testid="open-settings"]'));
  await session.press(await session.waitFor('[data-testid="open-providers"]'));
  const before = (await session.findAll('[data-testid="provider-card"]')).length;
  await session.press(await session.waitFor('[data-testid="add-provider"]'));
  let cards;
  while ((cards = await session.findAll('[data-testid="provider-card"]')).length === before) await sleep(100);
  const card = cards[cards.length - 1];
  await fill(session, card, "provider-name", name);
  await fill(session, card, "provider-base-url", url);
  if (models) await fill(session, card, "provider-models", models);
  if (key) await fill(session, card, "provider-key", key);
  await session.press(await session.within(card, '[data-testid="save-provider"]'));
  await session.press(await session.within(card, '[data-testid="test-provider"]'));
  const status = await session.within(card, '[data-testid="provider-status"]');
  await session.waitFor('[data-testid="provider-status"]', { accept: (t) => t.includes("Connected") });
  assert.match(await session.text(status), /Connected/);
  return { card, id: await session.attribute(card, "data-provider") };
}

/** A fresh data dir whose models folder links the test model (the app loads it at start). */
export function dataDirWith(model, prefix) {
  const dir = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR || "/tmp"), prefix));
  fs.mkdirSync(path.join(dir, "models"));
  fs.symlinkSync(model, path.join(dir, "models", path.basename(model)));
  return dir;
}

/**
 * `dir`'s models folder with the test model and, beside it, the test's image projector
 * (scripts/make-test-models.py): the default model then reads images.
 */
export function withProjector(dir, model) {
  fs.mkdirSync(path.join(dir, "models"));
  fs.symlinkSync(model, path.join(dir, "models", path.basename(model)));
  const projector = path.join(path.dirname(model), "vision", "mmproj-hearth-test.gguf");
  fs.symlinkSync(projector, path.join(dir, "models", path.basename(projector)));
}

/**
 * Pastes a screenshot-like PNG (drawn in the page) into the message box, as the webview's paste
 * event carries a copied image; true when the app took the paste.
 */
export function pasteImage(session) {
  const script = `
    const canvas = Object.assign(document.createElement("canvas"), { width: 96, height: 64 });
    const g = canvas.getContext("2d");
    g.fillStyle = "#2d6cdf"; g.fillRect(0, 0, 96, 64);
    g.fillStyle = "#f4f1ec"; g.fillRect(12, 10, 72, 44);
    g.fillStyle = "#e4570f"; g.fillRect(12, 10, 72, 8);
    const bytes = Uint8Array.from(atob(canvas.toDataURL("image/png").split(",")[1]), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], "", { type: "image/png" }));
    const box = document.querySelector('[data-testid="composer"]');
    box.focus();
    const event = new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true });
    box.dispatchEvent(event);
    return event.defaultPrevented;`;
  return session.cmd("POST", "/execute/sync", { script, args: [] });
}

/** Waits until the composer's image chip shows its thumbnail, drawn (under the app's CSP). */
export async function thumbnailDrawn(session) {
  const deadline = Date.now() + 20_000;
  const drawn = 'const img = document.querySelector(\'[data-testid="attachment-thumbnail"]\'); return !!img && img.complete && img.naturalWidth > 0;';
  while (!(await session.cmd("POST", "/execute/sync", { script: drawn, args: [] }))) {
    assert.ok(Date.now() < deadline, "the pasted image's thumbnail is drawn");
    await sleep(100);
  }
}

/** A 24-bit BMP of `width` × `height` pixels, each `pixel(x, y)` as [r, g, b]. */
export function bmp(width, height, pixel) {
  const row = Math.ceil((width * 3) / 4) * 4;
  const out = Buffer.alloc(54 + row * height);
  out.write("BM", 0);
  out.writeUInt32LE(out.length, 2);
  out.writeUInt32LE(54, 10);
  out.writeUInt32LE(40, 14);
  out.writeInt32LE(width, 18);
  out.writeInt32LE(height, 22);
  out.writeUInt16LE(1, 26);
  out.writeUInt16LE(24, 28);
  out.writeUInt32LE(row * height, 34);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [r, g, b] = pixel(x, height - 1 - y);
      out.set([b, g, r], 54 + y * row + x * 3);
    }
  }
  return out;
}

/**
 * The built app with a fresh data dir (prepared by `prepare(dir, model)`, by default the test
 * model in its models folder) behind its own tauri-driver: registers the file's before/after
 * hooks and returns { app, dataDir, driver }, filled in before the tests run.
 */
export function appUnderTest(prefix, { env = {}, prepare } = {}) {
  const ctx = { app: process.env.HEARTH_APP_BINARY, dataDir: null, driver: null };
  const model = process.env.HEARTH_TEST_MODEL;
  before(async () => {
    assert.ok(ctx.app && fs.existsSync(ctx.app), `HEARTH_APP_BINARY (${ctx.app}) must be the built app`);
    assert.ok(model && fs.existsSync(model), `HEARTH_TEST_MODEL (${model}) must exist`);
    if (prepare) {
      ctx.dataDir = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR || "/tmp"), prefix));
      prepare(ctx.dataDir, model);
    } else {
      ctx.dataDir = dataDirWith(model, prefix);
    }
    ctx.driver = await startDriver({ ...process.env, HEARTH_DATA_DIR: ctx.dataDir, ...env });
  });
  after(async () => {
    await ctx.driver?.stop();
    if (ctx.dataDir) fs.rmSync(ctx.dataDir, { recursive: true, force: true });
  });
  return ctx;
}
