// The speed a user sees: the real Hearth window (tauri-driver + WebKitWebDriver under Xvfb) against
// the engine alone (`hearth-cli chat`), same model, same load settings (the defaults), same prompts,
// end-of-turn ignored and a fixed reply length. Prints one JSON object last (make bench-app).
//
// In the window, a probe in the page times the Enter that sends, the first and the last token
// painted (a MutationObserver on the reply, stamped in the next animation frame), and counts the
// updates; /proc gives the CPU time of the app, its web process, the engine process and Xvfb.
import { spawn, spawnSync } from "node:child_process";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { REPLY, addProvider, chooseModel, dataDirWith, shot, sleep, startFake } from "../tests/e2e/helpers.mjs";
import { KEYS, Session, startDriver } from "../tests/e2e/webdriver.mjs";
import { median, round } from "./figures.mjs";
import { appProcessesOf, cpuMs } from "./proc.mjs";
import { atRest } from "./rest.mjs";

/** The app's processes (bench/proc.mjs) for this bench's binary. */
const appProcesses = () => appProcessesOf(APP);

const APP = process.env.HEARTH_APP_BINARY;
const FAKE = process.env.HEARTH_FAKE_PROVIDER;
const CLI = process.env.HEARTH_CLI_BINARY;
const MODEL = process.env.HEARTH_TEST_MODEL;
const TOKENS = Number(process.env.BENCH_TOKENS || 400);
const RUNS = Number(process.env.BENCH_RUNS || 3);
const PROMPTS = [
  "Write a long story about a lighthouse keeper and the sea.",
  "Explain how a steam engine works, step by step, in detail.",
  "Describe a walk through a busy market in a city you love.",
  "Tell me everything you know about the history of bread.",
];
const WARMUP = "Say hello.";
/** GTK blinks a focused text field's caret until 10 s after the last key, and each blink alone
 *  costs the window a whole update (docs/benchmarks.md): the window is at rest only after that. */
const CARET_BLINKS_MS = 11_000;
/** A pasted document (~1,300 tokens, one line: hearth-cli takes a turn per line): time to first
 *  token when reading the prompt, not fixed costs, is most of the wait. */
const LONG_PROMPT = "Summarise the following notes in three sentences. " +
  Array.from({ length: 40 }, (_, i) => `Note ${i + 1}: the harbour crew logged ${i * 7 + 3} crates of tea, ${i * 3 + 11} barrels of oil and ${i + 2} sacks of grain, and the tide turned at ${(i % 12) + 1} o'clock.`).join(" ");
const LONG_RUNS = Number(process.env.BENCH_LONG_RUNS || 2);
/** Short prompts typed at TYPING_CPS, each beside its own engine run (BENCH_TYPED_RUNS=0 skips them). */
const TYPED_RUNS = Number(process.env.BENCH_TYPED_RUNS ?? 3);
/** The fake provider's models that stream Markdown a window finds hard (BENCH_HOSTILE=0 skips them;
 *  BENCH_HOSTILE=hostile-lists,… runs those). */
const HOSTILE_ALL = ["hostile-line", "hostile-table", "hostile-code", "hostile-lists"];
const HOSTILE = process.env.BENCH_HOSTILE === "0" ? [] : process.env.BENCH_HOSTILE ? process.env.BENCH_HOSTILE.split(",") : HOSTILE_ALL;
const unknownHostile = HOSTILE.filter((model) => !HOSTILE_ALL.includes(model));
if (unknownHostile.length) throw new Error(`BENCH_HOSTILE: no reply named ${unknownHostile.join(", ")} (there are ${HOSTILE_ALL.join(", ")})`);
/** An ordinary 2,300-token Markdown reply from the fake provider at a local model's pace (125 events a
 *  second), beside the engine, no keys typed: what a long reply's rendering costs the window, and a
 *  model decoding beside it, without the window's own engine in the figure; then the same text with most of it
 *  streamed as reasoning (`reasoning_content`), which the window writes live into its reasoning block
 *  (BENCH_PROSE=0 skips both). */
