// Small helpers shared by the suites.
import net from "node:net";
import crypto from "node:crypto";

/** Reserve n distinct free TCP ports on 127.0.0.1 (bound together, then released). */
export async function freePorts(n) {
  const servers = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = net.createServer();
      await new Promise((resolve, reject) => {
        s.once("error", reject);
        s.listen(0, "127.0.0.1", resolve);
      });
      servers.push(s);
    }
    return servers.map((s) => s.address().port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Poll fn until it returns a truthy value or timeout (ms) passes. */
export async function waitFor(fn, { timeout = 10000, interval = 100, what = "condition" } = {}) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(interval);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ""}`);
}

export const sha256hex = (s) => crypto.createHash("sha256").update(s).digest("hex");

/** Form-encode an object the way the next-auth client does. */
export const form = (obj) => new URLSearchParams(obj).toString();

export const FORM = { "content-type": "application/x-www-form-urlencoded" };
export const JSONCT = { "content-type": "application/json" };

/** Short printable summary of a response (and its already-read body) for failure messages. */
export function evidence(res, text = "") {
  const sc = res.headers.getSetCookie?.() ?? [];
  return `HTTP ${res.status} location=${res.headers.get("location") ?? "-"} ct=${res.headers.get("content-type") ?? "-"} set-cookie=[${sc.map((c) => c.split(";")[0].slice(0, 60)).join(", ")}] body=${text.slice(0, 300).replace(/\s+/g, " ")}`;
}

/** Per-request time limit: a hung server fails one check instead of hanging the suite. */
export const REQUEST_TIMEOUT_MS = 20000;

/** fetch with REQUEST_TIMEOUT_MS unless the caller passes its own signal. */
export function fetchT(url, init = {}) {
  return fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
}
