// make bench-app's first section: a cold start and the memory of a Hearth with no model.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { sleep } from "../tests/e2e/helpers.mjs";
import { Session, startDriver } from "../tests/e2e/webdriver.mjs";
import { median, round } from "./figures.mjs";
import { appProcessesOf, memoryOf, startedAtMs } from "./proc.mjs";

/** Starts of the app at rest (BENCH_REST_RUNS), each a new process on the same data folder. */
const REST_RUNS = Number(process.env.BENCH_REST_RUNS || 3);

/** A first start (no model, no chats: the welcome screen) and REST_RUNS - 1 more on the same data:
 *  from the app's process start to the welcome screen in the window; then, at rest (the caret no
 *  longer blinking, the engine process ended), the memory of every Hearth process. The hub is out
 *  of reach (the welcome says so). */
export async function atRest({ app, caretBlinksMs }) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "hearth-bench-rest-"));
  const driver = await startDriver({ ...process.env, HEARTH_DATA_DIR: dataDir, HF_ENDPOINT: "http://127.0.0.1:9" });
  const startsMs = [];
  let memory = null;
  try {
    for (let i = 0; i < REST_RUNS; i++) {
      const session = await Session.open(driver.base, app);
      try {
        const deadline = Date.now() + 60_000;
        while ((await session.findAll('[data-testid="welcome-import"]')).length === 0) {
          assert.ok(Date.now() < deadline, "the welcome screen did not appear in 60 s");
          await sleep(10);
        }
        startsMs.push(Date.now() - startedAtMs(appProcessesOf(app).app[0]));
        if (i === REST_RUNS - 1) {
          // At rest: the caret has stopped blinking, and the engine process, never asked for a
          // model, has ended (hearth-engine's REST_AFTER).
          const since = Date.now();
          await sleep(caretBlinksMs);
          while (appProcessesOf(app).engine.length > 0) {
            assert.ok(Date.now() - since < 90_000, "the engine process did not end at rest in 90 s");
            await sleep(500);
          }
          const pids = appProcessesOf(app);
          // Where it goes, mapping by mapping, for a person to read (BENCH_SMAPS_DIR=dir).
          if (process.env.BENCH_SMAPS_DIR) {
            for (const kind of ["app", "engine", "web", "network"]) {
              for (const pid of pids[kind]) fs.writeFileSync(path.join(process.env.BENCH_SMAPS_DIR, `${kind}-${pid}.smaps`), fs.readFileSync(`/proc/${pid}/smaps`));
            }
          }
          memory = Object.fromEntries(["app", "engine", "web", "network"].map((k) => [k, pids[k].map(memoryOf).reduce((a, m) => ({ rss: round(a.rss + m.rss, 1), pss: round(a.pss + m.pss, 1) }), { rss: 0, pss: 0 })]));
        }
      } finally {
        await session.close();
      }
    }
  } finally {
    await driver.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const sum = (field) => round(Object.values(memory).reduce((s, m) => s + m[field], 0), 1);
  console.error(`at rest: starts ${startsMs.map((ms) => Math.round(ms)).join(", ")} ms; memory by process ${JSON.stringify(memory)}`);
  return {
    cold_start_ms: round(startsMs[0], 0),
    start_ms: round(median(startsMs.slice(1).length ? startsMs.slice(1) : startsMs), 0),
    idle_pss_mb: sum("pss"),
    idle_rss_mb: sum("rss"),
    idle_memory_mb: memory,
  };
}
