// Browser tests of tools in a chat: a reply that calls a tool shows a chip while it writes the call (never the
// call's raw text), then the approval card (the tool, its server, what it does, a read-only hint, the arguments
// as editable JSON); the user's answer reaches the backend as given (edited arguments, deny, always), the call
// runs with its progress, its result is a collapsed row whose text opens as plain text, and the next reply reads
// it. Stop ends a running tool; a turn that used all its rounds says so; the path's edits and regenerations work
// around tool messages; servers a turn cannot offer (one asks to sign in, one failed) are named above the composer. Run with `npm run test:browser`; screenshots go to tests/browser/output/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MODEL, OUTPUT, TIMEOUT, inBothSchemes, lastAssistant, messages, mockState, shot, useBrowser, waitForStatus, withApp } from './harness.mjs';
import { fieldValue, inSettings, text, waitForSave } from './chat-helpers.mjs';

useBrowser();

const contract = JSON.parse(await (await import('node:fs/promises')).readFile(new URL('../../src/ipc/contract.json', import.meta.url), 'utf8'));
const [OPEN, CLOSE] = contract.toolCallMarks;
/** The rounds of tool calls a turn may take where no scope sets them (SamplingParams::default). */
const MAX_ROUNDS = contract.samplingDefaults.maxToolRounds;

/** A call as the model writes it in its reply's text. */
const block = (name, args) => `${OPEN}\n${JSON.stringify({ name, arguments: args })}\n${CLOSE}`;

const READ_ARGS = { path: '/home/me/notes/trip.md' };
const EDITED_ARGS = '{\n  "path": "/home/me/notes/trip-2024.md",\n  "lines": true\n}';
/** What the tool answers: hostile HTML among it, which must stay text. */
const NOTES = [
  '# Trip to Lisbon',
  '- Fly out on Friday 14:05 (TP 1351)',
  '- Hotel: Casa do Largo, Alfama',
  '<img src=x onerror="window.__pwned = true"> <b>not bold</b>',
  '- Day 2: Sintra by train from Rossio',
].join('\n');
const ANSWER = 'From your notes: you fly out **Friday at 14:05**, stay in the Alfama, and go to Sintra on day 2.';
const PROSE = "I'll look at your trip notes first.";

/** A chat to ask in. */
const CHAT = { chats: [{ id: 1, title: 'Trip', updatedAt: 10 }], messages: [] };

/** The reply that calls read_file (its call block written slowly enough to be seen), then the one that reads the result. */
const readRound = (over = {}) => [
  {
    text: `${PROSE}\n${block('read_file', READ_ARGS)}`,
    chunkSize: 3,
    delayMs: 12,
    calls: [
      {
        call: { name: 'read_file', arguments: JSON.stringify(READ_ARGS) },
        server: 'files',
        description: 'Reads a text file under the allowed folders and returns its contents, with line numbers when asked.',
        readOnly: true,
        runMs: 2400,
        stepMs: 500,
        progress: [
          { progress: 1, total: 4, message: 'Opening the file' },
          { progress: 2, total: 4, message: 'Reading lines 1–200' },
          { progress: 3, total: 4, message: 'Reading lines 201–412' },
        ],
        result: { content: NOTES, chars: 12_840, cut: true, elapsedMs: 2400 },
        ...over,
      },
    ],
  },
  { text: ANSWER },
];

/** A reply that searches (take `n`), quickly: every turn made of these calls until its rounds run out. */
const search = (n) => ({
  text: `Searching, take ${n}.\n${block('search', { q: `flights ${n}` })}`,
  chunkSize: 40,
  delayMs: 1,
  calls: [{ call: { name: 'search', arguments: JSON.stringify({ q: `flights ${n}` }) }, server: 'web', runMs: 10, result: { content: `result ${n}` } }],
});

