// The window under a fast stream, and a long chat: the built UI in headless Chromium with the mocked
// Tauri IPC (tests/browser/mock/), driven only through the UI (typing, Enter, the wheel,
// clicks) and measured in the page. Run: `npm run bench:stream` (builds ui/dist first), or against
// another build: `HEARTH_UI_DIST=/tmp/ui-x node bench/stream.mjs`. BENCH_RATES (500,2000,5000,10000),
// BENCH_LENGTHS (1000,3000: shorter replies at 2,000 tok/s; empty for none) and BENCH_ROUNDS (3) pick
// what runs. Prints tables; writes bench/output/stream.json. Method and results: docs/benchmarks.md.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { DIST, MODEL, closeBrowser, launchBrowser, openApp } from '../tests/browser/harness.mjs';

const RATES = (process.env.BENCH_RATES ?? '500,2000,5000,10000').split(',').map(Number);
/** Streams per rate; each figure in the table is the median of these. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** The reply streamed at each rate: ~24 KB of Markdown. */
const REPLY_TOKENS = 6000;
/** Shorter replies, streamed at LENGTH_RATE: how the cost grows with the reply (1,024 is the default max_tokens). */
const LENGTHS = (process.env.BENCH_LENGTHS ?? '1000,3000').split(',').filter(Boolean).map(Number);
const LENGTH_RATE = 2000;
/** A token is this many characters (code points) of the reply, as the mock cuts it. */
const TOKEN_CHARS = 4;
const FRAME_MS = 1000 / 60;
const LONG_CHAT = 2000;
/** How many times each chat is opened for the median. */
const OPENS = 5;
/** Keys are typed this far apart, before the stream (idle) and during it. */
const KEY_GAP_MS = 40;
const IDLE_KEYS = 20;
/** When the wheel scrolls the list up, as a fraction of the stream's nominal duration. */
const SCROLL_UP_AT = 0.35;
const OUT = fileURLToPath(new URL('./output/', import.meta.url));

// --- The reply: realistic Markdown (prose, a list, a fenced code block, a table, inline math). ---

const CODE = [
  ['rust', ['fn get(&mut self, key: &str) -> Option<&Value> {', '    let slot = *self.index.get(key)?;', '    self.order.touch(slot);', '    Some(&self.slots[slot].value)', '}']],
  ['python', ['def evict(cache, budget):', '    while cache.size > budget:', '        key, _ = cache.order.popitem(last=False)', '        del cache.items[key]', '    return cache.size']],
  ['typescript', ['export function hitRate(hits: number, misses: number): number {', '  const total = hits + misses;', '  return total === 0 ? 0 : hits / total;', '}']],
  ['bash', ['for shard in $(seq 0 7); do', '  cachectl stats --shard "$shard" --json | jq .hit_rate', 'done']],
];

/**
 * A long guide of sections, and where its markers are. Each marker "(step N)" is unique (numbers
 * rise; the parentheses keep "(step 1)" from matching "(step 12)"), and survives rendering as
 * contiguous text in prose, lists, code and table cells; the text ends with the last one.
 */
