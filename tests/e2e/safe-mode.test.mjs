// End to end: a model whose load crashes the engine (a test hook makes llama.cpp abort on it).
// Each start says why in the window; after two crashes within minutes the next start does not try
// again (safe mode) and says which file and settings did it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { shot, sleep } from "./helpers.mjs";
import { Session, startDriver } from "./webdriver.mjs";

const app = process.env.HEARTH_APP_BINARY;
const model = process.env.HEARTH_TEST_MODEL;
let dataDir;
let driver;

before(async () => {
  assert.ok(app && fs.existsSync(app), `HEARTH_APP_BINARY (${app}) must be the built app`);
  assert.ok(model && fs.existsSync(model), `HEARTH_TEST_MODEL (${model}) must exist`);
  dataDir = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR || "/tmp"), "hearth-e2e-safe-"));
  fs.mkdirSync(path.join(dataDir, "models"));
  // The only model in the folder, so every start picks it.
  fs.symlinkSync(model, path.join(dataDir, "models", "crash-on-load.gguf"));
  const env = {
    ...process.env,
    HEARTH_DATA_DIR: dataDir,
    HEARTH_ENGINE_TEST_HOOKS: "1",
    HEARTH_ENGINE_TEST_ABORT_ON_LOAD: "crash-on-load",
  };
  driver = await startDriver(4444 + ((process.pid + 13) % 1000), env);
});

after(() => {
  driver?.driver.kill();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Starts the app and returns the error banner's text once it shows. */
async function startAndReadBanner(name) {
  const session = await Session.open(driver.base, app);
  try {
    const banner = await session.waitFor('[data-testid="error-banner"]', { accept: (t) => t.includes("crash-on-load"), timeoutMs: 60_000 });
    const text = await session.text(banner);
    await sleep(300);
    await shot(session, name);
    return text;
  } finally {
    await session.close();
  }
}

test("a model that crashes the engine while loading: said at each start, then not loaded again", async () => {
  for (const start of [1, 2]) {
    const said = await startAndReadBanner(`safe-mode-0${start}-crashed`);
    assert.match(said, /crash-on-load could not be loaded at start: loading .*crash-on-load\.gguf crashed the engine/, said);
    assert.match(said, /GGML_ASSERT\(engine test hook\) failed/, said);
  }
  const said = await startAndReadBanner("safe-mode-03-skipped");
  assert.match(said, /crash-on-load was not loaded at start: it crashed the engine 2 times while loading with these settings/, said);
  assert.match(said, /Change its load settings/, said);
});