/** The answers answer_tool_call took, once there are `count` of them (an answer is shown at once, sent meanwhile). */
async function decisions(page, count = 1) {
  await page.waitForFunction((n) => window.__hearthMock.toolDecisions.length >= n, count, { timeout: 5000 });
  return page.evaluate(() => window.__hearthMock.toolDecisions);
}
const cmds = async (page) => (await mockState(page)).calls.map((c) => c.cmd);
const toolRows = (page) => page.locator('[data-testid="message"][data-role="tool"]');
const callRow = (page) => page.getByTestId('tool-call');

async function ask(page, question) {
  await page.getByTestId('composer').fill(question);
  await page.keyboard.press('Enter');
}

/** Samples the streaming reply each frame until the approval card shows: never the call's marks as text; the chip seen. */
async function watchCallWritten(page) {
  return page.evaluate(
    ([open, close]) =>
      new Promise((resolve) => {
        const seen = { chip: null, rawMarks: false, prose: '' };
        const started = performance.now();
        const tick = () => {
          const reply = [...document.querySelectorAll('[data-testid="message"][data-role="assistant"]')].at(-1);
          if (reply) {
            const content = reply.querySelector('[data-testid="message-content"]')?.textContent ?? '';
            if (content.includes(open) || content.includes(close) || content.includes('<tool_') || content.includes('"arguments"')) seen.rawMarks = true;
            seen.prose = content;
            const chip = reply.querySelector('[data-testid="tool-calling"]');
            if (chip) seen.chip = chip.textContent.trim();
          }
          if (document.querySelector('[data-testid="tool-approval"]') || performance.now() - started > 15_000) return resolve(seen);
          requestAnimationFrame(tick);
        };
        tick();
      }),
    [OPEN, CLOSE],
  );
}

