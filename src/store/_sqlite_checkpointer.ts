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
 * file is open; `{ read, sql, args }` runs one query and answers `{ read,
 * rows }` or `{ read, error }`; `"close"` checkpoints a last time and ends
 * the thread.
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
let timer: ReturnType<typeof setInterval> | undefined;

/** Passes per tick: each copies what the serving connection wrote during the last. */
const PASSES = 8;

/**
 * The serving connection restarts the log from its start only once every
 * frame in it has been copied back; frames it appends while a pass copies
 * keep that from happening. So a tick repeats the pass — each one shorter,
 * as it copies only what arrived during the one before — until the log is
 * copied through, and the log's size stays bounded under a steady stream
 * of commits. Back-to-back commits leave no moment with the log copied
 * through at the start of one, so there the log never restarts: the store
 * sees the log outgrow its limit and checkpoints on its own connection
 * until it has (`checkpointer` in `sqlite.ts`).
 */
const checkpoint = () => {
  try {
    let before = -1;
    for (let pass = 0; pass < PASSES && db !== undefined; pass++) {
      const r = db.prepare("PRAGMA wal_checkpoint(PASSIVE)").get() as {
        log: number;
        checkpointed: number;
      };
      // Done once a pass finds the log copied through with nothing new in it.
      if (r.log <= 0 || (r.checkpointed >= r.log && r.log === before)) return;
      before = r.log;
    }
  } catch {
    // Busy or locked: the next tick tries again.
  }
};

interface Read {
  read: number;
  sql: string;
  args: (string | number)[];
}

self.onmessage = (e: MessageEvent<Start | Read | "close">) => {
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
    clearInterval(timer);
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
  timer = setInterval(checkpoint, intervalMs);
  self.postMessage("ready");
};