const PROSE = process.env.BENCH_PROSE === "0" ? [] : ["prose", "reasoning-prose"];
/** The engine's reply while the window renders one of them. */
const HOSTILE_ENGINE_TOKENS = 800;
/** How the bench's keys reach the window: `x11` (default) as a keyboard's do, through the X server
 *  (XTEST), GTK and WebKit (bench/xkeys.py); `webdriver` through WebDriver's element commands, as
 *  until 2026-11-27 — whose element lookups and checks cost the web process ~10 ms of CPU a key,
 *  which a person's keystroke does not pay. */
const KEY_PATH = process.env.BENCH_KEYS || "x11";
assert.ok(["x11", "webdriver"].includes(KEY_PATH), `BENCH_KEYS must be x11 or webdriver, not ${KEY_PATH}`);
/** A burst of keys: about as fast as WebDriver types a string (~60 characters a second). */
const BURST_CPS = 60;

// ---- the engine alone -------------------------------------------------------------------------

/** hearth-cli chat's per-turn stats lines on stderr. */
const statsLines = (stderr) => [...stderr.matchAll(/\[(\d+) prompt tokens, (\d+) cached, (\d+) generated, ([\d.]+) tok\/s, TTFT (\d+) ms\]/g)];

/** One reply from `hearth-cli chat --fresh`: a warm-up conversation, then `prompt` as a new one on
 *  the loaded model, exactly as the window's runs do (New chat after a warm-up chat). */
function engineReply(prompt, maxTokens = TOKENS) {
  const args = ["chat", "--fresh", "--model", MODEL, "--ignore-eos", "--max-tokens", String(maxTokens)];
  const run = spawnSync(CLI, args, { input: `${WARMUP}\n${prompt}\n`, encoding: "utf8", maxBuffer: 64 << 20 });
  assert.equal(run.status, 0, `hearth-cli chat failed: ${run.stderr}`);
  const stats = statsLines(run.stderr);
  assert.equal(stats.length, 2, `unexpected hearth-cli output: ${run.stderr}`);
  const [, promptTokens, cachedTokens, tokens, tps, ttft] = stats[1];
  return { promptTokens: +promptTokens, cachedTokens: +cachedTokens, tokens: +tokens, decodeTps: +tps, ttftMs: +ttft };
}

/** engineReply, in the background (the window streams meanwhile). */
function engineReplyAsync(prompt, tokens) {
  const args = ["chat", "--fresh", "--model", MODEL, "--ignore-eos", "--max-tokens", String(tokens)];
  const child = spawn(CLI, args, { stdio: ["pipe", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  child.stdin.end(`${WARMUP}\n${prompt}\n`);
  return new Promise((resolve, reject) => {
    child.on("exit", (code) => {
      const stats = statsLines(stderr);
      if (code !== 0 || stats.length !== 2) reject(new Error(`hearth-cli chat failed: ${stderr}`));
      else resolve({ tokens: +stats[1][3], decodeTps: +stats[1][4] });
    });
  });
}

const cpuOf = (groups) => Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, pids.reduce((s, p) => s + cpuMs(p), 0)]));

// ---- the keyboard -------------------------------------------------------------------------------

/** bench/xkeys.py: keys through XTEST, as a keyboard types them. Each call answers the wall-clock
 *  times (ms since the epoch) its keys were pressed. */
class XKeys {
  constructor(python) {
    this.child = spawn(python, [path.join(import.meta.dirname, "xkeys.py")], { stdio: ["pipe", "pipe", "inherit"] });
    this.pending = [];
    let buffered = "";
    this.child.stdout.on("data", (d) => {
      buffered += d;
      let at;
      while ((at = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 1);
        this.pending.shift()?.resolve(JSON.parse(line));
      }
    });
    this.child.on("exit", (code) => {
      for (const p of this.pending.splice(0)) p.reject(new Error(`bench/xkeys.py exited (${code})`));
    });
  }
  request(body) {
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.child.stdin.write(`${JSON.stringify(body)}\n`);
    });
  }
  focus(pid) {
    return this.request({ focus: pid });
  }
  async type(text, cps) {
    return (await this.request({ text, delay_ms: cps ? 1000 / cps : 0 })).sent;
  }
  async key(name) {
    return (await this.request({ key: name })).sent[0];
  }
  stop() {
    this.child.stdin.end();
  }
}
let xkeys = null;

