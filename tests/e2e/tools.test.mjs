// End to end: tools in the real app. Settings → Tools takes MCP servers pasted as JSON — the
// reference filesystem server from npm, a kitchen server with a slow tool and one that fails at
// start (tests/mcp/hostile.mjs) — and shows each one's state. In a chat the model's call waits
// for the user: the approval shows the arguments, edited and allowed the tool runs and its
// result shows and feeds the reply; run again with new arguments, its result is a new version the
// reply answers; denied, nothing runs; Stop ends a slow tool; a server's question mid-call
// (elicitation) opens over the window and its answer reaches the tool; a question by link shows
// its address, and Open hands it to the system's opener (a stand-in on PATH). The tiny test
// model never chooses to call, so HEARTH_TEST_TOOL_CHOICE=required makes the first reply of a
// turn call under the tools' grammar (the flow after that is the app's own). Screenshots in
// the light and the dark theme.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { REPLY, appUnderTest, send, shot, sleep } from "./helpers.mjs";
import { KEYS, Session, startDriver } from "./webdriver.mjs";

const MCP_DIR = path.resolve(import.meta.dirname, "../mcp");
const FS_SERVER = path.join(MCP_DIR, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
// The filesystem server's tools but one: a call of the tiny model must be of the one left.
const FS_OFF = ["read_file", "read_media_file", "read_multiple_files", "write_file", "edit_file", "create_directory", "list_directory",
  "list_directory_with_sizes", "directory_tree", "move_file", "search_files", "get_file_info", "list_allowed_directories"];
const TOOL_RESULT = '[data-testid="message"][data-role="tool"]';

let filesDir;
// The system's opener (xdg-open) as the app finds it on its PATH: it notes each page it is asked to open.
const OPENER_DIR = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR || "/tmp"), "hearth-e2e-opener-"));
const OPENED = path.join(OPENER_DIR, "opened.txt");
fs.writeFileSync(path.join(OPENER_DIR, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$1" >> '${OPENED}'\n`, { mode: 0o755 });
const ENV = { HEARTH_TEST_TOOL_CHOICE: "required", PATH: `${OPENER_DIR}:${process.env.PATH}` };
after(() => fs.rmSync(OPENER_DIR, { recursive: true, force: true }));
const ctx = appUnderTest("hearth-e2e-tools-", {
  env: { ...ENV, GTK_THEME: "Adwaita" },
  prepare: (dir, model) => {
    fs.mkdirSync(path.join(dir, "models"));
    fs.symlinkSync(model, path.join(dir, "models", path.basename(model)));
    filesDir = path.join(dir, "files");
    fs.mkdirSync(filesDir);
    fs.writeFileSync(path.join(filesDir, "notes.txt"), "The kettle is in the left cupboard.");
  },
});

const script = (session, body, ...args) => session.cmd("POST", "/execute/sync", { script: body, args });
const element = (id) => ({ "element-6066-11e4-a52e-4f735466cecf": id });

/** Replaces a text field's text, typed as a user would. */
async function setValue(session, field, text) {
  await script(session, "arguments[0].select()", element(field));
  await session.type(field, KEYS.backspace);
  await session.type(field, text);
}

/** Waits until the turn has ended (no Stop button, the last reply finished), denying any call a
 *  later round of it writes (the model chooses then). */
async function lastReplyDone(session) {
  const done = `const replies = [...document.querySelectorAll(arguments[0])];
    return !document.querySelector('[data-testid="stop"]') && replies.length > 0 && replies.pop().dataset.status === "complete";`;
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(100)) {
    if (await script(session, done, REPLY)) return;
    const deny = await session.findAll('[data-testid="tool-deny"]');
    if (deny.length) await session.press(deny[0]).catch(() => {});
  }
  throw new Error("the turn never ended with a finished reply");
}

const serverCss = (name, state) => `[data-testid="tool-server"][data-server="${name}"]${state ? `[data-state="${state}"]` : ""}`;

async function openTools(session) {
  await session.click(await session.waitFor('[data-testid="open-settings"]'));
  await session.press(await session.waitFor('[data-testid="open-tools"]'));
}

/** Closes Settings and waits until it has gone: keys sent meanwhile would not reach the composer. */
async function closeSettings(session) {
  await session.click(await session.waitFor('[data-testid="close-settings"]'));
  for (const deadline = Date.now() + 10_000; (await session.findAll('[data-testid="settings-panel"]')).length > 0; await sleep(100)) {
    assert.ok(Date.now() < deadline, "Settings did not close");
  }
}

/** Waits for the approval card of the turn's next call. */
const approval = (session) => session.waitFor('[data-testid="tool-approval"]', { timeoutMs: 90_000 });

/**
 * Answers every call of the round with `answer(card)` (the model may write several at once)
 * until the round's results show; returns how many it answered.
 */
async function answerRound(session, answer) {
  const before = (await session.findAll(TOOL_RESULT)).length;
  let answered = 0;
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(200)) {
    try {
      const [card] = await session.findAll('[data-testid="tool-approval"]');
      if (card) {
        await answer(card);
        answered += 1;
        await sleep(400);
      } else if ((await session.findAll(TOOL_RESULT)).length > before) {
        return answered;
      }
    } catch (e) {
      if (!String(e.message).includes("stale element")) throw e; // re-rendered meanwhile: look again
    }
  }
  throw new Error("the round's results never showed");
}

