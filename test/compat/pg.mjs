// A throwaway PostgreSQL cluster for the suite, started the way the Go tests'
// models/pgtest does: the machine's initdb and pg_ctl (on the PATH, else
// Debian's /usr/lib/postgresql/*/bin), trust authentication, a free port on
// 127.0.0.1 and the socket in the cluster's own temporary folder. PostgreSQL
// refuses to run as root, so as root the folder is given to the `postgres`
// user and every PostgreSQL program runs through `runuser -u postgres --`.
// No npm package is needed: databases are created with psql.
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const PG_USER = "postgres";

/** The folder holding initdb and pg_ctl: the PATH's, else the newest Debian one. */
export function pgBinDir() {
  for (const d of (process.env.PATH ?? "").split(path.delimiter)) {
    if (d && fs.existsSync(path.join(d, "initdb"))) return path.dirname(fs.realpathSync(path.join(d, "initdb")));
  }
  const root = "/usr/lib/postgresql";
  const versions = fs.existsSync(root)
    ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, "bin", "initdb"))).sort((a, b) => Number(a) - Number(b))
    : [];
  if (!versions.length) throw new Error("initdb not found on the PATH or in /usr/lib/postgresql/*/bin (run test/compat/install.sh)");
  return path.join(root, versions.at(-1), "bin");
}

/**
 * Start a cluster on 127.0.0.1:port. Returns {port, adminUrl, dir, log,
 * createDatabase(name) -> url, stop()}. stop() (also run on process exit)
 * stops the server and removes its folder.
 */
export async function startPostgres({ port }) {
  const bin = pgBinDir();
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "latchkey-compat-pg-"));
  if (asRoot) {
    let uid, gid;
    try {
      uid = Number(execFileSync("id", ["-u", PG_USER], { encoding: "utf8" }).trim());
      gid = Number(execFileSync("id", ["-g", PG_USER], { encoding: "utf8" }).trim());
    } catch {
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`PostgreSQL refuses root and there is no "${PG_USER}" user (run test/compat/install.sh)`);
    }
    fs.chownSync(dir, uid, gid);
  }
  const data = path.join(dir, "data");
  const log = path.join(dir, "postgres.log");
  // A PostgreSQL program, as the unprivileged user when we are root.
  const pgArgv = (prog, args) => (asRoot ? ["runuser", ["-u", PG_USER, "--", path.join(bin, prog), ...args]] : [path.join(bin, prog), args]);
  const pg = (prog, ...args) => {
    const [cmd, argv] = pgArgv(prog, args);
    return run(cmd, argv, { cwd: dir, timeout: 90000 });
  };
  const stopArgs = ["-D", data, "-m", "immediate", "-w", "stop"];
  let running = false;
  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
  // The server is pg_ctl's daemon, not our child: stop it even when the run
  // ends through process.exit (watchdog, Ctrl-C).
  const onExit = () => {
    if (running) {
      try {
        const [cmd, argv] = pgArgv("pg_ctl", stopArgs);
        execFileSync(cmd, argv, { cwd: dir, stdio: "ignore", timeout: 20000 });
      } catch {}
    }
    if (!process.env.COMPAT_KEEP) cleanup();
  };
  process.once("exit", onExit);
  const failed = (what, e) => {
    let tail = "";
    try {
      tail = fs.readFileSync(log, "utf8").trimEnd().split("\n").slice(-10).join("\n");
    } catch {}
    return new Error(`${what}: ${e.message}${e.stderr ? `\n${e.stderr}` : ""}${tail ? `\n--- ${log} ---\n${tail}` : ""}`);
  };

  try {
    await pg("initdb", "-D", data, "-U", PG_USER, "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync");
  } catch (e) {
    onExit();
    process.removeListener("exit", onExit);
    throw failed("initdb", e);
  }
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  try {
    running = true;
    await pg("pg_ctl", "-D", data, "-l", log, "-o", opts, "-w", "-t", "60", "start");
  } catch (e) {
    const err = failed("pg_ctl start", e);
    onExit();
    process.removeListener("exit", onExit);
    throw err;
  }

  const adminUrl = `postgres://${PG_USER}@127.0.0.1:${port}/postgres?sslmode=disable`;
  const psql = fs.existsSync(path.join(bin, "psql")) ? path.join(bin, "psql") : "psql";
  return {
    port,
    dir,
    log,
    adminUrl,
    /** Create database `name` (letters, digits, _) and return its URL. */
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
      try {
        await run(psql, ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port), "-U", PG_USER, "-d", "postgres", "-c", `CREATE DATABASE ${name}`], {
          timeout: 30000,
          env: { ...process.env, PGCONNECT_TIMEOUT: "10" },
        });
      } catch (e) {
        throw failed(`CREATE DATABASE ${name}`, e);
      }
      return `postgres://${PG_USER}@127.0.0.1:${port}/${name}?sslmode=disable`;
    },
    async stop() {
      if (running) {
        running = false;
        await pg("pg_ctl", ...stopArgs).catch(() => {});
      }
      process.removeListener("exit", onExit);
      if (!process.env.COMPAT_KEEP) cleanup();
    },
  };
}