// ---- the window ---------------------------------------------------------------------------------

/** Installed once per page: times the sending Enter, the first and last painted token of the
 *  reply being written, and the updates in between. A change is painted by the rendering update
 *  that follows it — the one running now when the page changed the text inside an animation frame
 *  (the window hands text over in one), else the next — and is stamped when that update is done
 *  (the first task after it). (Until 2026-11-26 every change was stamped at the start of the next
 *  frame: one frame late for the window's own updates, ~10 ms on every TTFT.) */
const PROBE = `
  const probe = (window.__hearthBench = { enter: 0, first: 0, last: 0, updates: 0, length: 0, echoes: null });
  let inFrame = false;
  const pageFrame = window.requestAnimationFrame.bind(window);
  // Each frame's cost to the page: from its first animation-frame callback to the task after it
  // (the callbacks, style, layout and paint), for frames while a reply is written.
  probe.frameCosts = [];
  window.requestAnimationFrame = (callback) => pageFrame((time) => {
    if (!inFrame) {
      inFrame = true;
      const start = performance.now();
      setTimeout(() => {
        inFrame = false;
        if (probe.enter) probe.frameCosts.push(performance.now() - start);
      }, 0); // runs once this rendering update is done
    }
    callback(time);
  });
  const afterPaint = (stamp) => (inFrame ? setTimeout(stamp, 0) : pageFrame(() => setTimeout(stamp, 0)));
  // Keys typed through X: when the frame that shows each was painted (wall clock, ms), while
  // probe.echoes is an array.
  document.addEventListener("input", () => {
    if (probe.echoes) afterPaint(() => probe.echoes?.push(performance.timeOrigin + performance.now()));
  }, true);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) Object.assign(probe, { enter: performance.now(), first: 0, last: 0, updates: 0, length: 0, frameCosts: [] });
  }, true);
  new MutationObserver(() => {
    if (!probe.enter) return;
    const replies = document.querySelectorAll('${REPLY}');
    // The answer and, written before it, the reasoning in its block.
    const written = ['[data-testid="message-content"]', '[data-testid="reasoning"]'].map((s) => replies[replies.length - 1]?.querySelector(s));
    const length = written.reduce((sum, node) => sum + (node ? node.textContent.length : 0), 0);
    if (length === probe.length) return;
    probe.length = length;
    probe.updates++;
    afterPaint(() => {
      const now = performance.now();
      if (!probe.first) probe.first = now;
      probe.last = now;
    });
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
`;

/** Typing speed of the typed runs (characters a second), as issue 16's bench types. */
const TYPING_CPS = 5;

