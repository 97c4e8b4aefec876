"use strict";
// The kuebus dashboard. It reads the REST API (docs/http.md) and listens to
// GET /events. An event only says "something changed": the page then reads
// again what it shows, at most a few times a second. There is no polling;
// with no events the page does not touch the server.

const STATES = ["delayed", "inactive", "active", "complete", "failed", "cancelled", "waiting"];
const PRIORITIES = [["critical", -15], ["high", -10], ["medium", -5], ["normal", 0], ["low", 10]];
const PAGE_SIZE = 20;
const REFRESH_DELAY = 150; // ms: events closer together cause one read

const $ = (sel) => document.querySelector(sel);

// READONLY: the server serves the page read-only to a user whose role may
// change no job (a viewer): no button is drawn that would only be refused.
const READONLY = document.body.dataset.readonly === "1";
// SEARCH_CALLS bounds the search calls of one read (a page of results, or
// a filtered list): each looks at 1000 jobs at most (core.SearchBudget),
// so one read looks at no more than 20 000 jobs before it asks the user
// to look further.
const SEARCH_CALLS = 20;

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
// Paths are relative to the page, so that the dashboard works under any
// base path (httpapi.Config.BasePath, or a proxy's prefix).
async function call(method, path, body) {
  const opts = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  // The session ran out (or was signed out elsewhere): sign in again. The
  // sign-out form is on the page only with token auth, which has sessions.
  if (res.status === 401 && $("form.signout")) location.assign("login");
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

// retention says when a finished job is removed, by the rule that applies
// to it: its own remove_on_complete / remove_on_fail (true, or {age (ms),
// count}) when it has one, else its type's default in the node's config
// (GET /stats gives it, per type and state: complete, failed), else none:
// it is kept until removed by hand.
function retention(own, type, state) {
  const rule = (r) => {
    if (r === true) return "at once";
    const parts = [];
    if (r.age) parts.push(`after ${duration(r.age)}`);
    if (r.count) parts.push(`beyond the newest ${r.count}`);
    return parts.join(", ");
  };
  if (own === true || (own && typeof own === "object")) return `${rule(own)} (its own)`;
  const def = ((stats && stats.retention) || {})[type];
  if (def && def[state]) return `${rule(def[state])} (${type}'s default)`;
  return "kept (no rule)";
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
  if (parts[0] === "job" && /^\d+$/.test(parts[1] || "")) return { view: parts[2] === "flow" ? "flow" : "job", id: Number(parts[1]) };
  const q = new URLSearchParams(qs || "");
  if (parts[0] === "schedules") return { view: "schedules" };
  if (parts[0] === "workers") return { view: "workers" };
  if (parts[0] === "errors") return { view: "errors", type: parts[1] || "" };
  if (parts[0] === "search") return { view: "search", q: q.get("q") || "", type: q.get("type") || "", state: q.get("state") || "" };
  let state = parts[0] === "jobs" && parts[1] ? parts[1] : "all";
  if (state !== "all" && !STATES.includes(state)) state = "all";
  const type = parts[0] === "jobs" && parts[2] ? parts[2] : "all";
  const order = q.get("order") === "asc" || q.get("order") === "desc" ? q.get("order") : defaultOrder(state);
  const page = Math.max(0, parseInt(q.get("page") || "0", 10) || 0);
  // after/before: the page of every type after (or before) a job's place,
  // by core's range cursor; page is then only what the pager shows.
  // error, group: the failed list filtered by error text or by an error's
  // group (the Errors view), read by search rather than by position.
  const filter = state === "failed" ? { error: q.get("error") || "", group: q.get("group") || "" } : { error: "", group: "" };
  return { view: "list", state, type, order, page, after: q.get("after") || "", before: q.get("before") || "", ...filter };
}

function listHash(r) {
  const q = new URLSearchParams();
  if (r.order !== defaultOrder(r.state)) q.set("order", r.order);
  if (r.page) q.set("page", r.page);
  if (r.page && r.after) q.set("after", r.after);
  if (r.page && r.before) q.set("before", r.before);
  if (r.state === "failed" && r.error) q.set("error", r.error);
  if (r.state === "failed" && r.group) q.set("group", r.group);
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
      h("span", { class: "n" }, count(s, r.type || "all"))));
  $("#side-states").replaceChildren(...states);
  const types = Object.keys((stats && stats.types) || {}).sort();
  const typeLinks = ["all", ...types].map((t) =>
    h("a", { href: listHash({ state: r.state || "all", type: t, order: defaultOrder(r.state || "all"), page: 0 }), class: r.type === t ? "on" : "", dataset: { type: t } },
      h("span", { class: "label" }, t === "all" ? "All types" : t),
      h("span", { class: "n" }, count("all", t))));
  $("#side-types").replaceChildren(...typeLinks);
  $("#side-more").replaceChildren(
    h("a", { href: "#/schedules", class: route.view === "schedules" ? "on" : "", id: "nav-schedules" }, h("span", { class: "label" }, "Schedules")),
    h("a", { href: "#/workers", class: route.view === "workers" ? "on" : "", id: "nav-workers" }, h("span", { class: "label" }, "Workers")),
    h("a", { href: errorsHash(r.type && r.type !== "all" ? r.type : ""), class: route.view === "errors" ? "on" : "", id: "nav-errors" }, h("span", { class: "label" }, "Errors")));
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
        await api("PUT", `types/${encodeURIComponent(type)}/${action}`);
        toast(paused ? `${type} resumed` : `${type} paused`);
        scheduleRefresh();
      } catch (e) { toast(e.message, true); }
    },
  }, paused ? "Resume" : "Pause");
}

// limitTag shows a type's limits (stats' limits: its policy's concurrency
// and rate, docs/policy.md) and how many of its jobs they hold back now.
function limitTag(type) {
  const l = stats && stats.limits && stats.limits[type];
  if (!l) return null;
  const parts = [];
  if (l.concurrency) parts.push(`≤ ${l.concurrency} active`);
  if (l.rate) parts.push(`${l.rate.limit} per ${duration(l.rate.per)}`);
  if (l.held) parts.push(`${l.held} held by ${l.held_by}`);
  return h("span", { class: "tag limit", dataset: { held: l.held || 0 }, title: "the type's limits, across every worker" }, parts.join(" · "));
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
            isPaused(t) ? h("span", { class: "tag paused" }, "paused") : null, limitTag(t)),
          STATES.map((s) => cell(count(s, t))),
          cell(count("all", t)),
          h("td", { class: "act" }, READONLY ? null : pauseButton(t)))))));
}

// ---- the job list -----------------------------------------------------------

function listPath(r, from, to) {
  const range = `${from}..${to}/${r.order}`;
  return r.type === "all" && r.state === "all"
    ? `jobs/${range}`
    : r.type === "all"
      ? `jobs/${r.state}/${range}`
      : `jobs/${encodeURIComponent(r.type)}/${r.state}/${range}`;
}

// MAX_UNTYPED is core.MaxUntypedPosition: a list of every type reads by
// position only below it, and pages by cursor past it (docs/http.md).
const MAX_UNTYPED = 1000;

// loadList reads a page of the list: { jobs, next, after, before }. Large
// jobs that do not fit one reply come in part, and Kuebus-Range-Next says
// where the rest of the page starts (docs/http.md); next is then that
// position, and the list says more jobs exist. The rest is read only once
// the user asks for it, as every refresh reads the page again. after and
// before are the range cursors of the page's last and first jobs: a list
// of every type pages with them (loadCursorList), which costs the same at
// any depth, where one type's list pages by position.
async function loadList(r) {
  if (r.error || r.group) return loadFiltered(r, "");
  if (r.type === "all" && (r.after || r.before || (r.page + 1) * PAGE_SIZE > MAX_UNTYPED)) return loadCursorList(r);
  let from = r.page * PAGE_SIZE;
  const to = from + PAGE_SIZE - 1;
  const jobs = [];
  let before = null;
  for (;;) {
    const { data, res } = await call("GET", listPath(r, from, to));
    jobs.push(...(data || []));
    before = before || res.headers.get("Kuebus-Range-Back");
    const after = res.headers.get("Kuebus-Range-Cursor");
    const next = parseInt(res.headers.get("Kuebus-Range-Next") || "", 10);
    if (!(next > from && next <= to)) return { jobs, next: null, after, before };
    if (!whole.has(listHash(r))) return { jobs, next, after, before };
    from = next;
  }
}

