// End to end: a local reasoning model in the real app. SmolLM2's own template has no reasoning,
// so the reasoning budget is greyed with the reason; a chat template chosen in its load settings
// (one that opens a <think> block and reads enable_thinking, the shape Qwen3's has) makes it a
// reasoning model: after the reload the budget is offered, a budget streams the reasoning live
// into its open block, which closes when the model is made to answer, and 0 switches thinking off.
// Then a screenshot pasted into the chat: the dark theme's image chat.
import { test } from "node:test";
import assert from "node:assert/strict";

import { appUnderTest, nthReply, pasteImage, send, shot, sleep, thumbnailDrawn, withProjector } from "./helpers.mjs";
import { KEYS, Session } from "./webdriver.mjs";

// In the dark theme (the providers test shows a remote model's reasoning in the light one).
// The model reads images too (its projector beside it): an image chat in the dark theme.
const ctx = appUnderTest("hearth-e2e-reasoning-", { env: { GTK_THEME: "Adwaita:dark" }, prepare: withProjector });

const TEMPLATE =
  "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n" +
  "{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n{% else %}<think>\n{% endif %}";
const BUDGET = '[data-testid="setting-reasoningBudget"]';

/** Types `value` into sampling setting `key` (the settings panel open) and waits until it is saved. */
async function setField(session, key, value) {
  const field = await session.waitFor(`[data-testid="field-${key}"]`);
  await session.clear(field);
  await session.type(field, value);
  await session.waitFor(`[data-testid="field-${key}"]`, { accept: () => true });
  const deadline = Date.now() + 10_000;
  while ((await session.attribute(field, "value")) !== value) {
    assert.ok(Date.now() < deadline, `${key} shows ${value}`);
    await sleep(100);
  }
  await sleep(600); // the panel saves a moment after the last keystroke
  await session.waitFor('[data-testid="settings-status"]', { accept: (t) => t.includes("Saved") });
}

test("a local model reasons where its template does: the budget offered, reasoning live in its block, then off", async () => {
  const session = await Session.open(ctx.driver.base, ctx.app);
  try {
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2") && !t.includes("Loading") });
    const dark = await session.cmd("POST", "/execute/sync", { script: "return matchMedia('(prefers-color-scheme: dark)').matches", args: [] });
    assert.equal(dark, true, "the window follows the dark system theme");
    await session.click(await session.waitFor('[data-testid="open-settings"]'));
    const greyed = await session.waitFor(`${BUDGET}[data-unsupported="true"]`);
    assert.match(await session.attribute(greyed, "title"), /chat template has no reasoning/);

    // Its load settings choose a template that reasons; the model is loaded again with it.
    const template = await session.waitFor('[data-testid="field-chatTemplate"]');
    await session.clear(template);
    await session.type(template, TEMPLATE.replaceAll("\n", KEYS.enter)); // a new line as the user types one
    await session.waitFor('[data-testid="load-status"]', { accept: (t) => t.includes("Saved") });
    await session.click(await session.waitFor('[data-testid="reload-model"]'));
    await session.waitFor('[data-testid="reloaded"]', { timeoutMs: 60_000 });
    const offered = await session.waitFor(BUDGET, { accept: () => true });
    const deadline = Date.now() + 10_000;
    while ((await session.attribute(offered, "data-unsupported")) === "true") {
      assert.ok(Date.now() < deadline, "the budget is offered once the template reasons");
      await sleep(100);
    }
    // Greedy, so that this small model writes the same every run.
    await setField(session, "temperature", "0");
    await shot(session, "reasoning-01-offered");
    await session.click(await session.waitFor('[data-testid="close-settings"]'));

    // No limit (the default): the reasoning streams into its block, open while the model thinks.
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    await send(session, "Write a long story about a lighthouse keeper and the sea.");
    await session.waitFor('[data-testid="message"][data-status="streaming"] [data-testid="reasoning"][open]', {
      accept: (t) => t.trim().split(/\s+/).length >= 8,
      timeoutMs: 90_000,
    });
    await shot(session, "reasoning-02-live");
    await session.click(await session.waitFor('[data-testid="stop"]'));
    await nthReply(session, 1, "stopped");

    // A budget: the block is closed for the model after that many tokens, it answers, and the
    // block folds, saying how long it thought and how much.
    await session.click(await session.waitFor('[data-testid="open-settings"]'));
    await setField(session, "reasoningBudget", "4");
    await session.click(await session.waitFor('[data-testid="close-settings"]'));
    await send(session, "What is 2 + 2?");
    const answered = await nthReply(session, 2, "complete");
    const block = await session.within(answered, '[data-testid="reasoning"]');
    assert.equal(await session.attribute(block, "open"), null, "folded once the answer came");
    const summary = (await session.text(await session.within(answered, '[data-testid="reasoning-summary"]'))).trim();
    assert.match(summary, /^Thought for (under a second|[\d.]+ s) · \d+ tokens$/);
    assert.match(await session.text(await session.within(answered, '[data-testid="message-content"]')), /\w/, "an answer after it");
    await sleep(300);
    await shot(session, "reasoning-03-answered");

    // Off: the template is told, and the next reply has no reasoning.
    await session.click(await session.waitFor('[data-testid="open-settings"]'));
    await setField(session, "reasoningBudget", "0");
    await session.click(await session.waitFor('[data-testid="close-settings"]'));
    await send(session, "And 3 + 3?");
    const plain = await nthReply(session, 3, "complete");
    const blocks = await session.cmd("POST", `/element/${plain}/elements`, { using: "css selector", value: '[data-testid="reasoning"]' });
    assert.equal(blocks.length, 0, "no reasoning block");
    assert.match(await session.text(await session.within(plain, '[data-testid="message-content"]')), /\w/);
    await shot(session, "reasoning-04-off");

    // A screenshot pasted in the dark theme: its thumbnail on the chip, then on the sent message.
    assert.equal(await pasteImage(session), true, "the app takes a pasted image");
    await thumbnailDrawn(session);
    await send(session, "What is in this screenshot?");
    await nthReply(session, 4, "complete");
    await session.waitFor('[data-testid="message-read-tokens"]', { accept: (t) => t.trim().startsWith("Read with its images") });
    await shot(session, "reasoning-05-image-dark");
  } catch (e) {
    await shot(session, "reasoning-failed");
    throw e;
  } finally {
    await session.close();
  }
});

