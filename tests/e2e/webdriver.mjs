// A minimal W3C WebDriver client over fetch, enough to drive the real Hearth window through
// tauri-driver (which forwards to WebKitWebDriver).
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

/** Starts tauri-driver and its WebKitWebDriver on two free loopback ports (two drivers at once must
 *  not share the default 4445: the second would talk to the first one's app). The ports are picked
 *  here, not derived from the pid: a port another program (or a driver still closing) held made
 *  tauri-driver exit at once, and the test failed 10 s later with "did not start". A driver that
 *  exits before it answers is started again on other ports, up to three times.
 *  The driver leads its own process group, which its WebKitWebDriver, the apps that starts and
 *  their engines join: `stop()` ends them all. (tauri-driver, told to stop, kills only its
 *  WebKitWebDriver: an app still closing was left behind holding the test runner's stderr, and the
 *  runner, which waits for that pipe to close, waited as long as the app lived — a CI run hung
 *  until it was killed.) */
export async function startDriver(env) {
  const tries = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePortPair();
    const args = ["--port", String(port), "--native-port", String(port + 1)];
    const driver = spawn("tauri-driver", args, { env, stdio: ["ignore", "inherit", "inherit"], detached: true });
    groups.add(driver.pid);
    let exit = null;
    driver.once("exit", (code, signal) => (exit = signal ?? `exit code ${code}`));
    driver.once("error", (e) => (exit = e.message));
    const base = `http://127.0.0.1:${port}`;
    const stop = () => stopGroup(driver.pid);
    for (let i = 0; i < 300 && exit === null; i++) {
      try {
        const res = await fetch(`${base}/status`);
        if (res.ok) return { driver, base, stop };
      } catch {}
      await sleep(100);
    }
    const silent = exit === null; // read before stop(), whose SIGTERM ends it
    await stop();
    tries.push(`ports ${port}/${port + 1}: ${silent ? "no answer in 30 s" : exit}`);
    if (silent) break; // another start would only wait as long again
  }
  throw new Error(`tauri-driver did not start (${tries.join("; ")})`);
}

/** A port p where both p and p + 1 are free on loopback, from 20000–29999 (below Linux's ephemeral
 *  range, so no outgoing connection takes it meanwhile). */
async function freePortPair() {
  for (let i = 0; i < 100; i++) {
    const port = 20000 + Math.floor(Math.random() * 9999);
    if ((await portFree(port)) && (await portFree(port + 1))) return port;
  }
  throw new Error("no two free adjacent loopback ports in 20000–29999");
}

function portFree(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** The drivers' process groups not yet stopped: killed if this process ends first (they no
 *  longer share its group, so a Ctrl-C or the runner's SIGTERM would not reach them). */
const groups = new Set();
const killGroups = () => {
  for (const pgid of groups) signalGroup(pgid, "SIGKILL");
};
process.on("exit", killGroups);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    killGroups();
    process.exit(128 + (signal === "SIGINT" ? 2 : 15));
  });
}

const DRIVERS = new Set(["tauri-driver", "WebKitWebDriver"]);

/** The live processes of group `pgid`: { pid, name, state }. */
function groupMembers(pgid) {
  const members = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // "pid (name) state ppid pgrp ...": the name may hold spaces and parentheses.
    const close = stat.lastIndexOf(")");
    const [state, , pgrp] = stat.slice(close + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z") {
      members.push({ pid: Number(entry), name: stat.slice(stat.indexOf("(") + 1, close), state });
    }
  }
  return members;
}

function signalGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch {} // the group is gone
}

