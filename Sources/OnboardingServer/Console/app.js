// The audit console: sign-in, the two views (a user's or a device's timeline; the devices), and
// the URL that holds what is shown. docs/console.md is the guide.

import * as api from "./api.js";
import { drawChart } from "./chart.js";
import { DeviceList } from "./devices.js";
import { byId, el, fill, showError, status } from "./dom.js";
import { download } from "./exporter.js";
import { clearLockout, forgetPolicy, showLockout, showPolicy } from "./lockout.js";
import * as pageState from "./state.js";
import { Timeline } from "./timeline.js";

/** Users one search lists (the endpoint's default). */
const searchLimit = 20;
/** The search runs this long after the last key press, so typing a name sends one request, not one per letter. */
const searchDelayMs = 250;
/** The endpoint's bounds for `search` (characters). */
const searchMostCharacters = 100;
/** Bars in the chart: one per 8 px of its width, within the endpoint's 1…500. */
const chartPixelsPerBar = 8;
const chartFewestBars = 12;
const chartMostBars = 120;

let role = null;
let state = pageState.read();
/** Everything the current view has running (requests, the live tail); closed when the view changes. */
let view = { close() {} };
/** Display names the searches found, by user id. */
const displayNames = new Map();

// ---- sign-in ----

api.whenUnauthorized(() => signOut("The server refused the token (revoked or mistyped): sign in again."));

byId("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = byId("token");
  const error = byId("signin-error");
  const token = input.value.trim();
  if (!token) { showError(error, "Paste a token first."); input.focus(); return; }
  const button = event.target.querySelector("button");
  button.disabled = true;
  showError(error, null);
  api.setToken(token);
  try {
    role = await detectRole();
    input.value = "";
    enter();
    // The form the focus was on is gone: start the keyboard at the content.
    byId("main").focus();
  } catch (failure) {
    api.clearToken();
    showError(error, failure.status === 403
      ? "That token may not read audits (a device token?): use an auditor or admin token."
      : failure.status === 401 ? "The server does not know that token." : `Could not sign in: ${failure.message}`);
    input.focus();
  } finally {
    button.disabled = false;
  }
});

byId("sign-out").addEventListener("click", () => signOut(null));

/**
 * Checks the token and tells an admin from an auditor (`GET /v1/token`): only an admin may clear
 * a lockout or revoke a token; a device token may not read audits at all (403, as the server
 * would answer its reads).
 */
async function detectRole() {
  const token = await api.json("/v1/token");
  if (token.role === "admin" || token.role === "auditor") return token.role;
  throw Object.assign(new Error("a device token cannot read audits"), { status: 403 });
}

function signOut(message) {
  api.clearToken();
  forgetPolicy();
  role = null;
  view.close();
  view = { close() {} };
  // Nothing the token read stays on the page.
  for (const id of ["timeline", "search-results", "devices-body", "chart", "lockout-body"]) fill(byId(id));
  byId("search").value = "";
  byId("nav").hidden = true;
  byId("who").hidden = true;
  byId("view-timeline").hidden = true;
  byId("view-devices").hidden = true;
  byId("signin").hidden = false;
  showError(byId("signin-error"), message);
  byId("token").focus();
}

function enter() {
  byId("signin").hidden = true;
  byId("nav").hidden = false;
  byId("who").hidden = false;
  byId("role").textContent = role === "admin" ? "admin" : "auditor";
  render();
}

async function start() {
  if (!api.hasToken()) { signOut(null); return; }
  try {
    role = await detectRole();
    enter();
  } catch (error) {
    signOut(error.status === 401 ? "The server refused the token: sign in again." : `Could not reach the server: ${error.message}`);
  }
}

// ---- navigation ----

/** Shows `next` and puts it in the URL (a new history entry unless `replace`). */
function navigate(next, replace = false) {
  state = next;
  const url = pageState.write(next);
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  render();
}

window.addEventListener("popstate", () => {
  state = pageState.read();
  if (role) render();
});

