// Build and start the real Next.js app in nextapp/ (next build, next start).
//
// Next.js bakes rewrites into .next/routes-manifest.json at build time, so the
// build names latchkey's origin, port included. To let a second run reuse the
// build, latchkey gets a port fixed per checkout (derived from this folder's
// path, outside Linux's ephemeral range) whenever it is free, and the build is
// skipped when .next/latchkey-build.json records the same sources and origin.
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { spawnLogged, waitHttp, stopChild, logTail } from "./procs.mjs";
import { freePorts } from "./util.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const APP_DIR = path.join(here, "nextapp");
const NEXT_BIN = path.join(APP_DIR, "node_modules", "next", "dist", "bin", "next");
const STAMP = path.join(APP_DIR, ".next", "latchkey-build.json");
// Never ask the network: no telemetry, no lockfile "patching" from the registry.
const NEXT_ENV = { NEXT_TELEMETRY_DISABLED: "1", NEXT_IGNORE_INCORRECT_LOCKFILE: "1" };

/** latchkey's port for this checkout when it is free (so the last build fits), else any free one. */
export async function latchkeyPort() {
  const preferred = 20000 + (crypto.createHash("sha256").update(APP_DIR).digest().readUInt16BE(0) % 10000);
  const free = await new Promise((resolve) => {
    const s = net.createServer();
    s.once("error", () => resolve(false));
    s.listen(preferred, "127.0.0.1", () => s.close(() => resolve(true)));
  });
  return free ? preferred : (await freePorts(1))[0];
}

/** sha256 over the app's own files (not node_modules, not the build). */
function sourcesHash() {
  const h = crypto.createHash("sha256");
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (["node_modules", ".next"].includes(e.name)) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else h.update(`${path.relative(APP_DIR, p)}\0`).update(fs.readFileSync(p)).update("\0");
    }
  };
  walk(APP_DIR);
  return h.digest("hex");
}

/**
 * `next build` with /api/auth/* rewritten to latchkeyOrigin, unless the last
 * build had the same sources and origin. Returns {built, seconds}.
 */
export async function buildNextApp({ latchkeyOrigin, log }) {
  if (!fs.existsSync(NEXT_BIN)) throw new Error(`${NEXT_BIN} is missing: run test/compat/install.sh (npm ci in nextapp/)`);
  const key = { sources: sourcesHash(), latchkeyOrigin };
  try {
    if (JSON.stringify(JSON.parse(fs.readFileSync(STAMP, "utf8"))) === JSON.stringify(key)) return { built: false, seconds: 0 };
  } catch {}
  fs.rmSync(STAMP, { force: true });
  const t0 = Date.now();
  const out = fs.openSync(log, "a");
  const child = spawn(process.execPath, [NEXT_BIN, "build"], {
    cwd: APP_DIR,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...NEXT_ENV, LATCHKEY_ORIGIN: latchkeyOrigin },
    stdio: ["ignore", out, out],
  });
  fs.closeSync(out);
  const code = await new Promise((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`next build exited ${code}:\n${logTail(log, 30)}`);
  fs.writeFileSync(STAMP, JSON.stringify(key));
  return { built: true, seconds: (Date.now() - t0) / 1000 };
}

/**
 * `next start` on 127.0.0.1:port. env: NEXTAUTH_URL (public base URL),
 * NEXTAUTH_SECRET, NEXTAUTH_URL_INTERNAL. Returns {proc, log, stop()}.
 */
export async function startNextApp({ port, env, log }) {
  const proc = spawnLogged(process.execPath, [NEXT_BIN, "start", "-H", "127.0.0.1", "-p", String(port)], {
    cwd: APP_DIR,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...NEXT_ENV, ...env },
    logFile: log,
  });
  await waitHttp(proc, `http://127.0.0.1:${port}/`, log, 60000);
  return { proc, log, logTail: (n) => logTail(log, n), stop: () => stopChild(proc) };
}
