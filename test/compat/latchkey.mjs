// Build the latchkey binary and start instances of it with a temporary
// database and a generated config.yaml, alone or several behind a proxy.
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { spawnLogged, waitHttp, stopChild, logTail, closeAtStop } from "./procs.mjs";
import { startProxy } from "./proxy.mjs";
import { freePorts } from "./util.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, "../..");

/**
 * Returns the path of the latchkey binary. With LATCHKEY_BIN set, that file is
 * used as is. Otherwise `go build -o bin/latchkey .` runs in the repository root.
 */
export function latchkeyBinary() {
  if (process.env.LATCHKEY_BIN) {
    const bin = path.resolve(process.cwd(), process.env.LATCHKEY_BIN);
    if (!fs.existsSync(bin)) throw new Error(`LATCHKEY_BIN=${bin} does not exist`);
    return bin;
  }
  const bin = path.join(repoRoot, "bin", "latchkey");
  if (!fs.existsSync(path.join(repoRoot, "main.go"))) {
    throw new Error(`no main.go in ${repoRoot}: latchkey is not there yet (set LATCHKEY_BIN to use a built binary)`);
  }
  execFileSync("go", ["build", "-o", bin, "."], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
  return bin;
}

/** config.yaml for one instance. */
export function latchkeyConfig({ issuer, clientId, clientSecret, smtpUrl, from, strategy = "database", cookieStyle = "next-auth", maxAge = "720h", updateAge = "24h", cookieDomain = "", credentials = false, theme = null, emailLimits = true, passkeys = false, twoFactor = null, secondIdp = false, emailProvider = true, oidc = null }) {
  const q = (s) => JSON.stringify(String(s));
  // credentials: an e-mail + password provider after the others (credentials.mjs).
  // passkeys: a webauthn provider last (SERVICE_URL's host must be a domain name).
  const creds = (credentials ? "  - type: credentials\n" : "") + (passkeys ? "  - id: passkey\n    type: webauthn\n    name: Passkey\n" : "");
  // emailLimits false: no rate limit on sign-in e-mails (a suite that sends many).
  // twoFactor: two_factor.mode ("optional" or "required"); null leaves the section out (off).
  const limits = emailLimits ? "" : "    rate_limit:\n      disabled: true\n";
  // secondIdp: another OIDC provider ("idp2", "Second SSO") on the same IdP and client
  // (its redirect URI is registered when the spec says secondIdp); emailProvider false: no e-mail provider.
  const idp2 = secondIdp
    ? `  - id: idp2\n    type: oidc\n    name: ${q("Second SSO")}\n    issuer: ${q(issuer)}\n    client_id: ${q(clientId)}\n    client_secret: ${q(clientSecret)}\n`
    : "";
  const mail = emailProvider ? `  - id: email\n    type: email\n    server: ${q(smtpUrl)}\n    from: ${q(from)}\n${limits}` : "";
  return `providers:
  - id: idp
    type: oidc
    name: ${q("Company SSO")}
    issuer: ${q(issuer)}
    client_id: ${q(clientId)}
    client_secret: ${q(clientSecret)}
${idp2}${mail}${creds}session:
  strategy: ${strategy}
  max_age: ${maxAge}
  update_age: ${updateAge}
cookies:
  style: ${cookieStyle}
  domain: ${q(cookieDomain)}
${themeYaml(theme, q)}${twoFactor ? `two_factor:\n  mode: ${twoFactor}\n` : ""}${oidcYaml(oidc)}`;
}

// oidcYaml is the oidc: section (the OpenID Provider on), or "" for oidc null.
// oidc: {clients: [{id, name, secret, public, redirect_uris,
// post_logout_redirect_uris, scopes, first_party, ...}], and any other key of
// the section (signing_algorithm, ...)}; keys are config.yaml's
// (app/config/openid.go), values written as JSON (which YAML reads).
function oidcYaml(oidc) {
  if (!oidc) return "";
  const { clients = [], ...rest } = oidc;
  const j = JSON.stringify;
  const settings = Object.entries({ enabled: true, ...rest }).map(([k, v]) => `  ${k}: ${j(v)}\n`).join("");
  const list = clients.map((c) => Object.entries(c).map(([k, v], i) => `${i ? "      " : "    - "}${k}: ${j(v)}\n`).join("")).join("");
  return `oidc:\n${settings}  clients:\n${list}`;
}

// themeYaml is the theme section ({color_scheme, brand_color, logo, button_text}), or "".
function themeYaml(theme, q) {
  if (!theme) return "";
  return "theme:\n" + Object.entries(theme).map(([k, v]) => `  ${k}: ${q(v)}\n`).join("");
}

/**
 * Start latchkey. opts: {bin, port, basePath, secret, config (yaml text), dir (temp dir), name,
 * env (extra environment, e.g. AUTH_SECRET_1), databaseUrl (default: a SQLite file in dir),
 * serviceUrl (default: this instance's own base URL), instances (default 1)}.
 * Returns {name, base, origin, port, dir, log, proc, logTail(n), stop()}.
 *
 * With instances > 1, that many processes start on free ports behind a
 * round-robin proxy (proxy.mjs) listening on `port`: every one gets the same
 * secret, config and DATABASE_URL (default: one SQLite file in dir) and the
 * proxy's base URL as SERVICE_URL. The result describes the proxy (base,
 * origin, port) and adds {backends: [started instance, ...], proxy}; stop()
 * ends the proxy and every instance.
 */
export async function startLatchkey(opts) {
  return (opts.instances ?? 1) > 1 ? startBehindProxy(opts) : startOne(opts);
}

async function startOne({ bin, port, basePath = "/api/auth", secret, config, dir, name, env: extraEnv = {}, databaseUrl, serviceUrl }) {
  fs.mkdirSync(dir, { recursive: true });
  const configFile = path.join(dir, "config.yaml");
  fs.writeFileSync(configFile, config);
  const log = path.join(dir, "latchkey.log");
  const origin = `http://127.0.0.1:${port}`;
  const base = origin + basePath;
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: dir,
    SERVICE_URL: serviceUrl ?? base,
    PORT: String(port),
    AUTH_SECRET: secret,
    DATABASE_URL: databaseUrl ?? path.join(dir, "latchkey.db"),
    ...extraEnv,
  };
  const proc = spawnLogged(bin, ["--config", configFile], { env, cwd: dir, logFile: log });
  await waitHttp(proc, `${base}/providers`, log);
  // An admin command (`latchkey users ...`) on this instance's config and database; input is its stdin.
  const admin = (args, input = "") =>
    new Promise((resolve) => {
      const child = execFile(bin, ["--config", configFile, ...args], { env, cwd: dir, timeout: 20000 }, (err, stdout, stderr) =>
        resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr }),
      );
      // A command that reads no input may exit before it is written: EPIPE then is no failure.
      child.stdin.on("error", () => {});
      child.stdin.end(input);
    });
  return { name, base, origin, port, dir, log, proc, admin, logTail: (n) => logTail(log, n), stop: () => stopChild(proc) };
}