for (const [id, target] of [["nav-timeline", "timeline"], ["nav-devices", "devices"]]) {
  byId(id).addEventListener("click", (event) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    navigate(target === "devices" ? { ...pageState.read(""), view: "devices" } : { ...state, view: "timeline" });
  });
}

function render() {
  view.close();
  const devicesView = state.view === "devices";
  byId("view-timeline").hidden = devicesView;
  byId("view-devices").hidden = !devicesView;
  byId("nav-timeline").setAttribute("aria-current", devicesView ? "false" : "page");
  byId("nav-devices").setAttribute("aria-current", devicesView ? "page" : "false");
  if (devicesView) renderDevices();
  else renderTimeline();
}

// ---- devices view ----

function renderDevices() {
  document.title = "Devices — Onboarding audit console";
  const list = new DeviceList({
    table: byId("devices-table"), body: byId("devices-body"), status: byId("devices-status"), more: byId("devices-more"),
  }, role === "admin", (device) => navigate({ ...pageState.read(""), device }));
  view = list;
  list.start();
}

byId("devices-more").addEventListener("click", () => { if (view instanceof DeviceList) view.more(); });

// ---- search ----

let searchTimer = null;
let searchController = null;

byId("search").addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(runSearch, searchDelayMs);
});
byId("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  clearTimeout(searchTimer);
  runSearch();
});

async function runSearch() {
  const text = byId("search").value.trim();
  const results = byId("search-results");
  const line = byId("search-status");
  searchController?.abort();
  fill(results);
  if (!text) { status(line, "", ""); return; }
  if ([...text].length > searchMostCharacters) { status(line, "error", `Search for at most ${searchMostCharacters} characters.`); return; }
  const controller = new AbortController();
  searchController = controller;
  status(line, "loading", "Searching…");
  let answer;
  try {
    answer = await api.json("/v1/users" + api.query({ search: text, limit: searchLimit }), { signal: controller.signal });
  } catch (error) {
    if (controller.signal.aborted) return;
    status(line, "error", `Search failed: ${error.message}`);
    return;
  }
  if (controller.signal.aborted) return;
  const users = answer.users ?? [];
  status(line, users.length ? "" : "empty", users.length
    ? `${users.length}${users.length === searchLimit ? "+" : ""} user${users.length === 1 ? "" : "s"} found.`
    : `No user found for “${text}”.`);
  const items = users.map((user) => {
    if (user.display_name) displayNames.set(user.user, user.display_name);
    const button = el("button", { type: "button", class: "result" },
      el("span", { class: "name" }, user.display_name ?? user.user),
      el("span", { class: "muted" }, ` ${user.user} · ${user.devices} device${user.devices === 1 ? "" : "s"}`));
    button.addEventListener("click", () => openUser(user.user));
    return el("li", {}, button);
  });
  // An exact id the search cannot find (a pseudonym of an erased user, say) still opens.
  if (!users.some((user) => user.user === text)) {
    const button = el("button", { type: "button", class: "result secondary" }, `Open “${text}” as a user id`);
    button.addEventListener("click", () => openUser(text));
    items.push(el("li", {}, button));
  }
  fill(results, items);
}

function openUser(user) {
  navigate({ ...pageState.read(""), user });
  byId("subject-title").focus();
}

// ---- timeline view ----

