// A user's global lockout (every device's records folded into one engine per factor), and for
// admins the audited "clear lockout" action.

import * as api from "./api.js";
import { el, fill, showError, status } from "./dom.js";
import { showTime } from "./state.js";

/** The server's reason limit (docs/console.md): 1–200 characters, no control characters. */
const reasonMostCharacters = 200;

/** `seconds` in the largest unit that divides it: "5 minutes", "2 days", "90 seconds". */
export function duration(seconds) {
  for (const [unit, size] of [["day", 86400], ["hour", 3600], ["minute", 60]]) {
    if (seconds >= size && seconds % size === 0) {
      const count = seconds / size;
      return `${count} ${unit}${count === 1 ? "" : "s"}`;
    }
  }
  return `${seconds} second${seconds === 1 ? "" : "s"}`;
}

/** One factor's rule of a policy (docs/lockout.md § Custom policies) in words. */
function describeRule(rule) {
  const parts = rule.tiers.map((tier, index) =>
    `${tier.limit}${index === 0 ? " failures" : ""} per ${duration(tier.window_seconds)}`);
  if (rule.consecutive_limit) parts.push(`${rule.consecutive_limit} in a row`);
  if (rule.backoff) {
    const backoff = rule.backoff;
    parts.push(`after ${backoff.threshold} failures a wait from ${duration(backoff.initial_wait_seconds)} ` +
      `(${backoff.growth}) up to ${duration(backoff.maximum_wait_seconds)}`);
  }
  if (rule.permanent_after_lockouts) parts.push(`locked for good after ${rule.permanent_after_lockouts} lockouts`);
  if (rule.methods) parts.push(`methods: ${rule.methods.join(", ")}`);
  return parts.length ? parts.join(", ") : "no limit";
}

/** The server's policy (`GET /v1/policy`) in one line. */
export function describePolicy(policy) {
  return `Policy: the server's cross-device lockout, ${policy.name} — password: ${describeRule(policy.password)}; ` +
    `second factor: ${describeRule(policy.second_factor)}.`;
}

let policyRequest = null;

/** Shows the server's policy in `element`, read once per sign-in (``forgetPolicy``). */
export async function showPolicy(element, signal) {
  status(element, "loading", "Loading the policy…");
  policyRequest ??= api.json("/v1/policy");
  try {
    const policy = await policyRequest;
    if (!signal.aborted) status(element, "", describePolicy(policy));
  } catch (error) {
    policyRequest = null;
    if (!signal.aborted) status(element, "error", `Could not load the policy: ${error.message}`);
  }
}

/** Sign-out: the next sign-in reads the policy again. */
export function forgetPolicy() { policyRequest = null; }

/** Loads and shows `user`'s lockout into `elements` (body, status). */
export async function showLockout(user, elements, signal) {
  const { body, status: line } = elements;
  fill(body);
  status(line, "loading", "Loading the lockout…");
  let entries;
  try {
    entries = await api.json(api.path("users", user, "lockout"), { signal });
  } catch (error) {
    if (signal.aborted) return;
    status(line, "error", `Could not load the lockout: ${error.message}`);
    return;
  }
  if (signal.aborted) return;
  if (!entries.length) {
    status(line, "empty", "No counted failures: the user is not locked out.");
    return;
  }
  status(line, "", "");
  const rows = entries.map((entry) => {
    const locked = entry.permanent || entry.locked_until !== null;
    const state = entry.permanent ? "locked until an admin clears it" : entry.locked_until ? `locked until ${showTime(entry.locked_until)}` : "not locked";
    return el("tr", { class: locked ? "locked" : "" },
      el("th", { scope: "row" }, entry.factor === "second_factor" ? "second factor" : "password"),
      el("td", { "data-label": "State" }, el("span", { class: `badge ${locked ? "failed" : "succeeded"}` }, state)),
      el("td", { "data-label": "Counted failures" }, String(entry.failures)));
  });
  fill(body, el("table", { class: "lockout-table" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Factor"), el("th", { scope: "col" }, "State"),
      el("th", { scope: "col" }, "Counted failures"))),
    el("tbody", {}, rows)));
}

/** The reason as the server takes it, or the one-line complaint about it. */
export function checkReason(text) {
  const reason = text.trim();
  if (reason.length === 0) return { error: "Give a reason: it is recorded with the action." };
  if ([...reason].length > reasonMostCharacters) return { error: `The reason is at most ${reasonMostCharacters} characters.` };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(reason)) return { error: "The reason may not hold control characters." };
  return { reason };
}

/** Sends the clear; answers the server's action (shown in the timeline) or null after showing the error. */
export async function clearLockout(user, form, errorElement) {
  const factor = form.elements.factor.value || null;
  const checked = checkReason(form.elements.reason.value);
  if (checked.error) {
    showError(errorElement, checked.error);
    form.elements.reason.focus();
    return null;
  }
  showError(errorElement, null);
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  try {
    const answer = await api.json(api.path("users", user, "lockout", "clear"), {
      method: "POST", body: { factor, reason: checked.reason },
    });
    form.elements.reason.value = "";
    return answer.action;
  } catch (error) {
    showError(errorElement, `Could not clear the lockout: ${error.message}`);
    return null;
  } finally {
    button.disabled = false;
  }
}
