// Browser tests of how a reply was made, shown with it: consensus (its candidates), beam search (its best
// replies) and the token inspector (each token's alternatives; choosing one writes a new version from there).
// Run with `npm run test:browser` or `node --test tests/browser/chat-replies.test.mjs`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MODEL,
  TIMEOUT,
  collectDialogs,
  inBothSchemes,
  lastAssistant,
  mockState,
  replyStats,
  shot,
  useBrowser,
  waitForStatus,
  withApp,
} from './harness.mjs';
import { inSettings, text, waitForSave, watchNextReply } from './chat-helpers.mjs';

useBrowser();

/** Model output that would run as HTML. */
const HOSTILE = '<img src=x onerror=alert(1)>';

/** A consensus reply's candidates, in the order they were sampled; the second agreed most with the others. */
const CANDIDATES = [
  { text: 'Lisbon in a day: the Alfama at dawn, then the 28 tram up to the castle.', score: 0.58 },
  { text: 'Start in the Alfama, ride the 28 tram to the castle,\nand end at the Belém Tower.', score: 0.71 },
  { text: HOSTILE, score: 0.12 },
  { text: 'Alfama, tram 28, Belém Tower: one day is enough for all three.', score: 0.64 },
];

/** A chat whose first reply was chosen by consensus (its stats keep the candidates), its second sampled. */
const consensusChat = () => ({
  chats: [{ id: 1, title: 'A day in Lisbon', updatedAt: 30 }],
  messages: [
    { id: 11, chatId: 1, role: 'user', content: 'Plan one day in Lisbon.', status: 'complete', createdAt: 1, model: null, stats: null },
    {
      id: 12, chatId: 1, role: 'assistant', content: CANDIDATES[1].text, status: 'complete', createdAt: 2, model: MODEL.name,
      stats: replyStats({ consensus: { utility: 'chrF', chosen: 1, candidates: CANDIDATES } }),
    },
    { id: 13, chatId: 1, role: 'user', content: 'Where do I eat?', status: 'complete', createdAt: 3, model: null, stats: null },
    { id: 14, chatId: 1, role: 'assistant', content: 'Try a tasca in the Mouraria.', status: 'complete', createdAt: 4, model: MODEL.name, stats: replyStats() },
  ],
});

/** A beam search's best replies, best first (the first is the reply); the third is hostile model output. */
const BEAMS = [
  { text: 'Start in the Alfama, then take the 28 tram to the castle.', logprob: -5.1234, score: -0.4269, tokens: 12 },
  { text: 'Start in the Alfama.', logprob: -3.1, score: -0.5167, tokens: 6 },
  { text: HOSTILE, logprob: -7.2, score: -0.6, tokens: 12 },
  { text: 'Take the 28 tram.', logprob: -4.4, score: -0.7333, tokens: 6 },
];

/** A chat whose first reply was found by beam search (its stats keep the best replies), its second sampled. */
const beamChat = () => ({
  chats: [{ id: 1, title: 'A day in Lisbon', updatedAt: 30 }],
  messages: [
    { id: 11, chatId: 1, role: 'user', content: 'Plan one day in Lisbon.', status: 'complete', createdAt: 1, model: null, stats: null },
    { id: 12, chatId: 1, role: 'assistant', content: BEAMS[0].text, status: 'complete', createdAt: 2, model: MODEL.name, stats: replyStats({ beams: BEAMS }) },
    { id: 13, chatId: 1, role: 'user', content: 'Where do I eat?', status: 'complete', createdAt: 3, model: null, stats: null },
    { id: 14, chatId: 1, role: 'assistant', content: 'Try a tasca in the Mouraria.', status: 'complete', createdAt: 4, model: MODEL.name, stats: replyStats() },
  ],
});