function renderTimeline() {
  const subject = pageState.subject(state);
  byId("subject-empty").hidden = subject !== null;
  byId("subject").hidden = subject === null;
  if (!subject) {
    view = { close() {} };
    document.title = "Onboarding audit console";
    return;
  }
  document.title = `${subject.id} — Onboarding audit console`;

  const controller = new AbortController();
  const timeline = new Timeline(subject, state, {
    list: byId("timeline"), status: byId("timeline-status"), liveStatus: byId("live-status"),
    more: byId("load-more"), live: byId("live"),
  }, (user) => openUser(user));
  view = { close() { controller.abort(); timeline.close(); }, timeline };

  showSubject(subject, controller.signal);
  showFilters(subject);
  showChips();
  showChart(subject, controller.signal);
  const isUser = subject.kind === "user";
  byId("lockout").hidden = !isUser;
  byId("clear-form").hidden = !(isUser && role === "admin");
  if (isUser) showPolicy(byId("lockout-policy"), controller.signal);
  status(byId("export-status"), "", "");
  status(byId("clear-status"), "", "");
  if (isUser) showLockout(subject.id, { body: byId("lockout-body"), status: byId("lockout-status") }, controller.signal);
  timeline.start().then((page) => {
    if (page && isUser) fillDevices(page.devices ?? []);
    if (page) showSubjectErased(subject, timeline);
  });
}

function showSubject(subject, signal) {
  const title = byId("subject-title");
  title.setAttribute("tabindex", "-1");
  const detail = byId("subject-detail");
  const erased = subject.id.startsWith("~");
  fill(title, subject.kind === "user" ? "User " : "Device ", el("span", { class: "subject-id" }, subject.id),
    erased ? [" ", el("span", { class: "badge erased" }, "erased")] : null);
  const known = displayNames.get(subject.id);
  fill(detail, subject.kind === "device" ? "Every user's records on this device." : erased
    ? "An erased user: only the pseudonym is left, no name." : known ? el("span", { class: "display-name" }, known) : "");
  if (subject.kind === "user" && !erased && !known) lookUpDisplayName(subject.id, detail, signal);
}

/** After a reload the display name is not known yet: find it by the id. */
async function lookUpDisplayName(user, detail, signal) {
  try {
    const answer = await api.json("/v1/users" + api.query({ search: [...user].slice(0, searchMostCharacters).join(""), limit: 100 }), { signal });
    const found = (answer.users ?? []).find((entry) => entry.user === user);
    if (signal.aborted || !found?.display_name) return;
    displayNames.set(user, found.display_name);
    fill(detail, el("span", { class: "display-name" }, found.display_name));
  } catch { /* the name is a nicety: the timeline shows without it */ }
}

function showSubjectErased(subject, timeline) {
  if (subject.kind !== "user" || subject.id.startsWith("~") || !timeline.erased) return;
  byId("subject-title").append(" ", el("span", { class: "badge erased" }, "erased"));
}

function fillDevices(devices) {
  const select = byId("f-device");
  const options = [el("option", { value: "" }, "All devices"), ...devices.map((device) => el("option", { value: device }, device))];
  if (state.device && !devices.includes(state.device)) options.push(el("option", { value: state.device }, state.device));
  fill(select, options);
  select.value = state.device ?? "";
}

function showFilters(subject) {
  const form = byId("filters-form");
  byId("device-field").hidden = subject.kind !== "user";
  if (subject.kind === "user") fillDevices([]);
  form.elements.since.value = state.since ?? "";
  form.elements.until.value = state.until ?? "";
  for (const name of ["outcome", "factor", "method", "type"]) {
    for (const box of form.querySelectorAll(`input[name=${name}]`)) box.checked = state[name].includes(box.value);
  }
  showError(byId("filters-error"), null);
}

byId("filters-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.target;
  const error = byId("filters-error");
  const times = {};
  for (const name of ["since", "until"]) {
    const text = form.elements[name].value.trim();
    if (!text) { times[name] = null; continue; }
    times[name] = pageState.parseTime(text);
    if (!times[name]) {
      showError(error, `${name === "since" ? "From" : "Until"}: “${text}” is not a time like 2026-11-29T16:00:00Z.`);
      form.elements[name].focus();
      return;
    }
  }
  if (times.since && times.until && times.until < times.since) {
    showError(error, "Until is before From.");
    form.elements.until.focus();
    return;
  }
  const checked = (name) => [...form.querySelectorAll(`input[name=${name}]:checked`)].map((box) => box.value);
  const subject = pageState.subject(state);
  navigate({
    ...state, ...times,
    device: subject?.kind === "user" ? (form.elements.device.value || null) : state.device,
    outcome: checked("outcome"), factor: checked("factor"), method: checked("method"), type: checked("type"),
  });
});

