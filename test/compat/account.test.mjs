// The account page (issue #29) with real components; latchkey only
// (next-auth has no account page).
//
//  - headless Chromium on {base}/account, database and jwt sessions: a user
//    (e-mail link through the SMTP catcher) with three sessions (the browser
//    and two Node cookie jars running the real next-auth@4.24.15 client);
//    the page lists three, this one marked; "End session" on one, then "End
//    all other sessions": the ended jars' getSession() is null (jwt: within
//    the revocation poll); "Link Second SSO" (a second OIDC provider on the
//    same IdP) lists it with its label, "Unlink" removes it and the verified
//    address is told; the e-mail change (form → link to the new address →
//    its page → its button → the page shows the new address; the old one is
//    told; the link is dead after); deleting the account (typed
//    confirmation): the old cookie's /session is {}, the user id is gone,
//    and the e-mail link signs in a fresh user;
//  - an instance with no e-mail provider: the IdP user's only way to sign in
//    cannot be unlinked (the page shows the error; JSON 409 LastSignInMethod);
//  - the JSON API from Node: GET /list-sessions's shape, another user's
//    session id → 404 NotFound, no csrfToken → refused, /revoke-session and
//    /revoke-other-sessions, signed out → 401 SessionRequired; also on two
//    instances on PostgreSQL behind the round-robin proxy, where a session
//    ended through one is refused by both;
//  - every page loads only same-origin resources, no CSP violation;
//    screenshots account-*.png.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CookieJar, jarFetch, followRedirects } from "./jar.mjs";
import { NodeClient, loadNextAuthReact } from "./nodeclient.mjs";
import { launchChromium, newContext, openPage } from "./browser.test.mjs";
import { signInLink } from "./smtp.mjs";
import { ALICE } from "./idp.mjs";
import { assert, eq, show } from "./report.mjs";
import { FORM, form, sleep } from "./util.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
// How long an ended session may still answer: the jwt strategy's revocation
// poll (session.revocation_poll, 1 s) and some slack.
const REVOCATION_BOUND_MS = 2500;

export const ACCOUNT_VARIANTS = [
  { name: "database", strategy: "database" },
  { name: "jwt", strategy: "jwt" },
];

export function plan(target) {
  if (target !== "latchkey") return [];
  const common = { kind: "latchkey", basePath: "/api/auth", cookieStyle: "next-auth", secondIdp: true, emailLimits: false };
  return [
    ...ACCOUNT_VARIANTS.map((v) => ({ id: `account ${v.name}`, ...common, strategy: v.strategy })),
    { id: "account database postgres x2", ...common, strategy: "database", database: "postgres", instances: 2 },
    { id: "account idp only", ...common, strategy: "database", emailProvider: false },
  ];
}

// ---- helpers ------------------------------------------------------------------

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return `<not JSON: ${text.slice(0, 120)}>`;
  }
}

const isEmptySession = (v) => v === null || (typeof v === "object" && v !== null && Object.keys(v).length === 0);

/** Runs one async function at a time: the v4 client runs with globals (fetch, window) set for its jar. */
function serial() {
  let last = Promise.resolve();
  return (fn) => {
    const run = last.then(fn, fn);
    last = run.catch(() => {});
    return run;
  };
}
const oneClientAtATime = serial();