/**
 * Allows each call of the round (the model may write more than one) and answers each question the server
 * asks with `answer(question, askedBefore)`, until `tool`'s result shows: returns its row, once at least
 * one question was asked.
 */
async function resultAnswering(session, tool, answer) {
  const resultRow = async () => {
    try {
      for (const row of await session.findAll(TOOL_RESULT)) if ((await session.text(row)).includes(tool)) return row;
    } catch {
      // The list re-rendered while it was read: look again.
    }
    return null;
  };
  let asked = 0;
  let found = null;
  for (const deadline = Date.now() + 120_000; !(found = await resultRow()); await sleep(200)) {
    assert.ok(Date.now() < deadline, `${tool} ran with its questions answered`);
    const [allow] = await session.findAll('[data-testid="tool-approval"] [data-testid="tool-allow"]');
    if (allow) await session.press(allow).catch(() => {});
    const [question] = await session.findAll('[data-testid="tool-question"]');
    if (!question) continue;
    await answer(question, asked);
    asked += 1;
    await sleep(300);
  }
  assert.ok(asked > 0, `${tool}'s server asked its question`);
  return found;
}

/** In Settings → Tools, adds hostile.mjs's `mode` server as `name` (pasted, until ready) and switches `off` off. */
async function switchServer(session, { name, mode }, off) {
  await openTools(session);
  await session.press(await session.waitFor('[data-testid="paste-tool-servers"]'));
  const pasted = { mcpServers: { [name]: { command: "node", args: ["hostile.mjs", mode], cwd: MCP_DIR } } };
  await setValue(session, await session.waitFor('[data-testid="tool-paste"] textarea'), JSON.stringify(pasted));
  await session.press(await session.waitFor('[data-testid="tool-paste-add"]'));
  await session.waitFor(serverCss(name, "ready"), { timeoutMs: 60_000 });
  await session.press(await session.within(await session.waitFor(serverCss(off)), '[data-testid="tool-server-enabled"]'));
  await session.waitFor(serverCss(off, "off"));
  await closeSettings(session);
}

/** Allows the call with its arguments replaced by `args`. */
const allowWith = (session, args) => async (card) => {
  await setValue(session, await session.within(card, '[data-testid="tool-approval-arguments"]'), JSON.stringify(args));
  await session.press(await session.within(card, '[data-testid="tool-allow"]'));
};

