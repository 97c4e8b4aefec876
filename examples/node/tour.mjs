// The tour: a producer, a worker and a listener in one Node process,
// talking to kuebus only through NATS. It checks each answer and exits 1 on
// the first surprise, so the Go test suite runs it as a test
// (examples/node/node_test.go). Run it by hand against `kuebus dev`:
//
//   KUEBUS_NATS_URL=nats://127.0.0.1:4222 node tour.mjs
import { Kuebus, KuebusError } from "./kuebus.mjs";
import assert from "node:assert/strict";

const type = process.env.KUEBUS_TOUR_TYPE || "node-tour";
const kb = await Kuebus.connect({
  url: process.env.KUEBUS_NATS_URL || "nats://127.0.0.1:4222",
  token: process.env.KUEBUS_NATS_TOKEN || undefined,
  user: process.env.KUEBUS_NATS_USER || undefined,
  pass: process.env.KUEBUS_NATS_PASSWORD || undefined,
  prefix: process.env.KUEBUS_PREFIX || "",
});

// The listener: every event of the tour's type, and the queue's.
const seen = [];
const waiters = [];
function heard(subject, ev) {
  seen.push({ subject, ev });
  for (const w of [...waiters]) {
    if (w.match(subject, ev)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(ev);
    }
  }
}
// until resolves with the first event, seen or to come, that match accepts.
function until(what, match) {
  const old = seen.find(({ subject, ev }) => match(subject, ev));
  if (old) return Promise.resolve(old.ev);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no event: ${what}`)), 10_000);
    waiters.push({ match, resolve: (ev) => { clearTimeout(timer); resolve(ev); } });
  });
}
const jobEvent = (event, id) => until(`job.${event}.${id}.${type}`, (s) => s === `job.${event}.${id}.${type}`);
const queueEvent = (event) => until(`queue.${event} of ${type}`, (s, ev) => s === `queue.${event}` && ev.type === type);
kb.subscribe(`job.*.*.${type}`, heard);
kb.subscribe("queue.>", heard);
await kb.nc.flush(); // the subscriptions are in place before anything happens

const step = (name) => console.log(`ok  ${name}`);

// Bad input is refused with the code invalid, and stores nothing.
// nats.js's stock ServiceError sees the numbers: 400, 404, 409.
await assert.rejects(kb.create({ type: "a.b" }), (e) => e instanceof KuebusError && e.code === "invalid" && e.status === 400);
await assert.rejects(kb.get(987654321), (e) => e.code === "not_found" && e.status === 404);
step("bad input: invalid (400) and not_found (404)");

// Produce, work, finish.
const job = await kb.create({ type, data: { to: "ada@example.com" }, priority: "high", max_attempts: 2 });
assert.equal(job.state, "inactive");
assert.equal(job.priority, -10);
await jobEvent("enqueue", job.id);
const [leased] = await kb.lease([type], { wait: 2000 });
assert.equal(leased.id, job.id);
assert.ok(leased.lease, "a leased job carries its lease");
await kb.progress(leased, 1, 2);
assert.equal((await jobEvent("progress", job.id)).progress, 50);
await kb.complete(leased, { sent: true });
const done = await jobEvent("complete", job.id);
assert.deepEqual(done.result, { sent: true });
assert.equal((await kb.get(job.id)).state, "complete");
// A second complete with the same lease changes nothing.
await assert.rejects(kb.complete({ id: job.id, lease: "stale" }, null), (e) => e.code === "conflict" && e.status === 409);
step("create, lease, progress, complete, with their events");

// A failing attempt retries while attempts remain.
const flaky = await kb.create({ type, data: {}, max_attempts: 2 });
let [attempt] = await kb.lease([type], { wait: 2000 });
assert.equal(attempt.id, flaky.id);
const retried = await kb.fail(attempt, "smtp timeout");
assert.equal(retried.state, "inactive");
assert.equal((await jobEvent("failed_attempt", flaky.id)).error, "smtp timeout");
[attempt] = await kb.lease([type], { wait: 2000 });
const failed = await kb.fail(attempt, "smtp timeout again");
assert.equal(failed.state, "failed");
await jobEvent("failed", flaky.id);
step("fail: a retry, then failed for good");

// Pause: the type's jobs stay but none is leased until it is resumed.
assert.deepEqual(await kb.pause(type), { type, paused: true });
await queueEvent("pause");
assert.ok((await kb.stats()).paused.includes(type));
const held = await kb.create({ type, data: {} });
assert.deepEqual(await kb.lease([type], { wait: 200 }), []);
// A waiting lease wakes when the type is resumed.
const waiting = kb.lease([type], { wait: 5000 });
assert.deepEqual(await kb.resume(type), { type, paused: false });
await queueEvent("resume");
const [after] = await waiting;
assert.equal(after.id, held.id);
await kb.complete(after, null);
await assert.rejects(kb.pause("a.b"), (e) => e.code === "invalid");
step("pause and resume, with queue.pause and queue.resume");

// Cancel: a waiting job is cancelled at once; a running one's worker hears
// job.cancel and its later acknowledgement changes nothing.
const waitingJob = await kb.create({ type, data: {}, unique_key: "order-1" });
assert.equal((await kb.getByKey(type, "order-1")).id, waitingJob.id);
const cancelled = await kb.cancel(waitingJob.id, "customer left");
assert.equal(cancelled.state, "cancelled");
assert.equal((await jobEvent("cancel", waitingJob.id)).reason, "customer left");
await assert.rejects(kb.cancel(waitingJob.id), (e) => e.code === "conflict");
const running = await kb.create({ type, data: {} });
const [runningLease] = await kb.lease([type], { wait: 2000 });
assert.equal(runningLease.id, running.id);
await kb.cancel(running.id);
await jobEvent("cancel", running.id);
await assert.rejects(kb.complete(runningLease, null), (e) => e.code === "conflict");
assert.equal((await kb.get(running.id)).state, "cancelled");
await assert.rejects(kb.cancel(-1), (e) => e.code === "invalid");
step("cancel a waiting and a running job, with job.cancel");

// Bulk: retry every failed job of a type, bounded per call (limit: how
// many jobs of the state one call looks at), going on from the cursor.
const bulkType = `${type}-bulk`;
const bulkFailed = [];
for (let i = 0; i < 3; i++) {
  await kb.create({ type: bulkType, data: { i } });
  const [j] = await kb.lease([bulkType], { wait: 2000 });
  bulkFailed.push((await kb.fail(j, "upstream 502")).id);
}
let res = await kb.bulk({ action: "retry", state: "failed", type: bulkType, error: "502", limit: 2 });
assert.deepEqual([res.matched, res.done, res.more], [2, 2, true]);
res = await kb.bulk({ action: "retry", state: "failed", type: bulkType, error: "502", limit: 2, cursor: res.cursor });
assert.deepEqual([res.done, res.more], [1, false]);
for (const id of bulkFailed) assert.equal((await kb.get(id)).state, "inactive");
res = await kb.bulk({ action: "cancel", state: "inactive", type: bulkType });
assert.equal(res.done, 3);
await assert.rejects(kb.bulk({ action: "explode", state: "failed" }), (e) => e.code === "invalid");
step("bulk retry and cancel, bounded per call");

// Search: by text in data, by unique key.
const found = await kb.create({ type, data: { invoice: "INV-7731" }, unique_key: "order-2" });
let hits = await kb.search("INV-7731", { type });
assert.deepEqual(hits.jobs.map((j) => j.id), [found.id]);
hits = await kb.search("order-2", { type });
assert.deepEqual(hits.jobs.map((j) => j.id), [found.id]);
step("search by data and by unique key");

// Schedules: set, list, bad cron refused, remove.
const sc = await kb.scheduleSet({ name: `${type}-nightly`, cron: "0 3 * * *", tz: "Europe/Paris", spec: { type, data: {} } });
assert.ok(sc.next_at > Date.now());
assert.ok((await kb.scheduleList()).some((x) => x.name === `${type}-nightly`));
await assert.rejects(kb.scheduleSet({ name: "bad", cron: "61 * * * *", spec: { type } }), (e) => e.code === "invalid");
await kb.scheduleRemove(`${type}-nightly`);
assert.ok(!(await kb.scheduleList()).some((x) => x.name === `${type}-nightly`));
step("schedules: set, list, remove");

await kb.close();
console.log("tour complete");
