// A real Caddy (Debian's package; test/compat/install-caddy.sh) run by the
// suite in a temporary folder with `caddy run`: its Caddyfile, logs and data
// live there, it stays in the foreground as the suite's child and is stopped
// with it. Nothing needs root: it listens on free ports of 127.0.0.1 only,
// http only (auto_https off), with no admin endpoint.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { spawnLogged, waitHttp, stopChild, logTail } from "./procs.mjs";

/** The caddy binary: on the PATH or Debian's /usr/bin/caddy. */
export function caddyBinary() {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/bin"]) {
    const bin = path.join(dir, "caddy");
    if (dir && fs.existsSync(bin)) return bin;
  }
  throw new Error("caddy is missing: run test/compat/install-caddy.sh (apt-get install caddy)");
}

/** The version caddy reports ("2.6.2"), for the suite's report. */
export function caddyVersion(bin = caddyBinary()) {
  return execFileSync(bin, ["version"], { encoding: "utf8" }).trim().split(/\s+/)[0];
}

/**
 * Start caddy with the given site blocks (Caddyfile text). dir is a new
 * folder for its files; waitUrl is fetched until it answers. Returns
 * {dir, log, proc, version, logTail(n), stop()}.
 */
export async function startCaddy({ dir, sites, waitUrl }) {
  const bin = caddyBinary();
  fs.mkdirSync(dir, { recursive: true });
  const f = (name) => path.join(dir, name);
  const conf = `# written by test/compat/caddy.mjs
{
	admin off
	auto_https off
	storage file_system ${f("data")}
}
${sites}
`;
  const confFile = f("Caddyfile");
  fs.writeFileSync(confFile, conf);
  // Caddy keeps its state under XDG_DATA_HOME / XDG_CONFIG_HOME: here, not in ~.
  const env = { PATH: process.env.PATH, HOME: dir, XDG_DATA_HOME: f("data"), XDG_CONFIG_HOME: f("config") };
  const args = ["--config", confFile, "--adapter", "caddyfile"];
  try {
    execFileSync(bin, ["validate", ...args], { env, cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    throw new Error(`caddy validate refused ${confFile}: ${e.stderr}`);
  }
  const log = f("caddy.log");
  const proc = spawnLogged(bin, ["run", ...args], { env, cwd: dir, logFile: log });
  await waitHttp(proc, waitUrl, log);
  return { dir, log, proc, version: caddyVersion(bin), logTail: (n) => logTail(log, n), stop: () => stopChild(proc) };
}