async function appReply(session, prompt, { measure, typed = false }) {
  await session.click(await session.waitFor('[data-testid="new-chat"]'));
  while ((await session.findAll('[data-testid="message"]')).length) await sleep(100); // the new chat is on show
  const composer = await session.waitFor('[data-testid="composer"]');
  if (prompt.length > 500) {
    // A paste, not typing: set the text and say so, as the clipboard would.
    const set = "const [el, text] = arguments; el.value = text; el.dispatchEvent(new Event('input', { bubbles: true }));";
    await session.cmd("POST", "/execute/sync", { script: set, args: [{ "element-6066-11e4-a52e-4f735466cecf": composer }, prompt] });
  } else if (typed) {
    // A person typing: the window reads the message ahead meanwhile (prefill while typing).
    if (xkeys) {
      await session.click(composer);
      await xkeys.type(prompt, TYPING_CPS);
      await sleep(1000 / TYPING_CPS); // Enter is the next key, at the same pace
    } else {
      for (const char of prompt) {
        await session.type(composer, char);
        await sleep(1000 / TYPING_CPS);
      }
    }
  } else if (xkeys) {
    await session.click(composer);
    await xkeys.type(prompt, BURST_CPS);
    await sleep(1000 / BURST_CPS); // Enter is the next key, at the same pace
  } else {
    await session.type(composer, prompt);
  }
  if (xkeys && prompt.length > 500) await session.click(composer); // a paste leaves the focus where it was
  const pids = appProcesses();
  const before = cpuOf(pids);
  const wallBefore = Date.now();
  if (xkeys) await xkeys.key("Return");
  else await session.type(composer, KEYS.enter);
  // Waits inside the page (no polling over WebDriver while the reply streams).
  await session.cmd("POST", "/execute/async", {
    script: `const done = arguments[arguments.length - 1];
      const check = () => {
        const r = document.querySelectorAll('${REPLY}');
        const last = r[r.length - 1];
        if (last && last.dataset.status && last.dataset.status !== "streaming" && window.__hearthBench.last) done();
        else setTimeout(check, 250);
      };
      check();`,
    args: [],
  });
  const after = cpuOf(pids);
  const wallMs = Date.now() - wallBefore;
  const probe = await session.cmd("POST", "/execute/sync", { script: "return { ...window.__hearthBench, origin: performance.timeOrigin }", args: [] });
  const frames = await frameCosts(session);
  const replies = await session.findAll(`${REPLY}[data-status]`);
  const reply = replies[replies.length - 1];
  const status = await session.attribute(reply, "data-status");
  const stats = await session.text(await session.within(reply, '[data-testid="message-stats"]'));
  const detail = await session.attribute(await session.within(reply, '[data-testid="message-stats"]'), "title");
  const tokens = Number(stats.match(/(\d+) tokens/)?.[1]);
  const readWhileTyping = Number(detail.match(/\((\d+) read while you typed\)/)?.[1] ?? 0);
  const promptTokens = Number(detail.match(/Prompt: (\d+) tokens/)?.[1]);
  const statsTps = Number(stats.match(/([\d.]+) tok\/s/)?.[1]);
  const statsTtftMs = Number(stats.match(/TTFT ([\d.]+) ?(m?s)/)?.[1]) * (stats.match(/TTFT [\d.]+ ?ms/) ? 1 : 1000);
  if (measure) await shot(session, "bench-app-reply");
  // The chat's title is written by the model next: let it finish before the next reply.
  await session.waitFor('[data-testid="chat-item"]', { accept: (t) => !/new chat/i.test(t), timeoutMs: 30_000 }).catch(() => {});
  await sleep(1500);
  const cpu = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
  return {
    status,
    detail,
    tokens,
    promptTokens,
    readWhileTyping,
    statsTps,
    statsTtftMs,
    ttftMs: probe.first - probe.enter,
    // Wall-clock stamps, to lay beside the app's log (RUST_LOG=hearth=debug,hearth_core=debug,…).
    enterAt: new Date(probe.origin + probe.enter).toISOString(),
    firstAt: new Date(probe.origin + probe.first).toISOString(),
    decodeTps: (tokens - 1) / ((probe.last - probe.first) / 1000),
    updatesPerSecond: probe.updates / ((probe.last - probe.first) / 1000),
    wallMs,
    frames,
    cpuMsPerToken: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, v / tokens])),
  };
}

/** The page's frames since the last call (or Enter): how many, and what each cost it (ms, median
 *  and 90th percentile). */
async function frameCosts(session) {
  const c = (await session.cmd("POST", "/execute/sync", { script: "const c = window.__hearthBench.frameCosts; window.__hearthBench.frameCosts = []; return c;", args: [] })).sort((a, b) => a - b);
  return { count: c.length, p50_ms: round(c[Math.floor(c.length / 2)] ?? 0, 1), p90_ms: round(c[Math.floor(c.length * 0.9)] ?? 0, 1) };
}

/** Key echoes: from a key pressed to the frame that shows it in the composer, in ms. Through X
 *  the page stamps each key's painted frame and the times are read at the end (`echoesOf`), so
 *  nothing but the key reaches the page meanwhile; through WebDriver each key is a round trip
 *  (typing, then a script waiting for the next frame): an upper bound. */
