// End to end: the model manager in the real app, against the test suite's fake Hugging Face hub
// (hearth-testkit's fake_hub example: real HTTP on 127.0.0.1, the real SmolLM2 file, range requests,
// a redirect to its "CDN", LFS hashes). A first start with no model: the welcome screen's model
// downloaded and loaded; then search → repository → fit → download with progress → verified →
// listed in the library → loaded with progress → chat.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

import { shot, sleep } from "./helpers.mjs";
import { KEYS, Session, startDriver } from "./webdriver.mjs";

const app = process.env.HEARTH_APP_BINARY;
const model = process.env.HEARTH_TEST_MODEL;
const fakeHub = process.env.HEARTH_FAKE_HUB;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "hearth-e2e-models-"));
const hubCache = fs.mkdtempSync(path.join(os.tmpdir(), "hearth-e2e-hf-cache-"));
const REPO = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF";
let driver;
let hub;

before(async () => {
  for (const [name, file] of Object.entries({ app, model, fakeHub })) {
    assert.ok(file && fs.existsSync(file), `${name} (${file}) must exist: run scripts/e2e.sh`);
  }
  // 2 ms per 64 KiB: the 98 MB download takes a few seconds, long enough to watch its progress.
  const child = spawn(fakeHub, [model], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, HEARTH_FAKE_HUB_DELAY_MS: "2" } });
  const line = await new Promise((resolve) => readline.createInterface({ input: child.stdout }).once("line", resolve));
  hub = { child, url: line.match(/listening on (\S+)/)[1] };
  const env = { ...process.env, HEARTH_DATA_DIR: dataDir, HF_ENDPOINT: hub.url, HF_HUB_CACHE: hubCache };
  driver = await startDriver(env);
});

after(async () => {
  await driver?.stop();
  hub?.child.kill();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(hubCache, { recursive: true, force: true });
});


test("first start: the welcome screen offers a model for this machine, downloads and loads it", async () => {
  const session = await Session.open(driver.base, app);
  try {
    // The backend's pick for this machine; the fake hub holds every rung of the ladder.
    const name = await session.waitFor('[data-testid="starter-name"]', { accept: (t) => t.startsWith("Qwen2.5") });
    assert.match(await session.text(name), /^Qwen2\.5 (0\.5B|1\.5B|3B|7B) Instruct$/);
    await session.waitFor('[data-testid="starter-fit"]', { accept: (t) => /Fits in memory/.test(t) });
    await shot(session, "13-welcome");
    await session.click(await session.waitFor('[data-testid="starter-download"]'));
    await session.waitFor('[data-testid="starter"] [data-testid="download"]');
    // Done, verified and loaded without another click: the welcome gives way to the chats.
    await session.waitFor('[data-testid="no-chats"]', { accept: (t) => t.includes("No chats yet"), timeoutMs: 120_000 });
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => /qwen2\.5-.*-instruct-q4_k_m/.test(t) });
  } finally {
    await session.close();
  }
});

test("find SmolLM2 on the hub, download it, load it, chat", async () => {
  const session = await Session.open(driver.base, app);
  try {
    await session.click(await session.waitFor('[data-testid="open-models"]'));
    await session.press(await session.waitFor('[data-testid="models-tab-discover"]'));
    await session.type(await session.waitFor('[data-testid="hub-search"]'), "smollm2");
    await session.press(await session.waitFor('[data-testid="hub-search-go"]'));
    const repo = await session.waitFor(`[data-testid="hub-repo"][data-repo="${REPO}"]`, { accept: (t) => t.includes("48") });
    await shot(session, "14-hub-search");
    await session.press(await session.within(repo, '[data-testid="open-repo"]'));
    const quant = await session.waitFor('[data-testid="hub-quant"][data-quant="Q4_1"]');
    await session.press(await session.within(quant, '[data-testid="check-fit"]'));
    const verdict = await session.waitFor('[data-testid="fit-verdict"]', { accept: (t) => /fits/i.test(t) });
    assert.match(await session.text(verdict), /Fits in memory/);
    await shot(session, "15-hub-fit");

    await session.press(await session.within(quant, '[data-testid="download-quant"]'));
    // Progress while it arrives, then verified and done.
    await session.waitFor('[data-testid="download"][data-state="running"] [data-testid="download-detail"]', { accept: (t) => / of /.test(t) });
    await sleep(800);
    await shot(session, "16-download-progress");
    const done = await session.waitFor('[data-testid="download"][data-state="done"]', { timeoutMs: 120_000 });
    await session.press(await session.within(done, '[data-testid="load-downloaded"]'));
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2") , timeoutMs: 60_000 });

    await session.press(await session.waitFor('[data-testid="models-tab-library"]'));
    // The library is read again after the load: the row gets its badge when that read is back
    // (the welcome's model, loaded before, loses it).
    const row = await session.waitFor('[data-testid="library-model"]', { accept: (t) => t.includes("SmolLM2-135M-Instruct.Q4_1") && t.includes("Loaded") });
    await session.within(row, '[data-testid="loaded-badge"]');
    const facts = await session.text(row);
    for (const word of ["llama", "Q4_1", "8,192"]) assert.ok(facts.includes(word), `${word} in ${facts}`);
    await shot(session, "17-library");
    await session.press(await session.waitFor('[data-testid="close-models"]'));

    // The downloaded model answers.
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    const composer = await session.waitFor('[data-testid="composer"]');
    await session.type(composer, "What is the capital of France?");
    await session.type(composer, KEYS.enter);
    await session.waitFor('[data-testid="message"][data-role="assistant"][data-status="complete"]', { accept: (t) => /\w/.test(t), timeoutMs: 90_000 });
    await shot(session, "18-chat-with-downloaded");
  } finally {
    await session.close();
  }
  // The file is in the standard Hugging Face cache layout, next to its verified blob.
  const snapshot = path.join(hubCache, "models--HuggingFaceTB--SmolLM2-135M-Instruct-GGUF", "snapshots");
  const [commit] = fs.readdirSync(snapshot);
  const file = path.join(snapshot, commit, "SmolLM2-135M-Instruct.Q4_1.gguf");
  assert.ok(fs.lstatSync(file).isSymbolicLink());
  assert.equal(fs.statSync(file).size, fs.statSync(model).size);
});