// loadCursorList reads a page of every type by cursor: the PAGE_SIZE jobs
// after r.after, or, read in the other order and turned round, those
// before r.before. A page deep by position with no cursor (an old
// bookmark) shows the first page.
async function loadCursorList(r) {
  if (!r.after && !r.before) {
    location.replace(listHash({ ...r, page: 0 }));
    return { jobs: [], next: null, after: null, before: null };
  }
  const back = !!r.before;
  const q = new URLSearchParams({ order: back ? (r.order === "asc" ? "desc" : "asc") : r.order, cursor: back ? r.before : r.after });
  if (r.state !== "all") q.set("state", r.state);
  const jobs = [];
  let first = null;
  let cursor = null;
  for (;;) {
    q.set("limit", PAGE_SIZE - jobs.length);
    const data = await api("GET", `jobs?${q}`);
    jobs.push(...data.jobs);
    first = first || data.back || null;
    cursor = data.cursor || null;
    // A page cut to fit one reply goes on from its cursor: read it whole
    // when asked (or when reading backwards, whose page is turned round).
    const cut = cursor && jobs.length < PAGE_SIZE;
    if (!cut || !(back || whole.has(listHash(r)))) {
      if (back) {
        jobs.reverse();
        return { jobs, next: null, after: first, before: cursor };
      }
      return { jobs, next: cut ? true : null, after: cursor, before: first };
    }
    q.set("cursor", cursor);
  }
}

function renderList(r, list) {
  if (list.filtered) return renderFiltered(r, list);
  const { jobs, next } = list;
  const from = r.page * PAGE_SIZE;
  const total = count(r.state, r.type);

  const go = (change) => { location.hash = listHash({ ...r, after: "", before: "", ...change }); };
  // A list of every type pages by cursor (loadList): Next goes on after
  // the page's last job, Prev before its first, and back to positions at
  // the first page.
  const untyped = r.type === "all";
  const nextPage = () => go(untyped ? { page: r.page + 1, after: list.after || "" } : { page: r.page + 1 });
  const prevPage = () => go(untyped && r.page > 1 && list.before ? { page: r.page - 1, before: list.before } : { page: r.page - 1 });
  const types = Object.keys((stats && stats.types) || {}).sort();
  const typeSelect = h("select", { id: "type-filter", onchange: (e) => go({ type: e.target.value, page: 0 }) },
    ["all", ...types].map((t) => h("option", { value: t, selected: t === r.type }, t === "all" ? "all types" : t)));
  // The list of every state is in creation order, across types and cores
  // (protocol §3.8: each type's jobs index is scored by created_at and
  // the job's place among those its core created in that ms), not in id
  // order: ids come in blocks per type and per core.
  const byCreation = r.state === "all";
  const orderSelect = h("select", { id: "order", onchange: (e) => go({ order: e.target.value, page: 0 }),
    title: byCreation ? "By when each job was created, across types (the jobs of one call in the call's order)" : null },
    h("option", { value: "asc", selected: r.order === "asc" }, byCreation ? "oldest first" : "queue order"),
    h("option", { value: "desc", selected: r.order === "desc" }, byCreation ? "newest first" : "reversed"));
  const title = `${r.state === "all" ? "All" : r.state[0].toUpperCase() + r.state.slice(1)} jobs${r.type === "all" ? "" : " · " + r.type}`;

  const table = jobTable("list", jobs, { state: r.state, type: r.type }, "No jobs here yet.", r.state === "failed");

  // The total comes from /stats, read just before: close enough for paging.
  const last = from + jobs.length;
  const pager = h("div", { class: "pager" },
    h("span", {}, jobs.length ? `${from + 1}–${last} of ${Math.max(total, last)}` : `none of ${total}`),
    h("button", { id: "prev", disabled: r.page === 0, onclick: prevPage }, "‹ Prev"),
    h("button", { id: "next", disabled: (untyped ? !list.after : last >= total) || (jobs.length < PAGE_SIZE && next === null), onclick: nextPage }, "Next ›"));
  const more = next !== null && h("div", { class: "more", id: "more" },
    "more… the rest of this page did not fit one reply (large jobs).",
    h("button", { id: "show-more", onclick: () => { whole.add(listHash(r)); render(false); } }, "Show them"));

  return h("div", { class: "panel flush" },
    h("div", { class: "toolbar" }, h("span", { class: "title" }, title),
      h("label", {}, "Type", typeSelect), h("label", {}, "Order", orderSelect), errorFilter(r)),
    bulkBar(r, total),
    table, more, pager);
}

// ---- triage: the failed list by error, and the Errors view --------------------

// errorFilter is the failed list's filter by error text, and the way to
// the Errors view of its type; nothing on other lists.
function errorFilter(r) {
  if (r.state !== "failed") return null;
  const form = h("form", { id: "error-filter", class: "filter" },
    h("input", { type: "search", name: "error", value: r.error, placeholder: "Error contains…", "aria-label": "Show the failed jobs whose error contains" }));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    location.hash = listHash({ ...r, page: 0, after: "", before: "", error: form.elements.error.value.trim(), group: "" });
  });
  return h("span", { class: "filterbox" }, form,
    h("a", { href: errorsHash(r.type === "all" ? "" : r.type), id: "to-errors" }, "Errors by group ›"));
}

// errorsHash is the Errors view of a type ("" for the first type with
// failed jobs).
function errorsHash(type) {
  return `#/errors/${type ? encodeURIComponent(type) : ""}`;
}

// scan calls GET /jobs/search from cursor on, following its cursor until
// it has want jobs or has made SEARCH_CALLS calls: a search call looks at
// a bounded slice of the jobs and may find none in it. It returns the jobs
// found and the cursor to look further from (null at the end).
async function scan(params, cursor, want) {
  const q = new URLSearchParams(params);
  const jobs = [];
  for (let calls = 0; calls < SEARCH_CALLS; calls++) {
    if (cursor) q.set("cursor", cursor);
    q.set("limit", want - jobs.length);
    const res = await api("GET", `jobs/search?${q}`);
    jobs.push(...(res.jobs || []));
    cursor = res.cursor || null;
    if (!cursor || jobs.length >= want) break;
  }
  return { jobs, cursor };
}

function filterParams(r) {
  const p = { state: "failed" };
  if (r.type !== "all") p.type = r.type;
  if (r.error) p.error = r.error;
  if (r.group) p.error_group = r.group;
  return p;
}

// loadFiltered reads the failed jobs whose error passes the list's filter:
// core's search with bulk's filters (protocol §3.35), each type's in
// creation order, oldest first.
async function loadFiltered(r, cursor) {
  const { jobs, cursor: next } = await scan(filterParams(r), cursor, PAGE_SIZE);
  return { jobs, cursor: next, filtered: true };
}

function renderFiltered(r, list) {
  const what = r.group ? `in the group “${r.group}”` : `whose error contains “${r.error}”`;
  const table = jobTable("list", list.jobs, { state: r.state, type: r.type, filtered: "1" }, "No failed job matches (yet: look further).", true);
  const more = list.cursor && h("div", { class: "pager" },
    h("span", { class: "muted" }, `${list.jobs.length} found so far`),
    h("button", {
      id: "filter-more",
      onclick: async (e) => {
        e.target.disabled = true;
        try {
          const next = await loadFiltered(r, list.cursor);
          list.jobs.push(...next.jobs);
          list.cursor = next.cursor;
          $("#slot-list").replaceChildren(renderFiltered(r, list));
        } catch (err) { toast(err.message, true); e.target.disabled = false; }
      },
    }, "Look further"));
  const body = { state: "failed", ...(r.type === "all" ? {} : { type: r.type }), ...(r.error ? { error: r.error } : {}), ...(r.group ? { error_group: r.group } : {}) };
  const bulk = READONLY ? null : h("div", { class: "bulk", id: "bulk" },
    h("span", { class: "muted" }, `Every failed${r.type === "all" ? "" : " " + r.type} job ${what}:`),
    BULK.failed.map(([action, label, done]) =>
      armed(h("button", { class: action === "retry" ? "small" : "small danger", dataset: { bulk: action } }, label),
        `${label.replace(" all", "")} them? Click again`, () => runBulk({ action, ...body }, done))));
  return h("div", { class: "panel flush" },
    h("div", { class: "toolbar" },
      h("span", { class: "title", id: "filter-title" }, `Failed jobs${r.type === "all" ? "" : " · " + r.type} ${what}`),
      h("a", { href: listHash({ ...r, error: "", group: "", page: 0 }), id: "filter-clear" }, "× clear filter"),
      errorFilter(r)),
    bulk, table, more);
}