describe('Tools in a chat', () => {
  test('a call asked about, its arguments edited, allowed once: it runs with progress, its result opens as text, the reply reads it', { timeout: 2 * TIMEOUT }, async () => {
    await inBothSchemes({ ...CHAT, replies: readRound() }, async (page) => {
      await ask(page, 'When do I fly to Lisbon?');
      const written = await watchCallWritten(page);
      assert.equal(written.rawMarks, false, "the call's block is never shown as text");
      assert.equal(written.chip, 'Calling read_file…');
      assert.equal(written.prose.trim(), PROSE);

      const card = page.getByTestId('tool-approval');
      await card.waitFor();
      assert.equal(await text(card.getByTestId('tool-approval-title')), 'Run read_file from files?');
      assert.match(await text(card.getByTestId('tool-approval-description')), /^Reads a text file under the allowed folders/);
      assert.equal(await text(card.getByTestId('tool-approval-read-only')), 'read-only');
      const args = card.getByTestId('tool-approval-arguments');
      assert.equal(await args.inputValue(), JSON.stringify(READ_ARGS, null, 2), 'the arguments as pretty JSON');
      assert.equal(await page.getByTestId('stop').isEnabled(), true, 'Stop is there while the card waits');
      assert.equal(await page.getByTestId('composer').getAttribute('placeholder'), 'Allow or deny read_file above, or Stop');
      // The reply that called: its prose, its call (the card stands for it), no raw block.
      const caller = lastAssistant(page);
      assert.equal(await caller.getAttribute('data-status'), 'complete');
      assert.equal(await text(caller.getByTestId('message-content')), PROSE);
      await shot(page, 'chat-tool-approval', { dir: OUTPUT });

      // Not JSON: said in words, Allow off; then the edit the user means.
      await args.fill('{"path": "/home/me/notes/trip-2024.md",');
      const problem = card.getByTestId('tool-approval-problem');
      await problem.waitFor();
      assert.match(await text(problem), /^This is not valid JSON: /);
      assert.equal(await card.getByTestId('tool-allow').isDisabled(), true);
      assert.equal(await card.getByTestId('tool-allow-always').isDisabled(), true);
      assert.equal(await args.getAttribute('aria-invalid'), 'true');
      await args.fill(EDITED_ARGS);
      await problem.waitFor({ state: 'detached' });
      assert.equal(await card.getByTestId('tool-approval-edited').count(), 1);
      await card.getByTestId('tool-allow').click();

      // The card turns into the call's row: running, with its progress.
      await card.waitFor({ state: 'detached' });
      assert.deepEqual(await decisions(page), [{ chatId: 1, decision: { decision: 'allow', arguments: EDITED_ARGS } }]);
      assert.equal(await page.getByTestId('composer').getAttribute('placeholder'), `Message ${MODEL.name}`);
      const row = callRow(page);
      await row.and(page.locator('[data-state="running"]')).waitFor();
      assert.equal(await text(row.getByTestId('tool-call-name')), 'read_file');
      // The text and the bar say the same step, read at one instant: the steps are 500 ms apart,
      // and a page slowed by a build beside it moved on between two reads (50 read as 75).
      await page.waitForFunction((steps) => {
        const said = document.querySelector('[data-testid="tool-call-progress-text"]')?.textContent ?? '';
        const bar = document.querySelector('[data-testid="tool-call-progress-bar"]')?.getAttribute('aria-valuenow');
        return steps.some((message, i) => said.includes(`${i + 1}/4 · ${message}`) && bar === String((i + 1) * 25));
      }, ['Opening the file', 'Reading lines 1–200', 'Reading lines 201–412']);

      // Its result: one collapsed row after the reply that called; the call's row says how it went.
      const result = toolRows(page);
      await result.waitFor({ timeout: 15_000 });
      assert.equal(await text(result.getByTestId('tool-result-name')), 'read_file');
      assert.equal(await text(result.getByTestId('tool-result-server')), 'files');
      assert.equal(await text(result.getByTestId('tool-result-end')), 'Ran');
      assert.equal(await result.getByTestId('tool-result-error').count(), 0);
      assert.equal(await text(result.getByTestId('tool-result-facts')), '2.4 s · 12.8k characters · cut for the model');
      assert.equal(await result.getByTestId('tool-result-content').count(), 0, 'collapsed at first');
      assert.equal(await result.getByTestId('action-regenerate').count(), 0, 'a result is not regenerated');
      assert.equal(await result.getByTestId('action-edit').count(), 0, 'nor edited');
      assert.equal(await row.getAttribute('data-state'), 'ran');

      // The next reply reads it.
      await messages(page).nth(3).and(page.locator('[data-status="complete"]')).waitFor({ timeout: 15_000 });
      assert.match(await text(lastAssistant(page).getByTestId('message-content')), /^From your notes: you fly out Friday at 14:05/);
      assert.deepEqual(await messages(page).evaluateAll((els) => els.map((e) => e.dataset.role)), ['user', 'assistant', 'tool', 'assistant']);

      // Opened: the text as the model read it, plain (the hostile HTML is text, nothing of it an element).
      await result.getByTestId('tool-result-toggle').click();
      const content = result.getByTestId('tool-result-content');
      await content.waitFor();
      assert.equal(await content.textContent(), NOTES);
      assert.equal(await content.locator('*').count(), 0);
      assert.equal(await result.getByTestId('tool-result-toggle').getAttribute('aria-expanded'), 'true');
      assert.equal(await page.evaluate(() => window.__pwned), undefined);
      // The call's arguments, opened: as it ran with them (the user's edit), and what the model wrote.
      assert.equal(await text(row.getByTestId('tool-call-edited')), 'edited');
      await row.locator('button[aria-expanded]').click();
      assert.equal(await row.getByTestId('tool-call-arguments').textContent(), EDITED_ARGS);
      assert.equal(await row.getByTestId('tool-call-model-arguments').textContent(), JSON.stringify(READ_ARGS));
      await shot(page, 'chat-tool-result', { dir: OUTPUT });
      await row.locator('button[aria-expanded]').click();

      // The reply after the result is regenerated as any reply: a version beside it, after the same result.
      await lastAssistant(page).getByTestId('action-regenerate').click();
      await waitForStatus(lastAssistant(page), 'complete');
      assert.equal(await text(lastAssistant(page).getByTestId('branch-position')), '2/2');
      assert.deepEqual(await messages(page).evaluateAll((els) => els.map((e) => e.dataset.role)), ['user', 'assistant', 'tool', 'assistant']);
      assert.equal(await toolRows(page).count(), 1);
    });
  });

  test('a call denied from the keyboard: the model is told, the result row says denied; the question edited after', { timeout: TIMEOUT }, async () => {
    const write = { path: '/home/me/notes/trip.md', content: 'Packed: yes' };
    const replies = [
      {
        text: `Let me note that.\n${block('write_file', write)}`,
        calls: [
          {
            call: { name: 'write_file', arguments: JSON.stringify(write) },
            server: 'files',
            description: 'Creates or overwrites a file under the allowed folders.',
            readOnly: false,
            result: { content: 'written' },
          },
        ],
      },
      { text: "All right, I won't change the file." },
      { text: 'Edited question, answered.' },
    ];
    await withApp({ ...CHAT, replies }, async (page) => {
      await ask(page, 'Note in my file that I packed.');
      const card = page.getByTestId('tool-approval');
      await card.waitFor();
      assert.equal(await card.getByTestId('tool-approval-read-only').count(), 0, 'no read-only hint for a tool that writes');
      // The keyboard reaches every control: the arguments, then Allow once, Always, Deny.
      await card.getByTestId('tool-approval-arguments').focus();
      for (const expected of ['tool-allow', 'tool-allow-always', 'tool-deny']) {
        await page.keyboard.press('Tab');
        assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), expected);
      }
      await page.keyboard.press('Enter');
      await card.waitFor({ state: 'detached' });
      assert.deepEqual(await decisions(page), [{ chatId: 1, decision: { decision: 'deny' } }]);

      const result = toolRows(page);
      await result.waitFor();
      assert.equal(await result.getAttribute('data-end'), 'denied');
      assert.equal(await text(result.getByTestId('tool-result-end')), 'Denied');
      await lastAssistant(page).getByTestId('message-content').filter({ hasText: "All right, I won't change the file." }).waitFor();
      await waitForStatus(lastAssistant(page), 'complete');
      assert.equal(await callRow(page).getAttribute('data-state'), 'denied');
      await result.getByTestId('tool-result-toggle').click();
      assert.equal(await result.getByTestId('tool-result-content').textContent(), 'The user declined to run this tool.');

      // The question before the tool round is edited as any: a new version, answered anew, the round not on its path.
      const question = messages(page).first();
      await question.hover();
      await question.getByTestId('action-edit').click();
      await page.getByTestId('edit-input').fill('Note that I packed, please.');
      await page.getByTestId('edit-save').click();
      await lastAssistant(page).getByTestId('message-content').filter({ hasText: 'Edited question, answered.' }).waitFor();
      await waitForStatus(lastAssistant(page), 'complete');
      assert.deepEqual(await messages(page).evaluateAll((els) => els.map((e) => e.dataset.role)), ['user', 'assistant']);
      assert.equal(await text(messages(page).first().getByTestId('branch-position')), '2/2');
      // Back to the first version: the tool round is there again.
      await messages(page).first().getByTestId('branch-prev').click();
      await toolRows(page).waitFor();
      assert.deepEqual(await messages(page).evaluateAll((els) => els.map((e) => e.dataset.role)), ['user', 'assistant', 'tool', 'assistant']);
    });
  });

  test('Stop while a tool runs: stop_generation is called, the tool is stopped, the turn ends', { timeout: TIMEOUT }, async () => {
    await inBothSchemes({ ...CHAT, replies: readRound({ runMs: 60_000, stepMs: 150 }) }, async (page) => {
      await ask(page, 'When do I fly to Lisbon?');
      const card = page.getByTestId('tool-approval');
      await card.waitFor();
      await card.getByTestId('tool-allow').click();
      const row = callRow(page);
      await row.and(page.locator('[data-state="running"]')).waitFor();
      await row.getByTestId('tool-call-progress-text').filter({ hasText: '3/4' }).waitFor();
      assert.equal(await text(row.getByTestId('tool-call-state')), 'Running…');
      assert.equal(await row.getByTestId('tool-call-edited').count(), 0);
      await shot(page, 'chat-tool-running', { dir: OUTPUT });
      assert.deepEqual(await decisions(page), [{ chatId: 1, decision: { decision: 'allow', arguments: JSON.stringify(READ_ARGS) } }], 'unedited: the model’s own arguments');

      await page.getByTestId('stop').click();
      assert.ok((await cmds(page)).includes('stop_generation'));
      const result = toolRows(page);
      await result.waitFor();
      assert.equal(await result.getAttribute('data-end'), 'stopped');
      assert.equal(await text(result.getByTestId('tool-result-end')), 'Stopped');
      await page.getByTestId('send').waitFor();
      assert.equal(await row.getAttribute('data-state'), 'stopped');
      // No reply read it: the turn ended with the reply that called.
      assert.deepEqual(await messages(page).evaluateAll((els) => els.map((e) => e.dataset.role)), ['user', 'assistant', 'tool']);
      assert.equal((await cmds(page)).filter((c) => c === 'answer_tool_call').length, 1);
      await shot(page, 'chat-tool-stopped', { dir: OUTPUT });
    });
  });

  test('Stop while the card waits, and a turn that uses all its rounds (a tool allowed for the session)', { timeout: TIMEOUT }, async () => {
    const replies = [search(0), ...Array.from({ length: MAX_ROUNDS + 1 }, (_, i) => search(i + 1))];
    await withApp({ ...CHAT, replies }, async (page) => {
      // Stop while the backend waits for the user's word: the call is recorded as stopped, nothing asked any more.
      await ask(page, 'Find me a flight.');
      const card = page.getByTestId('tool-approval');
      await card.waitFor();
      await page.getByTestId('stop').click();
      await card.waitFor({ state: 'detached' });
      await page.getByTestId('send').waitFor();
      assert.equal(await toolRows(page).getAttribute('data-end'), 'stopped');
      assert.deepEqual(await decisions(page, 0), []);

      // Allowed for the session: asked once, then every round runs without asking, up to the limit.
      await ask(page, 'Try again, until you find one.');
      await card.waitFor();
      await card.getByTestId('tool-allow-always').click();
      await page.getByTestId('round-limit').waitFor({ timeout: 20_000 });
      assert.equal(await text(page.getByTestId('round-limit')), `Stopped after ${MAX_ROUNDS} rounds of tool calls`);
      assert.deepEqual(await decisions(page), [{ chatId: 1, decision: { decision: 'alwaysAllow', arguments: JSON.stringify({ q: 'flights 1' }) } }]);
      assert.equal(await toolRows(page).count(), 1 + MAX_ROUNDS);
      // The notice is under the last reply, whose calls did not run.
      const last = lastAssistant(page);
      assert.equal(await last.getByTestId('round-limit').count(), 1);
      assert.equal(await last.getByTestId('tool-call').getAttribute('data-state'), 'notRun');
      assert.equal(await text(last.getByTestId('tool-call-state')), 'Not run');
      assert.equal(await messages(page).last().getAttribute('data-role'), 'assistant');
    });
  });

  test("the chat's own cap on rounds, set in Settings: the turn stops after it, and the reply keeps saying so when opened again", { timeout: 2 * TIMEOUT }, async () => {
    const CAP = 2;
    const NOTICE = `Stopped after ${CAP} rounds of tool calls`;
    const chats = [CHAT.chats[0], { id: 2, title: 'Packing list', updatedAt: 5 }];
    const replies = Array.from({ length: CAP + 2 }, (_, i) => search(i + 1));
    let saved;
    await inBothSchemes({ chats, messages: [], replies }, async (page) => {
      // Settings → Sampling: the field, at its default; then this chat's own cap.
      await inSettings(page, async () => {
        const setting = page.getByTestId('setting-maxToolRounds');
        await setting.scrollIntoViewIfNeeded();
        assert.match(await text(setting), /^Most tool rounds per turn/);
        assert.equal(await fieldValue(page, 'maxToolRounds'), String(MAX_ROUNDS));
        assert.equal(MAX_ROUNDS, 8);
        assert.match(await page.getByTestId('range-maxToolRounds').textContent(), /Range 1 – 64/);
        assert.match(await page.getByTestId('default-maxToolRounds').textContent(), /Default 8/);
        assert.equal(await page.getByTestId('reset-maxToolRounds').isDisabled(), true);
        await shot(page, 'settings-tool-rounds', { dir: OUTPUT });
        await page.getByTestId('scope-chat').click();
        await page.getByTestId('field-maxToolRounds').fill(String(CAP));
        await waitForSave(page, (p) => p.maxToolRounds === CAP);
        assert.deepEqual((await page.evaluate(() => window.__hearthMock.samplingScopes)).at(-1), { kind: 'chat', id: 1 });
        assert.deepEqual((await page.evaluate(() => window.__hearthMock.samplingSaves)).at(-1), { ...contract.samplingDefaults, maxToolRounds: CAP });
        await page.getByTestId('scope-own').waitFor();
      });

      // A turn whose every reply calls: asked once (then allowed for the session), it stops after the chat's rounds.
      await ask(page, 'Find me a flight.');
      const card = page.getByTestId('tool-approval');
      await card.waitFor();
      await card.getByTestId('tool-allow-always').click();
      const notice = page.getByTestId('round-limit');
      await notice.waitFor({ timeout: 20_000 });
      await page.getByTestId('send').waitFor();
      assert.equal(await text(notice), NOTICE);
      assert.equal(await notice.count(), 1);
      assert.equal(await toolRows(page).count(), CAP);
      assert.deepEqual(await messages(page).evaluateAll((els) => els.map((e) => e.dataset.role)), [
        'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant',
      ]);
      // Under the last reply, whose call did not run.
      const last = lastAssistant(page);
      assert.equal(await last.getByTestId('round-limit').count(), 1);
      assert.equal(await last.getByTestId('tool-call').getAttribute('data-state'), 'notRun');
      await shot(page, 'chat-tool-round-limit', { dir: OUTPUT });

      // The backend saved it with the reply: another chat and back, the notice is read from the saved stats.
      saved = await page.evaluate(() => ({ chats: window.__hearthMock.chats, messages: window.__hearthMock.messages }));
      assert.equal(saved.messages.at(-1).stats.toolRoundLimit, CAP);
      assert.deepEqual(saved.messages.filter((m) => m.stats?.toolRoundLimit !== undefined).map((m) => m.id), [saved.messages.at(-1).id]);
      await page.getByTestId('chat-item').filter({ hasText: 'Packing list' }).click();
      await page.getByTestId('chat-title').filter({ hasText: 'Packing list' }).waitFor();
      assert.equal(await notice.count(), 0);
      await page.getByTestId('chat-item').filter({ hasText: 'Trip' }).click();
      await toolRows(page).nth(CAP - 1).waitFor();
      assert.equal(await text(lastAssistant(page).getByTestId('round-limit')), NOTICE);
    });

    // A fresh window over what was saved (the chat's own cap no longer set): the notice still says the cap it ran under.
    await withApp({ chats: saved.chats, messages: saved.messages }, async (page) => {
      await page.getByTestId('chat-item').filter({ hasText: 'Trip' }).click();
      await toolRows(page).nth(CAP - 1).waitFor();
      assert.equal(await page.getByTestId('round-limit').count(), 1);
      assert.equal(await text(lastAssistant(page).getByTestId('round-limit')), NOTICE);
    });
  });

  test('Run again: a past call asked about anew with the arguments it ran with, edited; its result a new version the model answers', { timeout: 2 * TIMEOUT }, async () => {
    const quick = { runMs: 40, progress: [], result: { content: NOTES } };
    const AGAIN = 'From the 2025 notes: you fly on Saturday.';
    await inBothSchemes({ ...CHAT, replies: [...readRound(quick), { text: AGAIN }] }, async (page) => {
      await ask(page, 'When do I fly to Lisbon?');
      const card = page.getByTestId('tool-approval');
      await card.waitFor();
      assert.equal(await page.getByTestId('rerun-tool-calls').count(), 0, 'not while the call is asked about');
      await card.getByTestId('tool-approval-arguments').fill(EDITED_ARGS);
      await card.getByTestId('tool-allow').click();
      await messages(page).nth(3).and(page.locator('[data-status="complete"]')).waitFor({ timeout: 15_000 });
      const caller = messages(page).nth(1);
      const callerId = Number(await caller.getAttribute('data-message-id'));

      // Run again: the card comes back, with the arguments the call last ran with (the user's edit), to edit again.
      await caller.getByTestId('rerun-tool-calls').click();
      await card.waitFor();
      assert.equal(await card.getByTestId('tool-approval-arguments').inputValue(), EDITED_ARGS);
      assert.deepEqual(await messages(page).evaluateAll((els) => els.map((e) => e.dataset.role)), ['user', 'assistant'], 'what followed the calls goes');
      const again = '{\n  "path": "/home/me/notes/trip-2025.md"\n}';
      await card.getByTestId('tool-approval-arguments').fill(again);
      await card.getByTestId('tool-allow').click();

      // The new result, a version beside the first, and the model's answer to it.
      await messages(page).nth(3).and(page.locator('[data-status="complete"]')).waitFor({ timeout: 15_000 });
      assert.equal(await text(lastAssistant(page).getByTestId('message-content')), AGAIN);
      const result = toolRows(page);
      await result.getByTestId('branch-position').filter({ hasText: '2/2' }).waitFor();
      const calls = (await mockState(page)).calls.filter((c) => c.cmd === 'rerun_tool_calls').map((c) => c.payload);
      assert.deepEqual(calls.map(({ chatId, messageId }) => ({ chatId, messageId })), [{ chatId: 1, messageId: callerId }]);
      assert.deepEqual((await decisions(page, 2))[1], { chatId: 1, decision: { decision: 'allow', arguments: again } });
      await shot(page, 'chat-tool-rerun', { dir: OUTPUT });

      // The first version is still there: the result it ran with, and the answer to it.
      await result.getByTestId('branch-prev').click();
      await result.getByTestId('branch-position').filter({ hasText: '1/2' }).waitFor();
      await lastAssistant(page).getByTestId('message-content').filter({ hasText: 'From your notes' }).waitFor();
    });
  });

  test('servers switched on that a turn cannot offer are named above the composer, with why; Settings → Tools opens', { timeout: TIMEOUT }, async () => {
    const http = (name) => ({ name, transport: { kind: 'http', url: `https://${name}.example/mcp`, headers: {} }, enabled: true, disabledTools: [] });
    const toolServers = [
      { config: http('linear'), state: { state: 'signIn' } },
      { config: http('github'), state: { state: 'failed', message: 'the server did not answer within 30 s', stderr: [] } },
      { config: { ...http('files'), enabled: false }, state: { state: 'off' } },
    ];
    await inBothSchemes({ ...CHAT, toolServers, replies: [{ text: 'I cannot reach your issues.' }, { text: 'Still not.' }] }, async (page) => {
      await page.getByTestId('chat-title').filter({ hasText: 'Trip' }).waitFor();
      await ask(page, 'Which issues are open?');
      const notice = page.getByTestId('tools-unavailable');
      await notice.waitFor();
      assert.deepEqual(await notice.getByTestId('tools-unavailable-line').allTextContents(), [
        "linear's tools were not offered: it asks to sign in",
        "github's tools were not offered: it failed: the server did not answer within 30 s",
      ]);
      await waitForStatus(lastAssistant(page), 'complete');
      await shot(page, 'chat-tools-unavailable', { dir: OUTPUT });

      // Dismissed, it stays away; the next turn says it again, as the servers still cannot be offered.
      await notice.getByTestId('tools-unavailable-dismiss').click();
      await notice.waitFor({ state: 'detached' });
      await ask(page, 'And now?');
      await notice.waitFor();
      await notice.getByTestId('tools-unavailable-open').click();
      await page.getByTestId('open-tools').and(page.locator('[aria-selected="true"]')).waitFor();
    });
  });
});
