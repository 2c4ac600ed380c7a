// End to end: a model whose load crashes the engine (a test hook makes llama.cpp abort on it).
// Each start says why in the window; after two crashes within minutes the next start does not try
// again (safe mode) and says which file and settings did it.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { appUnderTest, shot, sleep } from "./helpers.mjs";
import { Session } from "./webdriver.mjs";

const ctx = appUnderTest("hearth-e2e-safe-", {
  env: { HEARTH_ENGINE_TEST_HOOKS: "1", HEARTH_ENGINE_TEST_ABORT_ON_LOAD: "crash-on-load" },
  // The only model in the folder, so every start picks it.
  prepare: (dir, model) => {
    fs.mkdirSync(path.join(dir, "models"));
    fs.symlinkSync(model, path.join(dir, "models", "crash-on-load.gguf"));
  },
});

/** Starts the app and returns the error banner's text once it shows. */
async function startAndReadBanner(name) {
  const session = await Session.open(ctx.driver.base, ctx.app);
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
