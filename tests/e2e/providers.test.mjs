// End to end: one chat in the real app switches from the local SmolLM2 to llama.cpp's own server
// (a real OpenAI-compatible peer serving the same model) and back; a provider that fails shows
// each failure in words with its action. The failing provider is the test suite's fake
// (hearth-testkit's fake_provider example), speaking OpenAI's wire format on 127.0.0.1.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { addProvider, dataDirWith, chooseModel, fill, freePort, modelOf, nthReply, send, setMaxTokens, shot, startFake } from "./helpers.mjs";
import { Session, startDriver } from "./webdriver.mjs";

const app = process.env.HEARTH_APP_BINARY;
const model = process.env.HEARTH_TEST_MODEL;
const llamaServer = process.env.HEARTH_LLAMA_SERVER;
const fakeProvider = process.env.HEARTH_FAKE_PROVIDER;
let dataDir;
const PEER_MODEL = "smollm2-peer";
let driver;
let peer;
let fake;

async function startPeer() {
  const port = await freePort();
  const child = spawn(llamaServer, ["--model", model, "--host", "127.0.0.1", "--port", String(port), "--ctx-size", "2048",
    "--threads", "2", "--parallel", "1", "--jinja", "--no-webui", "--alias", PEER_MODEL], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) return { child, url: `${url}/v1` };
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error("llama-server did not start");
}

/** Returns once a build of the tests' llama.cpp programs under way (make test starts it in the
 * background; llama-server is among them) has ended: `flock` waits for its lock. */
function llamaProgramsBuilt() {
  const lock = path.join(import.meta.dirname, "../../target/backend-build/tests/.lock");
  if (fs.existsSync(lock)) execFileSync("flock", [lock, "true"]);
  // A background build that ended without them (target/test-backends.log says why) is made again
  // here, in the foreground, as scripts/test.sh's last step would.
  if (llamaServer && !fs.existsSync(llamaServer)) {
    console.error(`${llamaServer} is missing after the background build: building llama.cpp's test programs now…`);
    execFileSync(path.join(import.meta.dirname, "../../scripts/build-backend.sh"), ["tests"], { stdio: ["ignore", "ignore", "inherit"] });
  }
}

before(async () => {
  llamaProgramsBuilt();
  for (const [name, file] of Object.entries({ app, model, llamaServer, fakeProvider })) {
    assert.ok(file && fs.existsSync(file), `${name} (${file}) must exist: run scripts/e2e.sh`);
  }
  dataDir = dataDirWith(model, "hearth-e2e-providers-");
  [peer, fake] = await Promise.all([startPeer(), startFake(fakeProvider)]);
  // No hub here: token counts of remote models are estimates (the hub path is tested in Rust).
  const env = { ...process.env, HEARTH_DATA_DIR: dataDir, HF_ENDPOINT: "http://127.0.0.1:9" };
  driver = await startDriver(env);
});

after(async () => {
  await driver?.stop();
  peer?.child.kill();
  fake?.child.kill();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

test("one chat: the local SmolLM2, then llama.cpp's server, then local again; each reply shows its model", async () => {
  const session = await Session.open(driver.base, app);
  try {
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2") });
    // Short replies, local and remote alike (max tokens is sent to the provider): a sampled
    // reply's length must not decide whether the test finishes in time.
    await setMaxTokens(session, 24);
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    await send(session, "What is the capital of France?");
    assert.match(await modelOf(session, await nthReply(session, 1, "complete")), /SmolLM2/);

    const { id } = await addProvider(session, { name: "llama.cpp server", url: peer.url });
    await shot(session, "07-providers");
    await session.click(await session.waitFor('[data-testid="close-settings"]'));

    await chooseModel(session, id, PEER_MODEL, "08-model-menu");
    await send(session, "And the capital of Italy?");
    const remote = await nthReply(session, 2, "complete");
    assert.match(await modelOf(session, remote), new RegExp(`${PEER_MODEL} \\(llama\\.cpp server\\)`));
    assert.match(await session.text(await session.within(remote, '[data-testid="message-content"]')), /\S/);
    await shot(session, "09-remote-reply");

    await chooseModel(session, "local");
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2") });
    await send(session, "Thank you!");
    assert.match(await modelOf(session, await nthReply(session, 3, "complete")), /SmolLM2/);
    await shot(session, "10-back-to-local");
  } finally {
    await session.close();
  }
});

test("a provider's failures are shown in words, with the text kept and an action", async () => {
  const session = await Session.open(driver.base, app);
  try {
    await session.waitFor('[data-testid="model-switcher"]');
    const { card, id } = await addProvider(session, { name: "Fake cloud", url: fake.url, key: fake.key, models: "thinker, rate-limited, cut" });
    await session.click(await session.waitFor('[data-testid="close-settings"]'));
    await session.click(await session.waitFor('[data-testid="new-chat"]'));

    await chooseModel(session, id, "echo");
    await send(session, "hello");
    const echoed = await nthReply(session, 1, "complete");
    assert.match(await session.text(echoed), /You said: hello/);
    assert.equal(await modelOf(session, echoed), "echo (Fake cloud)");

    // A remote model's reasoning, streamed apart from its answer, is the reply's reasoning block.
    await chooseModel(session, id, "thinker");
    await send(session, "Two and two?");
    const thought = await nthReply(session, 2, "complete");
    assert.match(await session.text(await session.within(thought, '[data-testid="message-content"]')), /^\s*Four\.\s*$/);
    await session.waitFor('[data-testid="reasoning-summary"]', { accept: (t) => /Thought for/.test(t) });
    await shot(session, "11-remote-reasoning");

    await chooseModel(session, id, "rate-limited");
    await send(session, "again");
    await nthReply(session, 3, "failed");
    await session.waitFor('[data-testid="reply-error"]', { accept: (t) => t.includes("asks to wait 7 s") });
    await session.waitFor('[data-testid="retry-reply"]', { accept: (t) => /Retry in \d+ s/.test(t) });
    await shot(session, "11-rate-limited");

    await chooseModel(session, id, "cut");
    await send(session, "tell me more");
    const cut = await nthReply(session, 4, "failed");
    assert.match(await session.text(cut), /The first words/);
    await session.waitFor('[data-testid="reply-error"]', { accept: (t) => t.includes("broke off in the middle of the reply") });
    await shot(session, "12-stream-cut");

    await session.click(await session.waitFor('[data-testid="open-settings"]'));
    await session.press(await session.waitFor('[data-testid="open-providers"]'));
    const fakeCard = await session.waitFor(`[data-testid="provider-card"][data-provider="${id}"]`);
    await fill(session, fakeCard, "provider-key", "sk-wrong-key-00");
    await session.press(await session.within(fakeCard, '[data-testid="save-provider"]'));
    await session.waitFor(`[data-testid="provider-card"][data-provider="${id}"] [data-testid="provider-key-storage"]`, { accept: (t) => /keychain|saved/i.test(t) });
    await session.click(await session.waitFor('[data-testid="close-settings"]'));
    await chooseModel(session, id, "echo");
    await send(session, "with the wrong key");
    await nthReply(session, 5, "failed");
    await session.waitFor('[data-testid="reply-error"]', { accept: (t) => t.includes("refused the API key (401)") && !t.includes("sk-wrong-key-00") });
    await session.waitFor('[data-testid="open-provider-settings"]');
    await shot(session, "13-bad-key");
    assert.ok(card);
  } finally {
    await session.close();
  }
});
