// End to end: Hearth as a user installs it. The build the suite already has, bundled into a .deb
// (scripts/e2e.sh: PROFILE=debug BUNDLE_ONLY=1 scripts/package.sh), installed with `dpkg -i`,
// started from its desktop entry's Exec line with the platform's own data folders (no
// HEARTH_DATA_DIR), the model imported through the welcome screen and the system's open dialog
// (GTK's, typed into with xdotool), a reply, quit; `dpkg -r` keeps the user's data, and the
// reinstalled app opens the same history; a .gguf opened while it runs is handed over to it and
// loaded. The hub is out of reach: the welcome screen says so. Then the update: a local server
// announces the same code with its version raised, signed with the tests' key; a tampered package
// is refused in words, the signed one installed (sudo dpkg -i, as tauri-plugin-updater does) and
// Hearth restarted into it, the history still there; with the server down, nothing changes.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";

import { nthReply, send, shot, sleep } from "./helpers.mjs";
import { Session, startDriver } from "./webdriver.mjs";

const deb = process.env.HEARTH_DEB;
const nextDeb = process.env.HEARTH_NEXT_DEB;
const nextVersion = process.env.HEARTH_NEXT_VERSION;
const model = process.env.HEARTH_TEST_MODEL;
const DESKTOP_ENTRY = "/usr/share/applications/Hearth.desktop";
const home = fs.mkdtempSync(path.join(os.tmpdir(), "hearth-e2e-home-"));
// Where an installed Hearth keeps its files for this user: $XDG_DATA_HOME/<identifier>.
const dataDir = path.join(home, ".local/share/dev.hearth.desktop");
const root = process.getuid?.() === 0;
let driver;

const run = (cmd, args) => execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const installed = () => fs.existsSync("/usr/bin/hearth");

before(async () => {
  if (!root) return;
  for (const [name, file] of Object.entries({ deb, nextDeb, model })) {
    assert.ok(file && fs.existsSync(file), `${name} (${file}) must exist: run scripts/e2e.sh`);
  }
  // A run killed mid-test (a watchdog, a cancelled CI job) leaves its package installed; removing
  // it keeps every user's data (dpkg -r, as the test below checks), and this test needs a clean slate.
  if (installed()) {
    const owner = spawnSync("dpkg", ["-S", "/usr/bin/hearth"], { encoding: "utf8" });
    assert.match(owner.stdout ?? "", /^hearth:/, "/usr/bin/hearth belongs to no package this test can remove");
    console.log("a Hearth package was left installed (an earlier run ended mid-test): removing it first");
    run("dpkg", ["-r", "hearth"]);
  }
  assert.ok(!installed(), "the Hearth left installed on this machine could not be removed");
  const env = { ...process.env, HOME: home, XDG_DATA_HOME: path.join(home, ".local/share"), XDG_CONFIG_HOME: path.join(home, ".config"), XDG_CACHE_HOME: path.join(home, ".cache"), HF_ENDPOINT: "http://127.0.0.1:9" };
  delete env.HEARTH_DATA_DIR;
  delete env.HF_HUB_CACHE;
  driver = await startDriver(env);
  driver.env = env;
});

after(async () => {
  await driver?.stop();
  if (root && installed()) run("dpkg", ["-r", "hearth"]);
  fs.rmSync(home, { recursive: true, force: true });
});

/** The program the desktop entry starts: its Exec line without the field codes, found on the PATH. */
function desktopExec() {
  const entry = fs.readFileSync(DESKTOP_ENTRY, "utf8");
  const exec = entry.match(/^Exec=(.*)$/m)?.[1];
  assert.ok(exec, `${DESKTOP_ENTRY} has an Exec line`);
  const [program] = exec.split(/\s+/).filter((word) => !/^%[fFuUick]$/.test(word));
  return program.includes("/") ? program : run("sh", ["-c", `command -v ${program}`]).trim();
}

/** Picks `file` in the GTK open dialog titled `title`: its location field (Ctrl+L), the path, Enter.
 *  Keys go to the focused window (XTEST): GTK ignores keys sent to a window by name. */