/** The reply the inspector looks at: its tokens made up by the mock from its text (word-sized, line breaks apart). */
const INSPECTED = 'Start in the Alfama,\nthen ride the 28 tram.';
/** Model output as tokens: hostile text as a token of its own and as an alternative. */
const HOSTILE_REPLY = `Use \`${HOSTILE}\` here.`;
const HOSTILE_TOKENS = [
  { id: 7, text: 'Use', p: 0.9, entropy: 0.6, top: [{ id: 7, text: 'Use', p: 0.9 }, { id: 8, text: 'Try', p: 0.05 }] },
  { id: 9, text: ' `', p: 0.4, entropy: 1.4, top: [{ id: 10, text: HOSTILE, p: 0.5 }, { id: 9, text: ' `', p: 0.4 }] },
  { id: 11, text: HOSTILE, p: 0.07, entropy: 2.9, top: [{ id: 12, text: ' <script>alert(2)</script>', p: 0.6 }, { id: 11, text: HOSTILE, p: 0.07 }] },
  { id: 13, text: '`', p: 0.97, entropy: 0.2, top: [{ id: 13, text: '`', p: 0.97 }] },
  { id: 14, text: ' here.', p: 0.55, entropy: 1.1, top: [{ id: 14, text: ' here.', p: 0.55 }, { id: 15, text: ' there.', p: 0.3 }] },
  { id: 2, text: '', p: 0.99, entropy: 0.1, top: [{ id: 2, text: '', p: 0.99 }] },
];

/** A chat of local replies: one the mock has tokens for, one written before the inspector existed, one with hostile tokens. */
const inspectorChat = () => ({
  chats: [{ id: 1, title: 'Tram or walk', updatedAt: 30 }],
  messages: [
    { id: 11, chatId: 1, role: 'user', content: 'How do I see Lisbon?', status: 'complete', createdAt: 1, model: null, stats: null },
    { id: 12, chatId: 1, role: 'assistant', content: INSPECTED, status: 'complete', createdAt: 2, model: MODEL.name, stats: replyStats() },
    { id: 13, chatId: 1, role: 'user', content: 'And last year?', status: 'complete', createdAt: 3, model: null, stats: null },
    { id: 14, chatId: 1, role: 'assistant', content: 'Written before the inspector.', status: 'complete', createdAt: 4, model: MODEL.name, stats: replyStats() },
    { id: 15, chatId: 1, role: 'user', content: 'Show me some markup.', status: 'complete', createdAt: 5, model: null, stats: null },
    { id: 16, chatId: 1, role: 'assistant', content: HOSTILE_REPLY, status: 'complete', createdAt: 6, model: MODEL.name, stats: replyStats() },
  ],
  tokenProbs: { 14: [], 16: HOSTILE_TOKENS },
  // What a branch writes on with.
  replies: [{ text: ' onwards to Belém.', chunkSize: 3, delayMs: 40 }],
});

/** What token_probs answers for `messageId`, asked of the mock directly. */
const tokenProbs = (page, messageId) => page.evaluate((id) => window.__TAURI_INTERNALS__.invoke('token_probs', { messageId: id }), messageId);

/** The saved replies of a chat whose first reply was chosen from others (consensus, beam search), its second sampled. */
async function chosenAndPlain(page) {
  const replies = page.locator('[data-testid="message"][data-role="assistant"]');
  await replies.nth(1).getByTestId('message-stats').waitFor();
  return [replies.nth(0), replies.nth(1)];
}

/** `reply`'s stats line reads `text`, and the last line of its tooltip is `detail`. */
async function assertStatsLine(reply, text, detail) {
  const line = reply.getByTestId('message-stats');
  assert.equal(await line.textContent(), text);
  assert.equal((await line.getAttribute('title')).split('\n').at(-1), detail);
}

/**
 * Opens `reply`'s panel (`kind`: 'candidates' or 'beams') with its button, closed at first and reading `label`: the
 * button says it is open and names the panel it controls, a list of `count` items. Returns the button and the panel.
 */
async function openPanel(reply, kind, label, count) {
  const toggle = reply.getByTestId(`${kind}-toggle`);
  assert.equal((await toggle.textContent()).trim(), label);
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  assert.equal(await reply.page().getByTestId(kind).count(), 0);
  await toggle.click();
  const panel = reply.getByTestId(kind);
  await panel.waitFor();
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  assert.equal(await panel.getAttribute('id'), await toggle.getAttribute('aria-controls'));
  assert.equal(await panel.locator('ol > li').count(), count, 'a list, one item per candidate or beam');
  return { toggle, panel };
}

/** Model output is text: `text` (an item of `panel`) shows the hostile markup as written, and nothing of it ran. */
async function assertShownAsText(panel, text, dialogs) {
  assert.equal(await text.textContent(), HOSTILE);
  assert.equal(await panel.locator('img').count(), 0);
  await panel.page().waitForTimeout(100);
  assert.deepEqual(dialogs, []);
}

