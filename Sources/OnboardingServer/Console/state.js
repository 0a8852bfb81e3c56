// What the page shows lives in its URL query, so a view can be bookmarked or sent to a colleague
// (who signs in with their own token: the token is never part of it).
//
//   view    timeline (default) or devices
//   user    the user whose timeline is shown
//   device  with a user: only that device's records; without: the device's timeline (every user)
//   since, until, outcome, factor, method   the history filters, as the API takes them
//   type    which timeline entries show: attempt, session, action (comma list; absent: all)

export const outcomes = ["succeeded", "failed", "throttled"];
export const factors = ["password", "second_factor"];
export const methods = ["password", "passcode", "biometric", "apple", "google", "other", "totp", "sms", "email", "recovery_code"];
export const types = ["attempt", "session", "action"];

const listNames = { outcome: outcomes, factor: factors, method: methods, type: types };

/** The state of `location.search`. Unknown values are dropped, so a hand-edited URL cannot break the page. */
export function read(search = location.search) {
  const parameters = new URLSearchParams(search);
  const text = (name) => {
    const value = parameters.get(name);
    return value === null || value === "" ? null : value;
  };
  const state = {
    view: text("view") === "devices" ? "devices" : "timeline",
    user: text("user"),
    device: text("device"),
    since: text("since"),
    until: text("until"),
  };
  for (const [name, allowed] of Object.entries(listNames)) {
    const values = (text(name) ?? "").split(",").filter((value) => allowed.includes(value));
    state[name] = [...new Set(values)];
  }
  return state;
}

/** The query string of `state` (members in a fixed order; empty ones left out). */
export function write(state) {
  const parameters = new URLSearchParams();
  if (state.view === "devices") parameters.set("view", "devices");
  for (const name of ["user", "device", "since", "until"]) if (state[name]) parameters.set(name, state[name]);
  for (const name of Object.keys(listNames)) if (state[name]?.length) parameters.set(name, state[name].join(","));
  const text = parameters.toString();
  return text ? "?" + text : location.pathname;
}

/** The timeline's subject: `{kind:"user"|"device", id}` or null. */
export function subject(state) {
  if (state.user) return { kind: "user", id: state.user };
  if (state.device) return { kind: "device", id: state.device };
  return null;
}

/** The API's history filters of `state` (the same for history, counts and export). */
export function apiFilters(state) {
  return {
    device: state.user ? state.device : null,
    since: state.since,
    until: state.until,
    outcome: state.outcome.join(","),
    factor: state.factor.join(","),
    method: state.method.join(","),
  };
}

/** Whether a timeline entry of this type shows (no type chosen: every type). */
export function showsType(state, type) {
  return state.type.length === 0 || state.type.includes(type);
}

/**
 * A time typed by hand, as the API's ISO 8601 with milliseconds, or null when it is not one.
 * Takes `2026-11-29T16:00:00Z`, with or without seconds or milliseconds, a space for the `T`,
 * and reads a time without `Z` or offset as UTC (the console shows every time in UTC).
 */
export function parseTime(text) {
  const trimmed = text.trim().replace(" ", "T");
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?(Z|[+-]\d{2}:\d{2})?$/.exec(trimmed);
  if (!match) return null;
  const [, year, month, day, hour = "00", minute = "00", second = "00", fraction = "0", zone = "Z"] = match;
  const iso = `${year}-${month}-${day}T${hour}:${minute}:${second}.${fraction.padEnd(3, "0")}${zone}`;
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return null;
  const date = new Date(time);
  // Date.parse rolls 2026-02-30 over to March: refuse what does not name a real day.
  if (zone === "Z" && date.getUTCDate() !== Number(day)) return null;
  return date.toISOString();
}

/** How the console shows a time: the server's UTC text, a space for the `T`. */
export function showTime(iso) {
  return iso ? iso.replace("T", " ") : "";
}