function guide(tokens) {
  let m = 0;
  const step = () => `(step ${++m})`;
  const sections = [];
  let length = 0;
  for (let k = 1; length < tokens * TOKEN_CHARS - 40; k++) {
    const [lang, lines] = CODE[k % CODE.length];
    const section = [
      `## ${k}. Tuning the cache, part ${k}`,
      '',
      `When the cache grows past its budget ${step()} the engine evicts the oldest entries first. This keeps **hot keys** resident ` +
        `while *cold* ones age out; a lookup costs \`O(1)\` and a full rebuild about $O(n \\log n)$. ` +
        `See [the notes](https://example.com/notes/${k}) for the details ${step()}.`,
      '',
      `- Measure the hit rate before changing anything ${step()}`,
      `- Raise \`max_entries\` in small steps, about 10% at a time ${step()}`,
      `- Watch the p95 latency, not the mean ${step()}`,
      '',
      '```' + lang,
      `${lang === 'python' || lang === 'bash' ? '#' : '//'} ${step()} part ${k}`,
      ...lines,
      '```',
      '',
      '| setting | default | effect |',
      '|---|---:|---|',
      `| max_entries ${step()} | ${4096 * k} | upper bound on resident keys |`,
      `| ttl_seconds ${step()} | ${300 + k} | entries older than this are dropped |`,
      `| shards ${step()} | ${8 * (1 + (k % 4))} | fewer locks under contention |`,
      '',
      '',
    ].join('\n');
    sections.push(section);
    length += section.length;
  }
  const text = `${sections.join('')}That is the whole guide ${step()}`;
  const markers = [...text.matchAll(/\(step \d+\)/g)].map((x) => ({
    text: x[0],
    token: Math.floor((x.index + x[0].length - 1) / TOKEN_CHARS),
  }));
  return { text, markers, tokens: Math.ceil(text.length / TOKEN_CHARS) };
}

// --- Numbers. ---

const quantile = (values, q) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const max = (values) => (values.length === 0 ? null : Math.max(...values));
const within = (t, [from, to]) => t >= from && t <= to;
const round = (x, digits = 1) => (x === null ? null : Number(x.toFixed(digits)));
/** Each figure's median over the rounds (null where a round had none). */
function medians(rounds) {
  return Object.fromEntries(
    Object.keys(rounds[0]).map((k) => {
      const values = rounds.map((r) => r[k]).filter((v) => v !== null);
      return [k, values.length === rounds.length ? quantile(values, 0.5) : null];
    }),
  );
}
const rounded = (figures) => Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, typeof v === 'number' ? round(v, 3) : v]));
/** The Event Timing entries of a key press (those of 16 ms or more are reported). */
const KEY_EVENTS = ['keydown', 'keypress', 'beforeinput', 'input', 'keyup'];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// --- In the page. ---

/**
 * Installed in the page before the stream: every animation frame's time, long tasks, the keys typed
 * into the composer (keydown → the first frame after its input event), when each marker of the
 * reply first is in the DOM (a MutationObserver on the list: the DOM as it is painted next), and
 * where the list is scrolled after each change.
 */
