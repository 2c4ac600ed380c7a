// End to end: the token inspector in the real app with the real SmolLM2 model. A reply's tokens come
// with the distributions the engine drew them from (topProbs at its default, 5); focusing a token shows
// its alternatives, and choosing one writes a new version of the reply (2/2) that opens with the tokens
// before it and the alternative, then goes on. Screenshots land in tests/e2e/output/.
import { test } from "node:test";
import assert from "node:assert/strict";

import { REPLY as reply, appUnderTest, nonEmpty, send, shot, sleep } from "./helpers.mjs";
import { Session } from "./webdriver.mjs";

const ctx = appUnderTest("hearth-e2e-inspector-", { portSalt: 31 });

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