// loadErrors reads the groups of a type's failed jobs (GET /jobs/errors):
// the type of the route, else the first type with failed jobs.
async function loadErrors(r) {
  const st = r.type ? null : await api("GET", "stats?partial=true");
  const failing = Object.entries((st && st.types) || {}).filter(([, c]) => c.failed).map(([t]) => t).sort();
  const type = r.type || failing[0] || "";
  if (!type) return { type: "", groups: null };
  const res = await api("GET", `jobs/errors?${new URLSearchParams({ type })}`);
  return { type, ...res };
}

// renderErrorGroups shows a type's failed jobs grouped by error (normalised: numbers,
// ids, addresses and quoted values taken out; docs/protocol.md §3.39),
// largest group first, with a retry and a remove of each group by bulk.
function renderErrorGroups(r, data) {
  const types = Object.keys((stats && stats.types) || {}).sort();
  const typeSelect = h("select", { id: "errors-type", onchange: (e) => { location.hash = errorsHash(e.target.value); } },
    data.type ? null : h("option", { value: "", selected: true }, "—"),
    types.map((t) => h("option", { value: t, selected: t === data.type }, `${t} (${count("failed", t)} failed)`)));
  const toolbar = h("div", { class: "toolbar" }, h("span", { class: "title" }, `Errors${data.type ? " · " + data.type : ""}`),
    h("label", {}, "Type", typeSelect));
  if (!data.type) return h("div", { class: "panel flush", id: "errors" }, toolbar, h("p", { class: "empty" }, "No failed jobs."));
  const groups = data.groups || [];
  const note = data.read < data.failed
    ? `Grouped the newest ${data.read} of ${data.failed} failed jobs.`
    : `${data.failed} failed job${data.failed === 1 ? "" : "s"}.`;
  const rows = groups.map((g) => {
    const body = { state: "failed", type: data.type, error_group: g.group };
    const acts = g.group === "" || READONLY ? [] : [
      armed(h("button", { class: "small", dataset: { groupAction: "retry" } }, "Retry"), `Retry ${g.count}? Click again`,
        () => runBulk({ action: "retry", ...body }, "retried")),
      " ",
      armed(h("button", { class: "small danger", dataset: { groupAction: "remove" } }, "Remove"), `Remove ${g.count}? Click again`,
        () => runBulk({ action: "remove", ...body }, "removed")),
    ];
    return h("tr", { dataset: { group: g.group, count: g.count } },
      h("td", { class: "num" }, g.count),
      h("td", {},
        h("div", { class: "mono group" }, g.group === "" ? "(no error text)" : g.group),
        h("div", { class: "muted sample", title: g.sample }, g.sample)),
      h("td", {}, when(g.first_at)),
      h("td", {}, when(g.last_at)),
      h("td", { class: "act" },
        g.group === "" ? null : h("a", { href: listHash({ state: "failed", type: data.type, order: "desc", page: 0, error: "", group: g.group }), class: "group-jobs" }, "Jobs"),
        " ", acts));
  });
  return h("div", { class: "panel flush", id: "errors", dataset: { type: data.type } },
    toolbar,
    h("p", { class: "muted note" }, note, " Errors are grouped by their first line with numbers, ids, addresses and quoted values taken out."),
    h("table", { id: "error-groups" },
      h("thead", {}, h("tr", {}, h("th", { class: "num" }, "jobs"), h("th", {}, "error"), h("th", {}, "first seen"), h("th", {}, "last seen"), h("th", {}, ""))),
      h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { class: "empty", colspan: 5 }, "No failed jobs of this type.")))));
}

// armed makes a button that asks to be clicked twice: the first click arms it
// and says what the second will do (confirm), the second runs fn.
function armed(button, confirm, fn) {
  button.addEventListener("click", () => {
    if (!button.classList.contains("armed")) {
      button.classList.add("armed");
      button.textContent = confirm;
      return;
    }
    button.disabled = true;
    fn();
  });
  return button;
}

// ---- bulk actions ---------------------------------------------------------------

// BULK lists the bulk actions that make sense for the jobs of a state, with
// their button label and the past tense for the toast.
const BULK = {
  failed: [["retry", "Retry all", "retried"], ["remove", "Remove all", "removed"]],
  cancelled: [["retry", "Retry all", "retried"], ["remove", "Remove all", "removed"]],
  complete: [["remove", "Remove all", "removed"]],
  delayed: [["promote", "Promote all", "promoted"], ["cancel", "Cancel all", "cancelled"], ["remove", "Remove all", "removed"]],
  inactive: [["cancel", "Cancel all", "cancelled"], ["remove", "Remove all", "removed"]],
  active: [["cancel", "Cancel all", "cancelled"]],
  waiting: [["cancel", "Cancel all", "cancelled"], ["remove", "Remove all", "removed"]],
};

// bulkBar offers the bulk actions of the list's state and type: each asks
// for a second click, then calls POST /jobs/bulk until no job is left (each
// call does at most a bounded number of jobs).
function bulkBar(r, total) {
  const actions = BULK[r.state];
  if (!actions || !total || READONLY) return null;
  const what = `${total} ${r.state}${r.type === "all" ? "" : " " + r.type} job${total === 1 ? "" : "s"}`;
  return h("div", { class: "bulk", id: "bulk" },
    h("span", { class: "muted" }, `All ${what}:`),
    actions.map(([action, label, done]) =>
      armed(h("button", { class: action === "retry" || action === "promote" ? "small" : "small danger", dataset: { bulk: action } }, label),
        `${label.replace(" all", "")} ${what}? Click again`,
        () => runBulk({ action, state: r.state, ...(r.type === "all" ? {} : { type: r.type }) }, done))));
}

async function runBulk(body, done) {
  let n = 0;
  try {
    for (let calls = 0; calls < 1000; calls++) {
      const res = await api("POST", "jobs/bulk", body);
      n += res.done || 0;
      if (!res.more) break;
      body = { ...body, cursor: res.cursor };
    }
    toast(`${n} job${n === 1 ? "" : "s"} ${done}`);
  } catch (e) {
    toast(`${n} ${done}, then: ${e.message}`, true);
  }
  scheduleRefresh();
}

// ---- the history chart -------------------------------------------------------------

// RANGES are the chart's ranges and what each asks GET /history for: a
// day of minutes is kept, and a week of hours.
const RANGES = { "1h": { minutes: 60 }, "24h": { minutes: 1440 }, "7d": { hours: 168 } };
// chartRange is the range the user picked last; the browser keeps it (when
// it lets the page keep anything: storage may be off).
const stored = (key, value) => {
  try {
    if (value === undefined) return localStorage.getItem(key);
    localStorage.setItem(key, value);
  } catch (e) { /* no storage: the choice lasts as long as the page */ }
  return null;
};
let chartRange = RANGES[stored("kuebus.chart")] ? stored("kuebus.chart") : "1h";

// loadListView reads the list and, beside it, the chart range's counts of
// the type filter (GET /history); a chart that cannot be read leaves the
// list alone.
async function loadListView(r) {
  const q = new URLSearchParams(RANGES[chartRange]);
  if (r.type !== "all") q.set("type", r.type);
  const [list, history, policy] = await Promise.all([loadList(r), api("GET", `history?${q}`).catch(() => null),
    // A type's page shows its policy; a core without type_get leaves it out.
    r.type === "all" ? null : api("GET", `types/${encodeURIComponent(r.type)}/policy`).catch(() => null)]);
  return { list, policy, history: history && { range: chartRange, step: history.step || 60000, points: history.minutes || [] } };
}

// The uPlot charts on the page, destroyed when redrawn.
let plots = [];

function chartWidth() {
  return Math.max(320, ($("#view").clientWidth || 900) - 36);
}

window.addEventListener("resize", () => plots.forEach((u) => u.setSize({ width: chartWidth(), height: u.height })));

