// Entry point of the compatibility suite.
//
//   cd test/compat && npm ci && node run.mjs [client] [diff] [browser] [passwords] [twofactor] [rotation] [forwardauth] [caddy] [nextjs] [passkeys] [a11y] [account] [openid] [import] [webhooks]
//
// Environment:
//   LATCHKEY_BIN    use this latchkey binary instead of building ../../bin/latchkey
//   COMPAT_TARGET   "latchkey" (default) or "reference": run the client and browser
//                   suites against next-auth v4 itself, to check the checks.
//   COMPAT_KEEP=1   keep the temporary directory (logs, databases)
//
// Prints "ok - ..." / "not ok - ...: why" per check and ends with
// "N passed, M failed"; exits non-zero when a check failed.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import crypto from "node:crypto";
import { Report } from "./report.mjs";
import { freePorts } from "./util.mjs";
import { startIdp } from "./idp.mjs";
import { startSmtp } from "./smtp.mjs";
import { latchkeyBinary, latchkeyConfig, startLatchkey } from "./latchkey.mjs";
import { startPostgres } from "./pg.mjs";
import { spawnReference } from "./nextauth-server.mjs";
import { stopAll } from "./procs.mjs";

const SUITES = {
  client: () => import("./client.test.mjs"),
  diff: () => import("./diff.test.mjs"),
  browser: () => import("./browser.test.mjs"),
  passwords: () => import("./passwords.test.mjs"),
  twofactor: () => import("./twofactor.test.mjs"),
  rotation: () => import("./rotation.test.mjs"),
  forwardauth: () => import("./forwardauth.test.mjs"),
  caddy: () => import("./caddy.test.mjs"),
  nextjs: () => import("./nextjs.test.mjs"),
  passkeys: () => import("./passkeys.test.mjs"),
  a11y: () => import("./a11y.test.mjs"),
  account: () => import("./account.test.mjs"),
  openid: () => import("./openid.test.mjs"),
  import: () => import("./import.test.mjs"),
  webhooks: () => import("./webhooks.test.mjs"),
};

const started = Date.now();
// Watchdog: the whole run must end well within CI limits even if a server hangs.
// 25 min: on a busy 2-core machine the suites took 12.5 min (2026-11-29, the
// a11y suite alone 328 s) and, beside other work, over 15; a hang still ends
// far inside CI's 90.
const limitMin = Number(process.env.COMPAT_TIMEOUT_MIN || 25);
setTimeout(() => {
  console.log(`not ok - the suite did not finish within ${limitMin} minutes`);
  process.exit(1);
}, limitMin * 60000).unref();
const report = new Report();
const args = process.argv.slice(2);
const chosen = args.length ? args : Object.keys(SUITES);
for (const s of chosen) if (!SUITES[s]) {
  console.error(`unknown suite ${s}; choose from ${Object.keys(SUITES).join(", ")}`);
  process.exit(2);
}
const target = process.env.COMPAT_TARGET || "latchkey";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "latchkey-compat-"));
const secret = crypto.randomBytes(32).toString("base64url");
const clientId = "latchkey-compat";
const clientSecret = crypto.randomBytes(24).toString("base64url");
const FROM = "Sign in <no-reply@example.com>";