async function startEchoes(session) {
  if (xkeys) await session.cmd("POST", "/execute/sync", { script: "window.__hearthBench.echoes = []", args: [] });
}
/** Types one key: through X, when it was pressed; through WebDriver, its echo. */
async function keyEcho(session, composer) {
  if (xkeys) return xkeys.key("k");
  const start = performance.now();
  await session.type(composer, "k");
  await session.cmd("POST", "/execute/async", { script: "requestAnimationFrame(arguments[arguments.length - 1])", args: [] });
  return performance.now() - start;
}
/** The echoes of the keys `keyEcho` typed since `startEchoes`. */
async function echoesOf(session, typed) {
  if (!xkeys) return typed;
  await sleep(300); // the last key's frame
  const painted = await session.cmd("POST", "/execute/sync", {
    script: "const e = window.__hearthBench.echoes; window.__hearthBench.echoes = null; return e;",
    args: [],
  });
  assert.equal(painted.length, typed.length, `${typed.length} keys typed through X, ${painted.length} reached the composer`);
  return typed.map((sent, i) => painted[i] - sent);
}

/** One hostile reply from the fake provider while the engine decodes beside it and keys are typed
 *  (not for `prose` or `reasoning-prose`: a person reads them).
 *  The engine's speed alone is taken just before and just after (the window idle), and the run
 *  beside the window is set against their mean: a machine whose speed drifts over the minutes of
 *  a run (other tenants, heat) moves both sides alike. */
async function hostileRun(session, providerId, model) {
  await session.click(await session.waitFor('[data-testid="new-chat"]'));
  while ((await session.findAll('[data-testid="message"]')).length) await sleep(100);
  await chooseModel(session, providerId, model);
  const alone = engineReply(PROMPTS[0], HOSTILE_ENGINE_TOKENS);
  const composer = await session.waitFor('[data-testid="composer"]');
  await session.type(composer, `Show me ${model}.`);
  const pids = appProcesses();
  const before = cpuOf(pids);
  const started = performance.now();
  await session.type(composer, KEYS.enter);
  await session.waitFor(`${REPLY}[data-status="streaming"]`, { accept: (t) => t.trim().length > 0 });
  const beside = engineReplyAsync(PROMPTS[0], HOSTILE_ENGINE_TOKENS);
  let engineDone = false;
  beside.then(() => (engineDone = true), () => (engineDone = true));
  const typedKeys = [];
  await startEchoes(session);
  const updatesBefore = await session.cmd("POST", "/execute/sync", { script: "return window.__hearthBench.updates", args: [] });
  const besideStarted = performance.now();
  while (!engineDone) {
    if (model.startsWith("hostile-")) typedKeys.push(await keyEcho(session, composer));
    await sleep(200);
  }
  const echoes = await echoesOf(session, typedKeys);
  const updatesBeside = (await session.cmd("POST", "/execute/sync", { script: "return window.__hearthBench.updates", args: [] })) - updatesBefore;
  const frames = await frameCosts(session);
  const besideMs = performance.now() - besideStarted;
  const withWindow = await beside;
  await session.cmd("POST", "/execute/async", {
    script: `const done = arguments[arguments.length - 1];
      const check = () => {
        const r = document.querySelectorAll('${REPLY}');
        const last = r[r.length - 1];
        if (last && last.dataset.status && last.dataset.status !== "streaming") done();
        else setTimeout(check, 250);
      };
      check();`,
    args: [],
  });
  const streamedMs = performance.now() - started;
  const after = cpuOf(pids);
  const aloneAfter = engineReply(PROMPTS[0], HOSTILE_ENGINE_TOKENS);
  // Shares of a core while it streamed (the window's own engine is idle: a provider writes).
  const cpuShare = Object.fromEntries(["app", "web", "xvfb", "driver", "fake"].map((k) => [k, round((after[k] - before[k]) / streamedMs, 2)]));
  const replies = await session.findAll(`${REPLY}[data-status]`);
  const status = await session.attribute(replies[replies.length - 1], "data-status");
  await shot(session, `bench-app-${model}`);
  await session.clear(composer);
  return {
    model,
    status,
    streamed_s: round(streamedMs / 1000, 1),
    key_echo_p95_ms: echoes.length ? round([...echoes].sort((a, b) => a - b)[Math.floor(echoes.length * 0.95)], 0) : null,
    key_echo_max_ms: echoes.length ? round(Math.max(...echoes), 0) : null,
    updates_per_s: round(updatesBeside / (besideMs / 1000), 1),
    keys: echoes.length,
    frames,
    engine_ratio: round(withWindow.decodeTps / ((alone.decodeTps + aloneAfter.decodeTps) / 2)),
    engine_tps: { before: round(alone.decodeTps, 1), beside: round(withWindow.decodeTps, 1), after: round(aloneAfter.decodeTps, 1) },
    cpu_share: cpuShare,
  };
}

