// Moving from a next-auth server to latchkey without signing anyone out
// (issue #33), proved with a real next-auth: next-auth 4.24.15 on real
// adapters (nextauth-adapters.mjs) signs people in, `latchkey import
// next-auth` copies its database, and latchkey, started on the same port with
// the same secret, answers the same browsers' cookies.
//
//   [postgres @auth/pg-adapter]    the adapter's documented lower-case tables
//   [sqlite @auth/kysely-adapter]  the Kysely adapter's documented tables on a SQLite file
//   [jwt]                          a next-auth JWT cookie read by latchkey with the same secret
//   [refusals]                     unknown schemas and a bad command line
//
// Every browser is a cookie jar driven by the real next-auth client
// (next-auth/react from Node: signIn, getSession, signOut).
import crypto from "node:crypto";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { CookieJar, jarFetch, followRedirects } from "./jar.mjs";
import { NodeClient, loadNextAuthReact } from "./nodeclient.mjs";
import { latchkeyBinary, latchkeyConfig, startLatchkey } from "./latchkey.mjs";
import { spawnNextAuth, createSchema, openSource, TABLES, PG_SCHEMA, newId } from "./nextauth-adapters.mjs";
import { signInLink } from "./smtp.mjs";
import { ALICE } from "./idp.mjs";
import { confirmIfAsked } from "./rotation.test.mjs";
import { assert, eq, show } from "./report.mjs";
import { evidence } from "./util.mjs";

const FROM = "Sign in <no-reply@example.com>";
const SESSION = "next-auth.session-token";
const DAY = 86400e3;
const PASSWORD = "pw-never-printed-7f3a";

/** Ports (and IdP redirect URIs) for next-auth and, after it, latchkey on the same origin. */
export function plan(target) {
  if (target !== "latchkey") return [];
  return [
    { id: "import postgres", kind: "own", database: "postgres" },
    { id: "import sqlite", kind: "own" },
    { id: "import jwt", kind: "own" },
  ];
}

export async function run(t, ctx) {
  if (ctx.target !== "latchkey") return;
  const bin = latchkeyBinary();
  const pg = await ctx.postgres();
  const spec = (id) => ctx.specs.find((s) => s.id === id);
  await migration(t.scope("[postgres @auth/pg-adapter] "), ctx, { bin, pg, spec: spec("import postgres"), adapter: "pg" });
  await migration(t.scope("[sqlite @auth/kysely-adapter] "), ctx, { bin, pg, spec: spec("import sqlite"), adapter: "kysely" });
  await jwtCarryOver(t.scope("[jwt] "), ctx, { bin, pg, spec: spec("import jwt") });
  await refusals(t.scope("[refusals] "), ctx, { bin, pg });
}

// ---- the import command -----------------------------------------------------

/**
 * `latchkey --config {dir}/config.yaml import next-auth ...args` on latchkey's
 * database databaseUrl, with the service's environment. Resolves {code, stdout, stderr, summary}.
 */
function importCommand({ bin, dir, secret, databaseUrl, base, config }) {
  fs.mkdirSync(dir, { recursive: true });
  const configFile = path.join(dir, "config.yaml");
  fs.writeFileSync(configFile, config);
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: dir, SERVICE_URL: base, AUTH_SECRET: secret, DATABASE_URL: databaseUrl };
  const cli = (args) =>
    new Promise((resolve) => {
      execFile(bin, ["--config", configFile, ...args], { env, cwd: dir, timeout: 60000 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
      );
    });
  const imp = async (...args) => {
    const r = await cli(["import", "next-auth", ...args]);
    return { ...r, summary: parseSummary(r.stdout), show: () => `exit ${r.code}\n--- stdout ---\n${r.stdout.trimEnd()}\n--- stderr ---\n${r.stderr.trimEnd().split("\n").slice(-8).join("\n")}` };
  };
  imp.cli = cli;
  return imp;
}

const TABLE_LINES = [["users", "users"], ["accounts", "accounts"], ["sessions", "sessions"], ["tokens", "verification tokens"]];