test("MCP servers in Settings → Tools; a call allowed, one denied, one stopped", async () => {
  const session = await Session.open(ctx.driver.base, ctx.app);
  try {
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2") });

    // Settings → Tools: three servers pasted as Claude Desktop's JSON.
    await openTools(session);
    await session.press(await session.waitFor('[data-testid="paste-tool-servers"]'));
    const pasted = {
      mcpServers: {
        files: { command: "node", args: [FS_SERVER, filesDir], disabledTools: FS_OFF },
        kitchen: { command: "node", args: ["hostile.mjs", "kitchen"], cwd: MCP_DIR, disabled: true, disabledTools: ["find_item"] },
        broken: { command: "node", args: ["hostile.mjs", "exit"], cwd: MCP_DIR },
      },
    };
    await setValue(session, await session.waitFor('[data-testid="tool-paste"] textarea'), JSON.stringify(pasted));
    await session.press(await session.waitFor('[data-testid="tool-paste-add"]'));
    await session.waitFor(serverCss("files", "ready"), { timeoutMs: 60_000 });
    const broken = await session.waitFor(serverCss("broken", "failed"), { timeoutMs: 60_000 });
    const failure = await session.text(await session.within(broken, '[data-testid="tool-server-failure"]'));
    assert.match(failure, /exited with status 2/);
    assert.match(failure, /config\.json was not found/);
    await session.waitFor(serverCss("kitchen", "off"));
    await sleep(300);
    await shot(session, "tools-01-settings-light");
    await closeSettings(session);

    // Allowed, with the arguments edited: the file is read and the reply follows its result.
    await send(session, "What does notes.txt say?");
    let card = await approval(session);
    assert.match(await session.text(await session.within(card, '[data-testid="tool-approval-title"]')), /read_text_file/);
    const args = await session.within(card, '[data-testid="tool-approval-arguments"]');
    assert.match(await script(session, "return arguments[0].value", element(args)), /"path"/);
    await sleep(300);
    await shot(session, "tools-02-approval-light");
    await answerRound(session, allowWith(session, { path: path.join(filesDir, "notes.txt") }));
    const result = await session.waitFor(`${TOOL_RESULT}[data-end="ran"]`, { timeoutMs: 60_000 });
    await session.press(await session.within(result, '[data-testid="tool-result-toggle"]'));
    const content = await session.waitFor('[data-testid="tool-result-content"]');
    assert.equal((await session.text(content)).trim(), "The kettle is in the left cupboard.");
    await lastReplyDone(session);
    await sleep(300);
    await shot(session, "tools-03-result-light");

    // Run again, the arguments edited once more: the result is a new version, which the model answers.
    await session.press(await session.waitFor('[data-testid="rerun-tool-calls"]'));
    card = await approval(session);
    assert.match(await script(session, "return arguments[0].value", element(await session.within(card, '[data-testid="tool-approval-arguments"]'))), /notes\.txt/);
    await answerRound(session, allowWith(session, { path: path.join(filesDir, "notes.txt"), head: 1 }));
    const again = await session.waitFor(`${TOOL_RESULT}[data-end="ran"]`, { timeoutMs: 60_000 });
    assert.equal(await session.text(await session.within(again, '[data-testid="branch-position"]')), "2/2");
    await lastReplyDone(session);

    // Denied: nothing runs; the model is told.
    await send(session, "Read it once more.");
    await approval(session);
    await answerRound(session, async (card) => session.press(await session.within(card, '[data-testid="tool-deny"]')));
    await session.waitFor(`${TOOL_RESULT}[data-end="denied"]`, { timeoutMs: 60_000 });
    await lastReplyDone(session);

    // Stop during a slow tool: only the kitchen's slow search is on now.
    await openTools(session);
    await session.press(await session.within(await session.waitFor(serverCss("files")), '[data-testid="tool-server-enabled"]'));
    await session.waitFor(serverCss("files", "off"));
    await session.press(await session.within(await session.waitFor(serverCss("kitchen")), '[data-testid="tool-server-enabled"]'));
    await closeSettings(session);
    await send(session, "Search the house for my keys.");
    card = await approval(session);
    assert.match(await session.text(await session.within(card, '[data-testid="tool-approval-title"]')), /slow_search/);
    await session.press(await session.within(card, '[data-testid="tool-allow"]'));
    await session.waitFor('[data-testid="tool-call"][data-state="running"]', { timeoutMs: 30_000 });
    const stoppedAt = Date.now();
    await session.press(await session.waitFor('[data-testid="stop"]'));
    await session.waitFor(`${TOOL_RESULT}[data-end="stopped"]`, { timeoutMs: 20_000 });
    assert.ok(Date.now() - stoppedAt < 20_000, "Stop ended the 60-second tool");
  } finally {
    await session.close();
  }
});

