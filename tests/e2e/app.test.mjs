// End to end: the real Hearth binary in a real WebKit webview with the real SmolLM2 model and a
// fresh data dir. Sends a message, sees the streamed reply, restarts the app, finds it again.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { KEYS, Session, startDriver } from "./webdriver.mjs";

const app = process.env.HEARTH_APP_BINARY;
const model = process.env.HEARTH_TEST_MODEL;
const out = path.join(import.meta.dirname, "output");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "hearth-e2e-"));
let driver;

before(async () => {
  assert.ok(app && fs.existsSync(app), `HEARTH_APP_BINARY (${app}) must be the built app`);
  assert.ok(model && fs.existsSync(model), `HEARTH_TEST_MODEL (${model}) must exist`);
  fs.mkdirSync(out, { recursive: true });
  fs.mkdirSync(path.join(dataDir, "models"));
  fs.symlinkSync(model, path.join(dataDir, "models", path.basename(model)));
  driver = await startDriver(4444 + (process.pid % 1000), { ...process.env, HEARTH_DATA_DIR: dataDir });
});

after(() => {
  driver?.driver.kill();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function shot(session, name) {
  fs.writeFileSync(path.join(out, `${name}.png`), await session.screenshot());
}

const nonEmpty = (text) => text.trim().length > 0;

test("send a message to the real model, see the reply, find it after a restart", async () => {
  let session = await Session.open(driver.base, app);
  let reply;
  try {
    await session.waitFor('[data-testid="model-name"]', { accept: (t) => t.includes("SmolLM2") });
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    const composer = await session.waitFor('[data-testid="composer"]');
    await session.type(composer, "What is the capital of France?");
    await session.type(composer, KEYS.enter);

    await session.waitFor('[data-testid="message"][data-role="user"]', {
      accept: (t) => t.includes("capital of France"),
    });
    const done = await session.waitFor('[data-testid="message"][data-role="assistant"][data-status="complete"]', {
      accept: nonEmpty,
    });
    reply = (await session.text(done)).trim();
    assert.match(reply, /\w/);
    // The model titles the chat after the reply; the sidebar hears of it without a reload.
    await session.waitFor('[data-testid="chat-item"]', { accept: (t) => nonEmpty(t) && !t.includes("What is the capital of France?") });
    await shot(session, "01-reply");
  } finally {
    await session.close();
  }

  // Restart: the chat and both messages come back from SQLite.
  session = await Session.open(driver.base, app);
  try {
    await session.click(await session.waitFor('[data-testid="chat-item"]'));
    await session.waitFor('[data-testid="message"][data-role="user"]', { accept: (t) => t.includes("capital of France") });
    const again = await session.waitFor('[data-testid="message"][data-role="assistant"]', { accept: nonEmpty });
    const restored = (await session.text(again)).trim();
    assert.equal(restored.slice(0, 20), reply.slice(0, 20));
    await shot(session, "02-after-restart");
  } finally {
    await session.close();
  }
});

test("a setting changed in the panel shapes the next reply of the real model", async () => {
  const session = await Session.open(driver.base, app);
  try {
    await session.waitFor('[data-testid="model-name"]', { accept: (t) => t.includes("SmolLM2") });
    await session.click(await session.waitFor('[data-testid="open-settings"]'));
    const maxTokens = await session.waitFor('[data-testid="field-maxTokens"]');
    await session.clear(maxTokens);
    await session.type(maxTokens, "4");
    await session.waitFor('[data-testid="settings-status"]', { accept: (t) => t.includes("Saved") });
    await shot(session, "03-settings");
    await session.click(await session.waitFor('[data-testid="close-settings"]'));
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    const composer = await session.waitFor('[data-testid="composer"]');
    await session.type(composer, "Tell me a long story about the sea.");
    await session.type(composer, KEYS.enter);
    const done = await session.waitFor('[data-testid="message"][data-role="assistant"][data-status="complete"]', {
      accept: (t) => /\b4 tokens\b/.test(t),
    });
    assert.ok(done);
    await shot(session, "04-capped-reply");
  } finally {
    await session.close();
  }
});

test("history in the real app: regenerate, switch versions, edit, continue, search", async () => {
  // Replies are capped at 4 tokens by the previous test's setting: short, and cut at the limit.
  const session = await Session.open(driver.base, app);
  const reply = '[data-testid="message"][data-role="assistant"]';
  const position = async (css) => (await session.text(await session.within(await session.waitFor(css), '[data-testid="branch-position"]'))).trim();
  try {
    await session.waitFor('[data-testid="model-name"]', { accept: (t) => t.includes("SmolLM2") });
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    const composer = await session.waitFor('[data-testid="composer"]');
    await session.type(composer, "Name a colour.");
    await session.type(composer, KEYS.enter);
    await session.waitFor(`${reply}[data-status="complete"]`, { accept: nonEmpty });

    // Regenerate: a second version of the reply, shown as 2/2; the arrow goes back to 1/2.
    await session.press(await session.waitFor('[data-testid="action-regenerate"]'));
    await session.waitFor(`${reply}[data-status="complete"] [data-testid="branch-position"]`, { accept: (t) => t.includes("2/2") });
    await session.press(await session.waitFor(`${reply} [data-testid="branch-prev"]`));
    await session.waitFor(`${reply} [data-testid="branch-position"]`, { accept: (t) => t.includes("1/2") });

    // Edit the question: a second version of it with its own reply.
    await session.press(await session.waitFor('[data-testid="message"][data-role="user"] [data-testid="action-edit"]'));
    const editor = await session.waitFor('[data-testid="edit-input"]');
    await session.clear(editor);
    await session.type(editor, "Name a fruit.");
    await session.press(await session.waitFor('[data-testid="edit-save"]'));
    await session.waitFor('[data-testid="message"][data-role="user"]', { accept: (t) => t.includes("Name a fruit.") });
    assert.equal(await position('[data-testid="message"][data-role="user"]'), "2/2");
    const cut = await session.waitFor(`${reply}[data-status="complete"]`, { accept: (t) => /\b4 tokens\b/.test(t) });
    const before = (await session.text(await session.within(cut, '[data-testid="message-content"]'))).trim();

    // The reply stopped at its length limit: Continue writes on in the same message.
    await session.press(await session.waitFor('[data-testid="continue"]'));
    await session.waitFor(`${reply}[data-status="complete"] [data-testid="message-content"]`, {
      accept: (t) => t.trim().length > before.length && t.trim().startsWith(before),
    });
    await shot(session, "05-branches");

    // Search finds the edited question and opens the chat at it.
    const search = await session.waitFor('[data-testid="search-input"]');
    await session.type(search, "fruit");
    const hit = await session.waitFor('[data-testid="search-result"]', { accept: (t) => t.includes("fruit") });
    await session.within(hit, "mark");
    await shot(session, "06-search");
    await session.click(hit);
    await session.waitFor('[data-testid="message"][data-role="user"]', { accept: (t) => t.includes("Name a fruit.") });
  } finally {
    await session.close();
  }
});