const LETTERS = "ABCDEFGH";

async function startBehindProxy({ instances, port, basePath = "/api/auth", dir, name, databaseUrl, ...rest }) {
  if (instances > LETTERS.length) throw new Error(`at most ${LETTERS.length} instances`);
  const origin = `http://127.0.0.1:${port}`;
  const base = origin + basePath;
  fs.mkdirSync(dir, { recursive: true });
  const shared = databaseUrl ?? path.join(dir, "latchkey.db");
  const ports = await freePorts(instances);
  // Started at once, so their start-up migrations race (on PostgreSQL, under an advisory lock).
  const backends = await Promise.all(
    ports.map((p, i) =>
      startOne({ ...rest, port: p, basePath, dir: path.join(dir, LETTERS[i]), name: `${name} ${LETTERS[i]}`, databaseUrl: shared, serviceUrl: base }),
    ),
  );
  const proxy = await startProxy({ port, backends: backends.map((b, i) => ({ name: LETTERS[i], port: b.port })) });
  const unregister = closeAtStop(() => proxy.close());
  return {
    name,
    base,
    origin,
    port,
    dir,
    backends,
    proxy,
    admin: (...a) => backends[0].admin(...a), // they share the database
    logTail: (n) => backends.map((b) => `--- ${b.name} ---\n${b.logTail(n)}`).join("\n"),
    async stop() {
      unregister();
      await proxy.close();
      await Promise.all(backends.map((b) => b.stop()));
    },
  };
}
