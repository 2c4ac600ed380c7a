// End to end: each chat keeps its local model, in the real app (WebKit) with real loads. The data
// dir's models folder holds the test model under two names: two models as far as Hearth knows
// (two files), the same weights. A chat answers with the model picked for it; opening the other
// chat loads that chat's model again (the one left stays in memory, counted in Settings → Model),
// and its next reply comes from it.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { appUnderTest, modelOf, nthReply, send, setMaxTokens, shot } from "./helpers.mjs";
import { Session } from "./webdriver.mjs";

const SECOND = "SmolLM2-second-copy";
const ctx = appUnderTest("hearth-e2e-chat-model-", {
  prepare: (dir, model) => {
    fs.mkdirSync(path.join(dir, "models"));
    fs.symlinkSync(model, path.join(dir, "models", path.basename(model)));
    fs.symlinkSync(model, path.join(dir, "models", `${SECOND}.gguf`));
  },
});

const switcherShows = (session, name) =>
  session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes(name) && !/Loading|%/.test(t), timeoutMs: 60_000 });

test("each chat keeps its model: picked for one chat, loaded again when the other opens", async () => {
  const session = await Session.open(ctx.driver.base, ctx.app);
  try {
    await switcherShows(session, "SmolLM2-135M-Instruct.Q4_1");
    // Short replies: which model answers is the point, not how long it rambles (a sampled reply
    // once took this test from 8 s to 75).
    await setMaxTokens(session, 24);

    // Chat A answers with the model loaded at start, which it keeps from then on.
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    await send(session, "Say hello in three words.");
    assert.equal(await modelOf(session, await nthReply(session, 1, "complete")), "SmolLM2-135M-Instruct.Q4_1");

    // Chat B: the other file, picked in its model menu, loads and answers.
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    await session.click(await session.waitFor('[data-testid="model-switcher"]'));
    await session.waitFor('[data-testid="model-menu"]');
    await session.click(await session.waitFor(`[data-testid="model-option"][data-path$="${SECOND}.gguf"]`));
    await switcherShows(session, SECOND);
    await send(session, "Name one colour.");
    assert.equal(await modelOf(session, await nthReply(session, 1, "complete")), SECOND);
    await shot(session, "chat-model-01-second-chat");

    // Back to chat A: its own model is loaded again, and its next reply comes from it.
    const chatA = (await session.findAll('[data-testid="chat-item"]')).at(-1);
    await session.click(chatA);
    await switcherShows(session, "SmolLM2-135M-Instruct.Q4_1");
    await send(session, "And goodbye in three words.");
    assert.equal(await modelOf(session, await nthReply(session, 2, "complete")), "SmolLM2-135M-Instruct.Q4_1");
    await shot(session, "chat-model-02-first-chat-again");

    // The menu marks the chat's model.
    await session.click(await session.waitFor('[data-testid="model-switcher"]'));
    const checked = await session.waitFor('[data-testid="model-option"][aria-checked="true"]');
    assert.ok((await session.attribute(checked, "data-path")).endsWith("SmolLM2-135M-Instruct.Q4_1.gguf"));
    await shot(session, "chat-model-03-menu");

    // The second copy, left for chat A's model, stays in memory: Settings → Model counts it.
    await session.click(await session.waitFor('[data-testid="model-switcher"]'));
    await session.click(await session.waitFor('[data-testid="open-settings"]'));
    const kept = await session.waitFor('[data-testid="kept-models-usage"]', { accept: (t) => /^\d+ MB$/.test(t.trim()) });
    await session.cmd("POST", "/execute/sync", { script: "arguments[0].scrollIntoView({ block: 'center' })", args: [{ "element-6066-11e4-a52e-4f735466cecf": kept }] });
    const parts = await session.text(await session.waitFor('[data-testid="memory-parts"]'));
    assert.match(parts, /other models \d+ MB$/, parts);
    await shot(session, "chat-model-04-kept-in-memory");
  } finally {
    await session.close();
  }
});
