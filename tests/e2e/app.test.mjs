// End to end: the real Hearth binary in a real WebKit webview with the real SmolLM2 model and a
// fresh data dir: the user's first journey (send, stop, regenerate, a setting, restart), then
// the history tools. A screenshot per step lands in tests/e2e/output/.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  REPLY as reply,
  appUnderTest,
  bmp,
  nonEmpty,
  nthReply,
  pasteImage,
  replyTextWith,
  replyWith,
  send,
  shot,
  sleep,
  thumbnailDrawn,
  withProjector,
} from "./helpers.mjs";
import { KEYS, Session } from "./webdriver.mjs";

// The default model with the test's projector beside it: it reads images too.
const ctx = appUnderTest("hearth-e2e-", { prepare: withProjector });

/** A one-page PDF showing `text` in Helvetica, its cross-reference table counted as a writer does. */
function pdfWithText(text) {
  const stream = `BT /F1 12 Tf 72 700 Td (${text.replace(/[()\\]/g, "\\$&")}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
  ];
  let body = "%PDF-1.4\n";
  const offsets = objects.map((object, i) => {
    const at = body.length;
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
    return at;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  body += offsets.map((at) => `${String(at).padStart(10, "0")} 00000 n \n`).join("");
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, "latin1");
}

/** The one reply on show, once its data-status is `status`; returns it. */
test("first start → default model → send → streamed reply → stop → regenerate → setting applies → restart keeps history", async () => {
  let session = await Session.open(ctx.driver.base, ctx.app);
  let stopped;
  try {
    // First start on a fresh data dir: the model in the models folder is loaded as the default.
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2") && !t.includes("Loading") });
    // What a new user sees first tells them what to do.
    await session.waitFor('[data-testid="message-list"]', { accept: (t) => /new chat/i.test(t) });
    await sleep(500); // the empty state fades in
    await shot(session, "journey-01-first-start");

    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    await send(session, "Write a long story about a lighthouse keeper and the sea.");
    await session.waitFor('[data-testid="message"][data-role="user"]', { accept: (t) => t.includes("lighthouse keeper") });
    // Streamed: text shows while the reply is still being written.
    await replyTextWith(session, "streaming", (t) => t.trim().split(/\s+/).length >= 3);
    await shot(session, "journey-02-streaming");

    await session.click(await session.waitFor('[data-testid="stop"]'));
    const done = await replyWith(session, "stopped", nonEmpty);
    stopped = (await session.text(await session.within(done, '[data-testid="message-content"]'))).trim();
    assert.match(stopped, /\w/);
    await shot(session, "journey-03-stopped");

    // Regenerate the stopped reply: a second version, 2/2, streaming; stopped again (a whole story
    // would take minutes on a busy machine).
    await session.press(await session.waitFor(`${reply} [data-testid="action-regenerate"]`));
    await session.waitFor(`${reply}[data-status="streaming"] [data-testid="branch-position"]`, { accept: (t) => t.includes("2/2") });
    await replyTextWith(session, "streaming", (t) => t.trim().split(/\s+/).length >= 3);
    await session.click(await session.waitFor('[data-testid="stop"]'));
    const second = await replyWith(session, "stopped", nonEmpty);
    assert.match(await session.text(await session.within(second, '[data-testid="branch-position"]')), /2\/2/);
    // Its stats line: tokens, speed, time to first token.
    const stats = await session.text(await session.within(second, '[data-testid="message-stats"]'));
    for (const part of [/\d+ tokens/, /[\d.]+ tok\/s/, /TTFT \d/]) assert.match(stats, part);
    await shot(session, "journey-04-regenerated");

    // A setting changed in the panel shapes the next reply: at most 4 tokens.
    await session.click(await session.waitFor('[data-testid="open-settings"]'));
    const maxTokens = await session.waitFor('[data-testid="field-maxTokens"]');
    await session.clear(maxTokens);
    await session.type(maxTokens, "4");
    await session.waitFor('[data-testid="settings-status"]', { accept: (t) => t.includes("Saved") });
    await shot(session, "journey-05-settings");
    await session.click(await session.waitFor('[data-testid="close-settings"]'));
    await send(session, "Tell me about whales.");
    await session.waitFor('[data-testid="message"][data-role="user"]', { accept: (t) => t.includes("whales") });
    await session.waitFor(`${reply}[data-status="complete"] [data-testid="message-stats"]`, { accept: (t) => /\b4 tokens\b/.test(t) });
    await shot(session, "journey-06-setting-applied");
  } finally {
    await session.close();
  }

  // Restart: the chat, both questions and both versions of the first reply come back from SQLite.
  session = await Session.open(ctx.driver.base, ctx.app);
  try {
    await session.click(await session.waitFor('[data-testid="chat-item"]'));
    await session.waitFor('[data-testid="message"][data-role="user"]', { accept: (t) => t.includes("whales") });
    const first = await session.waitFor('[data-testid="message"][data-role="user"]', { accept: (t) => t.includes("lighthouse keeper") });
    assert.ok(first);
    // The first reply comes back at its newest version; the arrow shows the first, stopped one.
    const position = `${reply}[data-status="stopped"] [data-testid="branch-position"]`;
    await session.waitFor(position, { accept: (t) => t.includes("2/2") });
    await session.press(await session.waitFor(`${reply} [data-testid="branch-prev"]`));
    await session.waitFor(position, { accept: (t) => t.includes("1/2") });
    await session.waitFor(`${reply}[data-status="stopped"] [data-testid="message-content"]`, { accept: (t) => t.trim() === stopped });
    await shot(session, "journey-07-after-restart");
  } finally {
    await session.close();
  }
});

test("history in the real app: regenerate, switch versions, edit, continue, search", async () => {
  // Replies are capped at 4 tokens by the previous test's setting: short, and cut at the limit.
  const session = await Session.open(ctx.driver.base, ctx.app);
  const position = async (css) => (await session.text(await session.within(await session.waitFor(css), '[data-testid="branch-position"]'))).trim();
  try {
    await session.waitFor('[data-testid="model-name"]', { accept: (t) => t.includes("SmolLM2") });
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    const composer = await session.waitFor('[data-testid="composer"]');
    await session.type(composer, "Name a colour.");
    await session.type(composer, KEYS.enter);
    await session.waitFor(`${reply}[data-status="complete"]`, { accept: nonEmpty });

    // Regenerate: a second version of the reply, shown as 2/2; the arrow goes back to 1/2.
    await session.press(await session.waitFor('[data-testid="action-regenerate"]'));
    await session.waitFor(`${reply}[data-status="complete"] [data-testid="branch-position"]`, { accept: (t) => t.includes("2/2") });
    await session.press(await session.waitFor(`${reply} [data-testid="branch-prev"]`));
    await session.waitFor(`${reply} [data-testid="branch-position"]`, { accept: (t) => t.includes("1/2") });

    // Edit the question: a second version of it with its own reply.
    await session.press(await session.waitFor('[data-testid="message"][data-role="user"] [data-testid="action-edit"]'));
    const editor = await session.waitFor('[data-testid="edit-input"]');
    await session.clear(editor);
    await session.type(editor, "Name a fruit.");
    await session.press(await session.waitFor('[data-testid="edit-save"]'));
    await session.waitFor('[data-testid="message"][data-role="user"]', { accept: (t) => t.includes("Name a fruit.") });
    assert.equal(await position('[data-testid="message"][data-role="user"]'), "2/2");
    const cut = await session.waitFor(`${reply}[data-status="complete"]`, { accept: (t) => /\b4 tokens\b/.test(t) });
    const before = (await session.text(await session.within(cut, '[data-testid="message-content"]'))).trim();

    // The reply stopped at its length limit: Continue writes on in the same message.
    await session.press(await session.waitFor('[data-testid="continue"]'));
    await session.waitFor(`${reply}[data-status="complete"] [data-testid="message-content"]`, {
      accept: (t) => t.trim().length > before.length && t.trim().startsWith(before),
    });
    await shot(session, "history-1-branches");

    // Search finds the edited question and opens the chat at it.
    const search = await session.waitFor('[data-testid="search-input"]');
    await session.type(search, "fruit");
    const hit = await session.waitFor('[data-testid="search-result"]', { accept: (t) => t.includes("fruit") });
    await session.within(hit, "mark");
    await shot(session, "history-2-search");
    await session.click(hit);
    await session.waitFor('[data-testid="message"][data-role="user"]', { accept: (t) => t.includes("Name a fruit.") });

    // Documents dropped on a new chat: a PDF is attached (its chip), a binary file is refused on
    // its chip in words; the question goes with the PDF, which the sent message shows.
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    const files = fs.mkdtempSync(path.join(os.tmpdir(), "hearth-e2e-files-"));
    const pdf = path.join(files, "kettle.pdf");
    fs.writeFileSync(pdf, pdfWithText("The Kettle K-9 holds 1.7 litres."));
    fs.writeFileSync(path.join(files, "program.txt"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0]));
    const drop = (paths) => session.cmd("POST", "/execute/async", {
      script: "const done = arguments[arguments.length - 1]; window.__hearthDropPaths(arguments[0]).then(() => done(true), (e) => done(String(e)));",
      args: [paths],
    });
    assert.equal(await drop([pdf, path.join(files, "program.txt")]), true);
    await session.waitFor('[data-testid="composer-attachments"] [data-testid="attachment"][data-status="attached"]', { accept: (t) => t.includes("kettle.pdf") });
    await session.waitFor('[data-testid="attachment"][data-status="refused"]', { accept: (t) => t.includes("program.txt looks like a binary file, not text") });
    await shot(session, "attachments-1-composer");
    await session.click(await session.waitFor('[data-testid="attachment"][data-status="refused"] [data-testid="attachment-remove"]'));
    await send(session, "How much does it hold?");
    await session.waitFor('[data-testid="message"][data-role="user"] [data-testid="message-attachments"]', { accept: (t) => t.includes("kettle.pdf") });
    await session.waitFor(`${reply}[data-status="complete"]`, { accept: nonEmpty });
    // The engine's count of the question with its PDF, said under the file.
    await session.waitFor('[data-testid="message-read-tokens"]', { accept: (t) => /^Read whole · [\d,]+ tokens$/.test(t.trim()) });
    // And the PDF's own count, on its chip.
    await session.waitFor('[data-testid="message-attachments"] [data-testid="attachment-detail"]', { accept: (t) => /· [\d,]+ tokens$/.test(t.trim()) });
    await shot(session, "attachments-2-sent");
    fs.rmSync(files, { recursive: true, force: true });

    // A document too long for the model's context: the question is given the passages that best
    // answer it, and the reply lists them; one opens to its text.
    const handbook = path.resolve(import.meta.dirname, "../../src-tauri/crates/hearth-store/tests/data/retrieval/handbook.md");
    assert.equal(await drop([handbook]), true);
    await session.waitFor('[data-testid="composer-attachments"] [data-testid="attachment"][data-status="attached"]', { accept: (t) => t.includes("handbook.md") });
    await send(session, "How long can I borrow a drill from the tool library?");
    await nthReply(session, 2, "complete");
    const sources = await session.waitFor('[data-testid="sources"]', { accept: (t) => t.includes("from handbook.md") });
    await session.click(await session.within(sources, "summary"));
    await session.click(await session.waitFor('[data-testid="source"]'));
    await session.waitFor('[data-testid="source-text"]', { accept: (t) => t.includes("Drills may be borrowed for up to five days") });
    await session.waitFor('[data-testid="message-read-tokens"]', { accept: (t) => /^Read by passages · [\d,]+ tokens$/.test(t.trim()) });
    await shot(session, "attachments-3-sources");

    // An image dropped on a new chat goes to the model, which reads it through its projector:
    // the chip and the sent message name it, and the reply says how many tokens were read.
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    const images = fs.mkdtempSync(path.join(os.tmpdir(), "hearth-e2e-images-"));
    const picture = path.join(images, "sunset.bmp");
    fs.writeFileSync(picture, bmp(64, 48, (x, y) => [200 + (x % 50), 80 + y, 40]));
    assert.equal(await drop([picture]), true);
    await session.waitFor('[data-testid="composer-attachments"] [data-testid="attachment"][data-status="attached"]', { accept: (t) => t.includes("sunset.bmp") });
    await shot(session, "attachments-4-image");
    await send(session, "What is in the picture?");
    await session.waitFor('[data-testid="message"][data-role="user"] [data-testid="message-attachments"]', { accept: (t) => t.includes("sunset.bmp") });
    await session.waitFor(`${reply}[data-status="complete"]`, { accept: nonEmpty });
    // The projector reads the image as 16 tokens, counted with the question's words.
    await session.waitFor('[data-testid="message-read-tokens"]', { accept: (t) => Number(/^Read with its images · ([\d,]+) tokens$/.exec(t.trim())?.[1].replace(/,/g, "")) > 16 });
    await shot(session, "attachments-5-image-sent");
    fs.rmSync(images, { recursive: true, force: true });

    // A screenshot pasted into the message box in the real window: named by its type, its chip
    // shows its thumbnail (a data: URL the app's CSP allows), and it goes with the next question.
    assert.equal(await pasteImage(session), true, "the app takes a pasted image");
    await session.waitFor('[data-testid="composer-attachments"] [data-testid="attachment"][data-status="attached"]', { accept: (t) => t.includes("pasted-image-1.png") });
    await thumbnailDrawn(session);
    await shot(session, "attachments-6-pasted");
    await send(session, "And this one?");
    await nthReply(session, 2, "complete");
    await session.waitFor('[data-testid="message-read-tokens"]', { accept: (t) => Number(/^Read with its images · ([\d,]+) tokens$/.exec(t.trim())?.[1].replace(/,/g, "")) > 16 });
  } finally {
    await session.close();
  }
});