// renderChart draws the range's history with uPlot (vendored, ui/vendor):
// jobs created, completed and failed per step, and the queue: the jobs
// waiting and the wait p95 (ready to leased), each over time with axes.
// The panel's data-* attributes hold the totals the legend shows.
function renderChart(r, hist) {
  plots.forEach((u) => u.destroy());
  plots = [];
  if (!hist || !hist.points.length) return null;
  const pts = hist.points;
  const sum = (k) => pts.reduce((a, m) => a + (m[k] || 0), 0);
  const per = hist.step === 60000 ? "minute" : "hour";
  const xs = pts.map((m) => m.at / 1000);
  const col = (k) => pts.map((m) => m[k] || 0);
  const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  const waitFmt = (v) => (v === null || v === undefined ? "—" : duration(v));
  const jobsBox = h("div", { class: "plot", id: "chart-jobs" });
  const queueBox = h("div", { class: "plot", id: "chart-queue" });
  const common = (title, height) => ({ title, width: chartWidth(), height, cursor: { drag: { x: false, y: false } }, legend: { live: true } });
  const draw = () => {
    if (!jobsBox.isConnected) return;
    plots.push(new uPlot({
      ...common(`Jobs per ${per}`, 170),
      scales: { x: { time: true } },
      axes: [{}, { label: "jobs", size: 50 }],
      series: [{},
        { label: "created", stroke: css("--inactive"), width: 1.5 },
        { label: "completed", stroke: css("--complete"), fill: "rgba(47, 158, 98, .15)", width: 1.5 },
        { label: "failed", stroke: css("--failed"), fill: "rgba(214, 69, 69, .15)", width: 1.5 }],
    }, [xs, col("created"), col("completed"), col("failed")], jobsBox));
    plots.push(new uPlot({
      ...common("Queue: waiting jobs and wait p95", 170),
      scales: { x: { time: true }, ms: { auto: true } },
      axes: [{}, { label: "waiting", size: 50 }, { side: 1, scale: "ms", label: "wait p95", size: 70, grid: { show: false }, values: (u, vals) => vals.map(waitFmt) }],
      series: [{},
        { label: "waiting", stroke: css("--delayed"), width: 1.5 },
        { label: "wait p95", scale: "ms", stroke: css("--active"), width: 1.5, value: (u, v) => waitFmt(v),
          // a step with no start has no wait: a gap, not a zero
          spanGaps: false }],
    }, [xs, col("waiting"), pts.map((m) => (m.started ? m.wait_p95 : null))], queueBox));
  };
  // uPlot measures its box: draw once the panel is on the page.
  requestAnimationFrame(draw);
  const rangeButton = (name) => h("button", {
    class: `small${name === hist.range ? " on" : ""}`, dataset: { range: name }, "aria-pressed": name === hist.range ? "true" : "false",
    onclick: () => { chartRange = name; stored("kuebus.chart", name); render(false); },
  }, name);
  const p95 = Math.max(0, ...pts.map((m) => (m.started ? m.wait_p95 : 0)));
  return h("div", {
    class: "panel chartpanel", id: "history-chart",
    dataset: { range: hist.range, step: hist.step, points: pts.length, created: sum("created"), completed: sum("completed"), failed: sum("failed"), waiting: pts[pts.length - 1].waiting || 0, p95max: p95 },
  },
    h("div", { class: "charthead" }, h("h3", {}, `Last ${hist.range === "1h" ? "hour" : hist.range === "24h" ? "24 hours" : "7 days"}${r.type === "all" ? "" : " · " + r.type}`),
      h("span", { class: "legend" },
        h("span", { class: "k created" }, `created ${sum("created")}`),
        h("span", { class: "k done" }, `completed ${sum("completed")}`),
        h("span", { class: "k bad" }, `failed ${sum("failed")}`),
        h("span", { class: "k waiting" }, `waiting ${pts[pts.length - 1].waiting || 0}`),
        h("span", { class: "k p95" }, `max wait p95 ${p95 ? duration(p95) : "—"}`)),
      h("span", { class: "ranges", role: "group", "aria-label": "Chart range" }, Object.keys(RANGES).map(rangeButton))),
    jobsBox, queueBox);
}

// ---- search -----------------------------------------------------------------------

// loadSearch reads the first page of a search; "Load more" reads the next
// ones with the cursor.
async function loadSearch(r) {
  if (!r.q) return { jobs: [], cursor: null };
  return searchPage(r, "");
}

// searchPage reads up to a page of matches from cursor on: as many search
// calls as it takes (at most SEARCH_CALLS), since a call that looked at its
// thousand jobs and found none still has a cursor.
async function searchPage(r, cursor) {
  const p = { q: r.q };
  if (r.type) p.type = r.type;
  if (r.state) p.state = r.state;
  return scan(p, cursor, PAGE_SIZE);
}

function jobRow(j, withError) {
  return h("tr", { dataset: { id: j.id, state: j.state }, class: fresh.has(j.id) ? "flash" : "", onclick: () => { location.hash = `#/job/${j.id}`; } },
    h("td", { class: "num mono" }, h("a", { href: `#/job/${j.id}` }, j.id)),
    h("td", {}, j.type),
    h("td", {}, badge(j.state)),
    h("td", {}, priorityName(j.priority)),
    h("td", { class: "num" }, `${j.attempts}/${j.max_attempts}`),
    h("td", {}, bar(j.progress, j.state)),
    h("td", { class: "data mono", title: j.data === undefined ? "" : JSON.stringify(j.data) }, j.data === undefined ? "" : JSON.stringify(j.data)),
    withError ? h("td", { class: "error", title: j.error || "" }, j.error || "") : h("td", { class: "where" }, whereNow(j)),
    h("td", {}, ago(j.created_at)),
    h("td", {}, ago(j.updated_at)));
}

// whereNow says what a job waits for or who holds it: a delayed job's due
// time, a running job's worker.
function whereNow(j) {
  if (j.state === "delayed") return h("span", { title: when(j.promote_at) }, `due ${ago(j.promote_at)}`);
  if (j.state === "active") return h("span", { class: "mono", title: `lease until ${when(j.lease_until)}` }, j.worker_id || "");
  return "";
}

// jobTable lists jobs; withError (the failed list) shows each job's last
// error where others show its due time or worker.
function jobTable(id, jobs, dataset, empty, withError) {
  return h("table", { class: "jobs", id, dataset },
    h("thead", {}, h("tr", {}, ["id", "type", "state", "priority", "attempts", "progress", "data", withError ? "error" : "due / worker", "created", "updated"].map((c, i) => h("th", { class: i === 0 || i === 4 ? "num" : "" }, c)))),
    h("tbody", {}, jobs.length ? jobs.map((j) => jobRow(j, withError)) : h("tr", {}, h("td", { class: "empty", colspan: 10 }, empty))));
}

function renderSearch(r, data) {
  const table = jobTable("results", data.jobs, { q: r.q }, r.q ? "No job matches." : "Type an id, a unique key or text of a job's data in the search box.");
  const more = data.cursor && h("div", { class: "pager" },
    h("button", {
      id: "search-more",
      onclick: async (e) => {
        e.target.disabled = true;
        try {
          const next = await searchPage(r, data.cursor);
          data.jobs.push(...next.jobs);
          data.cursor = next.cursor;
          $("#slot-search").replaceChildren(renderSearch(r, data));
        } catch (err) { toast(err.message, true); e.target.disabled = false; }
      },
    }, "Load more"));
  return h("div", { class: "panel flush" },
    h("div", { class: "toolbar" }, h("span", { class: "title" }, r.q ? `Jobs matching “${r.q}”` : "Search")),
    table, more);
}

// ---- schedules ---------------------------------------------------------------------

async function loadSchedules() {
  const res = await api("GET", "schedules");
  return Array.isArray(res) ? res : (res && res.schedules) || [];
}

// scheduleBody is what PUT /schedules/:name takes, from a schedule as GET
// /schedules shows it.
function scheduleBody(sc, change) {
  const body = { spec: sc.spec, paused: !!sc.paused, ...change };
  if (sc.cron) body.cron = sc.cron; else body.every = sc.every;
  if (sc.tz) body.tz = sc.tz;
  return body;
}

