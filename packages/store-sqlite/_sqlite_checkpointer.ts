/**
 * The embedded store's checkpointer, run in its own worker thread. SQLite in
 * WAL mode copies the log back into the database file now and then (a
 * checkpoint: page writes and an fsync, several milliseconds). Left to the
 * serving connection, it runs inside whichever commit crosses the threshold —
 * on the event-loop thread, stalling every request in flight. Here a second
 * connection to the same file checkpoints on a timer instead, in PASSIVE mode
 * (it never waits for, or blocks, a reader or a writer), while the serving
 * connection's automatic checkpoints are off.
 *
 * The same connection answers the store's long reads (a page of audit rows:
 * up to a few milliseconds of SQLite work each) so that they, too, run off
 * the thread that answers requests.
 *
 * Protocol: `{ path, intervalMs }` starts it; it answers `"ready"` once the
 * file is open, and `"copied"` after a tick that copied a long log through
 * (see `checkpoint`); `{ read, sql, args }` runs one query and answers `{ read,
 * rows }` or `{ read, error }`; `{ checkpoint }` runs a tick's checkpoint now
 * and answers `{ checkpointed }` (a long write waits for it between its
 * steps); `"close"` checkpoints a last time and ends the thread.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import { DatabaseSync } from "node:sqlite";

interface Start {
  path: string;
  intervalMs: number;
}

let db: DatabaseSync | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;

/** Passes per tick: each copies what the serving connection wrote during the last. */
const PASSES = 8;

/**
 * The serving connection restarts the log from its start only when it
 * begins a commit with every frame in it copied back; frames it appends
 * while a pass copies keep that from happening. So a tick repeats the pass —
 * each one shorter, as it copies only what arrived during the one before —
 * until the log is copied through. Under a steady stream of commits even
 * that moment falls during a commit, not before one, and the log never
 * restarts (the load test's log reached 27 MB; back-to-back commits, 2 GB in
 * 15 s). So when a tick has copied the log through and it is still past
 * SQLite's own threshold, it says `"copied"`: the store then copies what
 * arrived since (a few frames) on the serving connection between two commits,
 * and its next commit starts the log over. A tick that finds the log that
 * long also brings the next one closer (a fifth of the interval), so a log
 * that grows fast is copied and restarted as often as it needs.
 *
 * Returns whether the log was past that threshold.
 */
const checkpoint = (): boolean => {
  try {
    let before = -1;
    for (let pass = 0; pass < PASSES && db !== undefined; pass++) {
      const r = db.prepare("PRAGMA wal_checkpoint(PASSIVE)").get() as {
        log: number;
        checkpointed: number;
      };
      if (r.log <= 0) return false;
      const through = r.checkpointed >= r.log;
      // Done once a pass finds the log copied through with nothing new in it.
      if ((through && r.log === before) || pass === PASSES - 1) {
        const long = r.log >= RESTART_FRAMES;
        if (through && long) self.postMessage("copied");
        return long;
      }
      before = r.log;
    }
  } catch {
    // Busy or locked: the next tick tries again.
  }
  return false;
};

/** Runs a tick every `intervalMs`, or sooner after one that found a long log. */
const tick = (intervalMs: number) => {
  const soon = checkpoint();
  if (db !== undefined) timer = setTimeout(() => tick(intervalMs), next(intervalMs, soon));
};
/** The first tick comes soon too: it takes over from the serving connection's checkpoints. */
const next = (intervalMs: number, soon: boolean) =>
  soon ? Math.max(10, intervalMs / 5) : intervalMs;

/** Log frames past which a tick that copied the log through asks for its restart (SQLite's checkpoint threshold). */
const RESTART_FRAMES = 1_000;

interface Read {
  read: number;
  sql: string;
  args: (string | number)[];
}

interface CatchUp {
  checkpoint: number;
}

self.onmessage = (e: MessageEvent<Start | Read | CatchUp | "close">) => {
  if (typeof e.data === "object" && "checkpoint" in e.data) {
    checkpoint();
    self.postMessage({ checkpointed: e.data.checkpoint });
    return;
  }
  if (typeof e.data === "object" && "read" in e.data) {
    const { read, sql, args } = e.data;
    try {
      if (db === undefined) throw new Error("the reader is closed");
      self.postMessage({ read, rows: db.prepare(sql).all(...args) });
    } catch (err) {
      self.postMessage({ read, error: String(err) });
    }
    return;
  }
  if (e.data === "close") {
    clearTimeout(timer);
    checkpoint();
    db?.close();
    db = undefined;
    self.postMessage("closed");
    self.close();
    return;
  }
  const { path, intervalMs } = e.data;
  db = new DatabaseSync(path);
  db.exec("PRAGMA busy_timeout = 1000");
  timer = setTimeout(() => tick(intervalMs), next(intervalMs, true));
  self.postMessage("ready");
};
