// A real nginx (Debian's package; test/compat/install-nginx.sh) run by the
// suite in a temporary folder: its pid file, logs and temp paths live there,
// it stays in the foreground as the suite's child and is stopped with it.
// Nothing needs root: it listens on free ports of 127.0.0.1 only.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { spawnLogged, waitHttp, stopChild, logTail } from "./procs.mjs";

/** The nginx binary: on the PATH or Debian's /usr/sbin/nginx. */
export function nginxBinary() {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/sbin"]) {
    const bin = path.join(dir, "nginx");
    if (dir && fs.existsSync(bin)) return bin;
  }
  throw new Error("nginx is missing: run test/compat/install-nginx.sh (apt-get install nginx)");
}

/**
 * Start nginx with the given `http { ... }` body (server blocks). dir is a
 * new folder for its files; waitUrl is fetched until it answers. Returns
 * {dir, log, errorLog, proc, logTail(n), stop()}.
 */
export async function startNginx({ dir, servers, waitUrl }) {
  const bin = nginxBinary();
  fs.mkdirSync(dir, { recursive: true });
  const f = (name) => path.join(dir, name);
  const conf = `# written by test/compat/nginx.mjs
daemon off;
master_process on;
worker_processes 1;
pid ${f("nginx.pid")};
error_log ${f("error.log")} info;
events { worker_connections 128; }
http {
  access_log ${f("access.log")};
  client_body_temp_path ${f("client_body")};
  proxy_temp_path ${f("proxy")};
  fastcgi_temp_path ${f("fastcgi")};
  uwsgi_temp_path ${f("uwsgi")};
  scgi_temp_path ${f("scgi")};
${servers}
}
`;
  const confFile = f("nginx.conf");
  fs.writeFileSync(confFile, conf);
  const args = ["-p", dir, "-e", f("error.log"), "-c", confFile];
  try {
    execFileSync(bin, [...args, "-t", "-q"], { stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    throw new Error(`nginx -t refused ${confFile}: ${e.stderr}`);
  }
  const log = f("stdout.log");
  const proc = spawnLogged(bin, args, { env: { PATH: process.env.PATH }, cwd: dir, logFile: log });
  await waitHttp(proc, waitUrl, f("error.log"));
  return { dir, log, errorLog: f("error.log"), proc, logTail: (n) => logTail(f("error.log"), n), stop: () => stopChild(proc) };
}
