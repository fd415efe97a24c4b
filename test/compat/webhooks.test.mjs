// Signed webhooks (issue #34), judged by the `standardwebhooks` npm package
// (the Standard Webhooks reference library for JavaScript, independent of
// latchkey's Go signing). One latchkey instance (SQLite, database sessions,
// the credentials provider) has two endpoints, both with the secrets
// "NEW OLD" (a rotation's overlap, new first): receiver A verifies every
// request with NEW alone, receiver B with OLD alone, and each answers 401
// to a request its secret does not verify. Through the real next-auth
// client: a refused password sign-in produces no session.created, and a
// good one exactly one, naming the signed-in user and the session's row,
// delivered to both receivers under the same webhook-id.
import crypto from "node:crypto";
import http from "node:http";
import path from "node:path";
import { createRequire } from "node:module";
import { Webhook } from "standardwebhooks";
import { CookieJar } from "./jar.mjs";
import { NodeClient } from "./nodeclient.mjs";
import { PASSWORD_USER, createPasswordUser } from "./credentials.mjs";
import { latchkeyBinary, latchkeyConfig, startLatchkey } from "./latchkey.mjs";
import { assert, eq, show } from "./report.mjs";
import { freePorts, waitFor, sleep } from "./util.mjs";

const require = createRequire(import.meta.url);
const SECRET_ENV = "LATCHKEY_WEBHOOK_COMPAT_SECRETS";
const POLL_MS = 200;

/** The suite starts its own instance (its config has a webhooks section and its secrets an environment variable). */
export function plan() {
  return [];
}

const newSecret = () => "whsec_" + crypto.randomBytes(32).toString("base64");

/**
 * A webhook receiver on 127.0.0.1:port that verifies every request with
 * `secret` alone ({name, url, requests: [{id, headers, body, event, ok, why}], close()}).
 * A request that does not verify is answered 401 (and would be retried).
 */
