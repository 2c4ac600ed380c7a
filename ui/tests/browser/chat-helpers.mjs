// Shared by the chat screen's browser tests (chat*.test.mjs, compare.test.mjs, settings*.test.mjs): a reply in
// Markdown, sampling a stream frame by frame, checks that hostile model text ran nothing, and the settings panel.
import assert from 'node:assert/strict';

export const REPLY_MD = [
  'Sure! Here are **three** cozy ideas:',
  '',
  '1. Brew a pot of *spiced tea*',
  '2. Read by the fire',
  '3. Write a short poem',
  '',
  'And a tiny script:',
  '',
  '```python',
  'for idea in ideas:',
  '    print(idea)',
  '```',
].join('\n');

/** Sample the last assistant bubble's text every frame until its status leaves "streaming". */
export async function sampleStream(page) {
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        const lengths = [];
        const started = performance.now();
        const tick = () => {
          const bubbles = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
          const last = bubbles[bubbles.length - 1];
          if (last) {
            const len = last.querySelector('[data-testid="message-content"]').textContent.length;
            if (lengths.at(-1) !== len) lengths.push(len);
            if (last.dataset.status !== 'streaming') return resolve({ lengths, status: last.dataset.status });
          }
          if (performance.now() - started > 15_000) return resolve({ lengths, status: 'timeout' });
          requestAnimationFrame(tick);
        };
        tick();
      }),
  );
}

/**
 * Starts watching the next assistant reply before it is asked for (a reply written out of sight shows its typing
 * dots for a few frames only, which a poll from outside the page can miss on a loaded machine). Returns `done()`:
 * it resolves, once that reply has left "streaming", to the lengths its text went through, whether the dots showed,
 * and its status.
 */
export async function watchNextReply(page) {
  await page.evaluate(() => {
    const bubbles = () => document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
    const before = bubbles().length;
    window.__nextReply = new Promise((resolve) => {
      const lengths = [];
      const searching = [];
      let typing = false;
      const started = performance.now();
      const tick = () => {
        const all = bubbles();
        if (all.length > before) {
          const last = all[all.length - 1];
          typing ||= last.querySelector('[data-testid="typing"]') !== null;
          const len = last.querySelector('[data-testid="message-content"]').textContent.length;
          if (lengths.at(-1) !== len) lengths.push(len);
          const said = last.querySelector('[data-testid="message-searching"]')?.textContent;
          if (said && searching.at(-1) !== said) searching.push(said);
          if (last.dataset.status !== 'streaming') return resolve({ lengths, typing, searching, status: last.dataset.status });
        }
        if (performance.now() - started > 20_000) return resolve({ lengths, typing, searching, status: 'timeout' });
        requestAnimationFrame(tick);
      };
      tick();
    });
  });
  return () => page.evaluate(() => window.__nextReply);
}

/**
 * Clicks `content`'s hostile links (the sanitizer left them no href to run) and checks what is left of model
 * Markdown there: no script, iframe or svg, no on* attribute, no javascript: link; its text matches `text`.
 */
export async function assertSanitized(content, text) {
  await content.getByText('click me').click();
  await content.getByText('md link').click();
  const dom = await content.evaluate((el) => ({
    scripts: el.querySelectorAll('script, iframe, svg').length,
    handlers: [...el.querySelectorAll('*')].flatMap((n) => [...n.attributes].map((a) => a.name)).filter((n) => n.startsWith('on')),
    hrefs: [...el.querySelectorAll('a')].map((a) => a.getAttribute('href')),
    text: el.textContent,
  }));
  assert.equal(dom.scripts, 0);
  assert.deepEqual(dom.handlers, []);
  assert.ok(dom.hrefs.every((h) => h === null || !/javascript:/i.test(h)), `hrefs: ${dom.hrefs}`);
  assert.match(dom.text, text);
}

/** After `ms` (time for an <img src=x> to fail and fire onerror, or a link to run), nothing injected has run. */
export async function assertNothingRan(page, ms, message) {
  await page.waitForTimeout(ms);
  assert.equal(await page.evaluate(() => window.__pwned), undefined, message);
}

// The settings panel (settings*.test.mjs, and replies whose settings a test changes).

export async function openSettings(page) {
  await page.getByTestId('open-settings').click();
  await page.getByTestId('settings-panel').waitFor();
  await page.getByTestId('field-topP').waitFor();
}

/** Opens Settings, runs `edit` there, and closes the panel again (Escape). */
export async function inSettings(page, edit) {
  await openSettings(page);
  await edit();
  await page.keyboard.press('Escape');
  await page.getByTestId('settings-panel').waitFor({ state: 'detached' });
}

/** The params of every set_sampling call so far. */
export const samplingSaves = (page) => page.evaluate(() => window.__hearthMock.samplingSaves);

/** Wait until the last set_sampling call matches `check` and the panel says it was saved. */
export async function waitForSave(page, check) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const saves = await samplingSaves(page);
    if (saves.length > 0 && check(saves.at(-1))) break;
    if (Date.now() > deadline) throw new Error(`no matching set_sampling call; last: ${JSON.stringify(saves.at(-1))}`);
    await page.waitForTimeout(40);
  }
  await page.getByTestId('settings-status').filter({ hasText: 'Saved' }).waitFor({ timeout: 5000 });
}

export const fieldValue = (page, key) => page.getByTestId(`field-${key}`).inputValue();

export const text = async (locator) => (await locator.textContent()).trim();
