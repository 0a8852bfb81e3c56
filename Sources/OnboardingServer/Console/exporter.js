// Export of the current filter's whole result. The server streams it; a link cannot carry the
// bearer header, so the page fetches it and hands the browser the bytes as a file download.

import * as api from "./api.js";
import { status } from "./dom.js";

/** An export may run long (every page of a large history): allow this before giving up. */
const exportTimeoutMs = 10 * 60_000;

const extensions = { csv: "csv", jsonl: "jsonl", ocsf: "json" };

/** Progress is shown at most this often while a large export arrives. */
const progressEveryMs = 500;

/** The body as a Blob, saying how much has arrived so far. */
async function receive(response, statusElement, format) {
  if (!response.body) return response.blob();
  const reader = response.body.getReader();
  const chunks = [];
  let bytes = 0;
  let shown = Date.now();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    bytes += value.byteLength;
    if (Date.now() - shown >= progressEveryMs) {
      shown = Date.now();
      status(statusElement, "loading", `Exporting as ${format}… ${bytes.toLocaleString("en")} bytes so far.`);
    }
  }
  return new Blob(chunks, { type: response.headers.get("Content-Type") ?? "application/octet-stream" });
}

/** `format`: csv, jsonl or ocsf; `base`: `/v1/users/<u>` or `/v1/devices/<d>`; `filters`: the API's history filters. */
export async function download(base, format, filters, statusElement, fallbackName) {
  status(statusElement, "loading", `Exporting as ${format}…`);
  try {
    const response = await api.send(base + "/export" + api.query({ format, ...filters }), { timeoutMs: exportTimeoutMs });
    const blob = await receive(response, statusElement, format);
    const name = fileName(response.headers.get("Content-Disposition")) ?? `${fallbackName}-history.${extensions[format]}`;
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    // The browser reads the blob after click() returns: let the URL go only a minute later.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    status(statusElement, "", `Saved ${name} (${blob.size.toLocaleString("en")} bytes).`);
  } catch (error) {
    status(statusElement, "error", `Could not export: ${error.message}`);
  }
}

/**
 * The file name of a `Content-Disposition: attachment` (RFC 6266): `filename*=UTF-8''…` when
 * given (a user id may be any Unicode), else `filename="…"`; without any path part.
 */
export function fileName(disposition) {
  const text = disposition ?? "";
  let name = null;
  const extended = /filename\*\s*=\s*UTF-8''([^;\s]+)/i.exec(text);
  if (extended) {
    try { name = decodeURIComponent(extended[1]); } catch { name = null; }
  }
  if (name === null) {
    const plain = /filename\s*=\s*"([^"]*)"/i.exec(text);
    if (plain) name = plain[1];
  }
  const last = name?.split(/[\\/]/).pop();
  return last ? last : null;
}