async function setReplyShape(session) {
  await session.click(await session.waitFor('[data-testid="open-settings"]'));
  const maxTokens = await session.waitFor('[data-testid="field-maxTokens"]');
  await session.clear(maxTokens);
  await session.type(maxTokens, String(TOKENS));
  await session.press(await session.waitFor('[data-testid="field-ignoreEos"]'));
  await session.waitFor('[data-testid="settings-status"]', { accept: (t) => t.includes("Saved") });
  await session.click(await session.waitFor('[data-testid="close-settings"]'));
}

let idle = {};
let keyCpuMs = null;
const hostile = [];
const prose = [];
const reasoning = [];
const engineLong = [];
const idleEchoes = [];
const appLong = [];
const engineTyped = [];
const appTyped = [];
async function windowRuns() {
  const dataDir = dataDirWith(MODEL, "hearth-bench-app-");
  const driver = await startDriver({ ...process.env, HEARTH_DATA_DIR: dataDir });
  const session = await Session.open(driver.base, APP);
  try {
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2") && !t.includes("Loading"), timeoutMs: 120_000 });
    await session.cmd("POST", "/timeouts", { script: 600_000 });
    await session.cmd("POST", "/execute/sync", { script: PROBE, args: [] });
    if (KEY_PATH === "x11") {
      xkeys = new XKeys(process.env.HEARTH_TEST_PYTHON || "python3");
      await xkeys.focus(appProcesses().app[0]);
    }
    await setReplyShape(session);
    // An experiment kept for re-measuring (docs/benchmarks.md): the window at a lower priority.
    if (process.env.BENCH_RENICE) {
      const { web, app } = appProcesses();
      spawnSync("renice", ["-n", process.env.BENCH_RENICE, "-p", ...[...web, ...app].map(String)]);
    }
    const warmupSent = Date.now();
    await appReply(session, WARMUP, { measure: false });
    // The window at rest, a chat open: what it costs when nothing happens.
    await sleep(Math.max(0, warmupSent + CARET_BLINKS_MS - Date.now()));
    const pids = appProcesses();
    const before = cpuOf(pids);
    await sleep(3000);
    const after = cpuOf(pids);
    idle = Object.fromEntries(Object.keys(after).map((k) => [k, (after[k] - before[k]) / 3000]));
    // Alternating with the engine alone (the window idle meanwhile), so a machine whose speed
    // drifts (other tenants, heat) does not skew the ratios.
    const runs = [];
    for (let i = 0; i < RUNS; i++) {
      const prompt = PROMPTS[i % PROMPTS.length];
      engine.push(engineReply(prompt));
      runs.push(await appReply(session, prompt, { measure: i === RUNS - 1 }));
    }
    for (let i = 0; i < TYPED_RUNS; i++) {
      const prompt = PROMPTS[i % PROMPTS.length];
      engineTyped.push(engineReply(prompt));
      appTyped.push(await appReply(session, prompt, { measure: false, typed: true }));
    }
    for (let i = 0; i < LONG_RUNS; i++) {
      // Each run its own document: the engine keeps the last prompt's cache across chats.
      const prompt = `Document ${i + 1}. ${LONG_PROMPT}`;
      engineLong.push(engineReply(prompt));
      appLong.push(await appReply(session, prompt, { measure: false }));
    }
    if (HOSTILE.length || PROSE.length) {
      const fake = await startFake(FAKE);
      try {
        const { id } = await addProvider(session, { name: "Hostile", url: fake.url, key: fake.key, models: [...PROSE, ...HOSTILE].join(", ") });
        await session.click(await session.waitFor('[data-testid="close-settings"]'));
        // The same measure at rest: WebDriver's own round trip is in every figure.
        const composer = await session.waitFor('[data-testid="composer"]');
        await session.click(composer);
        await sleep(1000);
        await startEchoes(session);
        const typedKeys = [];
        const pids = appProcesses();
        const before = cpuOf(pids);
        for (let i = 0; i < 20; i++) {
          typedKeys.push(await keyEcho(session, composer));
          await sleep(100);
        }
        idleEchoes.push(...(await echoesOf(session, typedKeys)));
        const after = cpuOf(pids);
        // What a key costs the window at rest (its echo's frame included; /proc's 10 ms ticks
        // over 20 keys), and the WebDriver servers when they type it.
        keyCpuMs = Object.fromEntries(["web", "app", "xvfb", "driver"].map((k) => [k, round((after[k] - before[k]) / typedKeys.length, 1)]));
        await session.clear(composer);
        for (const model of [...PROSE, ...HOSTILE]) {
          const run = await hostileRun(session, id, model);
          const kind = model.startsWith("hostile-") ? "hostile" : model;
          console.error(`${kind}: ${JSON.stringify(run)}`);
          ({ hostile, prose, "reasoning-prose": reasoning })[kind].push(run);
        }
      } finally {
        fake.child.kill();
      }
    }
    return runs;
  } finally {
    xkeys?.stop();
    await session.close().catch(() => {});
    await driver.stop();
    fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
}

// ---- the run ------------------------------------------------------------------------------------

for (const [name, file] of [["HEARTH_APP_BINARY", APP], ["HEARTH_CLI_BINARY", CLI], ["HEARTH_TEST_MODEL", MODEL], ["HEARTH_FAKE_PROVIDER", FAKE]]) {
  assert.ok(file && fs.existsSync(file), `${name} (${file}) must exist`);
}

const rest = await atRest({ app: APP, caretBlinksMs: CARET_BLINKS_MS });
if (process.env.BENCH_WINDOW === "0") {
  console.log(JSON.stringify({ bench: "app", sections: ["rest"], ...rest }));
  process.exit(0);
}
const engine = [];
const app = await windowRuns();
for (const run of engine) console.error(`engine: ${run.promptTokens} prompt tokens (${run.cachedTokens} cached), ${run.tokens} tokens at ${run.decodeTps} tok/s, TTFT ${run.ttftMs} ms`);
for (const run of engineLong) console.error(`engine, long prompt: ${run.promptTokens} prompt tokens (${run.cachedTokens} cached), ${run.decodeTps} tok/s, TTFT ${run.ttftMs} ms`);
for (const run of [...app, ...appTyped, ...appLong]) {
  console.error(`window: ${run.status} [${run.detail.replace(/\s+/g, ' ')}], ${run.tokens} tokens at ${round(run.decodeTps, 1)} tok/s painted (stats line ${run.statsTps}), ` +
    `TTFT ${round(run.ttftMs, 0)} ms (engine ${run.statsTtftMs} ms; Enter ${run.enterAt}, painted ${run.firstAt}), ${round(run.updatesPerSecond, 1)} updates/s, frames ${JSON.stringify(run.frames)}, CPU ms/token ${JSON.stringify(Object.fromEntries(Object.entries(run.cpuMsPerToken).map(([k, v]) => [k, round(v, 2)])))}`);
}

const pick = (runs, f) => median(runs.map(f));
const result = {
  bench: "app",
  model: path.basename(MODEL),
  cores: os.cpus().length,
  reply_tokens: TOKENS,
  keys: KEY_PATH,
  runs: RUNS,
  engine_decode_tps: round(pick(engine, (r) => r.decodeTps), 2),
  engine_ttft_ms: round(pick(engine, (r) => r.ttftMs), 1),
  app_decode_tps: round(pick(app, (r) => r.decodeTps), 2),
  app_ttft_ms: round(pick(app, (r) => r.ttftMs), 1),
  app_stats_line_tps: round(pick(app, (r) => r.statsTps), 2),
  app_updates_per_s: round(pick(app, (r) => r.updatesPerSecond), 1),
  // Ratios per pair (run i of each, back to back), then their median.
  app_decode_ratio: round(median(app.map((r, i) => r.decodeTps / engine[i].decodeTps))),
  app_ttft_ratio: round(median(app.map((r, i) => r.ttftMs / engine[i].ttftMs))),
  app_engine_ttft_ms: round(pick(app, (r) => r.statsTtftMs), 1),
  // The same prompts typed at TYPING_CPS characters a second: what a person typing waits for.
  app_typed_ttft_ms: appTyped.length ? round(pick(appTyped, (r) => r.ttftMs), 1) : null,
  app_typed_ttft_ratio: appTyped.length ? round(median(appTyped.map((r, i) => r.ttftMs / engineTyped[i].ttftMs))) : null,
  app_typed_read_ahead_share: appTyped.length ? round(pick(appTyped, (r) => r.readWhileTyping / r.promptTokens)) : null,
  long_prompt_tokens: engineLong[0]?.promptTokens ?? null,
  long_engine_ttft_ms: engineLong.length ? round(pick(engineLong, (r) => r.ttftMs), 1) : null,
  long_app_ttft_ms: appLong.length ? round(pick(appLong, (r) => r.ttftMs), 1) : null,
  long_engine_decode_tps: engineLong.length ? round(pick(engineLong, (r) => r.decodeTps), 2) : null,
  long_app_decode_tps: appLong.length ? round(pick(appLong, (r) => r.decodeTps), 2) : null,
  long_app_decode_ratio: appLong.length ? round(median(appLong.map((r, i) => r.decodeTps / engineLong[i].decodeTps))) : null,
  long_app_ttft_ratio: appLong.length ? round(median(appLong.map((r, i) => r.ttftMs / engineLong[i].ttftMs))) : null,
  stats_line_vs_painted: round(pick(app, (r) => r.statsTps / r.decodeTps)),
  webview_cpu_ms_per_token: round(pick(app, (r) => r.cpuMsPerToken.web), 2),
  app_cpu_ms_per_token: round(pick(app, (r) => r.cpuMsPerToken.app), 2),
  engine_cpu_ms_per_token: round(pick(app, (r) => r.cpuMsPerToken.engine), 2),
  webview_idle_cpu_share: round(idle.web ?? NaN),
  xvfb_cpu_ms_per_token: round(pick(app, (r) => r.cpuMsPerToken.xvfb), 2),
  // CPU per key typed into the composer at rest, by process (ms).
  key_cpu_ms: keyCpuMs,
  key_echo_idle_p95_ms: idleEchoes.length ? round([...idleEchoes].sort((a, b) => a - b)[Math.floor(idleEchoes.length * 0.95)], 0) : null,
  // An ordinary long reply streamed from a provider beside the engine (no keys typed).
  prose_engine_ratio: prose[0]?.engine_ratio ?? null,
  prose_web_cpu_share: prose[0]?.cpu_share.web ?? null,
  prose_app_cpu_share: prose[0]?.cpu_share.app ?? null,
  prose_updates_per_s: prose[0]?.updates_per_s ?? null,
  prose,
  // The same, most of it as reasoning streamed live into the reply's reasoning block.
  reasoning_engine_ratio: reasoning[0]?.engine_ratio ?? null,
  reasoning_web_cpu_share: reasoning[0]?.cpu_share.web ?? null,
  reasoning_app_cpu_share: reasoning[0]?.cpu_share.app ?? null,
  reasoning_updates_per_s: reasoning[0]?.updates_per_s ?? null,
  reasoning,
  hostile_key_echo_p95_ms: hostile.length ? Math.max(...hostile.map((h) => h.key_echo_p95_ms)) : null,
  hostile_engine_ratio: hostile.length ? Math.min(...hostile.map((h) => h.engine_ratio)) : null,
  hostile,
  // At rest (no model): the first start, later starts, and memory (PSS summed: the figure).
  ...rest,
};
console.log(JSON.stringify(result));
