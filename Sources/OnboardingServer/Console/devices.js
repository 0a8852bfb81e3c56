// Every enrolled device: last sync, acknowledged seq, head hash, signed-head status, the chain
// audit of its replica, and its tokens (admins may revoke one).

import * as api from "./api.js";
import { el, fill, status } from "./dom.js";
import { showTime } from "./state.js";

/** Devices per page (the endpoint allows 1000; a page is one table the browser lays out at once). */
const pageSize = 100;
/** Audits run at once: each verifies a whole replica on the server, which has other work too. */
const auditsAtOnce = 3;

const signedHeadText = {
  current: "signed at the acknowledged seq",
  behind: "signed head behind the log",
  none: "never signed",
};

export class DeviceList {
  /** `elements`: table, body, status, more; `isAdmin` shows the revoke buttons; `onDevice(id)` opens a device's timeline. */
  constructor(elements, isAdmin, onDevice) {
    this.elements = elements;
    this.isAdmin = isAdmin;
    this.onDevice = onDevice;
    this.controller = new AbortController();
    this.after = null;
    this.count = 0;
  }

  close() { this.controller.abort(); }

  async start() {
    const { body, table, status: line, more } = this.elements;
    fill(body);
    table.hidden = true;
    more.hidden = true;
    status(line, "loading", "Loading devices…");
    await this.load();
  }

  async load() {
    const { body, table, status: line, more } = this.elements;
    const signal = this.controller.signal;
    more.disabled = true;
    let page;
    try {
      page = await api.json("/v1/devices" + api.query({ limit: pageSize, after: this.after }), { signal });
    } catch (error) {
      if (signal.aborted) return;
      status(line, "error", `Could not load the devices: ${error.message}`);
      more.disabled = false;
      return;
    }
    if (signal.aborted) return;
    more.disabled = false;
    this.after = page.next_after ?? null;
    more.hidden = this.after === null;
    this.count += page.devices.length;
    if (this.count === 0) {
      status(line, "empty", "No device is enrolled yet (onboard enroll --device ID).");
      return;
    }
    status(line, "", "");
    table.hidden = false;
    const rows = page.devices.map((device) => this.row(device));
    body.append(...rows.map((row) => row.element));
    await runAtMost(auditsAtOnce, rows.map((row) => () => this.audit(row, signal)));
  }

  row(device) {
    const auditCell = el("td", { "data-label": "Chain audit" }, el("span", { class: "muted" }, "checking…"));
    const link = el("a", { href: "?device=" + encodeURIComponent(device.device) }, device.device);
    link.addEventListener("click", (event) => {
      if (event.ctrlKey || event.metaKey || event.shiftKey) return;
      event.preventDefault();
      this.onDevice(device.device);
    });
    const signed = device.signed_head
      ? `${signedHeadText[device.signed_head_status] ?? device.signed_head_status} (seq ${device.signed_head.seq})`
      : signedHeadText[device.signed_head_status] ?? device.signed_head_status;
    const element = el("tr", { "data-device": device.device },
      el("th", { scope: "row", "data-label": "Device" }, link,
        el("div", { class: "muted small" }, `enrolled ${showTime(device.enrolled_at)}`),
        device.public_key ? null : el("div", { class: "muted small" }, "no signing key registered")),
      el("td", { "data-label": "Last sync" }, device.last_upload_at ? showTime(device.last_upload_at) : el("span", { class: "muted" }, "never")),
      el("td", { "data-label": "Acknowledged seq" }, String(device.acknowledged_seq)),
      el("td", { "data-label": "Head hash" }, el("code", { class: "hash", title: device.head_hash }, device.head_hash.slice(0, 12) + "…")),
      el("td", { "data-label": "Signed head" },
        el("span", { class: `badge ${device.signed_head_status === "current" ? "succeeded" : device.signed_head_status === "behind" ? "throttled" : "neutral"}` }, signed)),
      auditCell,
      el("td", { "data-label": "Tokens" }, this.tokens(device)));
    return { device, element, auditCell };
  }

  tokens(device) {
    if (!device.tokens.length) return el("span", { class: "muted" }, "no token");
    const list = el("ul", { class: "tokens" });
    for (const token of device.tokens) {
      const expiry = token.expires_at ? "expires " + showTime(token.expires_at) : "never expires";
      const item = el("li", {}, el("code", {}, token.id), " ", el("span", { class: "muted small" }, showTime(token.issued_at)),
        " ", el("span", { class: "muted small", title: "the token is refused from then on (401 token_expired)" }, "· " + expiry));
      if (this.isAdmin) item.append(" ", this.revokeButton(device.device, token, item));
      list.append(item);
    }
    return list;
  }

  /** Revoking takes two presses (Revoke, then Confirm), so one stray key press cannot cut a device off. */
  revokeButton(device, token, item) {
    const holder = el("span", { class: "revoke" });
    const message = el("span", { class: "error small", role: "alert" });
    const ask = () => {
      const confirm = el("button", { type: "button", class: "danger", "aria-label": `Confirm revoking token ${token.id} of ${device}` }, "Confirm revoke");
      const cancel = el("button", { type: "button", class: "secondary" }, "Cancel");
      confirm.addEventListener("click", async () => {
        confirm.disabled = cancel.disabled = true;
        try {
          await api.json(api.path("devices", device, "tokens", token.id), { method: "DELETE" });
          fill(item, el("code", {}, token.id), " ", el("span", { class: "badge failed" }, "revoked"));
        } catch (error) {
          message.textContent = `Could not revoke: ${error.message}`;
          confirm.disabled = cancel.disabled = false;
        }
      });
      cancel.addEventListener("click", () => { fill(holder, start()); holder.querySelector("button").focus(); });
      fill(holder, confirm, " ", cancel, message);
      confirm.focus();
    };
    const start = () => {
      const button = el("button", { type: "button", class: "secondary", "aria-label": `Revoke token ${token.id} of ${device}` }, "Revoke");
      button.addEventListener("click", ask);
      return button;
    };
    holder.append(start());
    return holder;
  }

  async audit(row, signal) {
    let answer;
    try {
      answer = await api.json(api.path("devices", row.device.device, "audit"), { signal, timeoutMs: 60_000 });
    } catch (error) {
      if (signal.aborted) return;
      fill(row.auditCell, el("span", { class: "error small" }, `audit failed: ${error.message}`));
      return;
    }
    if (signal.aborted) return;
    if (answer.ok) {
      fill(row.auditCell, el("span", { class: "badge succeeded" }, "chain ok"), " ",
        el("span", { class: "muted small" }, `${answer.records} records`));
    } else {
      const problem = answer.problems?.[0];
      fill(row.auditCell, el("span", { class: "badge failed" }, `first bad seq ${answer.first_bad_seq ?? "?"}`),
        problem ? el("div", { class: "small" }, `${problem.kind}: ${problem.message}`) : null);
    }
  }

  async more() { await this.load(); }
}

/** Runs the tasks with at most `limit` at once. */
async function runAtMost(limit, tasks) {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const task = tasks[next];
      next += 1;
      await task();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}
