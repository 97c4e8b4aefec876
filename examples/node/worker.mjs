// A kuebus worker in Node.js, written from docs/workers.md: it leases jobs
// of the types it is given, runs a handler for each, keeps the lease alive
// while the handler runs, and completes or fails the job. A job cancelled
// while it runs has its handler aborted. On SIGTERM or SIGINT it stops
// leasing, lets running handlers finish for a grace period, then releases
// what is left (no attempt used) and exits 0.
//
//   KUEBUS_NATS_URL=nats://127.0.0.1:4222 node worker.mjs email sms
//
// The demo handler waits data.ms milliseconds and fails when data.fail is
// set, so that a run shows completions, failures and releases.
import { Kuebus, KuebusError } from "./kuebus.mjs";

const types = process.argv.slice(2);
if (!types.length) {
  console.error("usage: node worker.mjs TYPE...");
  process.exit(2);
}
const concurrency = Number(process.env.KUEBUS_CONCURRENCY || 4);
const grace = Number(process.env.KUEBUS_GRACE_MS || 10_000);
const workerID = `node-${process.pid}`;
const kb = await Kuebus.connect({
  url: process.env.KUEBUS_NATS_URL || "nats://127.0.0.1:4222",
  token: process.env.KUEBUS_NATS_TOKEN || undefined,
  prefix: process.env.KUEBUS_PREFIX || "",
});

const running = new Map(); // id → { job, abort: AbortController, done: Promise }
let stopping = false;

// A cancelled job's handler is aborted: its acknowledgement would get
// conflict anyway (docs/workers.md, "Cancel").
for (const type of types) {
  kb.subscribe(`job.cancel.*.${type}`, (_, ev) => running.get(ev.id)?.abort.abort(new Error(`cancelled: ${ev.reason || "no reason given"}`)));
}

// The demo handler. A real one does its work here, honouring signal.
async function handle(job, signal) {
  const ms = Number(job.data?.ms || 0);
  await new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
  });
  if (job.data?.fail) throw new Error(`demo failure of job ${job.id}`);
  return { done_by: workerID };
}

// ack sends the outcome. conflict means the job is no longer ours (its
// lease ran out and it went back, or it was cancelled or moved by hand):
// nothing to do.
async function ack(send) {
  try {
    await send();
  } catch (e) {
    if (!(e instanceof KuebusError && e.code === "conflict")) console.error(`ack failed: ${e.message}`);
  }
}

function run(job) {
  const abort = new AbortController();
  // Touch a third of the way to the lease's end, so that two touches can be
  // lost before it runs out.
  const every = Math.max(100, (job.lease_until - Date.now()) / 3);
  const toucher = setInterval(() => kb.touch(job).catch(() => {}), every);
  const done = (async () => {
    try {
      const result = await handle(job, abort.signal);
      await ack(() => kb.complete(job, result));
      console.log(`complete ${job.id}`);
    } catch (e) {
      if (abort.signal.aborted && stopping && !abort.signal.reason?.message?.startsWith("cancelled")) {
        await ack(() => kb.release(job)); // the stop's grace ran out: give it back, no attempt used
        console.log(`released ${job.id}`);
      } else {
        await ack(() => kb.fail(job, String(e.message || e)));
        console.log(`failed ${job.id}: ${e.message}`);
      }
    } finally {
      clearInterval(toucher);
      running.delete(job.id);
    }
  })();
  running.set(job.id, { job, abort, done });
}

// loop leases for free slots until the worker stops. A lease in flight
// when the stop comes still returns its jobs, which go straight back.
async function loop() {
  while (!stopping) {
    const free = concurrency - running.size;
    if (free === 0) {
      await Promise.race([...running.values()].map((r) => r.done));
      continue;
    }
    try {
      // wait: an idle worker's lease waits at core for up to a second, so
      // that a new job starts at once without polling.
      const jobs = await kb.lease(types, { max: free, worker: workerID, wait: 1000 });
      if (stopping) {
        for (const job of jobs) {
          await ack(() => kb.release(job));
          console.log(`released ${job.id}`); // as run's release says it
        }
        return;
      }
      for (const job of jobs) run(job);
    } catch (e) {
      console.error(`lease failed: ${e.message}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

let looping;
async function stop() {
  if (stopping) return;
  stopping = true;
  const timer = setTimeout(() => { for (const r of running.values()) r.abort.abort(new Error("stopping")); }, grace);
  await looping;
  await Promise.all([...running.values()].map((r) => r.done));
  clearTimeout(timer);
  clearInterval(beats);
  await beat(true);
  await kb.close();
  console.log("worker stopped");
  process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

// Heartbeats: core lists the workers it heard from lately (the
// dashboard's Workers page); the last one says we are gone.
const startedAt = Date.now();
const beat = (gone) => kb.heartbeat({ worker: workerID, types, concurrency, running: running.size, pid: process.pid, started_at: startedAt, gone })
  .catch((e) => console.error(`heartbeat failed: ${e.message}`));
await beat(false);
const beats = setInterval(() => beat(false), 5000);

console.log(`worker ${workerID} running: ${types.join(", ")}`);
looping = loop();
