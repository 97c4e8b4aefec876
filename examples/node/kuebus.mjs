// A small kuebus client for Node.js, written from docs/protocol.md alone:
// every call is a NATS request to core.<method> with a JSON body; an error
// comes back as micro's error headers, never as a body. nats.js's own
// ServiceError reads them: its code is the number (400, 404, 409, 503,
// 500), and Kuebus-Error-Code says the same as a word.
import { connect, JSONCodec, ServiceError } from "nats";

const jc = JSONCodec();

// The words of the numbers, for a reply without Kuebus-Error-Code.
const WORDS = { 400: "invalid", 404: "not_found", 409: "conflict", 503: "unavailable" };

// KuebusError is a call that core refused: status is the number micro
// clients see, code the protocol's word (invalid, not_found, conflict,
// unavailable, internal).
export class KuebusError extends Error {
  constructor(method, status, code, message) {
    super(`core.${method}: ${code} (${status}): ${message}`);
    this.status = status;
    this.code = code;
  }
}

export class Kuebus {
  // prefix: the deployment's subject prefix ("" or e.g. "acme.").
  constructor(nc, prefix = "") {
    this.nc = nc;
    this.prefix = prefix;
  }

  static async connect({ url, token, user, pass, prefix } = {}) {
    const nc = await connect({ servers: url, token, user, pass, name: "kuebus-node-example" });
    return new Kuebus(nc, prefix);
  }

  // call sends one request and returns the decoded reply.
  async call(method, body = {}, timeout = 10_000) {
    const msg = await this.nc.request(`${this.prefix}core.${method}`, jc.encode(body), { timeout });
    const failed = ServiceError.toServiceError(msg);
    if (failed) {
      const code = msg.headers.get("Kuebus-Error-Code") || WORDS[failed.code] || "internal";
      throw new KuebusError(method, failed.code, code, failed.message);
    }
    return jc.decode(msg.data);
  }

  // subscribe calls fn with every event on subject (wildcards allowed, e.g.
  // "job.*.*.email", "queue.>"), the prefix added.
  subscribe(subject, fn) {
    const sub = this.nc.subscribe(`${this.prefix}${subject}`);
    (async () => {
      for await (const m of sub) fn(m.subject.slice(this.prefix.length), jc.decode(m.data));
    })();
    return sub;
  }

  create(spec) { return this.call("create", spec); }
  get(id) { return this.call("get", { id }); }
  lease(types, { max = 1, worker = "node", wait = 0 } = {}) {
    // A lease that waits is answered within wait plus a margin: give the
    // request that long.
    return this.call("lease", { types, max, worker, wait }, wait + 10_000).then((r) => r.jobs);
  }
  progress(job, complete, total) { return this.call("progress", { id: job.id, lease: job.lease, complete, total }); }
  complete(job, result) { return this.call("complete", { id: job.id, lease: job.lease, result }); }
  fail(job, error) { return this.call("fail", { id: job.id, lease: job.lease, error }); }
  touch(job) { return this.call("touch", { id: job.id, lease: job.lease }); }
  release(job) { return this.call("release", { id: job.id, lease: job.lease }); }
  cancel(id, reason) { return this.call("cancel", reason === undefined ? { id } : { id, reason }); }
  bulk(body) { return this.call("bulk", body); }
  getByKey(type, unique_key) { return this.call("get", { type, unique_key }); }
  search(q, more = {}) { return this.call("search", { q, ...more }); }
  scheduleSet(schedule) { return this.call("schedule_set", schedule); }
  scheduleList() { return this.call("schedule_list").then((r) => r.schedules); }
  scheduleRemove(name) { return this.call("schedule_remove", { name }); }
  heartbeat(beat) { return this.call("heartbeat", beat); }
  workers() { return this.call("workers").then((r) => r.workers); }
  pause(type) { return this.call("pause", { type }); }
  resume(type) { return this.call("resume", { type }); }
  stats() { return this.call("stats"); }

  async close() { await this.nc.close(); }
}
