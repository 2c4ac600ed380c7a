// End to end: the token inspector in the real app with the real SmolLM2 model. A reply's tokens come
// with the distributions the engine drew them from (topProbs at its default, 5); focusing a token shows
// its alternatives, and choosing one writes a new version of the reply (2/2) that opens with the tokens
// before it and the alternative, then goes on. Then Compare: a reply's question answered with this chat's
// settings and by beam search side by side, both to the end, the first kept (the chat shows it, 2/3). Screenshots
// land in tests/e2e/output/.
import { test } from "node:test";
import assert from "node:assert/strict";

import { REPLY as reply, appUnderTest, nonEmpty, send, setMaxTokens, shot, sleep } from "./helpers.mjs";
import { Session } from "./webdriver.mjs";

const ctx = appUnderTest("hearth-e2e-inspector-");

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";
const script = (session, body, ...args) => session.cmd("POST", "/execute/sync", { script: body, args });
const element = (id) => ({ [ELEMENT]: id });
/** Text as the rendered reply reads it: whitespace runs as one space, none at the ends. */
const squash = (text) => text.replace(/\s+/g, " ").trim();
/** An alternative whose text renders as itself in Markdown: words, spaces and plain punctuation. */
const plain = (text) => /^[ \p{L}\p{N}',.!?-]+$/u.test(text) && /\p{L}/u.test(text);

const TOKENS = '[data-testid="inspector"] [data-testid="token"]';
const POPOVER = '[data-testid="inspector"] [data-testid="token-popover"]';

/**
 * Focuses the reply's tokens in turn (focus opens a token's popover) until one offers an alternative that
 * can be chosen (not the token written, not the end of the reply), preferring the second in its list and
 * one whose text is plain; returns { at, id, text } of the choice, with the popover left open on it.
 */
async function findAlternative(session) {
  const count = (await session.findAll(TOKENS)).length;
  let fallback = null;
  for (let at = 0; at < Math.min(count, 80); at++) {
    const [token] = (await session.findAll(TOKENS)).slice(at, at + 1);
    if ((await session.attribute(token, "data-end")) === "true") continue;
    if (Number(await session.attribute(token, "data-alternatives")) < 2) continue;
    await script(session, "arguments[0].focus()", element(token));
    await session.waitFor(`${POPOVER}[data-at="${at}"]`, { timeoutMs: 5000 });
    const offered = await script(
      session,
      `return [...document.querySelectorAll(arguments[0])].map((b, i) => ({
        i, id: Number(b.dataset.tokenId), text: b.dataset.text, open: !b.disabled && b.dataset.end !== "true",
      }))`,
      `${POPOVER}[data-at="${at}"] [data-testid="token-alternative"]`,
    );
    const open = offered.filter((a) => a.open);
    const choice = (offered[1]?.open && plain(offered[1].text) ? offered[1] : null) ?? open.find((a) => plain(a.text));
    if (choice) return { at, id: choice.id, text: choice.text, index: choice.i };
    fallback ??= open[0] ? { at, id: open[0].id, text: open[0].text, index: open[0].i } : null;
  }
  assert.ok(fallback, "no token of the reply offered an alternative to choose");
  const [token] = (await session.findAll(TOKENS)).slice(fallback.at, fallback.at + 1);
  await script(session, "arguments[0].focus()", element(token));
  await session.waitFor(`${POPOVER}[data-at="${fallback.at}"]`, { timeoutMs: 5000 });
  return fallback;
}

/** The text of the inspector's first `n` tokens, in order. */
const tokenTexts = (session, n) =>
  script(session, "return [...document.querySelectorAll(arguments[0])].slice(0, arguments[1]).map((t) => t.textContent)", TOKENS, n);

test("token inspector: a reply's tokens, a token's alternatives, and a new version written from one of them", async () => {
  const session = await Session.open(ctx.driver.base, ctx.app);
  try {
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2") && !t.includes("Loading") });
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    await send(session, "What colour is the sky? Answer in one short sentence.");
    const first = await session.waitFor(`${reply}[data-status="complete"]`, { accept: nonEmpty, timeoutMs: 120_000 });

    // The inspector under the reply: its tokens, spelling it, each with what the engine kept.
    await session.press(await session.within(first, '[data-testid="action-inspect"]'));
    await session.waitFor(`${TOKENS}, [data-testid="inspector-empty"]`, { timeoutMs: 10_000 });
    assert.equal((await session.findAll('[data-testid="inspector-empty"]')).length, 0, "a local reply keeps its tokens (topProbs 5)");
    const all = await script(session, "return document.querySelector('[data-testid=\"inspector-tokens\"]').textContent");
    assert.ok(all.length > 0, "the tokens have text");

    // A token focused shows its alternatives: bars and percentages, the token written marked.
    const choice = await findAlternative(session);
    const popover = await session.waitFor(`${POPOVER}[data-at="${choice.at}"]`);
    const bars = await session.findAll(`${POPOVER} [data-testid="token-alternative"] .alt-bar`);
    assert.ok(bars.length >= 2, `a bar per alternative (${bars.length})`);
    assert.match(await session.text(await session.within(popover, '[data-testid="popover-entropy"]')), /^entropy [\d.]+ bits$/);
    for (const p of await session.findAll(`${POPOVER} [data-testid="alternative-p"]`)) {
      assert.match(await session.text(p), /^(\d+(\.\d)?%|<0\.1%)$/);
    }
    assert.equal((await session.findAll(`${POPOVER} [data-testid="token-alternative"][data-written="true"]`)).length, 1);
    await sleep(300);
    await shot(session, "inspector-01-alternatives");

    // What the new version must open with: the tokens before the one replaced, then the alternative.
    const kept = await tokenTexts(session, choice.at);
    const opening = kept.join("") + choice.text;

    // Choosing it writes a new version of the reply, streamed like a regenerated one: 2/2.
    const buttons = await session.findAll(`${POPOVER} [data-testid="token-alternative"]`);
    await session.press(buttons[choice.index]);
    const position = `${reply}[data-status="complete"] [data-testid="branch-position"]`;
    await session.waitFor(position, { accept: (t) => t.includes("2/2"), timeoutMs: 120_000 });
    const branched = await session.waitFor(`${reply}[data-status="complete"]`, { accept: nonEmpty });
    const text = await session.text(await session.within(branched, '[data-testid="message-content"]'));
    assert.ok(squash(text).startsWith(squash(opening)), `${JSON.stringify(text)} should start with ${JSON.stringify(opening)}`);

    // Its own tokens begin with the kept ones and the alternative, exactly.
    await session.press(await session.within(branched, '[data-testid="action-inspect"]'));
    await session.waitFor(TOKENS, { timeoutMs: 10_000 });
    assert.deepEqual(await tokenTexts(session, choice.at + 1), [...kept, choice.text]);
    await sleep(300);
    await shot(session, "inspector-02-branched");

    // The version it came from is one arrow away.
    await session.press(await session.within(branched, '[data-testid="branch-prev"]'));
    await session.waitFor(`${reply} [data-testid="branch-position"]`, { accept: (t) => t.includes("1/2") });
  } finally {
    await session.close();
  }
});

const COMPARE = '[data-testid="compare"]';
const COLUMNS = `${COMPARE} [data-testid="compare-column"]`;

/** Waits until nothing matches `css`. */
async function waitGone(session, css, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while ((await session.findAll(css)).length > 0) {
    if (Date.now() > deadline) throw new Error(`${css} is still there`);
    await sleep(100);
  }
}

test("compare: a reply's question answered with this chat's settings and by beam search side by side; the one kept is shown", async () => {
  const session = await Session.open(ctx.driver.base, ctx.app);
  try {
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2") && !t.includes("Loading") });
    // Short answers: 4 beams of at most 32 tokens fit any context, and a sampled answer's length must not decide
    // whether the test finishes in time. (Set before the chat exists: the settings of all chats.)
    await setMaxTokens(session, 32);

    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    await send(session, "Name three fruits.");
    const first = await session.waitFor(`${reply}[data-status="complete"]`, { accept: nonEmpty, timeoutMs: 120_000 });
    const original = await session.attribute(first, "data-message-id");
    assert.equal((await session.findAll(`${reply} [data-testid="branch-position"]`)).length, 0, "one version so far");

    // Compare from the reply's actions: two columns, this chat's settings and the same by beam search.
    await session.press(await session.within(first, '[data-testid="action-compare"]'));
    await session.waitFor(`${COMPARE}[data-phase="setup"]`, { timeoutMs: 10_000 });
    assert.equal((await session.findAll(COLUMNS)).length, 2);
    await script(
      session,
      `const choose = (select, value) => {
         if (select.value === value) return;
         select.value = value;
         select.dispatchEvent(new Event("change", { bubbles: true }));
       };
       const columns = document.querySelectorAll(arguments[0]);
       [["chat", "sampling"], ["chat", "beam"]].forEach(([base, strategy], i) => {
         choose(columns[i].querySelector('[data-testid="column-base"]'), base);
         choose(columns[i].querySelector('[data-testid="column-strategy"]'), strategy);
       });`,
      COLUMNS,
    );
    const summaries = await script(session, "return [...document.querySelectorAll(arguments[0])].map((s) => s.textContent.trim())", `${COLUMNS} [data-testid="column-summary"]`);
    assert.deepEqual(summaries, ["This chat's settings", "Beam search · width 4"]);
    await sleep(300);
    await shot(session, "compare-01-setup");

    // Run: both answer at once; each ends with its text and its stats line.
    await session.press(await session.waitFor(`${COMPARE} [data-testid="compare-run"]`));
    await session.waitFor(`${COMPARE}[data-phase="done"]`, { timeoutMs: 180_000 });
    const columns = await script(
      session,
      `return [...document.querySelectorAll(arguments[0])].map((c) => ({
         status: c.dataset.status,
         id: c.dataset.messageId,
         text: c.querySelector('[data-testid="column-text"]').innerText,
         stats: c.querySelector('[data-testid="column-stats"]')?.textContent ?? "",
         error: c.querySelector('[data-testid="column-error"]')?.textContent ?? "",
         keep: c.querySelector('[data-testid="column-keep"]') !== null,
       }))`,
      COLUMNS,
    );
    assert.equal(columns.length, 2);
    for (const [i, column] of columns.entries()) {
      assert.equal(column.status, "complete", `column ${i + 1}: ${JSON.stringify(column)}`);
      assert.ok(nonEmpty(column.text), `column ${i + 1} has text`);
      assert.match(column.stats, /^\d+ tokens · [\d.]+ tok\/s · TTFT /, `column ${i + 1}'s stats`);
      assert.ok(column.keep, `column ${i + 1} can be kept`);
    }
    assert.notEqual(columns[0].id, columns[1].id);
    await sleep(300);
    await shot(session, "compare-02-done");

    // Behind the view the chat already shows the last answer (the backend leaves it on show): 3/3, two versions more.
    const behind = await session.waitFor(`${reply}[data-message-id="${columns[1].id}"] [data-testid="branch-position"]`);
    assert.match(await session.text(behind), /3\/3/);

    // Keep the first (the second is on show already): the view closes and the chat shows it, 2/3.
    const keeps = await session.findAll(`${COLUMNS} [data-testid="column-keep"]`);
    await session.press(keeps[0]);
    await waitGone(session, COMPARE);
    const kept = await session.waitFor(`${reply}[data-message-id="${columns[0].id}"]`);
    assert.match(await session.text(await session.within(kept, '[data-testid="branch-position"]')), /2\/3/);
    const shown = await session.text(await session.within(kept, '[data-testid="message-content"]'));
    assert.equal(squash(shown), squash(columns[0].text));
    await sleep(300);
    await shot(session, "compare-03-kept");
    // The reply compared is still a version of it, one arrow back.
    await session.press(await session.within(kept, '[data-testid="branch-prev"]'));
    await session.waitFor(`${reply}[data-message-id="${original}"] [data-testid="branch-position"]`, { accept: (t) => t.includes("1/3") });
  } finally {
    await session.close();
  }
});