function renderSchedules(list) {
  const act = async (what, method, path, body) => {
    try {
      await api(method, path, body);
      toast(what);
      render(false);
    } catch (e) { toast(e.message, true); }
  };
  const path = (sc) => `schedules/${encodeURIComponent(sc.name)}`;
  const rows = list.map((sc) =>
    h("tr", { dataset: { name: sc.name, paused: sc.paused ? "1" : "0", last: sc.last_at || 0 } },
      h("td", { class: "mono" }, sc.name, sc.paused ? h("span", { class: "tag paused" }, "paused") : null),
      h("td", { class: "mono" }, sc.cron ? `${sc.cron}${sc.tz ? " (" + sc.tz + ")" : ""}` : `every ${duration(sc.every)}`),
      h("td", {}, (sc.spec && sc.spec.type) || ""),
      h("td", {}, sc.paused ? "—" : when(sc.next_at)),
      h("td", {}, when(sc.last_at)),
      READONLY ? h("td", {}) : h("td", { class: "act" },
        h("button", { class: "small", dataset: { toggle: sc.name },
          onclick: () => act(sc.paused ? `${sc.name} resumed` : `${sc.name} paused`, "PUT", path(sc), scheduleBody(sc, { paused: !sc.paused })) },
        sc.paused ? "Resume" : "Pause"), " ",
        sc.paused ? null : h("button", { class: "small", dataset: { run: sc.name }, title: "Make its job now; the next run stays when it was",
          onclick: () => act(`${sc.name} ran: a job was made`, "POST", `${path(sc)}/run`) }, "Run now"), " ",
        armed(h("button", { class: "small danger", dataset: { remove: sc.name } }, "Remove"), "Click again",
          () => act(`${sc.name} removed`, "DELETE", path(sc))))));
  const table = h("table", { id: "schedules" },
    h("thead", {}, h("tr", {}, ["name", "when", "type", "next run", "last run", ""].map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { class: "empty", colspan: 6 }, "No schedules yet."))));

  const field = (name, attrs) => h("input", { name, ...attrs });
  const form = h("form", { id: "schedule-form", class: "form" },
    h("label", {}, "Name", field("name", { required: true, placeholder: "nightly-report" })),
    h("label", {}, "Cron", field("cron", { placeholder: "0 3 * * *" })),
    h("label", {}, "or every (e.g. 30s, 5m)", field("every", { placeholder: "5m" })),
    h("label", {}, "Time zone", field("tz", { placeholder: "UTC" })),
    h("label", {}, "Job type", field("type", { required: true, placeholder: "report" })),
    h("label", { class: "wide" }, "Data (JSON)", field("data", { placeholder: "{\"kind\":\"daily\"}" })),
    h("button", { class: "primary", type: "submit", id: "schedule-save" }, "Save schedule"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const v = Object.fromEntries(new FormData(form));
    const body = { spec: { type: v.type } };
    if (v.cron) body.cron = v.cron;
    if (v.every) {
      // Written as Go writes a duration, sent in ms as the API takes it.
      body.every = parseDuration(v.every);
      if (body.every === null) {
        showFieldErrors(form, { every: `"${v.every}" is not a duration: write one as 30s, 5m or 1h30m` }, "page");
        return;
      }
    }
    showFieldErrors(form, {}, "page");
    if (v.tz) body.tz = v.tz;
    if (v.data) {
      try { body.spec.data = JSON.parse(v.data); } catch (err) { toast(`data: ${err.message}`, true); return; }
    }
    api("PUT", `schedules/${encodeURIComponent(v.name)}`, body).then(() => {
      toast(`Schedule ${v.name} saved`);
      render(false);
    }, (err) => {
      // core's invalid error under the field it names: every, cron, tz,
      // name, spec.type (the type field), spec.data
      const field = errorField(err.message, ["every", "cron", "tz", "name", "spec.type", "spec.data", "spec"]);
      showFieldErrors(form, { [{ "spec.type": "type", "spec.data": "data" }[field] || field || "_"]: err.message }, "core");
      toast(err.message, true);
    });
  });
  return h("div", {},
    h("div", { class: "panel flush" }, h("div", { class: "toolbar" }, h("span", { class: "title" }, "Schedules")), table),
    READONLY ? null : h("div", { class: "panel" }, h("h3", {}, "Add or change a schedule"), form));
}

// ---- durations -------------------------------------------------------------------

// DURATION_UNITS are the units a duration is written in, as Go's
// time.ParseDuration and the CLI take them (ns and µs make no sense here).
const DURATION_UNITS = { ms: 1, s: 1000, m: 60000, h: 3600000 };

// parseDuration reads "500ms", "30s", "5m", "1h30m", "1.5s" into whole ms;
// null when the text is not such a duration (a bare number has no unit,
// and is refused rather than guessed).
function parseDuration(text) {
  const t = text.trim();
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(t)) return null;
  let ms = 0;
  for (const [, n, , unit] of t.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g)) ms += Number(n) * DURATION_UNITS[unit];
  return Math.round(ms);
}

// goDuration writes ms as parseDuration reads it, in the largest unit
// that keeps it whole: 60000 → "1m", 1500 → "1500ms".
function goDuration(ms) {
  if (!ms) return "";
  for (const [unit, size] of [["h", 3600000], ["m", 60000], ["s", 1000]]) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

// firstWait is how long a backoff waits after the first failed attempt:
// a fixed one its delay, an exponential one half of it (Kue's formula,
// docs/protocol.md "Backoff"), then 3, 7, 15 times that.
function firstWait(b) {
  return b.type === "exponential" ? Math.round(b.delay / 2) : b.delay;
}

// ---- a type's policy ---------------------------------------------------------------

// POLICY_FIELDS are the policy's fields the type's page shows and edits,
// by their name on the wire (core's invalid errors name them so), with
// their label and kind: a whole number, or a duration written as Go
// writes one (30s, 5m) and sent in ms.
const POLICY_FIELDS = [
  ["concurrency", "Concurrency (active at most, 0: no limit)", "int"],
  ["rate.limit", "Rate: starts", "int"],
  ["rate.per", "per (e.g. 1s, 1m)", "duration"],
  ["group_concurrency", "Each group: concurrency", "int"],
  ["group_rate.limit", "Each group: rate, starts", "int"],
  ["group_rate.per", "per", "duration"],
  ["aging.per", "Aging: credit per priority step (e.g. 1s)", "duration"],
  ["defaults.priority", "Default priority", "int"],
  ["defaults.max_attempts", "Default attempts", "int"],
  ["defaults.ttl", "Default ttl (e.g. 2m)", "duration"],
  ["defaults.backoff.type", "Default backoff", "backoff"],
  ["defaults.backoff.delay", "first retry after (e.g. 500ms)", "duration"],
  ["defaults.stall_limit", "Default stall limit", "int"],
];

function getPath(obj, path) {
  return path.split(".").reduce((o, k) => (o === undefined || o === null ? undefined : o[k]), obj);
}

function setPath(obj, path, v) {
  const keys = path.split(".");
  const last = keys.pop();
  let o = obj;
  for (const k of keys) o = o[k] = o[k] && typeof o[k] === "object" ? o[k] : {};
  o[last] = v;
}

// policyBody is what PUT /types/{type}/policy takes, from the form: an
// empty field sets nothing; what the form does not show (the retention
// defaults) is kept from the policy as it was read. Returns { body,
// errors } where errors names the fields the page itself cannot read.
function policyBody(form, policy) {
  const body = JSON.parse(JSON.stringify(policy || {}));
  delete body.type;
  for (const k of ["concurrency", "rate", "group_concurrency", "group_rate", "aging"]) delete body[k];
  if (body.defaults) for (const k of ["priority", "max_attempts", "ttl", "backoff", "stall_limit"]) delete body.defaults[k];
  const errors = {};
  for (const [name, , kind] of POLICY_FIELDS) {
    const text = form.elements[name].value.trim();
    if (text === "") continue;
    if (kind === "duration") {
      const ms = parseDuration(text);
      if (ms === null) errors[name] = `"${text}" is not a duration: write one as 500ms, 30s, 5m or 1h30m`;
      else setPath(body, name, ms);
    } else if (kind === "int") {
      // Any number goes to core as typed: core's error names what is wrong.
      setPath(body, name, Number(text));
    } else {
      setPath(body, name, text);
    }
  }
  // "first retry after D" is what the CLI's exponential:D and Go's
  // core.ExponentialBackoff(D) mean: the wire's delay 2D, whose Kue
  // formula first waits half of it (docs/protocol.md, "Backoff").
  const b = body.defaults && body.defaults.backoff;
  if (b && b.type === "exponential" && b.delay) b.delay *= 2;
  if (body.defaults && !Object.keys(body.defaults).length) delete body.defaults;
  return { body, errors };
}

// showFieldErrors marks each field an error names ({field: message}) and
// puts the message under it; a message that names no field of the form
// goes under the form. by says who found them: "page" (before sending)
// or "core" (its invalid reply).
function showFieldErrors(form, errors, by) {
  form.querySelectorAll(".field-error").forEach((el) => el.remove());
  form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
  for (const [field, message] of Object.entries(errors)) {
    const input = form.elements[field];
    const note = h("span", { class: "field-error", dataset: { field, by }, role: "alert" }, message);
    if (input) {
      input.setAttribute("aria-invalid", "true");
      input.closest("label").append(note);
    } else {
      form.append(note);
    }
  }
}

// errorField finds the field core's invalid error names ("rate.per: 0 ms
// is outside …"): the longest of names (a form's fields) the message
// starts a clause with, or "" when it names none of them.
function errorField(message, names) {
  names = [...names].sort((a, b) => b.length - a.length);
  return names.find((n) => new RegExp(`(^|[^\\w.])${n.replace(/\./g, "\\.")}:`).test(message)) || "";
}

// renderPolicy is a type's policy on its page: its limits, aging and
// defaults (docs/policy.md), and a form that changes them, left out for
// a user who may only look (READONLY).
function renderPolicy(type, policy) {
  if (!policy) return null;
  const shown = (name, kind) => {
    let v = getPath(policy, name);
    if (name === "defaults.backoff.delay" && v) v = firstWait(policy.defaults.backoff);
    if (v === undefined || v === null || v === 0 && kind !== "int") return "";
    return kind === "duration" ? goDuration(v) : String(v);
  };
  const set = POLICY_FIELDS.filter(([name, , kind]) => shown(name, kind) !== "");
  const summary = h("dl", { class: "kv", id: "policy-now" }, set.length
    ? set.flatMap(([name, , kind]) => [h("dt", {}, name), h("dd", { dataset: { field: name } }, shown(name, kind))])
    : [h("dt", {}, "policy"), h("dd", {}, "none: no limits, no defaults")]);
  const title = h("h3", {}, `${type}'s policy`);
  if (READONLY) return h("div", { class: "panel", id: "policy", dataset: { type } }, title, summary);
  const input = ([name, label, kind]) => {
    if (kind === "backoff") {
      const now = shown(name, kind);
      return h("label", {}, label, h("select", { name },
        ["", "fixed", "exponential"].map((b) => h("option", { value: b, selected: b === now }, b || "none"))));
    }
    return h("label", {}, label, h("input", {
      name, value: shown(name, kind), type: kind === "int" ? "number" : "text", step: kind === "int" ? 1 : null,
      placeholder: kind === "duration" ? "e.g. 30s" : "",
    }));
  };
  const form = h("form", { class: "form", id: "policy-form", novalidate: true },
    POLICY_FIELDS.map(input),
    h("button", { class: "primary", type: "submit", id: "policy-save" }, "Save policy"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const { body, errors } = policyBody(form, policy);
    showFieldErrors(form, errors, "page");
    if (Object.keys(errors).length) return;
    try {
      await api("PUT", `types/${encodeURIComponent(type)}/policy`, body);
      toast(`${type}'s policy saved`);
      render(false);
    } catch (err) {
      const names = POLICY_FIELDS.map(([n]) => n).concat(["rate", "group_rate", "aging", "defaults"]);
      showFieldErrors(form, { [errorField(err.message, names) || "_"]: err.message }, "core");
      toast(err.message, true);
    }
  });
  return h("div", { class: "panel", id: "policy", dataset: { type } }, title,
    h("p", { class: "muted" }, "Applied by every core at once. An empty field sets nothing; durations are written as 500ms, 30s, 5m or 1h30m."),
    form);
}

// ---- workers ---------------------------------------------------------------------

// renderWorkers lists the workers heard from lately (each beats every few
// seconds): what they handle, how busy they are, since when they run.
function renderWorkers(data) {
  const list = (data && data.workers) || [];
  const rows = list.map((w) =>
    h("tr", { dataset: { worker: w.worker } },
      h("td", { class: "mono" }, w.worker),
      h("td", {}, w.host ? `${w.host}${w.pid ? " · pid " + w.pid : ""}` : ""),
      h("td", {}, (w.types || []).join(", ")),
      h("td", { class: "num" }, `${w.running} / ${w.concurrency}`),
      h("td", {}, ago(w.started_at)),
      h("td", {}, ago(w.seen_at))));
  return h("div", { class: "panel flush" },
    h("div", { class: "toolbar" }, h("span", { class: "title" }, `Workers (${list.length})`),
      h("span", { class: "muted" }, "heard from in the last 15 s; the page reads again as jobs change")),
    h("table", { id: "workers" },
      h("thead", {}, h("tr", {}, ["worker", "host", "types", "running", "started", "last heard"].map((c, i) => h("th", { class: i === 3 ? "num" : "" }, c)))),
      h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { class: "empty", colspan: 6 }, "No worker has been heard from lately.")))));
}