/** A Node "browser": a cookie jar and the real next-auth client bound to server. */
function nodeBrowser(server, na) {
  const client = new NodeClient(server, new CookieJar(), { module: na });
  const f = jarFetch(client.jar);
  return {
    client,
    jar: client.jar,
    f,
    session: () => oneClientAtATime(() => client.run((c) => c.getSession())),
    async signInEmail(ctx, email) {
      const since = Date.now();
      const home = `${server.origin}/home`;
      const r = await oneClientAtATime(() => client.run((c) => c.signIn("email", { email, redirect: false, callbackUrl: home }), { windowHref: `${server.origin}/app` }));
      eq([r?.ok, r?.error], [true, null], "signIn(\"email\") result");
      const link = signInLink(await ctx.smtp.waitForMail(email, { since }));
      assert(link, "no sign-in link in the e-mail");
      const end = await followRedirects(f, link, { stop: (u) => u.startsWith(home) || !u.startsWith(server.origin) });
      eq(end.url, home, "the link led to");
      const s = await this.session();
      eq(s?.user?.email, email, "getSession().user.email");
    },
    async csrf(base = server.base) {
      return (await (await f(`${base}/csrf`)).json()).csrfToken;
    },
    async get(p, base = server.base) {
      const res = await f(`${base}${p}`);
      return { status: res.status, body: parseJson(await res.text()) };
    },
    async post(p, fields, { csrf = true, base = server.base } = {}) {
      const body = { ...fields, json: "true" };
      if (csrf) body.csrfToken = await this.csrf(base);
      const res = await f(`${base}${p}`, { method: "POST", headers: FORM, body: form(body) });
      return { status: res.status, body: parseJson(await res.text()) };
    },
    async currentId() {
      const { status, body } = await this.get("/list-sessions");
      eq(status, 200, "GET /list-sessions status");
      const mine = Array.isArray(body) ? body.filter((s) => s.current) : [];
      eq(mine.length, 1, "sessions marked current");
      return mine[0].id;
    },
  };
}

/** Poll getSession() until it is null/{} (within REVOCATION_BOUND_MS); returns the ms it took. */
async function endedWithin(readSession, what) {
  const t0 = Date.now();
  let last;
  while (true) {
    last = await readSession();
    if (isEmptySession(last)) return Date.now() - t0;
    if (Date.now() - t0 > REVOCATION_BOUND_MS) break;
    await sleep(150);
  }
  throw new Error(`${what}: still signed in after ${REVOCATION_BOUND_MS} ms: ${show(last)}`);
}

/** The users of an instance (`latchkey users list --json`): [{id, email, ...}]. */
async function usersOf(server) {
  const out = await server.admin(["users", "list", "--json"]);
  if (out.code !== 0) throw new Error(`users list --json: exit ${out.code}: ${out.stderr}`);
  const v = JSON.parse(out.stdout);
  return Array.isArray(v) ? v : (v.users ?? []);
}

const SESSION_KEYS = ["createdAt", "current", "device", "id", "lastSeenAt", "network"];
const ACCOUNT_KEYS = ["createdAt", "id", "label", "name", "provider"];

// ---- the suite ------------------------------------------------------------------

export async function run(report, ctx) {
  const t = report.scope("account ");
  let browser = null;
  const browserReady = t.check("Chromium starts headless", async () => {
    browser = await launchChromium();
  });
  try {
    await Promise.all([
      ...[...ACCOUNT_VARIANTS.map((v) => v.name), "database postgres x2"].map(async (name) => {
        const server = await ctx.server(`account ${name}`);
        if (server) await apiChecks(t.scope(`[${name}] `), ctx, server, name);
      }),
      (async () => {
        if (!(await browserReady)) return;
        for (const v of ACCOUNT_VARIANTS) {
          const server = await ctx.server(`account ${v.name}`);
          if (server) await browserChecks(t.scope(`[chromium ${v.name}] `), ctx, server, browser, v);
        }
        const idpOnly = await ctx.server("account idp only");
        if (idpOnly) await lastMethodChecks(t.scope("[chromium idp only] "), ctx, idpOnly, browser);
      })(),
    ]);
  } finally {
    await browser?.close();
  }
}

