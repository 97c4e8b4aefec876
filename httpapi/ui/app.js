"use strict";
// The kuebus dashboard. It reads the REST API (docs/http.md) and listens to
// GET /events. An event only says "something changed": the page then reads
// again what it shows, at most a few times a second. There is no polling;
// with no events the page does not touch the server.

const STATES = ["delayed", "inactive", "active", "complete", "failed", "cancelled"];
const PRIORITIES = [["critical", -15], ["high", -10], ["medium", -5], ["normal", 0], ["low", 10]];
const PAGE_SIZE = 20;
const REFRESH_DELAY = 150; // ms: events closer together cause one read

const $ = (sel) => document.querySelector(sel);

// h builds an element. Text goes in as text nodes, never as HTML, so job
// data cannot inject markup.
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

// ---- the API ---------------------------------------------------------------

async function api(method, path, body) {
  return (await call(method, path, body)).data;
}

// call is api with the response too, for its headers.
async function call(method, path, body) {
  const opts = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  // The session ran out (or was signed out elsewhere): sign in again. The
  // sign-out form is on the page only with token auth, which has sessions.
  if (res.status === 401 && $("form.signout")) location.assign("/login");
  if (res.status === 204) return { data: null, res };
  let data = null;
  try { data = await res.json(); } catch (e) { /* not JSON: reported below */ }
  if (!res.ok) {
    const err = new Error(data && data.error ? data.error.message : `${res.status} ${res.statusText}`);
    err.status = res.status;
    throw err;
  }
  return { data, res };
}

function toast(msg, isError) {
  const el = $("#toast");
  el.textContent = msg;
  el.className = "toast" + (isError ? " err" : "");
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.hidden = true; }, isError ? 6000 : 2500);
}

// ---- formatting -------------------------------------------------------------

function priorityName(p) {
  const named = PRIORITIES.find(([, v]) => v === p);
  return named ? named[0] : String(p);
}

function ago(ms) {
  if (!ms) return "";
  const s = Math.round((Date.now() - ms) / 1000);
  const a = Math.abs(s);
  const txt = a < 5 ? "now" : a < 60 ? `${a}s` : a < 3600 ? `${Math.floor(a / 60)}m` : a < 86400 ? `${Math.floor(a / 3600)}h` : `${Math.floor(a / 86400)}d`;
  if (txt === "now") return "just now";
  return s >= 0 ? `${txt} ago` : `in ${txt}`;
}

function when(ms) {
  if (!ms) return h("span", { class: "muted" }, "—");
  return h("span", { title: new Date(ms).toISOString() }, `${new Date(ms).toLocaleString()} · ${ago(ms)}`);
}

function duration(ms) {
  if (ms === undefined || ms === null) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const two = (big, unit, small, smallUnit) => (small ? `${big}${unit} ${small}${smallUnit}` : `${big}${unit}`);
  if (ms < 3600000) return two(Math.floor(ms / 60000), "m", Math.round((ms % 60000) / 1000), "s");
  if (ms < 86400000) return two(Math.floor(ms / 3600000), "h", Math.round((ms % 3600000) / 60000), "m");
  return two(Math.floor(ms / 86400000), "d", Math.round((ms % 86400000) / 3600000), "h");
}

function json(v) {
  return JSON.stringify(v, null, 2);
}

function badge(state) {
  return h("span", { class: `badge s-${state}` }, state);
}

function bar(pct, state, big) {
  const fill = h("span");
  fill.style.width = `${Math.max(0, Math.min(100, pct || 0))}%`;
  return h("div", { class: `bar s-${state || "all"}${big ? " big" : ""}`, role: "progressbar", "aria-valuenow": pct || 0 }, fill);
}

// ---- state -----------------------------------------------------------------

let stats = null; // the last GET /stats
let route = null; // the parsed location.hash
const fresh = new Set(); // ids that changed since the last render: flashed
const whole = new Set(); // list hashes whose cut pages the user asked to read whole

function defaultOrder(state) {
  // The queue's own order (next to run first) where there is a queue;
  // newest first where jobs are done or mixed.
  return ["inactive", "delayed", "active"].includes(state) ? "asc" : "desc";
}

