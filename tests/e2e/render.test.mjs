// End to end: replies rendered by the real app in a real WebKit webview. The fake provider's
// `echo` model streams the user's text back as the reply (real HTTP, OpenAI's wire format), so
// what the model "writes" is chosen here: a reply with code, math and a table (screenshots in
// the light and the dark theme), and every payload of ui/tests/xss-payloads.mjs, none of which
// may execute, open a dialog or trip the CSP (the sanitizer must stop them first).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";

import { PAYLOADS } from "../../ui/tests/xss-payloads.mjs";
import { REPLY, addProvider, chooseModel, dataDirWith, shot, sleep, startFake } from "./helpers.mjs";
import { KEYS, Session, startDriver } from "./webdriver.mjs";

const app = process.env.HEARTH_APP_BINARY;
const model = process.env.HEARTH_TEST_MODEL;
const fakeProvider = process.env.HEARTH_FAKE_PROVIDER;
let dataDir;
let fake;
const drivers = [];

const RICH = String.raw`

Here is the function:

~~~rust
fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() { return None; }
    Some(xs.iter().sum::<f64>() / xs.len() as f64)
}
~~~

Euler's identity $e^{i\pi} + 1 = 0$ and the mean:

$$\bar{x} = \frac{1}{n}\sum_{i=1}^{n} x_i$$

| Quantization | Size | Quality |
|---|---:|---|
| Q4_1 | 98 MB | good |
| Q8_0 | 145 MB | better |
`;

before(async () => {
  for (const [name, file] of Object.entries({ app, model, fakeProvider })) {
    assert.ok(file && fs.existsSync(file), `${name} (${file}) must exist: run scripts/e2e.sh`);
  }
  dataDir = dataDirWith(model, "hearth-e2e-render-");
  fake = await startFake(fakeProvider);
});

after(async () => {
  await Promise.all(drivers.map((d) => d.stop()));
  fake?.child.kill();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A driver whose app runs with `env` added (GTK_THEME picks the system theme WebKit follows). */
async function driverWith(env) {
  const driver = await startDriver({ ...process.env, HEARTH_DATA_DIR: dataDir, ...env });
  drivers.push(driver);
  return driver;
}

const script = (session, body, ...args) => session.cmd("POST", "/execute/sync", { script: body, args });

/** Puts `text` (newlines and all) in the composer and sends it. */
async function sendRaw(session, text) {
  const composer = await session.waitFor('[data-testid="composer"]');
  await script(session, "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', { bubbles: true }));",
    { "element-6066-11e4-a52e-4f735466cecf": composer }, text);
  await session.type(composer, KEYS.enter);
  // A send empties the composer. Once (in a fresh-clone run) an Enter pressed just as the chat's
  // title arrived was not taken: say so and press it again, so this test keeps testing rendering.
  const taken = () => script(session, "return document.querySelector('[data-testid=\"composer\"]').value === ''");
  for (let waited = 0; !(await taken()); waited += 50) {
    if (waited >= 3000) {
      console.log(`the composer kept its text 3 s after Enter (${text.slice(0, 24)}…); pressing Enter again`);
      await session.type(await session.waitFor('[data-testid="composer"]'), KEYS.enter);
      break;
    }
    await sleep(50);
  }
}

/** Waits until the chat's last finished reply shows `marker`: one round trip a look (reading
 *  each of the chat's replies in turn took one each, ~25 a look by a chat's 25th payload). */
async function lastReplyShows(session, marker) {
  const look = `const reply = [...document.querySelectorAll(arguments[0])].pop();
    return reply ? reply.innerText.includes(arguments[1]) : false;`;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(50)) {
    if (await script(session, look, `${REPLY}[data-status="complete"]`, marker)) return;
  }
  throw new Error(`no finished reply showed "${marker}" within 60 s`);
}

const darkScheme = (session) => script(session, "return matchMedia('(prefers-color-scheme: dark)').matches");

test("a reply with code, math and a table; every XSS payload rendered and none executes", async () => {
  const driver = await driverWith({ GTK_THEME: "Adwaita" });
  const session = await Session.open(driver.base, app);
  try {
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2") });
    assert.equal(await darkScheme(session), false);
    const { id } = await addProvider(session, { name: "Fake cloud", url: fake.url, key: fake.key });
    await session.click(await session.waitFor('[data-testid="close-settings"]'));
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    await chooseModel(session, id, "echo");

    await sendRaw(session, RICH);
    const rich = await session.waitFor(`${REPLY}[data-status="complete"]`, { accept: (t) => t.includes("Q8_0") });
    await session.within(rich, '[data-testid="code-block"] .hljs-keyword');
    await session.within(rich, '[data-testid="copy-code"]');
    await session.within(rich, ".katex-display .katex");
    await session.within(rich, "table th");
    assert.deepEqual(await session.findAll(".katex-error"), []);
    await sleep(300);
    await shot(session, "render-01-rich-light");

    // The payloads in chats of their own, each one reply.
    await script(session, `
      window.__caught = [];
      window.__at = location.href;
      for (const name of ['alert', 'confirm', 'prompt', 'print']) window[name] = () => window.__caught.push(name);
      document.addEventListener('securitypolicyviolation', (e) => window.__caught.push('csp ' + e.violatedDirective + ' ' + e.blockedURI));`);
    for (const [i, payload] of PAYLOADS.entries()) {
      // A fresh chat every 25 payloads: the echoed history would outgrow the model's context.
      if (i % 25 === 0) {
        await session.click(await session.waitFor('[data-testid="new-chat"]'));
        await chooseModel(session, id, "echo");
      }
      const marker = `payload ${i + 1} of ${PAYLOADS.length}`;
      await sendRaw(session, `${marker}\n\n${payload.source}`);
      await lastReplyShows(session, marker);
    }
    await sleep(500); // late loads (an image's error handler, a meta refresh) would land by now
    await shot(session, "render-02-xss");
    const outcome = await script(session, "return { xss: window.__xss ?? null, caught: window.__caught, moved: location.href !== window.__at }");
    assert.deepEqual(outcome, { xss: null, caught: [], moved: false }, "a payload ran, opened a dialog, tripped the CSP or navigated");
  } finally {
    await session.close();
  }
});

test("the dark theme follows the system: the same reply", async () => {
  const driver = await driverWith({ GTK_THEME: "Adwaita:dark" });
  const session = await Session.open(driver.base, app);
  try {
    await session.waitFor('[data-testid="chat-item"]');
    assert.equal(await darkScheme(session), true, "WebKit should follow GTK's dark theme");
    const chats = await session.findAll('[data-testid="chat-item"]');
    await session.click(chats[chats.length - 1]); // the oldest chat: the rich reply
    await session.waitFor(`${REPLY}[data-status="complete"] table`);
    await sleep(300);
    await shot(session, "render-03-rich-dark");
  } finally {
    await session.close();
  }
});