async function startReceiver(name, port, secret) {
  const wh = new Webhook(secret);
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const r = { id: req.headers["webhook-id"], headers: req.headers, body, at: Date.now() };
      try {
        r.event = wh.verify(body, req.headers);
        r.ok = req.method === "POST" && (req.headers["content-type"] ?? "").startsWith("application/json") && r.event?.id === r.id;
        if (!r.ok) r.why = `method ${req.method}, content-type ${req.headers["content-type"]}, body id ${show(r.event?.id)}, webhook-id ${show(r.id)}`;
      } catch (e) {
        r.ok = false;
        r.why = e.message;
      }
      requests.push(r);
      res.writeHead(r.ok ? 204 : 401).end();
    });
  });
  await new Promise((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve));
  return {
    name,
    url: `http://127.0.0.1:${port}/webhooks/latchkey`,
    requests,
    /** Verified events of a type, one per webhook-id. */
    events(type) {
      const byId = new Map();
      for (const r of requests) if (r.ok && r.event.type === type) byId.set(r.id, r.event);
      return [...byId.values()];
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

function webhooksYaml(endpoints) {
  const list = endpoints.map((e) => `    - name: ${e.name}\n      url: ${JSON.stringify(e.url)}\n      secret_env: ${SECRET_ENV}\n`).join("");
  return `callbacks:\n  expose_user_id: true\nwebhooks:\n  timeout: 5s\n  poll_interval: ${POLL_MS}ms\n  retry_schedule: [1s, 2s, 5s, 10s]\n  endpoints:\n${list}`;
}

export async function run(report, ctx) {
  if (ctx.target !== "latchkey") return;
  const t = report.scope("webhooks ");
  const fresh = newSecret();
  const old = newSecret();
  const [portA, portB, port] = await freePorts(3);
  const a = await startReceiver("new-only", portA, fresh);
  const b = await startReceiver("old-only", portB, old);
  const dir = path.join(ctx.tmp, "webhooks");
  const config =
    latchkeyConfig({ issuer: ctx.idp.issuer, clientId: ctx.clientId, clientSecret: ctx.clientSecret, smtpUrl: ctx.smtp.url,
      from: "Sign in <no-reply@example.com>", credentials: true }) + webhooksYaml([a, b]);
  let server;
  let db;
  try {
    const ok = await t.check("latchkey starts with two endpoints whose secrets are \"NEW OLD\"", async () => {
      server = await startLatchkey({ bin: latchkeyBinary(), port, secret: ctx.secret, config, dir, name: "webhooks", env: { [SECRET_ENV]: `${fresh} ${old}` } });
    });
    if (!ok) return;
    const Database = require("better-sqlite3");
    db = new Database(path.join(dir, "latchkey.db"), { readonly: true, fileMustExist: true });
    const pending = () => db.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE status <> 'delivered'").get().n;
    // Everything the outbox holds is delivered, and a few polls more have passed.
    const settled = async (what) => {
      await waitFor(() => pending() === 0, { timeout: 20000, what: `${what}: the outbox delivered` });
      await sleep(5 * POLL_MS);
    };

    const { email, password } = PASSWORD_USER;
    const { base, origin } = server;
    const app = `${origin}/app`;
    let userId;
    await t.check("latchkey users create makes the password user; its user.created reaches both receivers", async () => {
      await createPasswordUser(server);
      await waitFor(() => a.events("user.created").length && b.events("user.created").length, { timeout: 15000, what: "user.created at both" });
      const [ev] = a.events("user.created");
      eq(ev.data?.user?.email, email, "data.user.email");
      userId = ev.data.user.id;
      assert(typeof userId === "string" && userId, () => `data.user.id ${show(userId)}`);
    });

    await t.check("a refused password sign-in (the real client, a wrong password) sends no session.created", async () => {
      const c = new NodeClient(server, new CookieJar());
      const r = await c.run((na) => na.signIn("credentials", { email, password: "not the password", redirect: false, callbackUrl: `${origin}/home` }), { windowHref: app });
      eq(r, { error: "CredentialsSignin", status: 401, ok: false, url: null }, "signIn result");
      await settled("after the refusal");
      eq(a.events("session.created"), [], "session.created at A");
      eq(b.events("session.created"), [], "session.created at B");
    });

    let session;
    await t.check("a password sign-in through the real client sends exactly one session.created, for the signed-in user", async () => {
      const c = new NodeClient(server, new CookieJar());
      const r = await c.run((na) => na.signIn("credentials", { email, password, redirect: false, callbackUrl: `${origin}/home` }), { windowHref: app });
      eq(r, { error: null, status: 200, ok: true, url: `${origin}/home` }, "signIn result");
      const s = await c.run((na) => na.getSession());
      eq(s?.user?.email, email, "session.user.email");
      eq(s?.user?.id, userId, "session.user.id (callbacks.expose_user_id) is the user.created's user");
      await waitFor(() => a.events("session.created").length && b.events("session.created").length, { timeout: 15000, what: "session.created at both" });
      await settled("after the sign-in");
      const got = a.events("session.created");
      eq(got.length, 1, "session.created events at A");
      session = got[0];
      eq(session.data?.user_id, userId, "data.user_id");
      eq(session.data?.provider, "credentials", "data.provider");
      eq(session.data?.strategy, "database", "data.strategy");
      assert(Array.isArray(session.data?.methods) && session.data.methods.includes("pwd"), () => `data.methods ${show(session.data?.methods)}`);
      const row = db.prepare("SELECT user_id FROM sessions WHERE id = ?").get(session.data?.session_id);
      eq(row?.user_id, userId, `the sessions row of data.session_id ${show(session.data?.session_id)}`);
      const token = c.jar.get(base, "next-auth.session-token");
      assert(token, "no session cookie in the client's jar");
      assert(!JSON.stringify(session).includes(token), "the session token is in the event");
      eq(b.events("session.created").map((e) => e.id), [session.id], "B got the same event, under the same webhook-id");
      eq(typeof session.timestamp, "string", "timestamp");
    });

    await t.check("rotation: every request verified at A with NEW alone and at B with OLD alone, each signed with both", async () => {
      for (const r of [...a.requests, ...b.requests]) assert(r.ok, () => `a request of ${r.id} was refused: ${r.why}`);
      assert(a.requests.length >= 2 && b.requests.length >= 2, () => `requests: A ${a.requests.length}, B ${b.requests.length}`);
      for (const r of [...a.requests, ...b.requests]) {
        const sigs = r.headers["webhook-signature"].split(" ");
        eq(sigs.length, 2, `signatures in ${show(r.headers["webhook-signature"])}`);
        assert(sigs.every((s) => s.startsWith("v1,")), () => `webhook-signature ${show(r.headers["webhook-signature"])}`);
      }
      // And the verifiers are not lenient: a third secret verifies nothing.
      const stranger = new Webhook(newSecret());
      for (const r of a.requests) {
        let refused = false;
        try {
          stranger.verify(r.body, r.headers);
        } catch {
          refused = true;
        }
        assert(refused, `${r.id} verified with an unrelated secret`);
      }
      return `${a.requests.length} + ${b.requests.length} requests`;
    });

    await t.check("the secrets are in no log line", async () => {
      const log = server.logTail(100000);
      for (const s of [fresh, old]) assert(!log.includes(s.slice("whsec_".length)), "a webhook secret is in the log");
    });
  } finally {
    db?.close();
    await server?.stop();
    await a.close();
    await b.close();
  }
}
