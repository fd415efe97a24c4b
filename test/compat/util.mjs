// Small helpers shared by the suites.
import net from "node:net";
import crypto from "node:crypto";

/** Reserve n distinct free TCP ports on 127.0.0.1 (bound together, then released). */
// Ports for the processes the suites start. A port found by listening on 0
// comes from the kernel's ephemeral range, which every outgoing connection
// also draws from, so another test can take it before the child binds it.
// These come from 30000-32767, below that range (Go's test/testport uses
// 20000-29999), are checked free on every interface, and are handed out once
// per run.
const issuedPorts = new Set();

async function bindable(port) {
  for (const host of ["127.0.0.1", "0.0.0.0"]) {
    const ok = await new Promise((resolve) => {
      const s = net.createServer();
      s.once("error", () => resolve(false));
      s.listen(port, host, () => s.close(() => resolve(true)));
    });
    if (!ok) return false;
  }
  return true;
}

export async function freePorts(n) {
  const low = 30000;
  const span = 2768;
  const ports = [];
  let p = low + Math.floor(Math.random() * span);
  for (let tried = 0; ports.length < n && tried < span; tried++, p = low + ((p - low + 1) % span)) {
    if (issuedPorts.has(p) || !(await bindable(p))) continue;
    issuedPorts.add(p);
    ports.push(p);
  }
  if (ports.length < n) throw new Error(`freePorts: only ${ports.length} of ${n} free ports between 30000 and 32767`);
  return ports;
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