function parseRoute() {
  const [path, qs] = (location.hash.replace(/^#/, "") || "/").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "job" && /^\d+$/.test(parts[1] || "")) return { view: "job", id: Number(parts[1]) };
  const q = new URLSearchParams(qs || "");
  let state = parts[0] === "jobs" && parts[1] ? parts[1] : "all";
  if (state !== "all" && !STATES.includes(state)) state = "all";
  const type = parts[0] === "jobs" && parts[2] ? parts[2] : "all";
  const order = q.get("order") === "asc" || q.get("order") === "desc" ? q.get("order") : defaultOrder(state);
  const page = Math.max(0, parseInt(q.get("page") || "0", 10) || 0);
  return { view: "list", state, type, order, page };
}

function listHash(r) {
  const q = new URLSearchParams();
  if (r.order !== defaultOrder(r.state)) q.set("order", r.order);
  if (r.page) q.set("page", r.page);
  const qs = q.toString();
  return `#/jobs/${r.state}/${encodeURIComponent(r.type)}${qs ? "?" + qs : ""}`;
}

function count(state, type) {
  if (!stats) return 0;
  const row = type === "all" ? stats : (stats.types || {})[type];
  if (!row) return 0;
  if (state === "all") return STATES.reduce((n, s) => n + (row[s] || 0), 0);
  return row[state] || 0;
}

// ---- the side bar and the cards -----------------------------------------

function renderSide() {
  const r = route.view === "list" ? route : { state: "", type: "" };
  const states = ["all", ...STATES].map((s) =>
    h("a", { href: listHash({ state: s, type: r.type || "all", order: defaultOrder(s), page: 0 }), class: r.state === s ? "on" : "", dataset: { state: s } },
      h("span", { class: "label" }, h("span", { class: `dot s-${s}` }), s === "all" ? "All jobs" : s),
      h("span", { class: "n" }, count(s, "all"))));
  $("#side-states").replaceChildren(...states);
  const types = Object.keys((stats && stats.types) || {}).sort();
  const typeLinks = ["all", ...types].map((t) =>
    h("a", { href: listHash({ state: r.state || "all", type: t, order: defaultOrder(r.state || "all"), page: 0 }), class: r.type === t ? "on" : "", dataset: { type: t } },
      h("span", { class: "label" }, t === "all" ? "All types" : t),
      h("span", { class: "n" }, count("all", t))));
  $("#side-types").replaceChildren(...typeLinks);
}

function renderCards(r) {
  return h("div", { class: "cards", id: "counts" }, STATES.map((s) =>
    h("a", { class: `card s-${s}${r.state === s ? " on" : ""}`, href: listHash({ ...r, state: s, order: defaultOrder(s), page: 0 }), dataset: { state: s, n: count(s, r.type) } },
      h("div", { class: "n" }, count(s, r.type)),
      h("div", { class: "name" }, s))));
}

function isPaused(type) {
  return ((stats && stats.paused) || []).includes(type);
}

// pauseButton pauses or resumes a type: a paused type keeps its jobs but
// hands none to workers. The page redraws from the queue event that follows.
function pauseButton(type) {
  const paused = isPaused(type);
  const action = paused ? "resume" : "pause";
  return h("button", {
    class: paused ? "primary small" : "small",
    dataset: { pause: type },
    title: paused ? `Let workers take ${type} jobs again` : `Hand out no ${type} jobs until resumed`,
    onclick: async () => {
      try {
        await api("PUT", `/types/${encodeURIComponent(type)}/${action}`);
        toast(paused ? `${type} resumed` : `${type} paused`);
        scheduleRefresh();
      } catch (e) { toast(e.message, true); }
    },
  }, paused ? "Resume" : "Pause");
}

function renderTypes() {
  const types = Object.keys((stats && stats.types) || {}).sort();
  if (!types.length) return null;
  const cell = (n) => h("td", { class: "num" + (n ? "" : " zero") }, n);
  return h("div", { class: "panel flush" },
    h("table", { id: "types" },
      h("thead", {}, h("tr", {}, h("th", {}, "Type"), STATES.map((s) => h("th", { class: "num" }, s)), h("th", { class: "num" }, "total"), h("th", {}, ""))),
      h("tbody", {}, types.map((t) =>
        h("tr", { dataset: { type: t, paused: isPaused(t) ? "1" : "0" } },
          h("td", {}, h("a", { href: listHash({ state: "all", type: t, order: "desc", page: 0 }) }, t),
            isPaused(t) ? h("span", { class: "tag paused" }, "paused") : null),
          STATES.map((s) => cell(count(s, t))),
          cell(count("all", t)),
          h("td", { class: "act" }, pauseButton(t)))))));
}

// ---- the job list -----------------------------------------------------------

function listPath(r, from, to) {
  const range = `${from}..${to}/${r.order}`;
  return r.type === "all" && r.state === "all"
    ? `/jobs/${range}`
    : r.type === "all"
      ? `/jobs/${r.state}/${range}`
      : `/jobs/${encodeURIComponent(r.type)}/${r.state}/${range}`;
}

// loadList reads a page of the list: { jobs, next }. Large jobs that do not
// fit one reply come in part, and Kuebus-Range-Next says where the rest of
// the page starts (docs/http.md); next is then that position, and the list
// says more jobs exist. The rest is read only once the user asks for it,
// as every refresh reads the page again.
async function loadList(r) {
  let from = r.page * PAGE_SIZE;
  const to = from + PAGE_SIZE - 1;
  const jobs = [];
  for (;;) {
    const { data, res } = await call("GET", listPath(r, from, to));
    jobs.push(...(data || []));
    const next = parseInt(res.headers.get("Kuebus-Range-Next") || "", 10);
    if (!(next > from && next <= to)) return { jobs, next: null };
    if (!whole.has(listHash(r))) return { jobs, next };
    from = next;
  }
}

function renderList(r, list) {
  const { jobs, next } = list;
  const from = r.page * PAGE_SIZE;
  const total = count(r.state, r.type);

  const go = (change) => { location.hash = listHash({ ...r, ...change }); };
  const types = Object.keys((stats && stats.types) || {}).sort();
  const typeSelect = h("select", { id: "type-filter", onchange: (e) => go({ type: e.target.value, page: 0 }) },
    ["all", ...types].map((t) => h("option", { value: t, selected: t === r.type }, t === "all" ? "all types" : t)));
  const orderSelect = h("select", { id: "order", onchange: (e) => go({ order: e.target.value, page: 0 }) },
    h("option", { value: "asc", selected: r.order === "asc" }, r.state === "all" ? "oldest first" : "queue order"),
    h("option", { value: "desc", selected: r.order === "desc" }, r.state === "all" ? "newest first" : "reversed"));
  const title = `${r.state === "all" ? "All" : r.state[0].toUpperCase() + r.state.slice(1)} jobs${r.type === "all" ? "" : " · " + r.type}`;

  const rows = jobs.map((j) =>
    h("tr", { dataset: { id: j.id, state: j.state }, class: fresh.has(j.id) ? "flash" : "", onclick: () => { location.hash = `#/job/${j.id}`; } },
      h("td", { class: "num mono" }, h("a", { href: `#/job/${j.id}` }, j.id)),
      h("td", {}, j.type),
      h("td", {}, badge(j.state)),
      h("td", {}, priorityName(j.priority)),
      h("td", { class: "num" }, `${j.attempts}/${j.max_attempts}`),
      h("td", {}, bar(j.progress, j.state)),
      h("td", { class: "data mono", title: j.data === undefined ? "" : JSON.stringify(j.data) }, j.data === undefined ? "" : JSON.stringify(j.data)),
      h("td", {}, ago(j.created_at)),
      h("td", {}, ago(j.updated_at))));
  const table = h("table", { class: "jobs", id: "list", dataset: { state: r.state, type: r.type } },
    h("thead", {}, h("tr", {}, ["id", "type", "state", "priority", "attempts", "progress", "data", "created", "updated"].map((c, i) => h("th", { class: i === 0 || i === 4 ? "num" : "" }, c)))),
    h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { class: "empty", colspan: 9 }, "No jobs here yet."))));

  // The total comes from /stats, read just before: close enough for paging.
  const last = from + jobs.length;
  const pager = h("div", { class: "pager" },
    h("span", {}, jobs.length ? `${from + 1}–${last} of ${Math.max(total, last)}` : `none of ${total}`),
    h("button", { id: "prev", disabled: r.page === 0, onclick: () => go({ page: r.page - 1 }) }, "‹ Prev"),
    h("button", { id: "next", disabled: last >= total || (jobs.length < PAGE_SIZE && next === null), onclick: () => go({ page: r.page + 1 }) }, "Next ›"));
  const more = next !== null && h("div", { class: "more", id: "more" },
    "more… the rest of this page did not fit one reply (large jobs).",
    h("button", { id: "show-more", onclick: () => { whole.add(listHash(r)); render(false); } }, "Show them"));

  return h("div", { class: "panel flush" },
    h("div", { class: "toolbar" }, h("span", { class: "title" }, title),
      h("label", {}, "Type", typeSelect), h("label", {}, "Order", orderSelect)),
    table, more, pager);
}