async function pickInDialog(title, file) {
  const xdo = (...args) => run("xdotool", args).trim();
  const window = xdo("search", "--sync", "--onlyvisible", "--name", title).split("\n")[0];
  await sleep(1000); // mapped is not yet drawn: keys sent before GTK realized its widgets are lost
  xdo("windowfocus", "--sync", window);
  xdo("key", "--clearmodifiers", "ctrl+l");
  await sleep(300);
  xdo("type", "--delay", "15", file);
  await sleep(300);
  xdo("key", "Return");
}

test("install the .deb, first run from the desktop entry: import through the welcome screen, chat; remove keeps the data", { skip: !root && "dpkg -i needs root" }, async () => {
  run("dpkg", ["-i", deb]);
  assert.ok(installed(), "dpkg -i put /usr/bin/hearth in place");
  assert.ok(fs.existsSync("/usr/bin/hearth-cli"), "and hearth-cli on the PATH");
  const app = desktopExec();
  assert.equal(app, "/usr/bin/hearth");

  let session = await Session.open(driver.base, app);
  try {
    await session.waitFor('[data-testid="welcome"]', { accept: (t) => t.includes("Welcome to Hearth") });
    // The hub cannot be reached: the welcome screen says so and offers the file.
    await session.waitFor('[data-testid="starter-offline"]', { timeoutMs: 30_000 });
    await sleep(400); // the buttons' colour transitions
    await shot(session, "30-installed-welcome-offline");
    // The dialog blocks nothing here: the click returns, the dialog opens beside the window.
    await session.click(await session.waitFor('[data-testid="welcome-import"]'));
    await pickInDialog("Import a GGUF model", model);
    await session.waitFor('[data-testid="no-chats"]', { accept: (t) => t.includes("No chats yet"), timeoutMs: 60_000 });
    await session.click(await session.waitFor('[data-testid="empty-new-chat"]'));
    await send(session, "Name a colour.");
    await nthReply(session, 1, "complete");
    await shot(session, "31-installed-first-reply");
  } finally {
    await session.close();
  }
  await sleep(500); // the app writes its last state as it quits
  assert.ok(fs.existsSync(path.join(dataDir, "hearth.db")), `the history is in ${dataDir}`);

  run("dpkg", ["-r", "hearth"]);
  assert.ok(!installed(), "dpkg -r removed the program");
  assert.ok(fs.existsSync(path.join(dataDir, "hearth.db")), "and kept the history");

  // Installed again: the same chat, the same model.
  run("dpkg", ["-i", deb]);
  session = await Session.open(driver.base, desktopExec());
  try {
    await session.click(await session.waitFor('[data-testid="chat-item"]'));
    await session.waitFor('[data-testid="message"][data-role="user"]', { accept: (t) => t.includes("Name a colour.") });
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("SmolLM2"), timeoutMs: 60_000 });

    // A .gguf opened from the file manager while Hearth runs: the second launch hands it over
    // and ends; the running Hearth imports and loads it, the model of the chats to come (the open
    // chat keeps its own).
    const other = path.join(home, "Downloads", "handed-over.gguf");
    fs.mkdirSync(path.dirname(other), { recursive: true });
    fs.copyFileSync(model, other);
    const second = spawnSync(desktopExec(), [other], { env: driver.env, timeout: 30_000, encoding: "utf8" });
    assert.equal(second.status, 0, `the second launch ended by itself: ${second.error ?? second.stderr}`);
    await session.click(await session.waitFor('[data-testid="new-chat"]'));
    await session.waitFor('[data-testid="model-switcher"]', { accept: (t) => t.includes("handed-over"), timeoutMs: 60_000 });
    await shot(session, "32-installed-handed-over");
  } finally {
    await session.close();
  }
});

/** The update server: the manifest, and the package (with a byte changed while `tampered`). */
async function updateServer() {
  const signature = fs.readFileSync(`${nextDeb}.sig`, "utf8").trim();
  const good = fs.readFileSync(nextDeb);
  const bad = Buffer.from(good);
  bad[bad.length - 5000] ^= 0xff;
  const served = { tampered: true };
  const server = http.createServer((req, res) => {
    const base = `http://127.0.0.1:${server.address().port}`;
    if (req.url === "/latest.json") {
      const entry = { url: `${base}/hearth.deb`, signature };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ version: nextVersion, notes: "The same Hearth, one version on.", pub_date: "2026-11-29T12:00:00Z", platforms: { "linux-x86_64-deb": entry, "linux-x86_64": entry } }));
    } else if (req.url === "/hearth.deb") {
      res.setHeader("content-length", String(good.length));
      res.end(served.tampered ? bad : good);
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, served, endpoint: `http://127.0.0.1:${server.address().port}/latest.json` };
}

