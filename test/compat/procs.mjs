// Child processes started by the suite: log to a file, wait until ready, and
// are stopped (by their own pid) when the suite ends. Other things that must
// end with them (the round-robin proxies) register a closer.
import { spawn } from "node:child_process";
import fs from "node:fs";
import { waitFor } from "./util.mjs";

const children = new Set();
const closers = new Set();

/** Run fn (async) in stopAll, before the children stop. Returns a function that unregisters it. */
export function closeAtStop(fn) {
  closers.add(fn);
  return () => closers.delete(fn);
}

export function spawnLogged(cmd, args, { env, cwd, logFile }) {
  const out = fs.openSync(logFile, "a");
  const child = spawn(cmd, args, { env, cwd, stdio: ["ignore", out, out] });
  fs.closeSync(out);
  child.exitInfo = null;
  child.on("exit", (code, signal) => {
    child.exitInfo = { code, signal };
    children.delete(child);
  });
  children.add(child);
  return child;
}

export function logTail(logFile, n = 15) {
  try {
    return fs.readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-n).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Wait until url answers with any HTTP status; fail early if the child exits. */
export async function waitHttp(child, url, logFile, timeout = 30000) {
  await waitFor(
    async () => {
      if (child.exitInfo) {
        throw Object.assign(new Error(`process exited (${JSON.stringify(child.exitInfo)}) before answering ${url}:\n${logTail(logFile)}`), { fatal: true });
      }
      const res = await fetch(url, { redirect: "manual" });
      await res.arrayBuffer();
      return true;
    },
    { timeout, what: `${url} to answer`, interval: 100 },
  ).catch((e) => {
    throw new Error(`${e.message}\n--- ${logFile} ---\n${logTail(logFile)}`);
  });
}

export async function stopChild(child) {
  if (!child || child.exitInfo) return;
  const done = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const t = setTimeout(() => child.exitInfo || child.kill("SIGKILL"), 3000);
  await done;
  clearTimeout(t);
}

export async function stopAll() {
  const fns = [...closers];
  closers.clear();
  await Promise.all(fns.map((fn) => fn().catch(() => {})));
  await Promise.all([...children].map(stopChild));
}

process.on("exit", () => {
  for (const c of children) {
    try {
      c.kill("SIGKILL");
    } catch {}
  }
});

for (const sig of ["SIGINT", "SIGTERM"]) {
  process.once(sig, () => {
    for (const c of children) {
      try {
        c.kill("SIGKILL");
      } catch {}
    }
    process.exit(sig === "SIGINT" ? 130 : 143);
  });
}