test("the same in the dark theme: Settings → Tools, an approval, a result", async () => {
  await ctx.driver.stop();
  const driver = await startDriver({ ...process.env, HEARTH_DATA_DIR: ctx.dataDir, ...ENV, GTK_THEME: "Adwaita:dark" });
  ctx.driver = driver;
  const session = await Session.open(driver.base, ctx.app);
  try {
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2") });
    assert.equal(await script(session, "return matchMedia('(prefers-color-scheme: dark)').matches"), true);
    // The servers were saved; they start when needed (the broken one on Restart).
    await openTools(session);
    await session.press(await session.within(await session.waitFor(serverCss("broken")), '[data-testid="tool-server-restart"]'));
    await session.waitFor(serverCss("broken", "failed"), { timeoutMs: 60_000 });
    await session.press(await session.within(await session.waitFor(serverCss("files")), '[data-testid="tool-server-enabled"]'));
    // Switched on before the next switch is pressed: the list is drawn again when it changes.
    await session.waitFor(`${serverCss("files")}:not([data-state="off"])`);
    await session.press(await session.within(await session.waitFor(serverCss("kitchen")), '[data-testid="tool-server-enabled"]'));
    await session.waitFor(serverCss("kitchen", "off"), { timeoutMs: 30_000 });
    await sleep(300);
    await shot(session, "tools-01-settings-dark");
    await closeSettings(session);

    // The chat of the first test, with its calls and results, then a new call.
    await session.press(await session.waitFor('[data-testid="chat-item"]'));
    await session.waitFor(TOOL_RESULT);
    await send(session, "What does notes.txt say now?");
    await approval(session);
    await sleep(300);
    await shot(session, "tools-02-approval-dark");
    await answerRound(session, allowWith(session, { path: path.join(filesDir, "notes.txt") }));
    await lastReplyDone(session);
    await sleep(300);
    await shot(session, "tools-03-result-dark");

    // A server that asks mid-call: its question opens over the window; the answer reaches it.
    await switchServer(session, { name: "bistro", mode: "asks" }, "files");
    await send(session, "Book a table for tonight.");
    const card = await approval(session);
    assert.match(await session.text(await session.within(card, '[data-testid="tool-approval-title"]')), /book_table/);
    const booked = await resultAnswering(session, "book_table", async (question, asked) => {
      assert.match(await session.text(await session.within(question, '[data-testid="tool-question-message"]')), /the bistro needs:/);
      await session.type(await session.within(question, '[data-testid="question-field"][data-field="name"] [data-testid="question-input"]'), "Ada");
      if (asked === 0) {
        await sleep(300);
        await shot(session, "tools-04-question-dark");
      }
      await session.press(await session.within(question, '[data-testid="tool-question-send"]'));
    });
    await session.press(await session.within(booked, '[data-testid="tool-result-toggle"]'));
    await session.waitFor('[data-testid="tool-result-content"]', { accept: (t) => t.includes("Booked for Ada: 2 guests, inside.") });
    await lastReplyDone(session);

    // A server that asks the user to open its page: the address shown, its host apart; Open hands it
    // to the system's opener, and the server hears it was opened.
    await switchServer(session, { name: "accounts", mode: "links" }, "bistro");
    await send(session, "Link my bistro account.");
    await approval(session);
    const linked = await resultAnswering(session, "link_account", async (question, asked) => {
      assert.equal(await session.text(await session.within(question, '[data-testid="question-link-url"]')), "https://bistro.example/link?session=7");
      assert.equal(await session.text(await session.within(question, '[data-testid="question-link-host"]')), "bistro.example");
      if (asked === 0) {
        await sleep(300);
        await shot(session, "tools-05-link-dark");
      }
      await session.press(await session.within(question, '[data-testid="tool-question-send"]'));
    });
    await session.press(await session.within(linked, '[data-testid="tool-result-toggle"]'));
    await session.waitFor('[data-testid="tool-result-content"]', { accept: (t) => t.includes("The user opened the bistro's page") });
    assert.match(fs.readFileSync(OPENED, "utf8"), /^https:\/\/bistro\.example\/link\?session=7$/m);
    await lastReplyDone(session);
  } finally {
    await session.close();
  }
});
