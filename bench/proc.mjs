// What /proc says of the app bench's processes: which they are, their CPU time, when they
// started, their memory.
import { spawnSync } from "node:child_process";
import assert from "node:assert/strict";
import fs from "node:fs";

import { round } from "./figures.mjs";

const TICK_MS = 1000 / 100; // USER_HZ
export function cpuMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime + stime
  } catch {
    return 0; // gone
  }
}
export function processes() {
  const all = [];
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      all.push({ pid: Number(pid), ppid, comm, cmdline });
    } catch {}
  }
  return all;
}
/** The app's processes: the app, its web process(es), the engine process, and Xvfb; and the
 *  WebDriver servers that type the bench's keys (tauri-driver, WebKitWebDriver), which a person
 *  typing does not run, and the fake provider, whose work a remote API does on its own machine. */
export function appProcessesOf(binary) {
  const all = processes();
  const app = all.find((p) => p.cmdline[0] === binary && !p.cmdline.includes("--hearth-engine-host"));
  assert.ok(app, "the app process is not running");
  const children = all.filter((p) => p.ppid === app.pid);
  return {
    app: [app.pid],
    web: children.filter((p) => p.comm.startsWith("WebKitWebProces")).map((p) => p.pid),
    network: children.filter((p) => p.comm.startsWith("WebKitNetwork")).map((p) => p.pid),
    engine: children.filter((p) => p.cmdline.includes("--hearth-engine-host")).map((p) => p.pid),
    xvfb: all.filter((p) => p.comm === "Xvfb").map((p) => p.pid),
    driver: all.filter((p) => p.comm === "tauri-driver" || p.comm.startsWith("WebKitWebDrive")).map((p) => p.pid),
    // The bench's stand-in for a remote API: on a user's machine its share is on the server.
    fake: all.filter((p) => p.comm === "fake_provider").map((p) => p.pid),
  };
}

const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim() || 100);

/** When process `pid` started, in ms since the epoch (to a clock tick): its start after boot
 *  (/proc/PID/stat) against the time since boot now (/proc/uptime). */
export function startedAtMs(pid) {
  const now = Date.now();
  const uptime = Number(fs.readFileSync("/proc/uptime", "utf8").split(" ")[0]);
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]); // field 22, starttime
  return now - (uptime - ticks / CLK_TCK) * 1000;
}

/** Resident (RSS) and proportional (PSS: each shared page divided among the processes that map
 *  it, so that a sum over processes counts a library once) memory of a process, in MB. */
export function memoryOf(pid) {
  const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (field) => Number(rollup.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))[1]);
  return { rss: round(kb("Rss") / 1024, 1), pss: round(kb("Pss") / 1024, 1) };
}