/** The JSON API from Node, with the real next-auth client for the sign-ins and getSession(). */
async function apiChecks(t, ctx, server, name) {
  const slug = name.replace(/[^a-z0-9]+/gi, "");
  const na = loadNextAuthReact(server.base);
  const emailE = `api.e.${slug}@example.com`;
  const emailF = `api.f.${slug}@example.com`;
  const e1 = nodeBrowser(server, na);
  const e2 = nodeBrowser(server, na);
  const f1 = nodeBrowser(server, na);
  const f2 = nodeBrowser(server, na);
  if (!(await t.check("API: two users signed in with the e-mail link (real next-auth client), two sessions each", async () => {
    await e1.signInEmail(ctx, emailE);
    await e2.signInEmail(ctx, emailE);
    await f1.signInEmail(ctx, emailF);
    await f2.signInEmail(ctx, emailF);
  }))) return;
  await t.check("API: GET /list-sessions → 200 [{id, current, createdAt, lastSeenAt, device, network}], two, one current", async () => {
    const { status, body } = await e1.get("/list-sessions");
    eq(status, 200, "status");
    assert(Array.isArray(body), () => `not an array: ${show(body)}`);
    eq(body.length, 2, "sessions listed");
    for (const s of body) {
      eq(Object.keys(s).sort(), SESSION_KEYS, "keys of a session");
      assert(typeof s.id === "string" && s.id !== "", `id ${show(s.id)}`);
      assert(typeof s.current === "boolean", `current ${show(s.current)}`);
      assert(!Number.isNaN(Date.parse(s.createdAt)), `createdAt ${show(s.createdAt)}`);
      assert(s.lastSeenAt === null || !Number.isNaN(Date.parse(s.lastSeenAt)), `lastSeenAt ${show(s.lastSeenAt)}`);
      assert(typeof s.device === "string" && typeof s.network === "string", `device ${show(s.device)}, network ${show(s.network)}`);
      assert(!/^127\.0\.0\.1$/.test(s.network), `network is the full address ${show(s.network)}`);
    }
    eq(body.filter((s) => s.current).length, 1, "current sessions");
    const ids = new Set(body.map((s) => s.id));
    eq(ids.size, 2, "distinct ids");
    return `e.g. ${show(body[0])}`;
  });
  await t.check("API: GET /list-accounts → 200 [] for an e-mail user", async () => {
    eq(await e1.get("/list-accounts"), { status: 200, body: [] }, "answer");
  });
  let idE2, idF1;
  await t.check("API: POST /revoke-session with another user's session id → 404 {\"error\":\"NotFound\"}; that session lives", async () => {
    idE2 = await e2.currentId();
    idF1 = await f1.currentId();
    eq(await e1.post("/revoke-session", { id: idF1 }), { status: 404, body: { error: "NotFound" } }, "answer");
    await sleep(1200);
    eq((await f1.session())?.user?.email, emailF, "the other user's getSession().user.email");
  });
  await t.check("API: POST /revoke-session without csrfToken is refused (403 {error: \"MissingCSRF\"}); the session lives", async () => {
    assert(idE2, "no session id");
    const r = await e1.post("/revoke-session", { id: idE2 }, { csrf: false });
    assert(r.body?.ok !== true, () => `answered ${r.status} ${show(r.body)}`);
    eq({ status: r.status, body: r.body }, { status: 403, body: { error: "MissingCSRF" } }, "answer");
    await sleep(1200);
    eq((await e2.session())?.user?.email, emailE, "getSession().user.email");
    return `HTTP ${r.status} ${show(r.body)}`;
  });
  await t.check("API: POST /revoke-session {id} → 200 {ok: true}; that jar's getSession() is null (real client), the caller's lives", async () => {
    const r = await e1.post("/revoke-session", { id: idE2 });
    eq([r.status, r.body?.ok], [200, true], `answer ${show(r.body)}`);
    const ms = await endedWithin(() => e2.session(), "the ended session");
    eq((await e1.session())?.user?.email, emailE, "the caller's getSession().user.email");
    const { body } = await e1.get("/list-sessions");
    eq(body.length, 1, "sessions listed after");
    return `ended after ${ms} ms`;
  });
  await t.check("API: POST /revoke-other-sessions → 200 {ok: true, revoked: 1}; the other jar's getSession() is null", async () => {
    eq(await f1.post("/revoke-other-sessions", {}), { status: 200, body: { ok: true, revoked: 1 } }, "answer");
    const ms = await endedWithin(() => f2.session(), "the other session");
    eq((await f1.session())?.user?.email, emailF, "the caller's getSession().user.email");
    return `ended after ${ms} ms`;
  });
  await t.check("API: POST /revoke-session with an ended session's id → 404 {\"error\":\"NotFound\"}", async () => {
    eq(await e1.post("/revoke-session", { id: idE2 }), { status: 404, body: { error: "NotFound" } }, "answer");
  });
  await t.check("API: signed out, GET /list-sessions → 401 {\"error\":\"SessionRequired\"} (and /list-accounts)", async () => {
    const anon = nodeBrowser(server, na);
    eq(await anon.get("/list-sessions"), { status: 401, body: { error: "SessionRequired" } }, "/list-sessions");
    eq(await anon.get("/list-accounts"), { status: 401, body: { error: "SessionRequired" } }, "/list-accounts");
    eq(await e2.get("/list-sessions"), { status: 401, body: { error: "SessionRequired" } }, "/list-sessions with the ended session's cookie");
  });
  if (server.backends) {
    const [A, B] = server.backends.map((b) => ({ ...b, name: b.name.split(" ").pop() }));
    await t.check(`instances: a session ended at ${A.name} is refused at ${A.name} and ${B.name}; the caller's lives at both`, async () => {
      const g1 = nodeBrowser(server, na);
      const g2 = nodeBrowser(server, na);
      const email = `api.g.${slug}@example.com`;
      await g1.signInEmail(ctx, email);
      await g2.signInEmail(ctx, email);
      const id = await g2.currentId();
      const r = await g1.post("/revoke-session", { id }, { base: A.base });
      eq([r.status, r.body?.ok], [200, true], `${A.name}: answer ${show(r.body)}`);
      const sessionAt = async (jar, b) => parseJson(await (await jarFetch(jar)(`${b.base}/session`)).text());
      for (const b of [A, B]) {
        await endedWithin(() => sessionAt(g2.jar, b), `${b.name}: the ended session`);
        eq((await sessionAt(g1.jar, b))?.user?.email, email, `${b.name}: the caller's session.user.email`);
      }
    });
  }
}