/** The summary the import prints on stdout (the CLI contract of issue #33). */
export function parseSummary(stdout) {
  const lines = stdout.replace(/\r/g, "").split("\n");
  const out = { header: null, source: null, schema: null, dryRun: false, skipped: [] };
  for (const l of lines) {
    const m = l.match(/^next-auth import from (.+) \(schema: ([a-z]+)(, dry run: nothing written)?\)$/);
    if (m) Object.assign(out, { header: l, source: m[1], schema: m[2], dryRun: !!m[3] });
  }
  for (const [key, label] of TABLE_LINES) {
    const l = lines.find((x) => x.startsWith(`${label}: `));
    const m = l?.match(/^[a-z ]+: (\d+) read, (\d+) imported, (\d+) already there, (\d+) skipped$/);
    out[key] = m ? { read: +m[1], imported: +m[2], there: +m[3], skipped: +m[4] } : `no "${label}: R read, I imported, A already there, S skipped" line`;
  }
  const at = lines.indexOf("skipped:");
  if (at >= 0) {
    for (const l of lines.slice(at + 1)) {
      if (!l.startsWith("  ")) break;
      const body = l.slice(2);
      const table = TABLE_LINES.map(([, label]) => label).find((label) => body.startsWith(label));
      const i = body.lastIndexOf(": ");
      out.skipped.push({ line: body, table, key: body.slice((table ?? "").length, i < 0 ? undefined : i).trim(), reason: i < 0 ? "" : body.slice(i + 2) });
    }
  }
  return out;
}

/** counts: {users: [read, imported, there, skipped], ...}; checks the summary's lines. */
function expectCounts(r, counts) {
  assert(r.code === 0, () => `the import failed: ${r.show()}`);
  for (const [key, [read, imported, there, skipped]] of Object.entries(counts)) {
    const label = TABLE_LINES.find(([k]) => k === key)[1];
    eq(r.summary[key], { read, imported, there, skipped }, `${label} (output:\n${r.stdout.trimEnd()}\n)`);
  }
}

/** A line of the skipped block for table whose reason matches re (and whose key includes key). */
function skippedLine(r, table, re, key) {
  const hit = r.summary.skipped.find((s) => s.table === table && re.test(s.reason) && (key === undefined || s.key.includes(key)));
  assert(hit, () => `no "skipped:" line for ${table}${key === undefined ? "" : ` ${key}`} matching ${re} in:\n${r.stdout.trimEnd()}`);
  return hit;
}

// ---- browsers ----------------------------------------------------------------

function browsers(base) {
  const origin = new URL(base).origin;
  const app = `${origin}/app`;
  const na = loadNextAuthReact(base); // next-auth and then latchkey serve this same base URL
  const open = (jar = new CookieJar()) => new NodeClient({ base, origin }, jar, { module: na });
  return { origin, app, open };
}

/** signIn("idp") with the real client, then the IdP round trip by hand; the jar ends signed in. */
async function idpSignIn(b, c) {
  const authUrl = await c.run(async (na, loc) => {
    await na.signIn("idp", { callbackUrl: b.app });
    return loc.href;
  }, { windowHref: b.app });
  assert(authUrl && authUrl !== b.app, () => `signIn("idp") went nowhere; client errors: ${c.lastErrors()}`);
  const out = await followRedirects(jarFetch(c.jar), authUrl, { stop: (u) => u === b.app });
  assert(out.url === b.app, () => `the IdP sign-in ended at ${out.url} (HTTP ${out.res?.status}): ${out.chain.map((x) => `${x.status} ${x.url}`).join(" -> ")}`);
  assert(c.jar.get(b.app, SESSION), () => `no ${SESSION} after the IdP sign-in (jar: ${c.jar.header(b.app)})`);
  return c.jar.get(b.app, SESSION);
}

