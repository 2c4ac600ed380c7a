// End to end: the engine process is killed under a streaming reply in the real app. The window
// lives on, the reply keeps its text and says why, the model is back, and Continue writes on.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";

import { appUnderTest, nonEmpty, replyTextWith, replyWith, send, shot, sleep } from "./helpers.mjs";
import { Session } from "./webdriver.mjs";

const ctx = appUnderTest("hearth-e2e-engine-");

/** The engine process of the app using `dir`: the app's binary with --hearth-engine-host and
 * this data dir in its environment. */
function enginePid(dir) {
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (!cmdline.includes("--hearth-engine-host")) continue;
      const environ = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      if (environ.includes(`HEARTH_DATA_DIR=${dir}`)) return Number(pid);
    } catch {
      // The process ended while we looked.
    }
  }
  return null;
}

test("the engine process killed mid-reply: the reply is kept with the cause, the model comes back, Continue works", async () => {
  const session = await Session.open(ctx.driver.base, ctx.app);
  try {
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2") && !t.includes("Loading") });
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    await send(session, "Write a long story about a lighthouse keeper and the sea.");
    await replyTextWith(session, "streaming", (t) => t.trim().split(/\s+/).length >= 5);

    const pid = enginePid(ctx.dataDir);
    assert.ok(pid, "the app runs its engine in a process of its own");
    process.kill(pid, "SIGKILL");

    const interrupted = await replyWith(session, "interrupted", nonEmpty);
    const notice = await session.text(await session.within(interrupted, '[data-testid="message-status"]'));
    assert.match(notice, /Interrupted — The engine was killed \(SIGKILL\)/);
    const kept = (await session.text(await session.within(interrupted, '[data-testid="message-content"]'))).trim();
    assert.match(kept, /\w/);
    await sleep(300);
    await shot(session, "engine-01-killed-mid-reply");

    // A new engine process has the model again; Continue writes on in the same message.
    const deadline = Date.now() + 30_000;
    while (!enginePid(ctx.dataDir) || enginePid(ctx.dataDir) === pid) {
      assert.ok(Date.now() < deadline, "no new engine process");
      await sleep(100);
    }
    await session.click(await session.within(interrupted, '[data-testid="continue"]'));
    // New text on screen before Stop: the stopped reply must keep it.
    await replyTextWith(session, "streaming", (t) => t.trim().length > kept.length + 10);
    await session.click(await session.waitFor('[data-testid="stop"]'));
    const continued = await replyWith(session, "stopped", nonEmpty);
    const text = (await session.text(await session.within(continued, '[data-testid="message-content"]'))).trim();
    assert.ok(text.startsWith(kept.slice(0, 40)) && text.length > kept.length, `${kept} → ${text}`);
    await shot(session, "engine-02-continued");
  } finally {
    await session.close();
  }
});
