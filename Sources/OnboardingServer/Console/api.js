// The console's only way to the server: JSON endpoints of docs/console.md § API, with the token
// as a bearer header. The token lives in this module and in the tab's sessionStorage (so a reload
// keeps the sign-in and closing the tab ends it); never in a URL, a cookie or localStorage.

const tokenKey = "onboard-console-token";
/** A request the server has not answered in this long is given up (long polls add their wait). */
const requestTimeoutMs = 20_000;

let token = readStoredToken();
let onUnauthorized = () => {};

function readStoredToken() {
  try { return sessionStorage.getItem(tokenKey); } catch { return null; }
}

export function hasToken() { return token !== null && token !== ""; }

export function setToken(value) {
  token = value;
  try { sessionStorage.setItem(tokenKey, value); } catch { /* storage off: the token stays in memory */ }
}

export function clearToken() {
  token = null;
  try { sessionStorage.removeItem(tokenKey); } catch { /* nothing stored */ }
}

/** Called once the server refuses the token (401): the app signs out and says why. */
export function whenUnauthorized(handler) { onUnauthorized = handler; }

/** An answer other than 2xx, or no answer: `status` 0 when the server could not be reached. */
export class ApiError extends Error {
  constructor(status, code, message, retryAfterSeconds = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** `/v1/users/José/history` from ["users", "José", "history"]: each segment percent-encoded. */
export function path(...segments) {
  return "/v1/" + segments.map((segment) => encodeURIComponent(segment)).join("/");
}

/**
 * `?a=1&b=x%20y` from an object; empty, null and undefined values are left out. Spaces as %20
 * (never `+`), so a search for "José Álvarez" reaches the server as typed.
 */
export function query(parameters) {
  const pairs = Object.entries(parameters)
    .filter(([, value]) => value !== null && value !== undefined && value !== "")
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
  return pairs.length ? "?" + pairs.join("&") : "";
}

/**
 * Sends one request and answers the `Response` (2xx only). `options`: method, body (an object,
 * sent as JSON), signal, timeoutMs. Throws ApiError with the server's one-line message.
 */
export async function send(url, options = {}) {
  if (!hasToken()) throw new ApiError(401, "unauthorized", "not signed in");
  const headers = { Authorization: `Bearer ${token}`, Accept: "application/json" };
  let body;
  if (options.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(options.body);
  }
  const timeout = AbortSignal.timeout(options.timeoutMs ?? requestTimeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response;
  try {
    response = await fetch(url, {
      method: options.method ?? "GET", headers, body, signal,
      credentials: "omit", cache: "no-store", redirect: "error", referrerPolicy: "no-referrer",
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    const why = timeout.aborted ? "the server did not answer in time" : "the server cannot be reached";
    throw new ApiError(0, "unreachable", why);
  }
  if (response.ok) return response;
  throw await failure(response);
}

/** `send`, answering the parsed JSON body (or null for 204). */
export async function json(url, options = {}) {
  const response = await send(url, options);
  if (response.status === 204) return null;
  try {
    return await response.json();
  } catch {
    throw new ApiError(response.status, "malformed", "the server's answer is not JSON");
  }
}

async function failure(response) {
  let code = "http_" + response.status;
  let message = `the server answered ${response.status}`;
  try {
    const body = await response.json();
    if (body && body.error && typeof body.error.message === "string") {
      code = String(body.error.code ?? code);
      message = body.error.message;
    }
  } catch { /* not the protocol's error body: keep the status */ }
  const retry = Number.parseInt(response.headers.get("Retry-After") ?? "", 10);
  const error = new ApiError(response.status, code, message, Number.isFinite(retry) ? retry : null);
  if (response.status === 401) onUnauthorized(error);
  return error;
}