/** Sends `question` in the open chat; its reply, `text`, arrives whole after the typing dots (no streaming). Returns it. */
async function askWhole(page, question, text) {
  await page.getByTestId('composer').fill(question);
  const done = await watchNextReply(page);
  await page.keyboard.press('Enter');
  const { lengths, typing, searching, status } = await done();
  assert.equal(status, 'complete');
  assert.ok(typing, 'the typing dots while the reply is written out of sight');
  assert.equal(lengths.filter((n) => n > 0).length, 1, `no streaming: the reply arrives whole (lengths seen: ${lengths})`);
  // Meanwhile the search says how far it has got, step by step, and the label goes with the reply's arrival.
  const counts = searching.map((said) => Number(/^Searching · (\d+) tokens?$/.exec(said)?.[1]));
  assert.ok(counts.length >= 2 && counts.every((n, i) => n > 0 && (i === 0 || n > counts[i - 1])), `the search's progress: ${searching}`);
  assert.equal(await lastAssistant(page).getByTestId('message-searching').count(), 0);
  const live = lastAssistant(page);
  assert.equal((await live.getByTestId('message-content').textContent()).trim(), text);
  return live;
}

describe('Hearth chat screen', () => {

  test('a consensus reply: "best of N" on its stats line, and the candidates it was chosen from listed on demand', { timeout: TIMEOUT }, async () => {
    const config = {
      ...consensusChat(),
      // Written under consensus (the default 8 candidates, made up around this text by the mock, it the best).
      defaultReply: { text: 'The 28 tram, then the Belém Tower at sunset.', chunkSize: 4, delayMs: 25 },
    };
    await withApp(config, async (page) => {
      const dialogs = collectDialogs(page);
      // The consensus reply says how many candidates it was the best of; the sampled one says nothing.
      const [chosen, plain] = await chosenAndPlain(page);
      await assertStatsLine(
        chosen,
        '58 tokens · 41.7 tok/s · TTFT 142 ms · best of 4',
        "Consensus: the best of 4 candidates by chrF (score 0.71); tok/s counts every candidate's tokens, TTFT waits for all of them.",
      );
      assert.doesNotMatch(await plain.getByTestId('message-stats').textContent(), /best of/);
      assert.equal(await plain.getByTestId('candidates-toggle').count(), 0);

      // Closed at first; the button opens the list, in the candidates' order, their scores beside them, the chosen one marked.
      const { toggle, panel } = await openPanel(chosen, 'candidates', '4 candidates', CANDIDATES.length);
      const items = panel.getByTestId('candidate');
      assert.deepEqual(await items.getByTestId('candidate-text').allTextContents(), CANDIDATES.map((c) => c.text));
      assert.deepEqual(await items.getByTestId('candidate-score').allTextContents(), ['0.58', '0.71', '0.12', '0.64']);
      assert.deepEqual(await items.evaluateAll((els) => els.map((el) => el.dataset.chosen ?? null)), [null, 'true', null, null]);
      assert.equal(await panel.getByTestId('candidate-chosen').count(), 1);
      assert.equal((await items.nth(1).getByTestId('candidate-chosen').textContent()).trim(), 'chosen');
      await assertShownAsText(panel, items.nth(2).getByTestId('candidate-text'), dialogs);

      // The button closes it again, from the keyboard too.
      await toggle.focus();
      await page.keyboard.press('Enter');
      await panel.waitFor({ state: 'detached' });
      assert.equal(await toggle.getAttribute('aria-expanded'), 'false');

      // Live, under consensus: the dots while the candidates are written, then the chosen one whole, with its candidates.
      await inSettings(page, async () => {
        await page.getByTestId('field-strategy-consensus').click();
        await waitForSave(page, (p) => p.strategy === 'consensus');
      });
      const live = await askWhole(page, 'And the evening?', config.defaultReply.text);
      assert.match(await live.getByTestId('message-stats').textContent(), /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms( · \d+ cached)? · best of 8$/);
      // Opened at the bottom of the chat, the list stops following the bottom: the button stays where it was clicked.
      const liveToggle = live.getByTestId('candidates-toggle');
      const topBefore = (await liveToggle.boundingBox()).y;
      await liveToggle.click();
      const liveItems = live.getByTestId('candidate');
      await liveItems.first().waitFor();
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 50)))));
      assert.ok(Math.abs((await liveToggle.boundingBox()).y - topBefore) < 2, `the button moved from ${topBefore} to ${(await liveToggle.boundingBox()).y}`);
      assert.equal(await liveItems.count(), 8);
      assert.equal(await liveItems.nth(1).getByTestId('candidate-text').textContent(), config.defaultReply.text);
      assert.equal(await liveItems.nth(1).getAttribute('data-chosen'), 'true');
    });
  });

  test('a beam search reply: "beam 1 of N" on its stats line, and the best replies it found listed on demand', { timeout: TIMEOUT }, async () => {
    const config = { ...beamChat(), defaultReply: { text: 'The 28 tram, then the Belém Tower at sunset.', chunkSize: 4, delayMs: 25 } };
    await withApp(config, async (page) => {
      const dialogs = collectDialogs(page);
      // The beam reply says it is the best of the replies kept; the sampled one says nothing.
      const [found, plain] = await chosenAndPlain(page);
      await assertStatsLine(
        found,
        '58 tokens · 41.7 tok/s · TTFT 142 ms · beam 1 of 4',
        "Beam search: the best of the 4 replies it kept (score −0.43, log-probability −5.12 over 12 tokens); tok/s counts every beam's tokens, TTFT waits for the search to end.",
      );
      assert.doesNotMatch(await plain.getByTestId('message-stats').textContent(), /beam/);
      assert.equal(await plain.getByTestId('beams-toggle').count(), 0);
      assert.equal(await found.getByTestId('candidates-toggle').count(), 0);

      // The same panel as consensus's: closed at first, best first, each with its score and log-probability, the reply marked.
      const { toggle, panel } = await openPanel(found, 'beams', '4 beams', BEAMS.length);
      assert.equal(await panel.getAttribute('aria-label'), 'Beam search replies');
      assert.match(await panel.locator('.intro').textContent(), /best first, ranked by score: the model's log-probability of the reply ÷ its length\^length penalty/);
      const items = panel.getByTestId('beam');
      assert.deepEqual(await items.getByTestId('beam-text').allTextContents(), BEAMS.map((b) => b.text));
      assert.deepEqual(await items.getByTestId('beam-score').allTextContents(), ['−0.43', '−0.52', '−0.60', '−0.73']);
      assert.deepEqual(await items.getByTestId('beam-logprob').allTextContents(), ['−5.12', '−3.10', '−7.20', '−4.40']);
      assert.deepEqual(await items.getByTestId('beam-tokens').allTextContents(), ['12 tokens', '6 tokens', '12 tokens', '6 tokens']);
      assert.deepEqual(await items.evaluateAll((els) => els.map((el) => el.dataset.chosen ?? null)), ['true', null, null, null]);
      assert.deepEqual(await items.locator('.name').allTextContents(), ['Beam 1', 'Beam 2', 'Beam 3', 'Beam 4']);
      await assertShownAsText(panel, items.nth(2).getByTestId('beam-text'), dialogs);
      await toggle.click();
      await panel.waitFor({ state: 'detached' });

      // Live, under beam search: the best reply arrives whole, with min(n-best, width) of them kept.
      await inSettings(page, async () => {
        await page.getByTestId('field-strategy-beam').click();
        await waitForSave(page, (p) => p.strategy === 'beam');
        await page.getByTestId('field-nBest').fill('3');
        await waitForSave(page, (p) => p.nBest === 3);
      });
      const live = await askWhole(page, 'And the evening?', config.defaultReply.text);
      assert.match(await live.getByTestId('message-stats').textContent(), /^\d+ tokens · [\d.]+ tok\/s · TTFT \d+ ms( · \d+ cached)? · beam 1 of 3$/);
      await live.getByTestId('beams-toggle').click();
      assert.equal(await live.getByTestId('beam').count(), 3);
      assert.equal(await live.getByTestId('beam-text').first().textContent(), config.defaultReply.text);
      // Beam search keeps no token probabilities: the inspector says so.
      await live.getByTestId('action-inspect').click();
      assert.match(await live.getByTestId('inspector-empty').textContent(), /^This reply was found by beam search, which keeps no token probabilities/);
    });
  });

  for (const { what, chat, kind, file } of [
    { what: 'consensus candidates', chat: consensusChat, kind: 'candidates', file: 'chat-consensus' },
    { what: 'beam search replies', chat: beamChat, kind: 'beams', file: 'chat-beams' },
  ]) {
    test(`artefacts to look at: ${what} screenshots (light and dark)`, { timeout: TIMEOUT }, async () => {
      await inBothSchemes(chat(), async (page) => {
        const reply = page.locator('[data-testid="message"][data-role="assistant"]').first();
        await reply.getByTestId(`${kind}-toggle`).click();
        await reply.getByTestId(kind).waitFor();
        await reply.evaluate((el) => el.scrollIntoView({ block: 'start' }));
        await shot(page, `${file}`, { mouse: [1100, 700] });
      });
    });
  }

  test('the token inspector: a reply as its tokens, each with its alternatives; choosing one writes a new version from there', { timeout: TIMEOUT }, async () => {
    await withApp(inspectorChat(), async (page) => {
      const dialogs = collectDialogs(page);
      const replies = page.locator('[data-testid="message"][data-role="assistant"]');
      const reply = replies.first();
      await reply.getByTestId('message-content').waitFor();

      // The button in the reply's footer opens the inspector under it.
      const button = reply.getByTestId('action-inspect');
      assert.equal(await button.getAttribute('aria-label'), 'Inspect tokens');
      assert.equal(await button.getAttribute('aria-expanded'), 'false');
      assert.equal(await page.locator('[data-testid="message"][data-role="user"] [data-testid="action-inspect"]').count(), 0, 'questions have none');
      await button.click();
      const inspector = reply.getByTestId('inspector');
      await inspector.getByTestId('inspector-tokens').waitFor();
      assert.equal(await button.getAttribute('aria-expanded'), 'true');
      assert.equal(await inspector.getAttribute('id'), await button.getAttribute('aria-controls'));
      assert.deepEqual((await mockState(page)).calls.filter((c) => c.cmd === 'token_probs').map((c) => c.payload), [{ messageId: 12 }]);

      // One span per token, spelling the reply exactly (spaces and the line break kept); the end of the turn last, without text.
      const kept = await tokenProbs(page, 12);
      const tokens = inspector.getByTestId('token');
      assert.equal(await tokens.count(), kept.length);
      assert.deepEqual(await tokens.allTextContents(), kept.map((t) => t.text));
      assert.equal(await inspector.getByTestId('inspector-tokens').textContent(), INSPECTED);
      assert.equal(await inspector.getByTestId('inspector-count').textContent(), `${kept.length} tokens`);
      assert.equal(await tokens.last().getAttribute('data-end'), 'true');
      assert.equal(await tokens.last().getAttribute('aria-label'), 'End of the reply');
      assert.equal(await tokens.nth(4).locator('.nl').count(), 1, 'the line break has its mark');
      // Tinted by probability (the less likely, the warmer), and the toggle turns it off.
      assert.equal(await inspector.locator('.tokens.tinted').count(), 1);
      const levels = await tokens.evaluateAll((els) => els.map((el) => [...el.classList].find((c) => /^t\d$/.test(c))));
      assert.deepEqual(levels, kept.map((t) => `t${t.p >= 0.9 ? 0 : t.p >= 0.6 ? 1 : t.p >= 0.3 ? 2 : t.p >= 0.1 ? 3 : 4}`));
      const tint = await tokens.first().evaluate((el) => getComputedStyle(el).backgroundColor);
      assert.notEqual(tint, 'rgba(0, 0, 0, 0)', 'a token of p 0.42 is tinted');
      await inspector.getByTestId('inspector-tint').click();
      assert.equal(await inspector.locator('.tokens.tinted').count(), 0);
      assert.equal(await tokens.first().evaluate((el) => getComputedStyle(el).backgroundColor), 'rgba(0, 0, 0, 0)');
      assert.equal(await inspector.getByTestId('inspector-legend').count(), 0);
      await inspector.getByTestId('inspector-tint').click();
      await inspector.getByTestId('inspector-legend').waitFor();

      // Pointed at, a token shows its alternatives: their text (whitespace visible), a bar and the percentage; and the entropy.
      const popover = inspector.getByTestId('token-popover');
      await tokens.nth(2).hover();
      await popover.waitFor();
      assert.equal(await popover.getAttribute('data-at'), '2');
      const the = kept[2];
      assert.equal(await popover.getByTestId('popover-token').textContent(), '␣the');
      assert.equal(await popover.getByTestId('popover-p').textContent(), `${(the.p * 100).toFixed(1)}%`);
      assert.equal(await popover.getByTestId('popover-entropy').textContent(), `entropy ${the.entropy.toFixed(2)} bits`);
      const alternatives = popover.getByTestId('token-alternative');
      assert.equal(await alternatives.count(), the.top.length);
      assert.deepEqual(await alternatives.getByTestId('alternative-text').allTextContents(), the.top.map((a) => a.text.replaceAll(' ', '␣')));
      assert.deepEqual(await alternatives.getByTestId('alternative-p').allTextContents(), the.top.map((a) => `${(a.p * 100).toFixed(1)}%`));
      const widths = await alternatives.locator('.alt-bar > span').evaluateAll((els) => els.map((el) => parseFloat(el.style.width)));
      assert.deepEqual(widths.map((w) => Math.round(w * 10)), the.top.map((a) => Math.round(a.p * 1000)));
      // The token written is marked and cannot be chosen again.
      assert.deepEqual(await alternatives.evaluateAll((els) => els.map((el) => [el.dataset.written ?? null, el.disabled])), the.top.map((a) => [a.id === the.id ? 'true' : null, a.id === the.id]));
      // Below its token, within the panel.
      const [tokenBox, popBox] = [await tokens.nth(2).boundingBox(), await popover.boundingBox()];
      assert.ok(popBox.y >= tokenBox.y + tokenBox.height, `the popover (${popBox.y}) is under the token (${tokenBox.y + tokenBox.height})`);
      // Moving away closes it.
      await page.mouse.move(1100, 40);
      await popover.waitFor({ state: 'detached' });

      // From the keyboard: one token in the tab order, arrows move between tokens, Enter goes to the alternatives, Escape closes.
      assert.equal(await inspector.locator('[data-testid="token"][tabindex="0"]').count(), 1);
      await tokens.first().focus();
      assert.equal(await popover.getAttribute('data-at'), '0');
      await page.keyboard.press('ArrowRight');
      assert.equal(await popover.getAttribute('data-at'), '1');
      assert.equal(await tokens.nth(1).evaluate((el) => el === document.activeElement), true);
      assert.equal(await tokens.nth(1).getAttribute('tabindex'), '0');
      await page.keyboard.press('End');
      assert.equal(await popover.getAttribute('data-at'), String(kept.length - 1));
      assert.equal(await popover.getByTestId('popover-token').textContent(), 'end of reply');
      await page.keyboard.press('Home');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('Enter');
      const focusedAlternative = () => page.evaluate(() => document.activeElement?.dataset.tokenId ?? null);
      const enabled = kept[1].top.filter((a) => a.id !== kept[1].id).map((a) => String(a.id));
      assert.equal(await focusedAlternative(), enabled[0]);
      await page.keyboard.press('ArrowDown');
      assert.equal(await focusedAlternative(), enabled[1]);
      await page.keyboard.press('Escape');
      await popover.waitFor({ state: 'detached' });
      assert.equal(await tokens.nth(1).evaluate((el) => el === document.activeElement), true, 'Escape goes back to the token');

      // A click (a tap) keeps it open while the pointer is elsewhere; a click outside closes it.
      await tokens.nth(5).click();
      await page.mouse.move(1100, 40);
      await page.waitForTimeout(350);
      assert.equal(await popover.getAttribute('data-at'), '5');
      await page.locator('[data-testid="message"][data-role="user"]').first().getByTestId('message-content').click();
      await popover.waitFor({ state: 'detached' });

      // Model output is text: hostile tokens and alternatives are shown as written; nothing of them runs.
      const hostile = replies.nth(2);
      await hostile.getByTestId('action-inspect').click();
      const hostileTokens = hostile.getByTestId('token');
      await hostileTokens.first().waitFor();
      assert.deepEqual(await hostileTokens.allTextContents(), HOSTILE_TOKENS.map((t) => t.text));
      await hostileTokens.nth(1).hover();
      const hostilePopover = hostile.getByTestId('token-popover');
      assert.equal(await hostilePopover.getByTestId('alternative-text').first().textContent(), '<img␣src=x␣onerror=alert(1)>');
      await hostileTokens.nth(2).hover();
      await hostile.locator('[data-testid="token-popover"][data-at="2"]').waitFor();
      assert.equal(await hostilePopover.getByTestId('popover-token').textContent(), '<img␣src=x␣onerror=alert(1)>');
      assert.equal(await hostilePopover.getByTestId('alternative-text').first().textContent(), '␣<script>alert(2)</script>');
      assert.equal(await hostile.getByTestId('inspector').locator('img, script').count(), 0);
      await page.waitForTimeout(100);
      assert.deepEqual(dialogs, []);
      await hostile.getByTestId('inspector-close').click();
      await hostile.getByTestId('inspector').waitFor({ state: 'detached' });
      assert.equal(await hostile.getByTestId('action-inspect').evaluate((el) => el === document.activeElement), true, 'closed: back to its button');

      // A reply with none kept says why, in words.
      const old = replies.nth(1);
      await old.getByTestId('action-inspect').click();
      assert.equal(
        await old.getByTestId('inspector-empty').textContent(),
        'No token probabilities were kept for this reply. They are kept for replies of the local model (and of a llama.cpp server with llama.cpp fields on) while Settings → Sampling → Alternatives kept per token is above 0; other providers’ replies have none, and neither do replies written with it at 0 or before the token inspector existed.',
      );
      assert.equal(await old.getByTestId('token').count(), 0);

      // Choosing an alternative writes a new version of the reply: the tokens before it, it, then on.
      await tokens.nth(2).hover();
      const choice = popover.locator('[data-testid="token-alternative"]:not([disabled])').first();
      const choiceId = Number(await choice.getAttribute('data-token-id'));
      const chosen = the.top.find((a) => a.id === choiceId);
      const opening = kept.slice(0, 2).map((t) => t.text).join('') + chosen.text;
      assert.equal(opening, 'Start in and');
      await choice.click();
      // It streams in as a regenerated reply does: its opening at once, as version 2 of 2.
      await page.waitForFunction((text) => {
        const last = [...document.querySelectorAll('[data-testid="message"][data-role="assistant"]')].at(-1);
        return last?.dataset.status === 'streaming' && last.querySelector('[data-testid="message-content"]').textContent.startsWith(text);
      }, opening);
      assert.equal(await replies.count(), 1, 'the later messages leave the path with the version branched from');
      assert.equal((await lastAssistant(page).getByTestId('branch-position').textContent()).trim(), '2/2');
      const branched = lastAssistant(page);
      await waitForStatus(branched, 'complete');
      assert.equal((await branched.getByTestId('message-content').textContent()).trim(), `${opening} onwards to Belém.`);
      assert.equal((await branched.getByTestId('branch-position').textContent()).trim(), '2/2');
      const call = (await mockState(page)).calls.filter((c) => c.cmd === 'branch_reply').map(({ payload: { onEvent, ...args } }) => args);
      assert.deepEqual(call, [{ chatId: 1, messageId: 12, at: 2, token: chosen.id }]);
      // Its tokens begin with the kept ones and the alternative.
      await branched.getByTestId('action-inspect').click();
      await branched.getByTestId('token').first().waitFor();
      assert.deepEqual((await branched.getByTestId('token').allTextContents()).slice(0, 3), ['Start', ' in', ' and']);
      // The version it came from is one arrow away.
      await branched.getByTestId('branch-prev').click();
      await replies.first().getByTestId('branch-position').filter({ hasText: '1/2' }).waitFor();
      assert.equal((await replies.first().getByTestId('message-content').innerText()).trim(), INSPECTED);
      assert.equal(await replies.count(), 3);
    });
  });

  test('artefacts to look at: token inspector screenshots (light and dark)', { timeout: TIMEOUT }, async () => {
    await inBothSchemes(inspectorChat(), async (page) => {
      const reply = page.locator('[data-testid="message"][data-role="assistant"]').first();
      await reply.getByTestId('action-inspect').click();
      const token = reply.getByTestId('token').nth(3);
      await token.waitFor();
      await reply.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      const box = await token.boundingBox();
      await token.hover();
      await reply.getByTestId('token-popover').waitFor();
      await shot(page, `chat-inspector`, { mouse: [box.x + box.width / 2, box.y + box.height / 2] });
    });
  });
});
