// The timeline of one user (every device) or one device (every user): attempts, the sessions
// they opened and the server's audited actions, merged newest first, one page at a time
// (`order=newest`, "Load more" follows `next_cursor` to older ones), and a live tail that long-polls
// for attempts newer than the newest one shown.

import * as api from "./api.js";
import { el, fill, status } from "./dom.js";
import { apiFilters, showTime, showsType } from "./state.js";

/** Attempts per page: a screenful or two; "Load more" for the rest. */
const pageSize = 50;
/** Attempts one live poll may bring (the server caps a page at 10,000; a burst beyond shows on the next poll). */
const tailPageSize = 100;
/** How long the server may hold a live poll (its maximum is 30 s). */
const tailWaitSeconds = 25;
/** The live tail adds at most this many attempts to one view, so a busy user cannot grow the page without end. */
export const tailLimit = 500;
/** With nothing shown yet there is no cursor to wait on: look again this often instead. */
const emptyPollMs = 5_000;
/**
 * The tail waits this long after a view opens before its first poll: the server holds a poll
 * until it is answered even when the page has moved on, so clicking through filters would
 * otherwise leave a waiting poll behind per click (the server allows 32 at once).
 */
const tailStartDelayMs = 1_000;
/** Reconnect after errors: 1 s, doubled each time, at most 30 s. */
const backoffFirstMs = 1_000;
const backoffMostMs = 30_000;

/**
 * The cursor the server issues for a position `(at, device, seq)` in time order (base64url of
 * `h1:<ms>:<seq>:<device>`, docs/sync-protocol.md): the live tail continues after the newest
 * attempt shown, which no page's `next_cursor` names when that page was the last.
 */