/** signIn("email") with the real client; the link from the SMTP catcher, opened in the jar unless click is false. */
async function emailSignIn(b, c, ctx, email, { click = true } = {}) {
  const since = Date.now();
  const r = await c.run((na) => na.signIn("email", { email, redirect: false, callbackUrl: b.app }), { windowHref: b.app });
  assert(r?.ok, () => `signIn("email") gave ${show(r)}; client errors: ${c.lastErrors()}`);
  const link = signInLink(await ctx.smtp.waitForMail(email, { since }));
  assert(link, `no sign-in link in the e-mail to ${email}`);
  if (!click) return link;
  const res = await jarFetch(c.jar)(link);
  await res.arrayBuffer();
  assert(res.status === 302 && res.headers.get("location") === b.app, () => `the link: ${evidence(res)}`);
  assert(c.jar.get(b.app, SESSION), () => `no ${SESSION} after the link`);
  return c.jar.get(b.app, SESSION);
}

const getSession = (c) => c.run((na) => na.getSession());

// ---- the database sessions migration ----------------------------------------------

async function migration(t, ctx, { bin, pg, spec, adapter }) {
  const kind = adapter === "pg" ? "postgres" : "sqlite";
  const dir = path.join(ctx.tmp, `import-${kind}`);
  fs.mkdirSync(dir, { recursive: true });
  const secret = crypto.randomBytes(32).toString("base64url");
  const T = TABLES[adapter];
  const source = adapter === "pg" ? await pg.createDatabase("import_nextauth") : path.join(dir, "next-auth.db");
  const target = adapter === "pg" ? await pg.createDatabase("import_latchkey") : path.join(dir, "latchkey.db");
  const schema = adapter === "pg" ? "sql" : "prisma"; // the Kysely adapter's tables are the Prisma adapter's names
  const described = adapter === "pg" ? source : `sqlite:${source}`;
  const base = spec.base;
  const b = browsers(base);
  const naCfg = {
    adapter, database: source, port: spec.port, url: base, secret, strategy: "database",
    issuer: ctx.idp.issuer, clientId: ctx.clientId, clientSecret: ctx.clientSecret, smtpUrl: ctx.smtp.url, from: FROM,
  };
  const config = latchkeyConfig({ issuer: ctx.idp.issuer, clientId: ctx.clientId, clientSecret: ctx.clientSecret, smtpUrl: ctx.smtp.url, from: FROM, strategy: "database" }) +
    "callbacks:\n  expose_user_id: true\n";
  const lkDir = path.join(dir, "latchkey");
  const imp = importCommand({ bin, dir: lkDir, secret, databaseUrl: target, base, config });
  const startLk = () => startLatchkey({ bin, port: spec.port, secret, config, dir: lkDir, name: `latchkey ${kind}`, databaseUrl: target });
  const mail = { bob: `bob-${kind}@example.com`, carol: `carol-${kind}@example.com`, dave: `dave-${kind}@example.com` };
  const jars = {};
  const ids = {};
  let pendingLink;

  await createSchema(adapter, source);
  const db = await openSource(adapter, source);
  const idOf = async (email) => (await db.query(`SELECT id FROM ${T.users} WHERE email = $1`, [email]))[0]?.id;
  try {
    // ---- next-auth signs people in ----------------------------------------
    let server = await spawnNextAuth(naCfg, { dir, name: `next-auth ${kind}` });
    try {
      await t.check("next-auth (database sessions) signs alice in with the IdP and by e-mail, bob by e-mail, each in a browser of their own", async () => {
        jars.aliceIdp = b.open();
        await idpSignIn(b, jars.aliceIdp);
        jars.aliceMail = b.open();
        await emailSignIn(b, jars.aliceMail, ctx, ALICE.email);
        jars.bob = b.open();
        await emailSignIn(b, jars.bob, ctx, mail.bob);
        // A second link for bob, mailed and never opened before the move.
        pendingLink = await emailSignIn(b, b.open(), ctx, mail.bob, { click: false });
        for (const [who, email] of [["aliceIdp", ALICE.email], ["aliceMail", ALICE.email], ["bob", mail.bob]]) {
          eq((await getSession(jars[who]))?.user?.email, email, `next-auth's getSession() for ${who}`);
        }
      });
      await t.check("the adapter's rows: 2 users, the IdP account, 3 sessions whose tokens are the cookies, 1 unspent link", async () => {
        ids.alice = await idOf(ALICE.email);
        ids.bob = await idOf(mail.bob);
        assert(ids.alice != null && ids.bob != null, () => `users: ${show(ids)}`);
        eq(Number((await db.query(`SELECT count(*) AS n FROM ${T.users}`))[0].n), 2, "users");
        const accounts = await db.query(`SELECT "userId", provider, "providerAccountId" FROM ${T.accounts}`);
        eq(accounts.map((a) => [String(a.userId), a.provider, a.providerAccountId]), [[String(ids.alice), "idp", ALICE.sub]], "accounts");
        const tokens = (await db.query(`SELECT "sessionToken" FROM ${T.sessions}`)).map((s) => s.sessionToken).sort();
        eq(tokens, [jars.aliceIdp, jars.aliceMail, jars.bob].map((c) => c.jar.get(base, SESSION)).sort(), "sessions' tokens");
        const links = await db.query(`SELECT identifier FROM ${T.tokens}`);
        eq(links.map((l) => l.identifier), [mail.bob], "verification tokens");
        return `user ids ${ids.alice}, ${ids.bob}`;
      });
    } finally {
      await server.stop();
    }
    // An expired session and an expired link, as next-auth leaves them behind.
    await db.query(`INSERT INTO ${T.sessions} ("userId", expires, "sessionToken") VALUES ($1, $2, $3)`, [ids.alice, new Date(Date.now() - DAY).toISOString(), crypto.randomUUID()]);
    await db.query(`INSERT INTO ${T.tokens} (identifier, expires, token) VALUES ($1, $2, $3)`, ["late@example.com", new Date(Date.now() - DAY).toISOString(), crypto.randomBytes(32).toString("hex")]);

    // ---- the import -----------------------------------------------------------
    await t.check(`--dry-run counts what would come in and says it wrote nothing${adapter === "pg" ? " (a password in --from is never printed)" : ""}`, async () => {
      // Trust authentication takes any password: this one only has to stay out of the output.
      const from = adapter === "pg" ? source.replace("://postgres@", `://postgres:${PASSWORD}@`) : `sqlite:${source}`;
      const r = await imp("--from", from, "--dry-run");
      expectCounts(r, { users: [2, 2, 0, 0], accounts: [1, 1, 0, 0], sessions: [4, 3, 0, 1], tokens: [2, 1, 0, 1] });
      const shown = adapter === "pg" ? source.replace("://postgres@", "://postgres:xxxxx@") : described;
      eq(r.summary.header, `next-auth import from ${shown} (schema: ${schema}, dry run: nothing written)`, "first line");
      assert(!(r.stdout + r.stderr).includes(PASSWORD), () => `the password is printed: ${r.show()}`);
    });
    await t.check("the import copies 2 users, the account (its provider tokens dropped, said so), 3 live sessions and the unspent link; the expired session and link are skipped", async () => {
      const r = await imp("--from", adapter === "pg" ? source : `sqlite:${source}`);
      // Counted in again after --dry-run: the dry run wrote nothing.
      expectCounts(r, { users: [2, 2, 0, 0], accounts: [1, 1, 0, 0], sessions: [4, 3, 0, 1], tokens: [2, 1, 0, 1] });
      eq(r.summary.header, `next-auth import from ${described} (schema: ${schema})`, "first line");
      skippedLine(r, "sessions", /expired/);
      skippedLine(r, "verification tokens", /expired/);
      // The adapter kept the IdP's access and ID tokens in the account row; latchkey drops them and says so.
      assert(/^provider tokens: not kept for 1 account\b/m.test(r.stdout), () => `no "provider tokens: not kept for 1 account" line:\n${r.stdout}`);
      assert(/users/.test(r.stderr), () => `no progress line on stderr: ${show(r.stderr)}`);
    });
    await t.check("the users keep their ids, e-mail addresses, names and verification state", async () => {
      const rows = await db.query(`SELECT id, name, email, "emailVerified" FROM ${T.users}`);
      const list = JSON.parse((await imp.cli(["users", "list", "--json"])).stdout);
      for (const row of rows) {
        const u = list.find((x) => x.id === String(row.id));
        assert(u, () => `no latchkey user ${row.id} (${row.email}) in ${show(list)}`);
        eq([u.email, u.name], [row.email.toLowerCase(), row.name], `user ${row.id}`);
        const was = row.emailVerified == null ? null : new Date(row.emailVerified).getTime();
        const now = u.emailVerified == null ? null : Date.parse(u.emailVerified);
        assert((was === null) === (now === null) && (was === null || Math.abs(was - now) < 1000), () => `user ${row.id}: emailVerified ${show(u.emailVerified)}, next-auth had ${show(row.emailVerified)}`);
      }
      eq(list.length, rows.length, "latchkey's users");
      eq(list.find((u) => u.id === String(ids.alice)).providers, ["idp"], "alice's providers");
    });
    await t.check("run again: nothing imported, everything already there", async () => {
      const r = await imp("--from", adapter === "pg" ? source : `sqlite:${source}`);
      expectCounts(r, { users: [2, 0, 2, 0], accounts: [1, 0, 1, 0], sessions: [4, 0, 3, 1], tokens: [2, 0, 1, 1] });
    });

    // ---- more sign-ins on the old server, then an incremental run --------------
    server = await spawnNextAuth(naCfg, { dir, name: `next-auth ${kind} again` });
    try {
      await t.check("next-auth restarted on the same database: carol signs in by e-mail, alice with the IdP in a third browser", async () => {
        eq((await getSession(jars.bob))?.user?.email, mail.bob, "bob is still signed in at next-auth");
        jars.carol = b.open();
        await emailSignIn(b, jars.carol, ctx, mail.carol);
        jars.aliceIdp2 = b.open();
        await idpSignIn(b, jars.aliceIdp2);
        ids.carol = await idOf(mail.carol);
      });
    } finally {
      await server.stop();
    }
    await t.check(`the next run brings only the new rows: carol and her session, alice's new session${adapter === "pg" ? "" : " (--from a plain path)"}`, async () => {
      const r = await imp("--from", source);
      expectCounts(r, { users: [3, 1, 2, 0], accounts: [1, 0, 1, 0], sessions: [6, 2, 3, 1], tokens: [2, 0, 1, 1] });
    });

    // ---- a row latchkey's rules refuse ------------------------------------------
    // Straight into next-auth's database: "Alice@Example.com" (alice's address but
    // for case) with an account and a session, and dave, an ordinary user.
    const rogue = { token: crypto.randomUUID(), daveToken: crypto.randomUUID() };
    const insertUser = async (email, name, verified) => {
      const cols = adapter === "pg" ? "" : "id, ";
      const vals = adapter === "pg" ? [email, name, verified] : [newId(), email, name, verified];
      const rows = await db.query(`INSERT INTO ${T.users} (${cols}email, name, "emailVerified") VALUES (${vals.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING id`, vals);
      return rows[0].id;
    };
    rogue.id = await insertUser("Alice@Example.com", "Mallory", new Date().toISOString());
    await db.query(`INSERT INTO ${T.accounts} ("userId", type, provider, "providerAccountId") VALUES ($1, $2, $3, $4)`, [rogue.id, "oidc", "idp", "mallory"]);
    await db.query(`INSERT INTO ${T.sessions} ("userId", expires, "sessionToken") VALUES ($1, $2, $3)`, [rogue.id, new Date(Date.now() + 30 * DAY).toISOString(), rogue.token]);
    ids.dave = await insertUser(mail.dave, null, null);
    await db.query(`INSERT INTO ${T.sessions} ("userId", expires, "sessionToken") VALUES ($1, $2, $3)`, [ids.dave, new Date(Date.now() + 30 * DAY).toISOString(), rogue.daveToken]);
    const rogueChecks = async (r, list, sessions) => {
      skippedLine(r, "users", /\S/, String(rogue.id));
      skippedLine(r, "accounts", /\S/, "idp/mallory");
      assert(!list.some((u) => u.id === String(rogue.id) || u.name === "Mallory"), () => `the skipped user is in latchkey: ${show(list)}`);
      const alice = list.find((u) => u.id === String(ids.alice));
      eq(alice?.providers, ["idp"], "alice's providers");
      const dave = list.find((u) => u.id === String(ids.dave));
      assert(dave && dave.email === mail.dave && dave.emailVerified === null, () => `dave: ${show(dave)}`);
      eq(sessions.filter((s) => s.userId === String(rogue.id)).length, 0, "sessions of the skipped user");
    };
    if (adapter === "pg") {
      await t.check("into a fresh latchkey database in batches of 2: the user whose e-mail differs from alice's only by case (a later batch) is skipped with its account and session, all else comes in", async () => {
        const fresh = await pg.createDatabase("import_latchkey_fresh");
        const imp2 = importCommand({ bin, dir: path.join(dir, "fresh"), secret, databaseUrl: fresh, base, config });
        const r = await imp2("--from", source, "--batch-size", "2");
        const progress = r.stderr.split("\n").filter((l) => /users/.test(l)).length;
        assert(progress >= 3, () => `expected a progress line per batch of users (3), got ${progress}: ${r.show()}`);
        expectCounts(r, { users: [5, 4, 0, 1], accounts: [2, 1, 0, 1], sessions: [8, 6, 0, 2], tokens: [2, 1, 0, 1] });
        const list = JSON.parse((await imp2.cli(["users", "list", "--json"])).stdout);
        const sessions = JSON.parse((await imp2.cli(["sessions", "list", "--json"])).stdout);
        await rogueChecks(r, list, sessions);
        eq(list.length, 4, "latchkey's users");
        eq(sessions.length, 6, "latchkey's sessions");
        return `skipped: ${r.summary.skipped.map((s) => s.line).join(" | ")}`;
      });
    }
    await t.check("the user whose e-mail differs from alice's only by case is skipped with its account and session; dave comes in", async () => {
      const r = await imp("--from", adapter === "pg" ? source : `sqlite:${source}`);
      expectCounts(r, { users: [5, 1, 3, 1], accounts: [2, 0, 1, 1], sessions: [8, 1, 5, 2], tokens: [2, 0, 1, 1] });
      const list = JSON.parse((await imp.cli(["users", "list", "--json"])).stdout);
      const sessions = JSON.parse((await imp.cli(["sessions", "list", "--json"])).stdout);
      await rogueChecks(r, list, sessions);
      eq(list.length, 4, "latchkey's users");
      eq(sessions.length, 6, "latchkey's sessions");
      return `skipped: ${r.summary.skipped.map((s) => s.line).join(" | ")}`;
    });

    // ---- latchkey on the same origin, same secret --------------------------------
    let lk = await startLk();
    try {
      await t.check("latchkey answers the same cookies: getSession() gives each browser its user (id, name, e-mail) and next-auth's expiry", async () => {
        const expect = {
          aliceIdp: [ids.alice, ALICE.email, ALICE.name], aliceMail: [ids.alice, ALICE.email, ALICE.name], aliceIdp2: [ids.alice, ALICE.email, ALICE.name],
          bob: [ids.bob, mail.bob, null], carol: [ids.carol, mail.carol, null],
        };
        for (const [who, [id, email, name]] of Object.entries(expect)) {
          const s = await getSession(jars[who]);
          assert(s, () => `${who}: getSession() is null at latchkey; ${lk.logTail(5)}`);
          eq([s.user?.id, s.user?.email, s.user?.name ?? null], [String(id), email, name], `${who}'s session.user`);
          const row = (await db.query(`SELECT expires FROM ${T.sessions} WHERE "sessionToken" = $1`, [jars[who].jar.get(base, SESSION)]))[0];
          const gap = Math.abs(Date.parse(s.expires) - new Date(row.expires).getTime());
          assert(gap < 1000, () => `${who}: expires ${s.expires}, next-auth had ${new Date(row.expires).toISOString()}`);
        }
      });
      await t.check("dave's session row (written straight into next-auth's table) signs him in; the skipped user's does not", async () => {
        const res = await fetch(`${base}/session`, { headers: { cookie: `${SESSION}=${rogue.daveToken}` } });
        eq((await res.json())?.user?.email, mail.dave, "dave's session");
        const res2 = await fetch(`${base}/session`, { headers: { cookie: `${SESSION}=${rogue.token}` } });
        eq(await res2.json(), {}, "the skipped user's session");
      });
      await t.check("a new IdP sign-in of alice lands on her imported user id", async () => {
        const c = b.open();
        await idpSignIn(b, c);
        const s = await getSession(c);
        eq([s?.user?.id, s?.user?.email], [String(ids.alice), ALICE.email], "session.user");
        const list = JSON.parse((await imp.cli(["users", "list", "--json"])).stdout);
        eq(list.length, 4, "latchkey's users (no new one)");
      });
      await t.check("the link next-auth mailed to bob before the import signs him in at latchkey", async () => {
        assert(pendingLink, "no unclicked link");
        const c = b.open();
        const f = jarFetch(c.jar);
        const first = await f(pendingLink);
        const asked = first.status === 200;
        await confirmIfAsked(f, first, base);
        const s = await getSession(c);
        eq([s?.user?.id, s?.user?.email], [String(ids.bob), mail.bob], "session.user");
        return asked ? "latchkey's confirm page (no binding cookie in this browser), then signed in" : "signed in at once";
      });
      await t.check("signOut() at latchkey ends bob's imported session: getSession() is null and the old cookie is refused", async () => {
        const old = jars.bob.jar.get(base, SESSION);
        const r = await jars.bob.run((na) => na.signOut({ redirect: false, callbackUrl: `${b.origin}/bye` }), { windowHref: b.app });
        eq(r, { url: `${b.origin}/bye` }, "signOut()");
        eq(await getSession(jars.bob), null, "getSession() after sign-out");
        const res = await fetch(`${base}/session`, { headers: { cookie: `${SESSION}=${old}` } });
        eq(await res.json(), {}, "GET /session with the old cookie");
        eq((await getSession(jars.aliceMail))?.user?.email, ALICE.email, "alice's other browser");
      });
    } finally {
      await lk.stop();
    }
    // Running the import once more after the switch (docs/migrating-from-next-auth.md,
    // step 5: "import again right after the switch"): what latchkey ended must stay ended.
    let rerun;
    await t.check("an import run after the switch (bob signed out, his link spent at latchkey meanwhile) exits 0", async () => {
      rerun = await imp("--from", adapter === "pg" ? source : `sqlite:${source}`);
      assert(rerun.code === 0, () => rerun.show());
      return rerun.stdout.split("\n").filter((l) => /^(sessions|verification tokens):/.test(l)).join("; ");
    });
    lk = await startLk();
    try {
      await t.check("after that run bob's session ended at latchkey stays ended", async () => {
        const ended = (await db.query(`SELECT "sessionToken" FROM ${T.sessions} WHERE "userId" = $1`, [ids.bob]))[0]?.sessionToken;
        const res = await fetch(`${base}/session`, { headers: { cookie: `${SESSION}=${ended}` } });
        eq(await res.json(), {}, "GET /session with the cookie bob signed out");
      });
      await t.check("after that run the link bob spent at latchkey stays spent", async () => {
        const c = b.open();
        const f = jarFetch(c.jar);
        const outcome = await confirmIfAsked(f, await f(pendingLink), base).then(() => "its confirm button answered 302", (e) => e.message.slice(0, 200));
        eq(await getSession(c), null, `getSession() after opening the spent link again (${outcome})`);
      });
    } finally {
      await lk.stop();
    }
  } finally {
    await db.close();
  }
}