async function until(done, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** Ends a driver's group: an app whose window closed gets 10 s to finish on its own (it may be
 *  writing a chat's cache), then everything left is told to stop, then killed. An app that had to
 *  be stopped is named on stderr: closing its window should have ended it. */
async function stopGroup(pgid) {
  if (!groups.has(pgid)) return;
  await until(() => groupMembers(pgid).every((p) => DRIVERS.has(p.name)), 10_000);
  const left = groupMembers(pgid).filter((p) => !DRIVERS.has(p.name));
  if (left.length) console.error(`# still running 10 s after their session: ${JSON.stringify(left)}`);
  signalGroup(pgid, "SIGTERM");
  if (!(await until(() => groupMembers(pgid).length === 0, 5_000))) {
    console.error(`# killed after SIGTERM: ${JSON.stringify(groupMembers(pgid))}`);
    signalGroup(pgid, "SIGKILL");
    await until(() => groupMembers(pgid).length === 0, 5_000);
  }
  groups.delete(pgid);
}

export class Session {
  static async open(base, application) {
    const res = await call(base, "POST", "/session", {
      capabilities: { alwaysMatch: { "tauri:options": { application } } },
    });
    return new Session(base, res.sessionId);
  }

  constructor(base, id) {
    this.base = base;
    this.id = id;
  }

  cmd(method, path, body) {
    return call(this.base, method, `/session/${this.id}${path}`, body);
  }

  async findAll(css) {
    const found = await this.cmd("POST", "/elements", { using: "css selector", value: css });
    return found.map((e) => e[ELEMENT]);
  }

  /** Waits until `css` matches an element for which `accept(text)` holds; returns its id. */
  async waitFor(css, { timeoutMs = 60000, accept = () => true } = {}) {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      try {
        for (const id of await this.findAll(css)) {
          last = await this.text(id);
          if (accept(last)) return id;
        }
      } catch (e) {
        // The page re-rendered while it was searched or read (a streaming reply, a list that
        // refreshed): look again.
        if (!String(e.message).includes("stale element")) throw e;
      }
      await sleep(100);
    }
    throw new Error(`timed out waiting for ${css} (last text: ${JSON.stringify(last)})${await this.scene()}`);
  }

  /** What the window shows when a wait timed out, to tell why: a screenshot in
   *  tests/e2e/output/timeout-*.png and the end of its text. Best effort: the window may be gone. */
  async scene() {
    try {
      const file = path.join(import.meta.dirname, "output", `timeout-${Date.now()}.png`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, await this.screenshot());
      const text = await this.cmd("POST", "/execute/sync", { script: "return document.body.innerText", args: [] });
      const lines = String(text).slice(-1500).split(/\s*\n\s*/).filter(Boolean);
      return `; the window (${file}) shows, at its end: ${lines.join(" | ")}`;
    } catch {
      return "";
    }
  }

  /** The element's rendered text. (WebKitWebDriver's own text endpoint answers "" in Tauri's
   *  frozen-prototype page, so read innerText through a script.) */
  text(id) {
    return this.cmd("POST", "/execute/sync", { script: "return arguments[0].innerText", args: [{ [ELEMENT]: id }] });
  }

  attribute(id, name) {
    return this.cmd("GET", `/element/${id}/attribute/${name}`);
  }

  click(id) {
    return this.cmd("POST", `/element/${id}/click`, {});
  }

  /** Clicks through the page's own click(): for controls shown on hover, which WebDriver's
   *  pointer click refuses as not interactable. */
  press(id) {
    return this.cmd("POST", "/execute/sync", { script: "arguments[0].click()", args: [{ [ELEMENT]: id }] });
  }

  /** The first element matching `css` inside element `id`. */
  async within(id, css) {
    const found = await this.cmd("POST", `/element/${id}/element`, { using: "css selector", value: css });
    return found[ELEMENT];
  }

  clear(id) {
    return this.cmd("POST", `/element/${id}/clear`, {});
  }

  type(id, text) {
    return this.cmd("POST", `/element/${id}/value`, { text });
  }

  /** The window as a PNG. Without compositing (no GPU) WebKitWebDriver's screenshot of a page
   *  where nothing changes (a menu open, no caret blinking) never came back (CI hung 300 s); as it
   *  appears to wait for the next painted update, a one-pixel, all-but-transparent dot is shown
   *  just after the request, and removed — with it, every screenshot returns. */
  async screenshot() {
    await this.cmd("POST", "/execute/sync", {
      script: `setTimeout(() => {
        const dot = document.createElement("div");
        dot.style.cssText = "position:fixed;left:0;top:0;width:1px;height:1px;background:rgba(0,0,0,0.01);pointer-events:none";
        document.body.append(dot);
        setTimeout(() => dot.remove(), 500);
      }, 50)`,
      args: [],
    });
    return Buffer.from(await this.cmd("GET", "/screenshot"), "base64");
  }

  close() {
    return call(this.base, "DELETE", `/session/${this.id}`);
  }
}

export const KEYS = { enter: "\uE007", backspace: "\uE003" };

async function call(base, method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok || (json.value && json.value.error)) {
    throw new Error(`${method} ${path}: ${JSON.stringify(json.value ?? json)}`);
  }
  return "value" in json ? json.value : json;
}