export function cursorOf(attempt) {
  const text = `h1:${Date.parse(attempt.at)}:${attempt.seq}:${attempt.device}`;
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export class Timeline {
  /**
   * `subject`: `{kind:"user"|"device", id}`; `state`: the page state (filters, types);
   * `elements`: list, status, liveStatus, more, live (checkbox); `onUser(id)` opens a user.
   */
  constructor(subject, state, elements, onUser) {
    this.subject = subject;
    this.state = state;
    this.elements = elements;
    this.onUser = onUser;
    this.base = api.path(subject.kind === "user" ? "users" : "devices", subject.id);
    this.filters = apiFilters(state);
    this.controller = new AbortController();
    this.next = null;
    this.newest = null;
    this.shown = { attempt: 0, session: 0, action: 0 };
    this.seenSessions = new Set();
    this.seenActions = new Set();
    this.tailed = 0;
    this.devices = [];
    this.erased = false;
  }

  /** Stops every request of this view (the page moved on). */
  close() { this.controller.abort(); }

  get closed() { return this.controller.signal.aborted; }

  /** Loads the first page; answers the page (for the device list) or null on an error. */
  async start() {
    const { list, status: line, more } = this.elements;
    fill(list);
    more.hidden = true;
    status(line, "loading", "Loading events…");
    try {
      const page = await this.page(null);
      if (this.closed) return null;
      this.devices = page.devices ?? [];
      this.add(page, "end");
      this.updateStatus();
      this.startTail();
      return page;
    } catch (error) {
      if (this.closed) return null;
      status(line, "error", `Could not load the events: ${error.message}`);
      return null;
    }
  }

  async page(cursor) {
    const parameters = { ...this.filters, order: "newest", limit: pageSize, cursor };
    return api.json(this.base + "/history" + api.query(parameters), { signal: this.controller.signal });
  }

  /** "Load more": the next page of older attempts. */
  async more() {
    const { more, status: line } = this.elements;
    if (!this.next) return;
    more.disabled = true;
    more.textContent = "Loading…";
    try {
      const page = await this.page(this.next);
      if (this.closed) return;
      this.add(page, "end");
      this.updateStatus();
    } catch (error) {
      if (this.closed) return;
      status(line, "error", `Could not load more events: ${error.message}`);
    } finally {
      more.disabled = false;
      more.textContent = "Load more";
    }
  }

  /** A server action the page itself caused (a lockout it cleared), shown at once. */
  addAction(action) {
    this.add({ attempts: [], sessions: [], actions: [action] }, "start");
    this.updateStatus();
  }

  /**
   * Adds a page's entries, newest first, at the list's `end` (an older page) or `start` (newer
   * attempts from the live tail). Sessions and actions a page shares with another are shown once.
   */
  add(page, where) {
    const entries = [];
    for (const attempt of page.attempts ?? []) {
      entries.push({ type: "attempt", at: attempt.at, item: attempt });
      if (attempt.erased) this.erased = true;
    }
    for (const session of page.sessions ?? []) {
      const key = `${session.device}\u0000${session.seq}`;
      if (this.seenSessions.has(key)) continue;
      this.seenSessions.add(key);
      entries.push({ type: "session", at: session.start, item: session });
    }
    for (const action of page.actions ?? []) {
      if (this.seenActions.has(action.id)) continue;
      this.seenActions.add(action.id);
      entries.push({ type: "action", at: action.at, item: action });
    }
    // Newest first; the sort is stable, so attempts at one time keep the server's order.
    entries.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
    const attempts = page.attempts ?? [];
    if (where === "end") {
      this.next = page.next_cursor ?? null;
      if (this.newest === null && attempts.length) this.newest = attempts[0];
    }
    const nodes = entries.map((entry) => this.row(entry, where === "start"));
    if (where === "end") this.elements.list.append(...nodes);
    else this.elements.list.prepend(...nodes);
    for (const entry of entries) this.shown[entry.type] += 1;
    this.elements.more.hidden = this.next === null;
  }

  updateStatus() {
    const { list, status: line } = this.elements;
    const visible = list.querySelectorAll("li:not([hidden])").length;
    if (visible > 0) {
      status(line, "", "");
    } else if (list.children.length > 0) {
      status(line, "empty", "No events of the chosen types on the pages loaded so far.");
    } else {
      status(line, "empty", "No events match these filters.");
    }
  }

  row(entry, fresh) {
    const { type, item } = entry;
    const when = el("time", { datetime: entry.at, class: "when" }, showTime(entry.at));
    let cells;
    if (type === "attempt") {
      cells = [when, el("span", { class: `outcome ${item.outcome}` }, item.outcome),
        el("span", { class: "what" }, this.userCell(item), `${item.factor === "second_factor" ? "second factor" : "sign-in"} by ${item.method}`,
          item.reason ? ` · ${item.reason}` : ""),
        this.where(item)];
    } else if (type === "session") {
      const end = item.end ? `ended ${showTime(item.end)}${item.end_reason ? ` (${item.end_reason})` : ""}` : "still open";
      cells = [when, el("span", { class: "outcome session" }, "session"),
        el("span", { class: "what" }, this.userCell(item), `${item.method}${item.second_factor ? " + second factor" : ""} · ${end}`,
          item.duration_ms !== null && item.duration_ms !== undefined ? ` · ${duration(item.duration_ms)}` : ""),
        this.where(item)];
    } else {
      cells = [when, el("span", { class: "outcome action" }, item.action.replace(/_/g, " ")),
        el("span", { class: "what" }, this.userCell(item), `by ${item.actor}`, item.factor ? ` · factor ${item.factor}` : "",
          item.reason ? ` · reason “${item.reason}”` : "")];
    }
    const li = el("li", { class: `entry ${type}${type === "attempt" ? " " + item.outcome : ""}${fresh ? " fresh" : ""}`, "data-type": type }, cells);
    li.hidden = !showsType(this.state, type);
    return li;
  }

  /** On a device's timeline, whose entry it is (an erased user as erased, with no link), before what happened. */
  userCell(item) {
    if (this.subject.kind === "user" || !item.user) return null;
    if (item.erased || item.user.startsWith("~")) {
      return el("span", { class: "user-cell" }, el("span", { class: "badge erased" }, "erased user"), " ", el("code", {}, item.user), " · ");
    }
    const link = el("a", { href: "?user=" + encodeURIComponent(item.user), class: "user-cell" }, item.user);
    link.addEventListener("click", (event) => {
      if (event.ctrlKey || event.metaKey || event.shiftKey) return;
      event.preventDefault();
      this.onUser(item.user);
    });
    return [link, " · "];
  }

  where(item) {
    return el("span", { class: "where" }, `${item.device} · seq ${item.seq}`);
  }

  // ---- live tail ----

  /** Whether the filters leave room for newer attempts (an `until` in the past does not). */
  get canTail() {
    return !this.state.until || Date.parse(this.state.until) > Date.now();
  }

  startTail() {
    const { live, liveStatus } = this.elements;
    if (!live.checked) { status(liveStatus, "", "Live updates are off."); return; }
    if (!this.canTail) { status(liveStatus, "", "Live updates are off: the time filter ends in the past."); return; }
    if (this.tailing) return;
    this.tailing = new AbortController();
    this.tail(this.tailing.signal);
  }

  stopTail(text = "Live updates are off.") {
    this.tailing?.abort();
    this.tailing = null;
    status(this.elements.liveStatus, "", text);
  }

  async tail(signal) {
    const { liveStatus } = this.elements;
    let backoff = backoffFirstMs;
    const stopped = () => signal.aborted || this.closed;
    status(liveStatus, "live", "Live: new attempts appear here as devices sync.");
    await sleep(tailStartDelayMs, signal);
    while (!stopped()) {
      if (this.tailed >= tailLimit) {
        this.stopTail(`Live updates paused after ${tailLimit} new attempts: reload the view to see more.`);
        return;
      }
      status(liveStatus, "live", this.tailed
        ? `Live: ${this.tailed} new attempt${this.tailed === 1 ? "" : "s"} since this view opened.`
        : "Live: new attempts appear here as devices sync.");
      const parameters = { ...this.filters, order: "oldest", limit: tailPageSize };
      if (this.newest) { parameters.cursor = cursorOf(this.newest); parameters.wait = tailWaitSeconds; }
      try {
        const page = await api.json(this.base + "/history" + api.query(parameters), {
          signal: AbortSignal.any([signal, this.controller.signal]),
          timeoutMs: (tailWaitSeconds + 15) * 1000,
        });
        if (stopped()) return;
        backoff = backoffFirstMs;
        const attempts = page.attempts ?? [];
        if (attempts.length) {
          this.newest = attempts[attempts.length - 1];
          this.tailed += attempts.length;
          this.add({ ...page, attempts: [...attempts].reverse() }, "start");
          this.updateStatus();
        }
        if (!parameters.cursor) await sleep(emptyPollMs, signal);
      } catch (error) {
        if (stopped()) return;
        if (error.status === 401) return;
        const wait = error.retryAfterSeconds ? error.retryAfterSeconds * 1000 : backoff;
        status(liveStatus, "error", `Live updates lost the server (${error.message}); trying again in ${Math.round(wait / 1000)} s.`);
        await sleep(wait, signal);
        backoff = Math.min(backoffMostMs, backoff * 2);
      }
    }
  }
}

function sleep(milliseconds, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, milliseconds);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

function duration(milliseconds) {
  const seconds = Math.round(milliseconds / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  return `${Math.round(minutes / 60)} h`;
}