let exitCode = 1;
let idp;
let smtp;
let pgStarting = null;
try {
  const modules = {};
  for (const s of chosen) modules[s] = await SUITES[s]();
  // A spec is one server the suites talk to: {id, kind, strategy, basePath, cookieStyle, credentials, theme, twoFactor, secondIdp (a second OIDC provider "idp2" on the same IdP) and emailProvider (false: none) (latchkey only),
  // database ("sqlite", the default, or "postgres"), instances (latchkey processes behind
  // one round-robin proxy, default 1)}. Its port and base are the proxy's when instances > 1.
  // An "own" spec with database "postgres" only has the cluster started (ctx.postgres()).
  const specs = chosen.flatMap((s) => modules[s].plan(target));
  for (const s of specs) {
    if (!["sqlite", "postgres", undefined].includes(s.database)) throw new Error(`spec ${s.id}: unknown database ${s.database}`);
    if (s.kind !== "latchkey" && ((s.database === "postgres" && s.kind !== "own") || (s.instances ?? 1) > 1)) throw new Error(`spec ${s.id}: only latchkey runs on PostgreSQL or as several instances`);
  }
  const needPostgres = specs.some((s) => s.database === "postgres");

  const [idpPort, smtpPort, pgPort, ...ports] = await freePorts(3 + specs.length);
  if (needPostgres) {
    const t0 = Date.now();
    pgStarting = startPostgres({ port: pgPort });
    pgStarting.then(
      () => console.log(`# PostgreSQL on 127.0.0.1:${pgPort} ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`),
      () => {},
    );
  }
  specs.forEach((s, i) => {
    s.port = ports[i];
    s.base = `http://${s.host ?? "127.0.0.1"}:${s.port}${s.basePath ?? "/api/auth"}`;
  });
  idp = await startIdp({
    port: idpPort,
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: specs.flatMap((s) => [`${s.base}/callback/idp`, ...(s.secondIdp ? [`${s.base}/callback/idp2`] : [])]) }],
  });
  smtp = await startSmtp({ port: smtpPort });

  let bin = null;
  if (specs.some((s) => s.kind === "latchkey")) {
    const t0 = Date.now();
    await report.check("build latchkey", async () => {
      bin = latchkeyBinary();
      return `${path.relative(process.cwd(), bin)} in ${((Date.now() - t0) / 1000).toFixed(1)} s`;
    });
  }

  // A fresh PostgreSQL database per spec (its instances share it); undefined: SQLite.
  const databaseUrl = async (s, slug) => (s.database === "postgres" ? (await pgStarting).createDatabase(`compat_${slug.toLowerCase().replace(/-/g, "_")}`) : undefined);

  // Start every instance in parallel; suites await the ones they need.
  const starting = new Map();
  for (const s of specs) {
    if (s.kind === "own") continue; // the suite starts its servers itself (a port and a redirect URI reserved)
    const slug = s.id.replace(/[^a-z0-9]+/gi, "-");
    const dir = path.join(tmp, slug);
    let p;
    if (s.kind === "latchkey") {
      p = bin
        ? (async () =>
            startLatchkey({
              bin, port: s.port, basePath: s.basePath ?? "/api/auth", secret, dir, name: s.id,
              instances: s.instances ?? 1, databaseUrl: await databaseUrl(s, slug),
              config: latchkeyConfig({ issuer: idp.issuer, clientId, clientSecret, smtpUrl: smtp.url, from: FROM, strategy: s.strategy, cookieStyle: s.cookieStyle, credentials: s.credentials, theme: s.theme, twoFactor: s.twoFactor, secondIdp: s.secondIdp, emailProvider: s.emailProvider, emailLimits: s.emailLimits }),
            }))()
        : Promise.reject(new Error("latchkey was not built"));
    } else {
      p = spawnReference(
        { port: s.port, url: s.base, secret, strategy: s.strategy, issuer: idp.issuer, clientId, clientSecret, smtpUrl: smtp.url, from: FROM, credentials: s.credentials },
        { dir, name: s.id },
      );
    }
    p.catch(() => {});
    starting.set(s.id, p);
  }
  const reported = new Set();
  const ctx = {
    idp, smtp, secret, clientId, clientSecret, tmp, target, specs,
    /** The run's PostgreSQL cluster (pg.mjs: {adminUrl, createDatabase(name)}), when a spec asked for it. */
    postgres: () => pgStarting ?? Promise.reject(new Error("no spec asked for PostgreSQL")),
    async server(id) {
      try {
        return await starting.get(id);
      } catch (e) {
        if (!reported.has(id)) {
          reported.add(id);
          report.fail(`start ${id}`, e);
        }
        return null;
      }
    },
  };

  for (const s of chosen) {
    const t0 = Date.now();
    console.log(`# ${s} suite`);
    try {
      await modules[s].run(report, ctx);
    } catch (e) {
      report.fail(`${s} suite crashed`, e.stack || e);
    }
    console.log(`# ${s} suite took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  exitCode = report.failed ? 1 : 0;
} catch (e) {
  report.fail("suite setup", e.stack || e);
} finally {
  await stopAll();
  const pg = await pgStarting?.catch(() => null);
  await pg?.stop();
  await idp?.close();
  await smtp?.close();
  if (process.env.COMPAT_KEEP) console.log(`# kept ${tmp}${pg ? ` and ${pg.dir}` : ""}`);
  else fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`# total ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(report.summary());
process.exit(report.failed ? 1 : exitCode);