/** Headless Chromium through the account page. */
async function browserChecks(t, ctx, server, browser, variant) {
  const { base, origin } = server;
  const basePath = new URL(base).pathname;
  const home = `${origin}/home`;
  const na = loadNextAuthReact(base);
  const email = `dana.${variant.name}@example.com`;
  const newEmail = `dana.new.${variant.name}@example.com`;
  const shots = process.env.COMPAT_SCREENSHOTS ? path.resolve(here, process.env.COMPAT_SCREENSHOTS) : path.join(ctx.tmp, "screenshots");
  const shot = async (page, name) => {
    fs.mkdirSync(shots, { recursive: true });
    const file = path.join(shots, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    return path.relative(path.resolve(here, "../.."), file);
  };
  const submit = (page, locator) => Promise.all([page.waitForNavigation({ timeout: 15000 }), locator.click()]);
  const sessionIn = async (page) => parseJson(await (await page.goto(`${base}/session`)).text());
  const accountPage = async (page) => {
    const { res } = await openPage(page, `${base}/account`, origin);
    eq(res.status(), 200, "GET /account status");
  };
  const landed = (page) => {
    const u = new URL(page.url());
    return { path: u.pathname, notice: u.searchParams.get("notice"), error: u.searchParams.get("error") };
  };
  const sessionsSection = (page) => page.locator("section[aria-labelledby=sessions-heading]");
  const linkedSection = (page) => page.locator("section[aria-labelledby=methods-heading] ul.items li.item");

  const context = await newContext(browser, { width: 1280, height: 800 });
  const page = await context.newPage();
  const b = nodeBrowser(server, na);
  const c = nodeBrowser(server, na);
  try {
    if (!(await t.check("three sessions: this browser (the sign-in page's e-mail form, the mailed link) and two Node jars (the real next-auth client)", async () => {
      await openPage(page, `${base}/signin?callbackUrl=${encodeURIComponent(home)}`, origin);
      const since = Date.now();
      await page.locator('input[type="email"]').fill(email);
      await submit(page, page.locator("form", { has: page.locator('input[type="email"]') }).locator("button"));
      const link = signInLink(await ctx.smtp.waitForMail(email, { since }));
      assert(link, "no sign-in link in the e-mail");
      await page.goto(link);
      eq(page.url(), home, "the link led to");
      eq((await sessionIn(page))?.user?.email, email, "session.user.email");
      await b.signInEmail(ctx, email);
      await c.signInEmail(ctx, email);
    }))) return;
    if (!(await t.check("the page's Sessions section lists three, this one marked 'This device'; each with an End session button but this one", async () => {
      await accountPage(page);
      eq(await sessionsSection(page).locator("li.item").count(), 3, "sessions listed");
      eq(await sessionsSection(page).locator(".tag.current").count(), 1, "marked current");
      eq(await sessionsSection(page).locator("li.item", { has: page.locator(".tag.current") }).getByRole("button").count(), 0, "buttons on this one");
      eq(await sessionsSection(page).getByRole("button", { name: "End session" }).count(), 2, "End session buttons");
      assert(await page.getByText("This device").isVisible(), "'This device' not shown");
      assert(await page.getByText(email).first().isVisible(), "the address is not shown");
      return await shot(page, `account-${variant.name}-desktop`);
    }))) return;
    await t.check("'End session' on one: back with the notice; that jar's getSession() (real client) is null, the other's lives", async () => {
      const idB = await b.currentId();
      await accountPage(page);
      await submit(page, sessionsSection(page).locator("form", { has: page.locator(`input[name=id][value="${idB}"]`) }).getByRole("button"));
      eq(landed(page), { path: `${basePath}/account`, notice: "SessionEnded", error: null }, "landed on");
      assert(await page.locator("[role=status]").getByText("The session has ended.").isVisible(), "no notice shown");
      const ms = await endedWithin(() => b.session(), "the ended jar's getSession()");
      eq((await c.session())?.user?.email, email, "the other jar's getSession().user.email");
      eq(await sessionsSection(page).locator("li.item").count(), 2, "sessions listed after");
      return `ended after ${ms} ms`;
    });
    await t.check("'End all other sessions': the notice says 1; the last jar's getSession() is null; this browser still signed in, one session listed", async () => {
      await accountPage(page);
      await submit(page, page.getByRole("button", { name: "End all other sessions" }));
      eq(landed(page), { path: `${basePath}/account`, notice: "OtherSessionsEnded", error: null }, "landed on");
      assert(await page.locator("[role=status]").getByText("Other sessions ended: 1.").isVisible(), () => `no notice 'Other sessions ended: 1.'`);
      const ms = await endedWithin(() => c.session(), "the other jar's getSession()");
      eq(await sessionsSection(page).locator("li.item").count(), 1, "sessions listed after");
      eq(await page.getByRole("button", { name: "End all other sessions" }).count(), 0, "'End all other sessions' buttons with no other session");
      eq((await sessionIn(page))?.user?.email, email, "this browser's session.user.email");
      return `ended after ${ms} ms`;
    });

    // Link a second IdP, then unlink it.
    await t.check("'Link Second SSO' (a recent sign-in): through the IdP and back to the page, which lists it with its label; /list-accounts shows it", async () => {
      await accountPage(page);
      const since = Date.now();
      const back = page.waitForResponse((r) => new URL(r.url()).pathname === `${basePath}/callback/idp2`, { timeout: 15000 });
      await page.getByRole("button", { name: "Link Second SSO" }).click();
      const cb = await back;
      const sentTo = new URL(cb.headers().location ?? "", base).pathname;
      await page.waitForURL((u) => u.pathname === sentTo, { timeout: 15000 });
      await openPage(page, `${base}/account`, origin);
      const item = linkedSection(page).filter({ hasText: "Second SSO" });
      eq(await item.count(), 1, "listed linked accounts named Second SSO");
      assert(await item.getByText(ALICE.email).isVisible(), () => `the label ${ALICE.email} is not shown`);
      const r = await context.request.get(`${base}/list-accounts`);
      const list = await r.json();
      eq(r.status(), 200, "GET /list-accounts status");
      eq(list.length, 1, "linked accounts");
      eq(Object.keys(list[0]).sort(), ACCOUNT_KEYS, "keys of an account");
      eq([list[0].provider, list[0].name, list[0].label], ["idp2", "Second SSO", ALICE.email], "provider, name, label");
      const told = await ctx.smtp.waitForMail(email, { since, timeout: 5000 }).catch(() => null);
      // The page's Link button posts no callbackUrl: back to the page, not to the sign-in's callbackUrl.
      eq(sentTo, `${basePath}/account`, "the callback sent the browser to");
      return `${told ? `told by e-mail: ${show(told.subject)}` : "no e-mail"}; ${await shot(page, `account-linked-${variant.name}-desktop`)}`;
    });
    await t.check("'Unlink Second SSO': the notice, gone from the list; the verified address gets a 'removed' e-mail", async () => {
      await accountPage(page);
      const since = Date.now();
      await submit(page, page.getByRole("button", { name: "Unlink Second SSO" }));
      eq(landed(page), { path: `${basePath}/account`, notice: "MethodUnlinked", error: null }, "landed on");
      eq(await linkedSection(page).count(), 0, "linked accounts listed");
      const msg = await ctx.smtp.waitForMail(email, { since });
      assert(/Second SSO/.test(`${msg.subject} ${msg.text}`), () => `the e-mail does not name Second SSO: ${show(msg.subject)} ${show(msg.text.slice(0, 200))}`);
      eq((await (await context.request.get(`${base}/list-accounts`)).json()), [], "GET /list-accounts");
      return `e-mail: ${show(msg.subject)}`;
    });

    // Change the e-mail address.
    let changeLink;
    await t.check("change e-mail: the form sends a link to the new address; the page says so; the address is unchanged yet", async () => {
      await accountPage(page);
      const since = Date.now();
      await page.locator("#input-new-email").fill(newEmail);
      await submit(page, page.getByRole("button", { name: "Send confirmation link" }));
      eq(landed(page), { path: `${basePath}/account`, notice: "EmailChangeSent", error: null }, "landed on");
      const msg = await ctx.smtp.waitForMail(newEmail, { since });
      changeLink = (msg.text.match(/https?:\/\/[^\s<>"']+/g) || []).find((u) => new URL(u).pathname === `${basePath}/account/email/confirm`);
      assert(changeLink, () => `no ${basePath}/account/email/confirm link in ${show(msg.text.slice(0, 300))}`);
      assert(new URL(changeLink).origin === origin, `the link's origin ${changeLink}`);
      eq((await sessionIn(page))?.user?.email, email, "session.user.email before the link is used");
    });
    await t.check("change e-mail: the link's page names the new address; its button changes it; the page shows it; the old address is told", async () => {
      assert(changeLink, "no link");
      const { res } = await openPage(page, changeLink, origin);
      eq(res.status(), 200, "the link's page status");
      assert(await page.getByText(newEmail).isVisible(), "the page does not name the new address");
      const file = await shot(page, `account-email-confirm-${variant.name}-desktop`);
      eq((await sessionIn(page))?.user?.email, email, "session.user.email after only opening the page");
      await openPage(page, changeLink, origin);
      const since = Date.now();
      await submit(page, page.locator("#submitButton"));
      eq(landed(page), { path: `${basePath}/account`, notice: "EmailChanged", error: null }, "landed on");
      assert(await page.locator("section[aria-labelledby=profile-heading]").getByText(newEmail).isVisible(), "the page does not show the new address");
      // jwt: the token minted at sign-in still carries the old address (not re-issued on the change).
      const after = (await sessionIn(page))?.user?.email;
      if (variant.strategy === "database") eq(after, newEmail, "session.user.email");
      const old = await ctx.smtp.waitForMail(email, { since });
      assert(/changed/i.test(old.subject ?? ""), `the old address's e-mail: ${show(old.subject)}`);
      assert(old.text.includes(newEmail), "the notice to the old address does not name the new one");
      return `${file}; old address told: ${show(old.subject)}; /session user.email ${show(after)}`;
    });
    await t.check("change e-mail: the spent link's POST → 410 {\"error\":\"Verification\"}", async () => {
      assert(changeLink, "no link");
      const token = new URL(changeLink).searchParams.get("token");
      const csrfToken = (await (await context.request.get(`${base}/csrf`)).json()).csrfToken;
      const r = await context.request.post(`${base}/account/email/confirm`, { form: { token, csrfToken, json: "true" }, maxRedirects: 0 });
      eq([r.status(), await r.json().catch(() => null)], [410, { error: "Verification" }], "POST answer");
    });
    await t.check("change e-mail: the link opened again is dead: HTTP 410, the page says so (role=alert) and has no button", async () => {
      assert(changeLink, "no link");
      const { res } = await openPage(page, changeLink, origin);
      const file = await shot(page, `account-email-dead-${variant.name}-desktop`);
      eq(res.status(), 410, "status");
      assert(await page.locator("[role=alert]").first().isVisible(), "no role=alert on the dead link's page");
      eq(await page.locator("#submitButton").count(), 0, "'Change email address' buttons on the dead link's page");
      return file;
    });

    // Delete the account.
    await t.check("delete: a wrong confirmation is refused (role=alert); the right one deletes: /signin, the old cookie's /session is {}, the user id gone, the address told", async () => {
      const before = (await usersOf(server)).find((u) => u.email === newEmail);
      assert(before?.id, () => `no user ${newEmail} in users list`);
      const cookies = await context.cookies(base);
      await accountPage(page);
      await page.locator("#input-confirm").fill("not my address");
      await submit(page, page.getByRole("button", { name: "Delete my account" }));
      eq(landed(page), { path: `${basePath}/account`, notice: null, error: "DeleteConfirmation" }, "landed on");
      assert(await page.locator("[role=alert]").isVisible(), "no role=alert");
      const since = Date.now();
      await page.locator("#input-confirm").fill(newEmail.toUpperCase());
      await submit(page, page.getByRole("button", { name: "Delete my account" }));
      eq(new URL(page.url()).pathname, `${basePath}/signin`, "landed on");
      const old = await browser.newContext();
      try {
        await old.addCookies(cookies);
        const r = await old.request.get(`${base}/session`);
        await endedWithin(async () => parseJson(await (await old.request.get(`${base}/session`)).text()), "the old cookie's /session");
        eq(r.status(), 200, "/session status");
      } finally {
        await old.close();
      }
      eq((await usersOf(server)).filter((u) => u.id === before.id || u.email === newEmail), [], "users with the old id or address");
      const told = await ctx.smtp.waitForMail(newEmail, { since });
      assert(/deleted/i.test(told.subject ?? ""), `the e-mail: ${show(told.subject)}`);
      ctx.deletedUser = before.id;
      return `user ${before.id} gone; e-mail: ${show(told.subject)}`;
    });
    await t.check("after deletion the e-mail link signs in a fresh user (a new id, no linked accounts, one session)", async () => {
      const fresh = nodeBrowser(server, na);
      await fresh.signInEmail(ctx, newEmail);
      const users = (await usersOf(server)).filter((u) => u.email === newEmail);
      eq(users.length, 1, "users with the address");
      assert(ctx.deletedUser && users[0].id !== ctx.deletedUser, `the same id ${users[0].id} as the deleted user`);
      eq(await fresh.get("/list-accounts"), { status: 200, body: [] }, "GET /list-accounts");
      eq((await fresh.get("/list-sessions")).body?.length, 1, "sessions");
    });
    await t.check("no request left 127.0.0.1 and no CSP violation", async () => {
      eq(context.blocked, [], "blocked requests");
      eq(context.csp, [], "CSP violations");
    });
  } finally {
    await context.close();
  }
}

/** No e-mail provider: the IdP user's only way to sign in is kept. */
async function lastMethodChecks(t, ctx, server, browser) {
  const { base, origin } = server;
  const basePath = new URL(base).pathname;
  const home = `${origin}/home`;
  const context = await newContext(browser, { width: 1280, height: 800 });
  const page = await context.newPage();
  try {
    if (!(await t.check("signs in with the IdP button", async () => {
      await openPage(page, `${base}/signin?callbackUrl=${encodeURIComponent(home)}`, origin);
      await Promise.all([page.waitForURL(home, { timeout: 15000 }), page.getByRole("button", { name: /Company SSO/ }).click()]);
      eq(parseJson(await (await page.goto(`${base}/session`)).text())?.user?.email, ALICE.email, "session.user.email");
    }))) return;
    await t.check("'Unlink Company SSO', the only way to sign in: the page shows the error (role=alert), still linked", async () => {
      await openPage(page, `${base}/account`, origin);
      eq(await page.locator("#input-new-email").count(), 0, "e-mail change fields with no e-mail provider");
      await Promise.all([page.waitForNavigation({ timeout: 15000 }), page.getByRole("button", { name: "Unlink Company SSO" }).click()]);
      const u = new URL(page.url());
      eq([u.pathname, u.searchParams.get("error")], [`${basePath}/account`, "LastSignInMethod"], "landed on");
      assert(await page.locator("[role=alert]").getByText("This is the last way to sign in").isVisible(), "no role=alert with the message");
      eq(await page.getByRole("button", { name: "Unlink Company SSO" }).count(), 1, "still listed");
      const fs_ = await (async () => {
        const dir = process.env.COMPAT_SCREENSHOTS ? path.resolve(here, process.env.COMPAT_SCREENSHOTS) : path.join(ctx.tmp, "screenshots");
        fs.mkdirSync(dir, { recursive: true });
        const file = path.join(dir, "account-last-method-desktop.png");
        await page.screenshot({ path: file, fullPage: true });
        return path.relative(path.resolve(here, "../.."), file);
      })();
      return fs_;
    });
    await t.check("JSON: POST /unlink-account {id} → 409 {\"error\":\"LastSignInMethod\"}; /list-accounts unchanged", async () => {
      const list = await (await context.request.get(`${base}/list-accounts`)).json();
      eq(list.map((a) => a.provider), ["idp"], "linked providers");
      const csrfToken = (await (await context.request.get(`${base}/csrf`)).json()).csrfToken;
      const r = await context.request.post(`${base}/unlink-account`, { form: { id: list[0].id, csrfToken, json: "true" }, maxRedirects: 0 });
      eq([r.status(), await r.json().catch(() => null)], [409, { error: "LastSignInMethod" }], "answer");
      eq((await (await context.request.get(`${base}/list-accounts`)).json()).length, 1, "linked accounts after");
    });
    await t.check("no request left 127.0.0.1 and no CSP violation", async () => {
      eq(context.blocked, [], "blocked requests");
      eq(context.csp, [], "CSP violations");
    });
  } finally {
    await context.close();
  }
}