function instrument(markers) {
  const list = document.querySelector('[data-testid="message-list"]');
  const b = {
    frames: [],
    longTasks: [],
    slowEvents: [],
    keys: [],
    visible: [],
    bottom: [],
    drift: [],
    wheelAt: null,
    held: null,
    running: true,
  };
  window.__bench = b;
  const loop = (t) => {
    b.frames.push(t);
    if (b.running) requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
  new PerformanceObserver((l) => l.getEntries().forEach((e) => b.longTasks.push([e.startTime, e.duration]))).observe({ type: 'longtask' });
  new PerformanceObserver((l) =>
    l.getEntries().forEach((e) => b.slowEvents.push([e.name, e.startTime, e.duration])),
  ).observe({ type: 'event', durationThreshold: 16 });

  let keyAt = null;
  addEventListener('keydown', (e) => {
    if (e.target.dataset?.testid === 'composer' && e.key.length === 1) keyAt = e.timeStamp;
  }, true);
  addEventListener('input', (e) => {
    if (keyAt === null || e.target.dataset?.testid !== 'composer') return;
    const at = keyAt;
    keyAt = null;
    requestAnimationFrame(() => b.keys.push({ at, frame: performance.now() - at }));
  }, true);
  // The user scrolls up (the wheel; smooth scrolling is off): at the first scroll that left the bottom,
  // hold on to the first row in view. (Not at "scrollend": the list's own scrolls to the bottom end too.)
  addEventListener('wheel', () => {
    if (b.wheelAt !== null) return;
    b.wheelAt = performance.now();
    const away = () => {
      if (list.scrollHeight - list.scrollTop - list.clientHeight < 100) return;
      list.removeEventListener('scroll', away);
      hold();
    };
    list.addEventListener('scroll', away);
  }, { capture: true, passive: true });

  let next = 0;
  const content = () => {
    const replies = list.querySelectorAll('[data-testid="message"][data-role="assistant"]');
    return replies[replies.length - 1]?.querySelector('[data-testid="message-content"]') ?? null;
  };
  new MutationObserver(() => {
    const now = performance.now();
    const el = content();
    if (el && next < markers.length) {
      const text = el.textContent;
      while (next < markers.length && text.includes(markers[next])) {
        b.visible.push(now);
        next++;
      }
    }
    if (b.held) {
      const top = b.held.row.getBoundingClientRect().top;
      b.drift.push([now, list.scrollTop - b.held.scrollTop, top - b.held.top]);
    } else {
      b.bottom.push([now, list.scrollHeight - list.scrollTop - list.clientHeight]);
    }
  }).observe(list, { childList: true, subtree: true, characterData: true });

  /** The first row in view, and where it is: checked at every change from now on. */
  function hold() {
    const box = list.getBoundingClientRect();
    const row = [...list.querySelectorAll('[data-testid="message"]')].find((r) => r.getBoundingClientRect().bottom > box.top + 1);
    b.held = { at: performance.now(), row, scrollTop: list.scrollTop, top: row.getBoundingClientRect().top };
  }
}

// --- One offered rate. ---

const MINUTE = 60_000;
/** A short chat the stream is sent in: a few messages above it, as in real use. */
function shortChat(id, title, updatedAt, count) {
  const messages = Array.from({ length: count }, (_, i) => ({
    id: id * 10_000 + i + 1,
    chatId: id,
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: i % 2 === 0 ? `Question ${i / 2 + 1}: how big should the cache be?` : 'It depends on the **working set**:\n\n- measure\n- then size it',
    status: 'complete',
    createdAt: Date.now() - (count - i) * MINUTE,
    model: i % 2 === 0 ? null : MODEL.name,
    stats: null,
  }));
  return { chat: { id, title, updatedAt }, messages };
}

async function streamAt(rate, reply) {
  const short = shortChat(1, 'Cache tuning', 100, 6);
  const { page, context, problems } = await openApp({
    chats: [short.chat],
    messages: short.messages,
    replies: [{ text: reply.text, chunkSize: TOKEN_CHARS, tokensPerSecond: rate, ttftMs: 5 }],
  });
  try {
    await page.getByTestId('message').first().waitFor();
    await sleep(300);
    await page.evaluate(instrument, reply.markers.map((m) => m.text));

    // Idle: keys typed with nothing streaming.
    const composer = page.getByTestId('composer');
    await composer.focus();
    await page.keyboard.type('the quick brown fox '.slice(0, IDLE_KEYS), { delay: KEY_GAP_MS });
    await composer.fill('');
    await sleep(200);

    const nominal = (reply.tokens / rate) * 1000;
    await composer.fill('Write the long guide to tuning the cache.');
    const sentAt = Date.now();
    await page.keyboard.press('Enter');
    // While it streams: keys typed into the composer, and the wheel scrolling the list up part-way.
    const keys = Math.ceil((nominal + 400) / KEY_GAP_MS);
    const typing = page.keyboard.type('next question about shards and locks '.repeat(Math.ceil(keys / 37)).slice(0, keys), { delay: KEY_GAP_MS });
    const scrolling = (async () => {
      await sleep(Math.max(0, nominal * SCROLL_UP_AT - (Date.now() - sentAt)));
      await page.mouse.move(700, 300);
      await page.mouse.wheel(0, -700);
    })();
    await Promise.all([typing, scrolling]);
    await page.waitForFunction(
      () => [...document.querySelectorAll('[data-role="assistant"]')].at(-1)?.dataset.status === 'complete',
      null,
      { timeout: 120_000, polling: 100 },
    );
    await sleep(300);
    const b = await page.evaluate(() => {
      const b = window.__bench;
      b.running = false;
      return { ...b, held: b.held && { at: b.held.at }, offered: window.__hearthMock.offered[0].sentAt };
    });
    if (problems.length > 0) throw new Error(`the page reported errors: ${problems.join('; ')}`);
    return summarise(rate, reply, b);
  } finally {
    await context.close();
  }
}

function summarise(rate, reply, b) {
  const sent = b.offered;
  const first = sent[0];
  if (b.visible.length !== reply.markers.length) {
    throw new Error(`at ${rate} tok/s only ${b.visible.length} of ${reply.markers.length} markers were seen in the DOM`);
  }
  const lastVisible = b.visible.at(-1);
  const window_ = [first, lastVisible];
  const lags = reply.markers.map((m, i) => b.visible[i] - sent[m.token]);
  const intervals = [];
  for (let i = 1; i < b.frames.length; i++) if (within(b.frames[i - 1], window_) && within(b.frames[i], window_)) intervals.push(b.frames[i] - b.frames[i - 1]);
  const longTasks = b.longTasks.filter(([at]) => within(at, window_));
  const idleKeys = b.keys.filter((k) => k.at < first).map((k) => k.frame);
  const streamKeys = b.keys.filter((k) => within(k.at, window_)).map((k) => k.frame);
  const following = b.bottom.filter(([at]) => within(at, [first, Math.min(lastVisible, b.wheelAt ?? Infinity)])).map(([, px]) => px);
  const drift = b.drift.map(([, scroll, row]) => Math.max(Math.abs(scroll), Math.abs(row)));
  const slowKeys = b.slowEvents.filter(([name, at]) => KEY_EVENTS.includes(name) && within(at, window_)).map(([, , d]) => d);
  const seconds = (lastVisible - first) / 1000;
  return {
    offered: rate,
    tokens: sent.length,
    sentRatio: (sent.length - 1) / ((sent.at(-1) - first) / 1000) / rate,
    deliveredRatio: sent.length / seconds / rate,
    streamMs: lastVisible - first,
    nominalMs: (sent.length / rate) * 1000,
    lastLagMs: lags.at(-1),
    lagP95Ms: quantile(lags, 0.95),
    lagMaxMs: max(lags),
    frames: intervals.length,
    frameP50Ms: quantile(intervals, 0.5),
    frameP95Ms: quantile(intervals, 0.95),
    frameMaxMs: max(intervals),
    longTasks: longTasks.length,
    longTaskMs: longTasks.reduce((sum, [, d]) => sum + d, 0),
    longTaskMaxMs: max(longTasks.map(([, d]) => d)) ?? 0,
    keysIdle: idleKeys.length,
    keyIdleP95Ms: quantile(idleKeys, 0.95),
    keysStreaming: streamKeys.length,
    keyP50Ms: quantile(streamKeys, 0.5),
    keyP95Ms: quantile(streamKeys, 0.95),
    keyMaxMs: max(streamKeys),
    slowKeyMs: max(slowKeys) ?? 0, // 0: none took 16 ms (shorter ones are not reported)
    followSamples: following.length,
    followMaxFromBottomPx: max(following),
    heldMsBeforeEnd: b.held ? lastVisible - b.held.at : null,
    heldSamples: drift.length,
    heldMaxDriftPx: max(drift),
  };
}

// --- The long chat. ---

/** `count` messages, the replies in Markdown of varied length (some with code or a table). */
function longChat(chatId, count) {
  const prose = 'The quick brown fox jumps over the lazy dog while the kettle hums. ';
  return Array.from({ length: count }, (_, i) => {
    const user = i % 2 === 0;
    let content;
    if (user) content = `Question ${i / 2 + 1}: ${prose.slice(0, 20 + (i % 5) * 12)}`;
    else {
      content = `Answer ${(i + 1) / 2}.\n\n${prose.repeat(1 + (i % 4))}`;
      if (i % 6 === 1) content += '\n\n- one\n- two\n- three';
      if (i % 10 === 3) content += '\n\n```python\nfor x in range(3):\n    print(x)\n```';
      if (i % 14 === 5) content += '\n\n| a | b |\n|---|---|\n| 1 | 2 |';
    }
    return {
      id: chatId * 10_000 + i + 1,
      chatId,
      role: user ? 'user' : 'assistant',
      content,
      status: 'complete',
      createdAt: Date.now() - (count - i) * MINUTE,
      model: user ? null : MODEL.name,
      stats: null,
    };
  });
}

/**
 * Click a chat in the sidebar; resolves to the time from the click to the first frame that shows
 * its last message at the bottom of the list.
 */
function timeOpen(lastId) {
  const list = document.querySelector('[data-testid="message-list"]');
  return new Promise((resolve) => {
    let clicked = null;
    addEventListener('click', (e) => (clicked = e.timeStamp), { capture: true, once: true });
    const check = () => {
      const row = list.querySelector(`[data-message-id="${lastId}"]`);
      const box = list.getBoundingClientRect();
      const shown = row && row.getBoundingClientRect().bottom <= box.bottom + 1 && row.getBoundingClientRect().bottom > box.top;
      if (clicked !== null && shown) resolve(performance.now() - clicked);
      else requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  });
}

/** Jump the list to its top or its bottom: ms until its first or last message (`id`) is in view there. */
function timeJump({ where, id }) {
  const list = document.querySelector('[data-testid="message-list"]');
  const start = performance.now();
  list.scrollTop = where === 'top' ? 0 : list.scrollHeight;
  return new Promise((resolve) => {
    const check = () => {
      const r = list.querySelector(`[data-message-id="${id}"]`)?.getBoundingClientRect();
      const box = list.getBoundingClientRect();
      const there = where === 'top' ? list.scrollTop < 1 : list.scrollHeight - list.scrollTop - list.clientHeight < 5;
      if (r && r.bottom > box.top && r.top < box.bottom && there) resolve(performance.now() - start);
      else requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  });
}

async function longChatRun() {
  const long = longChat(2, LONG_CHAT);
  const short = shortChat(1, 'A short chat', 200, 20);
  const { page, context, problems } = await openApp({
    chats: [short.chat, { id: 2, title: 'Two thousand messages', updatedAt: 100 }],
    messages: [...short.messages, ...long],
  });
  const open = async (title, lastId) => {
    const timing = page.evaluate(timeOpen, lastId);
    await page.getByTestId('chat-item').filter({ hasText: title }).click();
    return timing;
  };
  const inList = () =>
    page.evaluate(() => {
      const list = document.querySelector('[data-testid="message-list"]');
      return { messages: list.querySelectorAll('[data-testid="message"]').length, nodes: list.getElementsByTagName('*').length };
    });
  try {
    await page.getByTestId('message').first().waitFor();
    await sleep(300);
    const firstOpenLongMs = await open('Two thousand messages', long.at(-1).id);
    await sleep(400);
    const atBottom = await inList();
    const jumpTopMs = await page.evaluate(timeJump, { where: 'top', id: long[0].id });
    await sleep(400);
    const atTop = await inList();
    const jumpBottomMs = await page.evaluate(timeJump, { where: 'bottom', id: long.at(-1).id });
    await sleep(400);
    // Then each chat opened OPENS more times, alternately: the medians.
    const opens = { short: [], long: [] };
    let shortDom = null;
    for (let i = 0; i < OPENS; i++) {
      opens.short.push(await open('A short chat', short.messages.at(-1).id));
      await sleep(300);
      shortDom ??= await inList();
      opens.long.push(await open('Two thousand messages', long.at(-1).id));
      await sleep(300);
    }
    if (problems.length > 0) throw new Error(`the page reported errors: ${problems.join('; ')}`);
    const domMessages = Math.max(atBottom.messages, atTop.messages);
    return {
      messages: LONG_CHAT,
      domMessages,
      domNodes: Math.max(atBottom.nodes, atTop.nodes),
      domRatio: domMessages / LONG_CHAT,
      firstOpenLongMs,
      openLongMs: quantile(opens.long, 0.5),
      shortMessages: short.messages.length,
      shortDomNodes: shortDom.nodes,
      openShortMs: quantile(opens.short, 0.5),
      openRatio: quantile(opens.long, 0.5) / quantile(opens.short, 0.5),
      jumpTopMs,
      jumpBottomMs,
    };
  } finally {
    await context.close();
  }
}

// --- The run. ---

function describeBuild() {
  try {
    const git = (...args) => execFileSync('git', args, { encoding: 'utf8' }).trim();
    const dirty = git('status', '--porcelain', '--', 'src', 'package.json') !== '';
    return `${git('log', '-1', '--format=%h %s').slice(0, 90)}${dirty ? ' (+ uncommitted changes under ui/src)' : ''}`;
  } catch {
    return 'unknown';
  }
}

const ms = (x) => (x === null ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const ratio = (x) => (x === null ? '–' : x.toFixed(2));

/** The stream figures, a column per run: `head` is the first row (what varies). */
const STREAM_ROWS = [
  ['sent ÷ offered', (r) => ratio(r.sentRatio)],
  ['**delivered ÷ offered**', (r) => `**${ratio(r.deliveredRatio)}**`],
  ['stream: nominal / first token → last visible (ms)', (r) => `${ms(r.nominalMs)} / ${ms(r.streamMs)}`],
  ['last token visible after arrival (ms)', (r) => ms(r.lastLagMs)],
  ['token lag p95 / max (ms)', (r) => `${ms(r.lagP95Ms)} / ${ms(r.lagMaxMs)}`],
  ['frame interval p50 / p95 / max (ms)', (r) => `${ms(r.frameP50Ms)} / ${ms(r.frameP95Ms)} / ${ms(r.frameMaxMs)}`],
  ['**p95 frame ÷ 16.7 ms**', (r) => `**${ratio(r.frameP95Ms / FRAME_MS)}**`],
  ['long tasks (≥ 50 ms): count / total / longest (ms)', (r) => `${r.longTasks} / ${ms(r.longTaskMs)} / ${ms(r.longTaskMaxMs)}`],
  ['keys typed while streaming', (r) => String(r.keysStreaming)],
  ['key → next frame p50 / p95 / max (ms)', (r) => `${ms(r.keyP50Ms)} / ${ms(r.keyP95Ms)} / ${ms(r.keyMaxMs)}`],
  ['key → next frame p95, idle before the stream (ms)', (r) => ms(r.keyIdleP95Ms)],
  ['**key p95 streaming ÷ idle**', (r) => `**${ratio(r.keyP95Ms / r.keyIdleP95Ms)}**`],
  ['slowest key, keydown → painted (Event Timing, ms)', (r) => (r.slowKeyMs === 0 ? '< 16' : ms(r.slowKeyMs))],
  ['following: farthest from the bottom (px, of changes)', (r) => `${ms(r.followMaxFromBottomPx)} (${r.followSamples})`],
  ['scrolled up: held for (ms) / largest move (px)', (r) => (r.heldSamples ? `${ms(r.heldMsBeforeEnd)} / ${ms(r.heldMaxDriftPx)}` : '–')],
];

function streamTable(runs, [label, head]) {
  return [
    `| ${label} | ${runs.map(head).join(' | ')} |`,
    `|---|${runs.map(() => '---:').join('|')}|`,
    ...STREAM_ROWS.map(([name, cell]) => `| ${name} | ${runs.map(cell).join(' | ')} |`),
  ].join('\n');
}

function longTable(long) {
  const rows = [
    ['messages in the chat', long.messages.toLocaleString('en')],
    ['message elements in the DOM (most seen)', String(long.domMessages)],
    ['**DOM message elements ÷ messages**', `**${long.domRatio.toFixed(3)}**`],
    ['elements under the list (long chat / 20-message chat)', `${long.domNodes} / ${long.shortDomNodes}`],
    ['first open: click → last message painted (ms)', ms(long.firstOpenLongMs)],
    [`open, median of ${OPENS}: 2,000 / 20 messages (ms)`, `${ms(long.openLongMs)} / ${ms(long.openShortMs)}`],
    ['**open 2,000 ÷ open 20**', `**${ratio(long.openRatio)}**`],
    ['jump to the top: first message in view (ms)', ms(long.jumpTopMs)],
    ['and back to the bottom (ms)', ms(long.jumpBottomMs)],
  ];
  return ['| long chat | |', '|---|---:|', ...rows.map(([label, value]) => `| ${label} | ${value} |`)].join('\n');
}

/** Each run of `rate` with `reply`, ROUNDS times: the medians, and the rounds. */
async function measure(rate, reply) {
  const rounds = [];
  for (let i = 1; i <= ROUNDS; i++) {
    process.stderr.write(`streaming ${reply.tokens} tokens at ${rate} tok/s (${i} of ${ROUNDS})…\n`);
    rounds.push(rounded(await streamAt(rate, reply)));
  }
  return { ...medians(rounds), replyTokens: reply.tokens, rounds };
}

async function main() {
  // Wheel scrolls land at once (no animation): the position the user scrolled to is held from then on.
  const chromium = await launchBrowser(['--disable-smooth-scrolling']);
  const loadBefore = loadavg()[0];
  try {
    const reply = guide(REPLY_TOKENS);
    const byRate = [];
    for (const rate of RATES) byRate.push(await measure(rate, reply));
    const byLength = [];
    for (const tokens of LENGTHS) byLength.push(await measure(LENGTH_RATE, guide(tokens)));
    process.stderr.write(`opening a chat of ${LONG_CHAT} messages…\n`);
    const long = await longChatRun();
    const result = {
      machine: { cores: cpus().length, cpu: cpus()[0]?.model ?? '', chromium, node: process.version, load1: [loadBefore, loadavg()[0]] },
      build: { dist: DIST, source: describeBuild() },
      reply: { tokens: reply.tokens, chars: reply.text.length, markers: reply.markers.length, tokenChars: TOKEN_CHARS },
      at: new Date().toISOString(),
      rounds: ROUNDS,
      byRate,
      byLength,
      long: rounded(long),
    };
    mkdirSync(OUT, { recursive: true });
    writeFileSync(`${OUT}stream.json`, `${JSON.stringify(result, null, 2)}\n`);
    const load = result.machine.load1.map((x) => x.toFixed(1)).join(' → ');
    console.log(`Chromium ${chromium}, ${result.machine.cores} cores (load average ${load}); build: ${result.build.source}`);
    console.log(`each figure the median of ${ROUNDS} streams\n`);
    console.log(`A reply of ${reply.tokens} tokens (${reply.text.length} characters of Markdown, ${reply.markers.length} markers) at each rate:\n`);
    console.log(streamTable(byRate, ['offered tok/s', (r) => r.offered.toLocaleString('en')]));
    if (byLength.length > 0) {
      console.log(`\nShorter replies at ${LENGTH_RATE.toLocaleString('en')} tok/s:\n`);
      console.log(streamTable(byLength, ['reply tokens', (r) => r.replyTokens.toLocaleString('en')]));
    }
    console.log(`\n${longTable(long)}`);
    console.log(`\nwrote ${OUT}stream.json`);
  } finally {
    await closeBrowser();
  }
}

await main();