// ---- jwt: no import, the same secret ------------------------------------------------

async function jwtCarryOver(t, ctx, { bin, pg, spec }) {
  const dir = path.join(ctx.tmp, "import-jwt");
  const secret = crypto.randomBytes(32).toString("base64url");
  const source = await pg.createDatabase("import_nextauth_jwt");
  await createSchema("pg", source);
  const b = browsers(spec.base);
  const c = b.open();
  const server = await spawnNextAuth({
    adapter: "pg", database: source, port: spec.port, url: spec.base, secret, strategy: "jwt",
    issuer: ctx.idp.issuer, clientId: ctx.clientId, clientSecret: ctx.clientSecret, smtpUrl: ctx.smtp.url, from: FROM,
  }, { dir, name: "next-auth jwt" });
  let minted;
  try {
    await t.check("next-auth (jwt strategy, @auth/pg-adapter) signs alice in with the IdP: the cookie is its JWT", async () => {
      minted = await idpSignIn(b, c);
      assert(minted.split(".").length === 5, () => `not a JWE: ${minted.slice(0, 40)}…`);
      eq((await getSession(c))?.user?.email, ALICE.email, "next-auth's getSession()");
    });
  } finally {
    await server.stop();
  }
  const config = latchkeyConfig({ issuer: ctx.idp.issuer, clientId: ctx.clientId, clientSecret: ctx.clientSecret, smtpUrl: ctx.smtp.url, from: FROM, strategy: "jwt" });
  const start = (s, name) => startLatchkey({ bin, port: spec.port, secret: s, config, dir: path.join(dir, name), name });
  let lk = await start(secret, "latchkey");
  try {
    await t.check("latchkey (jwt, AUTH_SECRET = next-auth's NEXTAUTH_SECRET, a fresh database) reads that cookie: getSession() gives alice", async () => {
      assert(minted, "no cookie from next-auth");
      const s = await getSession(c);
      eq([s?.user?.email, s?.user?.name], [ALICE.email, ALICE.name], "session.user");
    });
  } finally {
    await lk.stop();
  }
  lk = await start(crypto.randomBytes(32).toString("base64url"), "latchkey-other-secret");
  try {
    await t.check("with another secret latchkey does not (the check above is not vacuous)", async () => {
      const res = await fetch(`${spec.base}/session`, { headers: { cookie: `${SESSION}=${minted}` } });
      eq(await res.json(), {}, "GET /session");
    });
  } finally {
    await lk.stop();
  }
}