// ---- one job -------------------------------------------------------------------

// loadJob reads a job and its log; null when there is no such job.
async function loadJob(id) {
  try {
    const [job, lines] = await Promise.all([api("GET", `/job/${id}`), api("GET", `/job/${id}/log`)]);
    return { job, lines };
  } catch (e) {
    if (e.status === 404) return null;
    throw e;
  }
}

function renderJob(id, loaded) {
  if (!loaded) {
    return h("div", { class: "panel", id: "job", dataset: { state: "removed" } },
      h("a", { class: "back", href: "#/" }, "‹ All jobs"), h("h1", {}, `Job ${id}`), h("p", {}, "This job does not exist (any more)."));
  }
  const { job, lines } = loaded;
  const act = async (what, method, path, done) => {
    try {
      await api(method, path);
      toast(what);
      if (done) done();
      scheduleRefresh();
    } catch (e) { toast(e.message, true); }
  };
  const actions = h("div", { class: "actions" });
  if (job.state === "failed" || job.state === "complete" || job.state === "cancelled") {
    actions.append(h("button", { id: "retry", class: "primary", onclick: () => act(`Job ${id} queued again`, "PUT", `/job/${id}/state/inactive`) },
      job.state === "failed" ? "Retry" : "Run again"));
  }
  const named = PRIORITIES.some(([, v]) => v === job.priority);
  const prio = h("select", { id: "priority" },
    PRIORITIES.map(([n, v]) => h("option", { value: n, selected: v === job.priority }, `${n} (${v})`)),
    named ? null : h("option", { value: String(job.priority), selected: true }, String(job.priority)));
  actions.append(h("label", { class: "muted" }, "Priority ", prio),
    h("button", { id: "set-priority", onclick: () => act("Priority changed", "PUT", `/job/${id}/priority/${prio.value}`) }, "Set"));
  const remove = h("button", { id: "remove", class: "danger" }, "Remove");
  remove.addEventListener("click", () => {
    if (!remove.classList.contains("armed")) {
      remove.classList.add("armed");
      remove.textContent = "Click again to remove";
      return;
    }
    act(`Job ${id} removed`, "DELETE", `/job/${id}`, () => { location.hash = "#/"; });
  });
  actions.append(remove);

  const kv = (pairs) => h("dl", { class: "kv" }, pairs.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
  const backoff = job.backoff ? `${job.backoff.type}, ${duration(job.backoff.delay)}` : "none (retry at once)";
  return h("div", { id: "job", dataset: { id: job.id, state: job.state } },
    h("a", { class: "back", href: listHash({ state: job.state, type: "all", order: defaultOrder(job.state), page: 0 }) }, `‹ ${job.state} jobs`),
    h("div", { class: "jobhead" }, h("h1", {}, `#${job.id} `, h("span", { class: "muted" }, job.type)), h("span", { id: "job-state" }, badge(job.state)), actions),
    h("div", { class: "panel" }, h("h3", {}, "Progress"),
      h("div", { class: "progress" }, bar(job.progress, job.state, true), h("span", { class: "mono", id: "job-progress" }, `${job.progress || 0}%`))),
    job.error ? h("div", { class: "panel" }, h("h3", {}, job.state === "failed" ? "Error" : "Last error"), h("div", { class: "errorbox", id: "job-error" }, job.error)) : null,
    h("div", { class: "grid2" },
      h("div", { class: "panel" }, h("h3", {}, "Details"), kv([
        ["priority", `${priorityName(job.priority)} (${job.priority})`],
        ["attempts", h("span", { id: "job-attempts" }, `${job.attempts} of ${job.max_attempts}`)],
        ["backoff", backoff],
        ["ttl", duration(job.ttl)],
        ["delay", duration(job.delay)],
        ["worker", job.worker_id || "—"],
        ["unique key", job.unique_key || "—"],
        ["stalls", job.stalls || 0],
        ["remove on complete", job.remove_on_complete ? "yes" : "no"],
      ])),
      h("div", { class: "panel" }, h("h3", {}, "Timings"), kv([
        ["created", when(job.created_at)],
        ["due", when(job.promote_at)],
        ["started", when(job.started_at)],
        ["updated", when(job.updated_at)],
        ["failed", when(job.failed_at)],
        ["lease until", when(job.lease_until)],
        ["duration", job.duration ? duration(job.duration) : "—"],
      ]))),
    h("div", { class: "grid2" },
      h("div", { class: "panel" }, h("h3", {}, "Data"), h("pre", { class: "json", id: "job-data" }, job.data === undefined ? "(none)" : json(job.data))),
      h("div", { class: "panel" }, h("h3", {}, "Result"), h("pre", { class: "json" }, job.result === undefined ? "(none)" : json(job.result)))),
    h("div", { class: "panel" }, h("h3", {}, `Log (${lines.length})`),
      h("pre", { class: "log", id: "job-log" }, lines.length ? lines.join("\n") : "(empty)")));
}

// ---- rendering and refreshing --------------------------------------------------

let renderSeq = 0;
// What each slot of the view shows, by a key of the data it was drawn from.
// A refresh redraws only the slots whose data changed, so that live updates
// do not pull a row or a button from under the user's mouse.
const drawn = new Map();

// render reads and draws the current view. live: a refresh after events,
// which must not pull an open select from under the user.
async function render(live) {
  const seq = ++renderSeq;
  const r = parseRoute();
  let st = stats;
  let data;
  let error = null;
  try {
    st = await api("GET", "/stats");
  } catch (e) {
    toast(`Cannot read /stats: ${e.message}`, true);
  }
  try {
    data = r.view === "job" ? await loadJob(r.id) : await loadList(r);
  } catch (e) {
    error = e;
  }
  if (seq !== renderSeq) return; // a newer render started meanwhile: it wins
  route = r;
  stats = st;
  renderSide();
  draw(live, slotsFor(r, data, error));
  fresh.clear();
}

// slotsFor lists the parts of a view: [name, key of its data, draw].
function slotsFor(r, data, error) {
  if (error) {
    return [["error", error.message, () => h("div", { class: "panel" }, h("p", { class: "errorbox" }, error.message))]];
  }
  if (r.view === "job") return [["job", JSON.stringify([r.id, data]), () => renderJob(r.id, data)]];
  const counts = [...STATES, "all"].map((s) => count(s, r.type));
  const types = (stats && stats.types) || {};
  return [
    ["cards", JSON.stringify([r, counts]), () => renderCards(r)],
    ["list", JSON.stringify([r, data, counts, Object.keys(types)]), () => renderList(r, data)],
    ["types", JSON.stringify([types, stats && stats.paused]), renderTypes],
  ];
}

// draw replaces the slots whose key changed since they were last drawn.
function draw(live, slots) {
  const view = $("#view");
  const layout = slots.map(([name]) => name).join(",");
  if (view.dataset.layout !== layout) {
    view.replaceChildren(...slots.map(([name]) => h("div", { id: `slot-${name}` })));
    view.dataset.layout = layout;
    drawn.clear();
  }
  const active = document.activeElement;
  for (const [name, key, build] of slots) {
    const slot = $(`#slot-${name}`);
    if (drawn.get(name) === key) continue;
    if (live && active && active.tagName === "SELECT" && slot.contains(active)) continue;
    slot.replaceChildren(build() || "");
    drawn.set(name, key);
  }
}

// Refreshes run one at a time; events during one cause one more after it.
let timer = null;
let running = false;
let again = false;

function scheduleRefresh() {
  if (timer) return;
  timer = setTimeout(async () => {
    timer = null;
    if (running) { again = true; return; }
    running = true;
    try { await render(true); } finally {
      running = false;
      if (again) { again = false; scheduleRefresh(); }
    }
  }, REFRESH_DELAY);
}

// ---- live events ---------------------------------------------------------------

function setLive(on, text) {
  document.body.dataset.live = on ? "1" : "0";
  $("#live").textContent = text;
}

function connect() {
  const es = new EventSource("/events");
  es.addEventListener("ready", () => {
    setLive(true, "live");
    // Whatever happened while we were away: read everything once.
    scheduleRefresh();
  });
  es.addEventListener("error", () => {
    setLive(false, "reconnecting…");
    // A browser does not retry a stream the server refused (401 once the
    // session ran out): a call tells, and api sends the page to /login.
    if (es.readyState === EventSource.CLOSED) api("GET", "/stats").catch(() => {});
  });
  es.addEventListener("job", (e) => {
    const ev = JSON.parse(e.data);
    fresh.add(ev.id);
    if (route && route.view === "job" && route.id === ev.id && ev.event === "log") {
      const log = $("#job-log");
      if (log) log.textContent = log.textContent === "(empty)" ? ev.line : `${log.textContent}\n${ev.line}`;
    }
    scheduleRefresh();
  });
  es.addEventListener("queue", (e) => {
    const ev = JSON.parse(e.data);
    if (ev.event === "leader" && ev.leader) {
      const el = $("#leader");
      el.textContent = `promoter leader: ${ev.leader}`;
      el.hidden = false;
    }
    if (ev.event === "pause" || ev.event === "resume") scheduleRefresh();
  });
  es.addEventListener("lagged", () => scheduleRefresh());
}

window.addEventListener("hashchange", () => { window.scrollTo(0, 0); render(false); });
render(false);
connect();