/** The running app's pids (not its engine): /usr/bin/hearth processes. */
function hearthPids() {
  return fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d)).filter((pid) => {
    try {
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      return args[0] === "/usr/bin/hearth" && !args.includes("--hearth-engine-host");
    } catch {
      return false;
    }
  }).map(Number);
}

async function openUpdates(session) {
  await session.click(await session.waitFor('[data-testid="open-settings"]'));
  await session.click(await session.waitFor('[data-testid="open-updates"]'));
  await session.waitFor('[data-testid="updates-check"]');
}

test("the installed Hearth updates itself from a signed package and keeps the history", { skip: !root && "dpkg -i needs root" }, async () => {
  assert.ok(installed(), "the first test left Hearth installed");
  const installedVersion = () => run("dpkg-query", ["-W", "-f=${Version}", "hearth"]).trim();
  const current = installedVersion();
  assert.notEqual(current, nextVersion);
  const { server, served, endpoint } = await updateServer();
  try {
    let session = await Session.open(driver.base, desktopExec());
    const before = hearthPids();
    let restarted = [];
    try {
      await openUpdates(session);
      const field = await session.waitFor('[data-testid="updates-endpoint"]');
      await session.clear(field);
      await session.type(field, `${endpoint}\uE007`);
      await session.click(await session.waitFor('[data-testid="updates-check"]'));
      await session.waitFor('[data-testid="update-dialog"]', { accept: (t) => t.includes(`Hearth ${nextVersion} is available`) });
      await shot(session, "33-installed-update-dialog");
      // The package changed on the way: refused, this version untouched.
      await session.click(await session.waitFor('[data-testid="update-install"]'));
      await session.waitFor('[data-testid="update-error"]', { accept: (t) => t.includes("does not match its signature"), timeoutMs: 60_000 });
      assert.equal(installedVersion(), current);
      // The signed package: installed, and Hearth restarts into it. (This window stays open
      // meanwhile: closing it would end the app before its package tool is done.)
      served.tampered = false;
      await session.click(await session.waitFor('[data-testid="update-install"]'));
      // Restarted: the old app has quit and a new one runs. (A new pid while the old app lives
      // may be one of its children between fork and exec, which still reads /usr/bin/hearth.)
      const deadline = Date.now() + 120_000;
      const alive = (pid) => {
        try {
          return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8")); // a zombie has quit
        } catch {
          return false;
        }
      };
      while (before.some(alive) || (restarted = hearthPids().filter((pid) => !before.includes(pid))).length === 0) {
        assert.ok(Date.now() < deadline, "Hearth did not restart into the update in 2 minutes");
        await sleep(200);
      }
      assert.equal(installedVersion(), nextVersion);
    } finally {
      await session.close().catch(() => {}); // its app has ended
    }
    // The restarted Hearth, ended here to drive a fresh one.
    const deadline = Date.now() + 30_000;
    for (const pid of restarted) process.kill(pid, "SIGTERM");
    while (hearthPids().some((pid) => restarted.includes(pid))) {
      assert.ok(Date.now() < deadline, "the restarted Hearth did not quit");
      await sleep(200);
    }

    // The new version opens the old history; with the update server down nothing changes.
    server.close();
    session = await Session.open(driver.base, desktopExec());
    try {
      await session.click(await session.waitFor('[data-testid="chat-item"]', { accept: (t) => t.includes("Name a colour.") }));
      await session.waitFor('[data-testid="message"][data-role="user"]', { accept: (t) => t.includes("Name a colour.") });
      await openUpdates(session);
      await session.waitFor('[data-testid="settings-panel"]', { accept: (t) => t.includes(`Hearth ${nextVersion}.`) });
      await session.click(await session.waitFor('[data-testid="updates-check"]'));
      await session.waitFor('[data-testid="updates-checked"]', { accept: (t) => t.includes("could not be reached") });
      await shot(session, "34-installed-updated");
    } finally {
      await session.close();
    }
  } finally {
    server.close();
  }
});