// ---- one job -------------------------------------------------------------------

// renderErrors shows a job's failed attempts, newest last, with the stack a
// Go worker sent, folded.
function renderErrors(errors) {
  if (!errors || !errors.length) return null;
  return h("div", { class: "panel" }, h("h3", {}, `Failed attempts (${errors.length})`),
    h("table", { id: "job-errors" },
      h("thead", {}, h("tr", {}, h("th", { class: "num" }, "attempt"), h("th", {}, "when"), h("th", {}, "error"))),
      h("tbody", {}, errors.map((e) =>
        h("tr", {},
          h("td", { class: "num" }, e.attempt),
          h("td", {}, when(e.at)),
          h("td", {}, h("div", { class: "errorbox" }, e.error),
            e.stack ? h("details", {}, h("summary", {}, "stack"), h("pre", { class: "log" }, e.stack)) : null))))));
}

// loadJob reads a job and its log; null when there is no such job.
async function loadJob(id) {
  try {
    const [job, log, why, deps] = await Promise.all([api("GET", `job/${id}`), api("GET", `job/${id}/log?entries=1`),
      // why it is not running (explain); a core without it leaves the panel out
      api("GET", `job/${id}/why`).catch(() => null),
      api("GET", `job/${id}/deps`).catch(() => ({ dependencies: [], dependents: [] }))]);
    return { job, lines: log.entries || [], why, deps };
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
  const { job, lines, why, deps } = loaded;
  const act = async (what, method, path, done) => {
    try {
      await api(method, path);
      toast(what);
      if (done) done();
      scheduleRefresh();
    } catch (e) { toast(e.message, true); }
  };
  const actions = h("div", { class: "actions" });
  if (job.state === "delayed") {
    // Run now: the job is made ready as if it were due (set_state to
    // inactive, as bulk's promote does for many).
    actions.append(h("button", { id: "run-now", class: "primary", onclick: () => act(`Job ${id} runs now`, "PUT", `job/${id}/state/inactive`) }, "Run now"));
  }
  if (job.state === "failed" || job.state === "complete" || job.state === "cancelled") {
    actions.append(h("button", { id: "retry", class: "primary", onclick: () => act(`Job ${id} queued again`, "PUT", `job/${id}/state/inactive`) },
      job.state === "failed" ? "Retry" : "Run again"));
  }
  const named = PRIORITIES.some(([, v]) => v === job.priority);
  const prio = h("select", { id: "priority" },
    PRIORITIES.map(([n, v]) => h("option", { value: n, selected: v === job.priority }, `${n} (${v})`)),
    named ? null : h("option", { value: String(job.priority), selected: true }, String(job.priority)));
  actions.append(h("label", { class: "muted" }, "Priority ", prio),
    h("button", { id: "set-priority", onclick: () => act("Priority changed", "PUT", `job/${id}/priority/${prio.value}`) }, "Set"));
  const remove = armed(h("button", { id: "remove", class: "danger" }, "Remove"), "Click again to remove",
    () => act(`Job ${id} removed`, "DELETE", `job/${id}`, () => { location.hash = "#/"; }));
  if (["delayed", "inactive", "active", "waiting"].includes(job.state)) {
    actions.append(armed(h("button", { id: "cancel", class: "danger" }, "Cancel"), "Click again to cancel",
      () => act(`Job ${id} cancelled`, "POST", `job/${id}/cancel`)));
  }
  actions.append(remove);
  if (READONLY) actions.replaceChildren();

  const kv = (pairs) => h("dl", { class: "kv" }, pairs.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
  const backoff = job.backoff ? `${job.backoff.type}, first retry after ${duration(firstWait(job.backoff))}` : "none (retry at once)";
  return h("div", { id: "job", dataset: { id: job.id, state: job.state } },
    h("a", { class: "back", href: listHash({ state: job.state, type: "all", order: defaultOrder(job.state), page: 0 }) }, `‹ ${job.state} jobs`),
    h("div", { class: "jobhead" }, h("h1", {}, `#${job.id} `, h("span", { class: "muted" }, job.type)), h("span", { id: "job-state" }, badge(job.state)),
      job.broadcast ? h("span", { class: "tag broadcast", id: "job-broadcast", title: "published to every listener when due (job.broadcast), never leased by a worker" }, "broadcast") : null, actions),
    why && why.reason !== job.state ? h("div", { class: "panel", id: "job-why" }, h("h3", {}, "Why"),
      h("p", {}, h("span", { class: "mono", dataset: { reason: why.reason } }, why.reason), " — ", why.detail)) : null,
    h("div", { class: "panel" }, h("h3", {}, "Progress"),
      h("div", { class: "progress" }, bar(job.progress, job.state, true), h("span", { class: "mono", id: "job-progress" }, `${job.progress || 0}%`))),
    job.error ? h("div", { class: "panel" }, h("h3", {}, job.state === "failed" ? "Error" : "Last error"), h("div", { class: "errorbox", id: "job-error" }, job.error)) : null,
    renderErrors(job.errors),
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
        ["remove on complete", h("span", { id: "job-roc" }, retention(job.remove_on_complete, job.type, "complete"))],
        ["remove on fail", h("span", { id: "job-rof" }, retention(job.remove_on_fail, job.type, "failed"))],
        ...(job.schedule ? [["schedule", `${job.schedule}, tick ${when(job.schedule_at)}`]] : []),
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
    renderDeps(job, deps),
    h("div", { class: "panel" }, h("h3", {}, `Log (${lines.length})`),
      h("pre", { class: "log", id: "job-log" }, lines.length ? lines.map(logLine) : "(empty)")));
}

// logLine is one line of a job's log with the time it was added (a line
// stored before lines had times has none).
function logLine(entry) {
  const at = entry.at ? new Date(entry.at) : null;
  const pad = (n, w) => String(n).padStart(w || 2, "0");
  const stamp = at ? `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}.${pad(at.getMilliseconds(), 3)}` : "";
  return h("div", { class: "logline" },
    h("time", { class: "muted", datetime: at ? at.toISOString() : null, title: at ? at.toLocaleString() : "no time kept" }, stamp.padEnd(12)),
    " ", entry.line);
}

// renderDeps lists the jobs a job depends on and those that wait for it,
// each with its state (nothing when it has neither).
function renderDeps(job, deps) {
  if (!deps || (!deps.dependencies.length && !deps.dependents.length)) return null;
  const rows = (list) => h("table", { class: "deps" }, h("tbody", {}, list.map((d) =>
    h("tr", {}, h("td", {}, h("a", { href: `#/job/${d.id}` }, `#${d.id}`)), h("td", { class: "muted" }, d.type || ""),
      h("td", {}, d.gone ? h("span", { class: "muted" }, "removed") : badge(d.state))))));
  const waits = job.state === "waiting" ? ` (${job.pending || 0} pending)` : "";
  return h("div", { id: "job-deps" },
    h("p", {}, h("a", { id: "flow-link", href: `#/job/${job.id}/flow` }, "Flow: the graph of every job this one is linked to ›")),
    h("div", { class: "grid2" },
    h("div", { class: "panel" }, h("h3", {}, `Depends on (${deps.dependencies.length})${waits}`),
      deps.dependencies.length ? rows(deps.dependencies) : h("p", { class: "muted" }, "nothing")),
    h("div", { class: "panel" }, h("h3", {}, `Dependents (${deps.dependents.length})`),
      deps.dependents.length ? rows(deps.dependents) : h("p", { class: "muted" }, "none"))));
}

// ---- the flow view ------------------------------------------------------------

// FLOW_MAX bounds the jobs the flow view reads (one GET /job/{id}/deps
// each): a flow of a few hundred jobs is drawn whole; past it the view
// draws the FLOW_MAX nearest the job it started from and says so.
const FLOW_MAX = 500;
// FLOW_READS is how many deps reads run at once.
const FLOW_READS = 8;

// loadFlow walks a job's dependencies and dependents, breadth first from
// the job, and returns the graph: { nodes: [{id, type, state, gone}],
// edges: [[from, to]] (from must complete before to), cut } where cut says
// the walk stopped at FLOW_MAX jobs. null when the job does not exist.
async function loadFlow(id) {
  let root;
  try { root = await api("GET", `job/${id}`); } catch (e) {
    if (e.status === 404) return null;
    throw e;
  }
  const nodes = new Map([[id, { id, type: root.type, state: root.state }]]);
  const edges = new Map(); // "from>to" → [from, to]
  const queue = [id];
  let cut = false;
  const add = (o, from, to) => {
    if (!nodes.has(o.id)) {
      if (nodes.size >= FLOW_MAX) { cut = true; return; }
      nodes.set(o.id, { id: o.id, type: o.type || "", state: o.gone ? "removed" : o.state, gone: !!o.gone });
      // A removed job has no links left to read.
      if (!o.gone) queue.push(o.id);
    }
    edges.set(`${from}>${to}`, [from, to]);
  };
  while (queue.length) {
    const batch = queue.splice(0, FLOW_READS);
    const read = await Promise.all(batch.map((j) => api("GET", `job/${j}/deps`).catch((e) => {
      // Removed since a neighbour named it: no links.
      if (e.status === 404) return { dependencies: [], dependents: [] };
      throw e;
    })));
    batch.forEach((j, i) => {
      for (const o of read[i].dependencies || []) add(o, o.id, j);
      for (const o of read[i].dependents || []) add(o, j, o.id);
    });
  }
  return { nodes: [...nodes.values()], edges: [...edges.values()], cut };
}

// shownFlow is the flow last read: { id, graph }.
let shownFlow = null;

// loadFlowLive reads the flow again after events only when one of them is
// about a job it draws: a walk costs up to FLOW_MAX reads, and the jobs of
// other flows or none change all the time. A job newly made to depend on
// one of the flow's shows once a job of the flow changes, or on a reload.
async function loadFlowLive(r, live) {
  if (live && shownFlow && shownFlow.id === r.id && shownFlow.graph &&
      !shownFlow.graph.nodes.some((n) => fresh.has(n.id))) return shownFlow.graph;
  const graph = await loadFlow(r.id);
  shownFlow = { id: r.id, graph };
  return graph;
}

// flowLayers puts each job in a layer one below its deepest dependency
// (the longest path from a job without dependencies), and orders each
// layer by where its jobs' dependencies sit, which keeps most edges from
// crossing. Returns the layers, each a list of nodes.
function flowLayers(graph) {
  const parents = new Map(graph.nodes.map((n) => [n.id, []]));
  const children = new Map(graph.nodes.map((n) => [n.id, []]));
  for (const [from, to] of graph.edges) {
    parents.get(to).push(from);
    children.get(from).push(to);
  }
  const layer = new Map();
  const left = new Map(graph.nodes.map((n) => [n.id, parents.get(n.id).length]));
  const ready = graph.nodes.filter((n) => !left.get(n.id)).map((n) => n.id);
  while (ready.length) {
    const id = ready.shift();
    const l = Math.max(-1, ...parents.get(id).map((p) => layer.get(p))) + 1;
    layer.set(id, l);
    for (const c of children.get(id)) {
      left.set(c, left.get(c) - 1);
      if (!left.get(c)) ready.push(c);
    }
  }
  // Dependencies never form a cycle (core refuses them); should one
  // show, its jobs go in the top layer rather than nowhere.
  for (const n of graph.nodes) if (!layer.has(n.id)) layer.set(n.id, 0);
  const layers = [];
  for (const n of graph.nodes) (layers[layer.get(n.id)] ||= []).push(n);
  const pos = new Map();
  return layers.map((list) => {
    const mean = (n) => {
      const ps = parents.get(n.id).filter((p) => pos.has(p));
      return ps.length ? ps.reduce((a, p) => a + pos.get(p), 0) / ps.length : n.id;
    };
    const keyed = list.map((n) => [mean(n), n]).sort((a, b) => a[0] - b[0] || a[1].id - b[1].id).map(([, n]) => n);
    keyed.forEach((n, i) => pos.set(n.id, i));
    return keyed;
  });
}

const SVG = "http://www.w3.org/2000/svg";

// s builds an SVG element, as h does an HTML one.
function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "dataset") Object.assign(el.dataset, v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v);
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

// renderFlow draws the flow around a job as layers from top to bottom: a
// job's dependencies sit above it and an arrow runs from each to it. Each
// job is a box in its state's colour; clicking one opens its page.
function renderFlow(id, graph) {
  const back = h("a", { class: "back", href: `#/job/${id}` }, `‹ Job ${id}`);
  if (!graph) return h("div", { class: "panel", id: "flow", dataset: { jobs: 0 } }, back, h("p", {}, `Job ${id} does not exist (any more).`));
  // A layer wider than ROW_MAX boxes (a fan-out of hundreds) wraps into
  // rows ROW_GAP apart, so that the graph stays about a screen wide.
  const BOX_W = 150, BOX_H = 42, GAP_X = 24, GAP_Y = 60, ROW_GAP = 14, ROW_MAX = 10, PAD = 12;
  const layers = flowLayers(graph);
  const widest = Math.min(ROW_MAX, Math.max(...layers.map((l) => l.length)));
  const width = PAD * 2 + widest * BOX_W + (widest - 1) * GAP_X;
  const at = new Map();
  let y = PAD;
  layers.forEach((list, li) => {
    for (let start = 0; start < list.length; start += ROW_MAX) {
      const row = list.slice(start, start + ROW_MAX);
      const rowWidth = row.length * BOX_W + (row.length - 1) * GAP_X;
      row.forEach((n, i) => at.set(n.id, { x: (width - rowWidth) / 2 + i * (BOX_W + GAP_X), y, layer: li }));
      y += BOX_H + ROW_GAP;
    }
    y += GAP_Y - ROW_GAP;
  });
  const height = y - GAP_Y + PAD;
  const edges = graph.edges.map(([from, to]) => {
    const a = at.get(from), b = at.get(to);
    const x1 = a.x + BOX_W / 2, y1 = a.y + BOX_H, x2 = b.x + BOX_W / 2, y2 = b.y;
    const mid = (y1 + y2) / 2;
    return s("path", { class: "edge", d: `M${x1},${y1} C${x1},${mid} ${x2},${mid} ${x2},${y2 - 2}`, "marker-end": "url(#flow-arrow)", dataset: { from, to } });
  });
  const open = (n) => { location.hash = `#/job/${n.id}`; };
  const boxes = graph.nodes.map((n) => {
    const p = at.get(n.id);
    return s("g", {
      // The page's CSP allows no style attribute: the colour comes by class.
      class: `job s-${n.gone ? "cancelled" : n.state}${n.id === id ? " here" : ""}`, transform: `translate(${p.x},${p.y})`, tabindex: 0, role: "link",
      dataset: { id: n.id, state: n.state, layer: p.layer },
      onclick: () => open(n), onkeydown: (e) => { if (e.key === "Enter") open(n); },
    },
    s("title", {}, `#${n.id} ${n.type}: ${n.state}`),
    // An opaque box under the tinted one hides the edges that pass.
    s("rect", { class: "under", width: BOX_W, height: BOX_H, rx: 6 }),
    s("rect", { width: BOX_W, height: BOX_H, rx: 6 }),
    s("text", { x: 10, y: 17, class: "name" }, `#${n.id} ${n.type}`.slice(0, 22)),
    s("text", { x: 10, y: 33, class: "state" }, n.state));
  });
  const svg = s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `flow of ${graph.nodes.length} jobs` },
    s("defs", {}, s("marker", { id: "flow-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      s("path", { d: "M0,0 L10,5 L0,10 z" }))),
    edges, boxes);
  const states = {};
  for (const n of graph.nodes) states[n.state] = (states[n.state] || 0) + 1;
  return h("div", { class: "panel", id: "flow", dataset: { jobs: graph.nodes.length, edges: graph.edges.length, layers: layers.length, cut: graph.cut ? "1" : "0" } },
    back,
    h("h1", {}, `Flow of job ${id}`),
    h("p", { class: "muted" }, `${graph.nodes.length} jobs in ${layers.length} layers: `,
      Object.entries(states).map(([st, n]) => h("span", { class: "flow-count" }, badge(st), ` ${n} `))),
    graph.cut ? h("p", { class: "errorbox", id: "flow-cut" },
      `This flow has more than ${FLOW_MAX} jobs: only the ${FLOW_MAX} nearest job ${id} are drawn, and edges to the others are left out.`) : null,
    h("div", { class: "flow-graph" }, svg));
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
    // Partial: with a Redis shard down, the other types' counts and the
    // failing types named (type_errors), rather than no counts at all.
    st = await api("GET", "stats?partial=true");
  } catch (e) {
    toast(`Cannot read /stats: ${e.message}`, true);
  }
  try {
    data = await (LOADERS[r.view] || loadListView)(r, live);
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

// slotsFor lists the parts of a view: [name, key of its data, draw]. Every
// view, an error too, starts with the warning that names the types whose
// Redis shard is down: what fails over all types (the list of all, say)
// fails because of them.
function slotsFor(r, data, error) {
  const typeErrors = (stats && stats.type_errors) || [];
  return [["shards", JSON.stringify(typeErrors), () => renderTypeErrors(typeErrors)], ...viewSlots(r, data, error)];
}

function viewSlots(r, data, error) {
  if (error) {
    return [["error", error.message, () => h("div", { class: "panel" }, h("p", { class: "errorbox" }, error.message))]];
  }
  if (r.view === "job") return [["job", JSON.stringify([r.id, data]), () => renderJob(r.id, data)]];
  if (r.view === "flow") return [["flow", JSON.stringify([r.id, data]), () => renderFlow(r.id, data)]];
  if (r.view === "schedules") return [["schedules", JSON.stringify(data), () => renderSchedules(data)]];
  if (r.view === "workers") return [["workers", JSON.stringify(data), () => renderWorkers(data)]];
  if (r.view === "errors") return [["errors", JSON.stringify([data, READONLY]), () => renderErrorGroups(r, data)]];
  if (r.view === "search") return [["search", JSON.stringify([r, data]), () => renderSearch(r, data)]];
  const counts = [...STATES, "all"].map((s) => count(s, r.type));
  const types = (stats && stats.types) || {};
  return [
    ["cards", JSON.stringify([r, counts]), () => renderCards(r)],
    ["chart", JSON.stringify([r.type, data.history]), () => renderChart(r, data.history)],
    ["list", JSON.stringify([r, data.list, counts, Object.keys(types)]), () => renderList(r, data.list)],
    ["types", JSON.stringify([types, stats && stats.paused]), renderTypes],
    ...(r.type === "all" ? [] : [["policy", JSON.stringify([r.type, data.policy]), () => renderPolicy(r.type, data.policy)]]),
  ];
}

// renderTypeErrors is a warning naming the types whose counts core could
// not read (their Redis shard failed); nothing when every type was read.
function renderTypeErrors(typeErrors) {
  if (!typeErrors.length) return null;
  const names = typeErrors.map((te) => te.type).join(", ");
  return h("p", { class: "errorbox", id: "type-errors", title: typeErrors.map((te) => `${te.type}: ${te.error}`).join("\n") },
    `Counts leave out ${names}: core cannot read ${typeErrors.length === 1 ? "this type" : "these types"} (Redis shard down). Totals are "at least".`);
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
  const es = new EventSource("events");
  es.addEventListener("ready", () => {
    setLive(true, "live");
    // Whatever happened while we were away: read everything once.
    scheduleRefresh();
  });
  es.addEventListener("error", () => {
    setLive(false, "reconnecting…");
    // A browser does not retry a stream the server refused (401 once the
    // session ran out): a call tells, and api sends the page to /login.
    if (es.readyState === EventSource.CLOSED) api("GET", "stats").catch(() => {});
  });
  es.addEventListener("job", (e) => {
    const ev = JSON.parse(e.data);
    fresh.add(ev.id);
    if (route && route.view === "job" && route.id === ev.id && ev.event === "log") {
      const log = $("#job-log");
      if (log) {
        if (log.textContent === "(empty)") log.replaceChildren();
        log.append(logLine({ at: ev.at || Date.now(), line: ev.line }));
      }
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

// What each view reads; the list's is the default.
const LOADERS = { job: (r) => loadJob(r.id), flow: loadFlowLive, schedules: loadSchedules, search: loadSearch, workers: () => api("GET", "workers"), errors: loadErrors };

$("#search").addEventListener("submit", (e) => {
  e.preventDefault();
  const q = $("#search input").value.trim();
  if (q) location.hash = `#/search?${new URLSearchParams({ q })}`;
});
// "/" anywhere but in a field goes to the search box, as on GitHub or
// Gmail; Escape in the box leaves it.
document.addEventListener("keydown", (e) => {
  const t = e.target;
  const typing = t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName));
  if (e.key === "/" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
    e.preventDefault();
    $("#search input").focus();
  } else if (e.key === "Escape" && t === $("#search input")) {
    t.blur();
  }
});
window.addEventListener("hashchange", () => { window.scrollTo(0, 0); render(false); });
render(false);
connect();