// ---- refusals ------------------------------------------------------------------------

async function refusals(t, ctx, { bin, pg }) {
  const dir = path.join(ctx.tmp, "import-refusals");
  const secret = crypto.randomBytes(32).toString("base64url");
  const config = latchkeyConfig({ issuer: ctx.idp.issuer, clientId: ctx.clientId, clientSecret: ctx.clientSecret, smtpUrl: ctx.smtp.url, from: FROM });
  const imp = importCommand({ bin, dir, secret, databaseUrl: path.join(dir, "latchkey.db"), base: "http://127.0.0.1:3000/api/auth", config });
  const refused = (r, ...words) => {
    assert(r.code === 1, () => `expected exit 1: ${r.show()}`);
    for (const w of words) assert(r.stderr.includes(w), () => `stderr does not name ${w}: ${r.show()}`);
    return r.stderr.trim().split("\n").at(-1).slice(0, 240);
  };
  await t.check("PostgreSQL database with none of the tables: exit 1, naming the tables it expected", async () => {
    const empty = await pg.createDatabase("import_empty");
    return refused(await imp("--from", empty), "users", "User");
  });
  await t.check("PostgreSQL `users` table without \"emailVerified\": exit 1, naming the table and the column", async () => {
    const url = await pg.createDatabase("import_no_column");
    const db = await openSource("pg", url);
    try {
      await db.query(PG_SCHEMA.replace(/\s*"emailVerified" TIMESTAMPTZ,/, ""));
    } finally {
      await db.close();
    }
    return refused(await imp("--from", url), "users", "emailVerified");
  });
  await t.check("SQLite file with an unrelated table: exit 1, naming the tables it expected", async () => {
    const file = path.join(dir, "notes.db");
    const db = await openSource("kysely", file);
    await db.query("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
    await db.close();
    return refused(await imp("--from", `sqlite:${file}`), "User", "Account");
  });
  await t.check("SQLite \"Session\" table without \"sessionToken\" (--schema prisma): exit 1, naming the table and the column", async () => {
    const file = path.join(dir, "no-token.db");
    await createSchema("kysely", file);
    const db = await openSource("kysely", file);
    await db.query('DROP TABLE "Session"');
    await db.query('CREATE TABLE "Session" (id text PRIMARY KEY, "userId" text NOT NULL, expires timestamptz NOT NULL)');
    await db.close();
    return refused(await imp("--from", file, "--schema", "prisma"), "Session", "sessionToken");
  });
  await t.check("no --from: a usage error, exit 2", async () => {
    const r = await imp();
    eq(r.code, 2, `exit code (${r.show()})`);
  });
}