byId("filters-reset").addEventListener("click", () => {
  const subject = pageState.subject(state);
  navigate({ ...pageState.read(""), user: state.user, device: subject?.kind === "device" ? state.device : null });
});

/** One removable chip per active filter value. */
function showChips() {
  const chips = [];
  const subject = pageState.subject(state);
  const chip = (label, without) => {
    const button = el("button", { type: "button", class: "chip", "aria-label": `Remove filter ${label}` }, label, el("span", { "aria-hidden": "true" }, " ×"));
    button.addEventListener("click", () => {
      navigate(without());
      // Keep the keyboard where it was: on the next chip, else on the filters.
      (byId("chips").querySelector("button") ?? byId("filters-panel").querySelector("summary")).focus();
    });
    chips.push(button);
  };
  if (subject?.kind === "user" && state.device) chip(`device: ${state.device}`, () => ({ ...state, device: null }));
  if (state.since) chip(`from ${pageState.showTime(state.since)}`, () => ({ ...state, since: null }));
  if (state.until) chip(`until ${pageState.showTime(state.until)}`, () => ({ ...state, until: null }));
  for (const name of ["outcome", "factor", "method", "type"]) {
    for (const value of state[name]) {
      chip(`${name}: ${value.replace(/_/g, " ")}`, () => ({ ...state, [name]: state[name].filter((other) => other !== value) }));
    }
  }
  fill(byId("chips"), chips);
  byId("chips").hidden = chips.length === 0;
  byId("chart-reset").hidden = !(state.since || state.until);
}

byId("chart-reset").addEventListener("click", () => navigate({ ...state, since: null, until: null }));

async function showChart(subject, signal) {
  const container = byId("chart");
  const line = byId("chart-status");
  fill(container);
  status(line, "loading", "Loading the chart…");
  const bars = Math.max(chartFewestBars, Math.min(chartMostBars, Math.floor((container.clientWidth || 960) / chartPixelsPerBar)));
  const base = api.path(subject.kind === "user" ? "users" : "devices", subject.id);
  let counts;
  try {
    counts = await api.json(base + "/counts" + api.query({ ...pageState.apiFilters(state), buckets: bars }), { signal });
  } catch (error) {
    if (signal.aborted) return;
    status(line, "error", `Could not load the chart: ${error.message}`);
    return;
  }
  if (signal.aborted) return;
  if (!counts.buckets.length) { status(line, "empty", "No attempts to chart for these filters."); return; }
  status(line, "", "");
  drawChart(container, counts, (since, until) => navigate({ ...state, since, until }));
}

byId("live").addEventListener("change", (event) => {
  const timeline = view.timeline;
  if (!timeline) return;
  if (event.target.checked) timeline.startTail();
  else timeline.stopTail();
});

byId("load-more").addEventListener("click", () => view.timeline?.more());

byId("clear-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const subject = pageState.subject(state);
  if (subject?.kind !== "user") return;
  const action = await clearLockout(subject.id, event.target, byId("clear-error"));
  if (!action) return;
  status(byId("clear-status"), "done", `Lockout cleared; recorded as action ${action.id}.`);
  view.timeline?.addAction(action);
  const controller = new AbortController();
  const previous = view.close;
  view.close = () => { controller.abort(); previous.call(view); };
  await showLockout(subject.id, { body: byId("lockout-body"), status: byId("lockout-status") }, controller.signal);
});

byId("export-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const subject = pageState.subject(state);
  if (!subject) return;
  const base = api.path(subject.kind === "user" ? "users" : "devices", subject.id);
  download(base, event.target.elements.format.value, pageState.apiFilters(state), byId("export-status"), subject.id);
});

start();
