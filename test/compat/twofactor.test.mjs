// Two-factor sign-in (issue #28) with real components; latchkey only
// (next-auth has no second factor). Authenticator codes come from Debian's
// oathtool (`oathtool --totp --base32 --now @UNIX SECRET`, app/twofactor/
// oathtool/install.sh), never from JavaScript, fed the key read from the
// setup page (its otpauth:// URI, or the key as a person reads it).
// latchkey takes one code per 30-second step per user, so a second code
// for the same key waits for the next step (Authenticator.code).
//
//  - the real next-auth@4.24.15 client from Node (nodeclient.mjs):
//    signIn("credentials", {redirect: false}) → {error: "TwoFactorRequired"},
//    getSession() null, signIn("two-factor", {code}) → ok and signed in;
//    a wrong, a replayed and a spent recovery code refused;
//  - Auth.js v5 mode (the v5 client's X-Auth-Return-Redirect: 1): 200 {url}
//    with error=TwoFactorRequired&code=two-factor, then the code → 200 {url:
//    callbackUrl};
//  - database and jwt sessions (next-auth and authjs cookies), and two
//    instances on one PostgreSQL behind the round-robin proxy: enrolled on
//    A, the sign-in held at B is finished at A, and the spent code is refused
//    at B;
//  - headless Chromium: enrolment by reading the key off the page, the
//    second-step page, a recovery code (then refused), "Remember this
//    device"; same-origin loads only, no CSP violation; screenshots.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { CookieJar, jarFetch } from "./jar.mjs";
import { NodeClient, loadNextAuthReact } from "./nodeclient.mjs";
import { launchChromium, newContext, openPage } from "./browser.test.mjs";
import { assert, eq, show } from "./report.mjs";
import { FORM, evidence, form, sleep } from "./util.mjs";

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const PASSWORD = "two factor compat pass phrase";
const STEP = 30; // seconds: RFC 6238's time step, as latchkey uses it

export const TWO_FACTOR_VARIANTS = [
  { name: "database", strategy: "database", cookieStyle: "next-auth" },
  { name: "jwt", strategy: "jwt", cookieStyle: "next-auth" },
  { name: "jwt authjs-cookies", strategy: "jwt", cookieStyle: "authjs" },
  // Two instances sharing one PostgreSQL database behind the round-robin proxy.
  { name: "database postgres x2", strategy: "database", cookieStyle: "next-auth", database: "postgres", instances: 2 },
];

export function plan(target) {
  if (target !== "latchkey") return [];
  const common = { kind: "latchkey", basePath: "/api/auth", credentials: true, twoFactor: "optional" };
  return [
    ...TWO_FACTOR_VARIANTS.map((v) => ({ id: `twofactor ${v.name}`, ...common, ...v })),
    { id: "twofactor browser", ...common, strategy: "database", cookieStyle: "next-auth" },
  ];
}

// ---- oathtool ------------------------------------------------------------

/** oathtool's TOTP code for a base32 key at a Unix time (seconds). */
export function oathtool(secret, unix) {
  return execFileSync("oathtool", ["--totp", "--base32", "--now", `@${unix}`, secret], { encoding: "utf8", timeout: 10000 }).trim();
}

const stepNow = () => Math.floor(Date.now() / 1000 / STEP);

/** An authenticator app holding one key; its codes come from oathtool. */
export class Authenticator {
  constructor(secret) {
    this.secret = secret;
    this.used = -1; // the last step whose code was given out
  }

  /** The current code, in a step not given out before (waits for the next step when needed). */
  async code() {
    while (stepNow() <= this.used) await sleep(Math.max(50, (this.used + 1) * STEP * 1000 - Date.now() + 100));
    const unix = Math.floor(Date.now() / 1000);
    this.used = Math.floor(unix / STEP);
    return oathtool(this.secret, unix);
  }

  /** A 6-digit code that is none of the key's codes from two steps back to two ahead. */
  wrong() {
    const unix = Math.floor(Date.now() / 1000);
    const near = new Set([-2, -1, 0, 1, 2].map((k) => oathtool(this.secret, unix + k * STEP)));
    return ["000000", "111111", "222222", "123456"].find((c) => !near.has(c));
  }
}

// ---- the setup page --------------------------------------------------------

const RECOVERY = /\b[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}\b/g;

/** Text of HTML (templ escapes &, <, >, ", '). */
export function unescapeHtml(s) {
  return s.replace(/&(#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos);/gi, (_, e) => {
    const named = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }[e.toLowerCase()];
    if (named) return named;
    return String.fromCodePoint(e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
  });
}

/** The value of the hidden input `name` in a page. */
function hiddenField(html, name) {
  const m = html.match(new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`));
  return m ? unescapeHtml(m[1]) : undefined;
}

/**
 * The setup page's key: the otpauth:// URI it prints (<code class="uri">),
 * checked (totp, SHA1, 6 digits, 30 s, the account named) against the key
 * printed for typing (<code class="secret">, in groups).
 */
export function keyOfSetupPage(html, account) {
  const uriText = html.match(/<code class="uri">([^<]*)<\/code>/)?.[1];
  assert(uriText, () => `no otpauth URI on the setup page: ${show(html.slice(0, 300))}`);
  const uri = new URL(unescapeHtml(uriText));
  eq([uri.protocol, uri.host], ["otpauth:", "totp"], "otpauth URI type");
  const q = uri.searchParams;
  eq([q.get("algorithm"), q.get("digits"), q.get("period")], ["SHA1", "6", "30"], "algorithm, digits, period");
  const secret = q.get("secret");
  assert(/^[A-Z2-7]{16,}$/.test(secret ?? ""), `secret ${show(secret)} is not base32`);
  assert(decodeURIComponent(uri.pathname).includes(account), `the URI's label ${show(uri.pathname)} does not name ${account}`);
  const printed = html.match(/<code class="secret">([^<]*)<\/code>/)?.[1];
  assert(printed, "the key is not printed for typing in");
  eq(unescapeHtml(printed).replace(/\s+/g, ""), secret, "the printed key");
  return { secret, label: decodeURIComponent(uri.pathname.slice(1)), issuer: q.get("issuer") };
}

/**
 * Turn two-factor on for the user signed in in jar through the pages at
 * base: GET /account/two-factor, then oathtool's code and the page's
 * csrfToken to POST /account/two-factor/enable. Returns {auth, codes}.
 */
async function enrol(jar, base, account) {
  const f = jarFetch(jar);
  const res = await f(`${base}/account/two-factor`);
  const html = await res.text();
  assert(res.status === 200, () => `GET /account/two-factor: ${evidence(res, html)}`);
  const key = keyOfSetupPage(html, account);
  const auth = new Authenticator(key.secret);
  const csrfToken = hiddenField(html, "csrfToken");
  assert(csrfToken, "no csrfToken on the setup page");
  const on = await f(`${base}/account/two-factor/enable`, { method: "POST", headers: FORM, body: form({ csrfToken, code: await auth.code() }) });
  const page = await on.text();
  assert(on.status === 200, () => `POST /account/two-factor/enable: ${evidence(on, page)}`);
  const codes = [...new Set(page.match(RECOVERY) ?? [])];
  eq(codes.length, 10, "recovery codes shown");
  return { auth, codes, label: key.label, issuer: key.issuer };
}

// ---- helpers -----------------------------------------------------------------

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return `<not JSON: ${text.slice(0, 120)}>`;
  }
}

const isEmptySession = (v) => v === null || (typeof v === "object" && Object.keys(v).length === 0);

async function createUser(server, email) {
  const out = await server.admin(["users", "create", email, "--password-stdin"], PASSWORD + "\n");
  if (out.code !== 0 && !out.stderr.includes("exists already")) throw new Error(`users create ${email}: exit ${out.code}: ${out.stderr}`);
}

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

/** The held-sign-in URL's parts: {path, callbackUrl, error, code}. */
function urlParts(url) {
  const u = new URL(url);
  return { path: u.origin + u.pathname, callbackUrl: u.searchParams.get("callbackUrl"), error: u.searchParams.get("error"), code: u.searchParams.get("code") };
}

// ---- the suite ------------------------------------------------------------------

export async function run(report, ctx) {
  const t = report.scope("twofactor ");
  const ok = await t.check("oathtool is installed (app/twofactor/oathtool/install.sh)", async () => {
    // RFC 6238's SHA-1 test vector: the key "12345678901234567890" at 59 s.
    eq(execFileSync("oathtool", ["--totp", "--digits=8", "--now", "@59", "3132333435363738393031323334353637383930"], { encoding: "utf8" }).trim(), "94287082", "RFC 6238 vector");
  });
  if (!ok) return;
  await Promise.all([
    ...TWO_FACTOR_VARIANTS.map(async (v) => {
      const server = await ctx.server(`twofactor ${v.name}`);
      if (!server) return;
      const t2 = t.scope(`[${v.name}] `);
      await Promise.all([
        v4Checks(t2, ctx, server, v),
        v5Checks(t2, ctx, server, v),
        server.backends ? instancesChecks(t2, ctx, server) : null,
      ]);
    }),
    (async () => {
      const server = await ctx.server("twofactor browser");
      if (server) await browserChecks(t.scope("[chromium] "), ctx, server);
    })(),
  ]);
}

/** The real next-auth v4 client from Node. */
async function v4Checks(t, ctx, server, variant) {
  const { base, origin } = server;
  const style = variant.cookieStyle;
  const names = { session: `${style}.session-token`, step: `${style}.second-step` };
  const slug = variant.name.replace(/[^a-z0-9]+/gi, "");
  const email = `v4.${slug}@example.com`;
  const home = `${origin}/home`;
  const app = `${origin}/app`;
  const na = loadNextAuthReact(base);
  const newClient = () => new NodeClient(server, new CookieJar(), { module: na });
  const run = (client, fn) => oneClientAtATime(() => client.run(fn, { windowHref: app }));
  const session = (client) => oneClientAtATime(() => client.run((c) => c.getSession()));
  const v4 = (c) => `v4 client: ${c}`;
  const user = newClient();
  let enrolled = null;

  if (!(await t.check(v4("before enrolment the password alone signs in (signIn(\"credentials\") → ok)"), async () => {
    await createUser(server, email);
    const r = await run(user, (c) => c.signIn("credentials", { email, password: PASSWORD, redirect: false, callbackUrl: home }));
    eq(r, { error: null, status: 200, ok: true, url: home }, "signIn result");
    eq((await session(user))?.user?.email, email, "session.user.email");
  }))) return;
  await t.check(v4("the setup page's otpauth URI and printed key agree; oathtool's code turns two-factor on and shows 10 recovery codes"), async () => {
    const since = Date.now();
    enrolled = await enrol(user.jar, base, email);
    const msg = await ctx.smtp.waitForMail(email, { since });
    assert(/two-factor/i.test(msg.subject ?? ""), `the e-mail's subject is ${show(msg.subject)}`);
    return `told by e-mail: ${show(msg.subject)}`;
  });
  if (!enrolled) return;
  if (variant.name === "database") {
    // Google's Key URI Format: label = issuer ":" account, and "neither issuer nor
    // account name may themselves contain a colon"; apps split the label at the
    // first one. SERVICE_URL here has a port, as many self-hosted ones do.
    await t.check("the otpauth label is issuer:account with one colon (Key URI Format), its issuer the issuer parameter", async () => {
      const { label, issuer } = enrolled;
      eq(label.split(":").length, 2, `colons in the label ${show(label)}: parts`);
      eq(label.split(":"), [issuer, email], "label parts");
    });
  }
  await t.check(v4("the settings page then says two-factor is on, 10 recovery codes unused"), async () => {
    const res = await jarFetch(user.jar)(`${base}/account/two-factor`);
    const html = await res.text();
    eq(res.status, 200, "status");
    assert(html.includes('name="code"') && html.includes("/account/two-factor/disable"), "no turn-off form");
    assert(!html.includes('class="uri"'), "the settings page shows the key again");
    assert(/Unused recovery codes: 10\b/.test(html), () => `no "Unused recovery codes: 10" on the page`);
  });
  await t.check(v4("signOut"), async () => {
    const data = await run(user, (c) => c.signOut({ redirect: false, callbackUrl: `${origin}/bye` }));
    eq(data, { url: `${origin}/bye` }, "signOut result");
    eq(await session(user), null, "session");
  });
  await t.check(v4("getProviders lists two-factor (type credentials), not on the sign-in page"), async () => {
    const p = await oneClientAtATime(() => user.run((c) => c.getProviders()));
    eq(p?.["two-factor"], { id: "two-factor", name: "Two-factor code", type: "credentials", signinUrl: `${base}/signin/two-factor`, callbackUrl: `${base}/callback/two-factor` }, "providers[\"two-factor\"]");
    const page = await (await jarFetch(new CookieJar())(`${base}/signin`)).text();
    assert(!page.includes("/callback/two-factor") && !page.includes("/signin/two-factor"), "the sign-in page shows the two-factor provider");
  });

  const held = async (client) => {
    const r = await run(client, async (c, _loc, log) => {
      const r = await c.signIn("credentials", { email, password: PASSWORD, redirect: false, callbackUrl: home });
      return { ...r, exchange: log.find((x) => x.method === "POST") };
    });
    const { exchange, ...result } = r;
    eq(result, { error: "TwoFactorRequired", status: 401, ok: false, url: null }, "signIn(\"credentials\") result");
    eq(exchange?.url, `${base}/callback/credentials`, "the client posted to");
    assert(!client.jar.get(base, names.session), () => `a session cookie was set: ${client.jar.header(base)}`);
    assert(client.jar.get(base, names.step), () => `no ${names.step} cookie (jar: ${client.jar.header(base)})`);
  };
  const signInCode = (client, code) => run(client, (c) => c.signIn("two-factor", { code, redirect: false, callbackUrl: home }));
  const invalid = { error: "TwoFactorInvalid", status: 401, ok: false, url: null };

  await t.check(v4("signIn(\"credentials\") resolves {error: \"TwoFactorRequired\", status: 401, ok: false}; no session, a second-step cookie"), () => held(user));
  await t.check(v4("the held answer is 401 {url: {base}/two-factor?callbackUrl=…&error=TwoFactorRequired} (JSON mode)"), async () => {
    const j = new CookieJar();
    const f = jarFetch(j);
    const { csrfToken } = await (await f(`${base}/csrf`)).json();
    const res = await f(`${base}/callback/credentials`, { method: "POST", headers: FORM, body: form({ email, password: PASSWORD, csrfToken, callbackUrl: home, json: "true" }) });
    const text = await res.text();
    eq(res.status, 401, "status");
    eq(urlParts(parseJson(text).url), { path: `${base}/two-factor`, callbackUrl: home, error: "TwoFactorRequired", code: null }, "url");
  });
  await t.check(v4("getSession() is null while the second step waits (GET /session: empty)"), async () => {
    eq(await session(user), null, "getSession()");
    const res = await jarFetch(user.jar)(`${base}/session`);
    const body = parseJson(await res.text());
    assert(isEmptySession(body), `GET /session: ${show(body)}`);
    if (style === "next-auth") eq(body, {}, "GET /session (v4 style)");
  });
  await t.check(v4("signIn(\"two-factor\") with a wrong code resolves {error: \"TwoFactorInvalid\", status: 401}; still no session"), async () => {
    eq(await signInCode(user, enrolled.auth.wrong()), invalid, "signIn result");
    eq(await session(user), null, "getSession()");
  });
  let used;
  await t.check(v4("signIn(\"two-factor\") with oathtool's code resolves {ok: true, url: callbackUrl}; getSession() has the user"), async () => {
    used = await enrolled.auth.code();
    eq(await signInCode(user, used), { error: null, status: 200, ok: true, url: home }, "signIn result");
    eq((await session(user))?.user?.email, email, "session.user.email");
    assert(!user.jar.get(base, names.step), "the second-step cookie is still there");
  });
  if (variant.strategy === "jwt") {
    await t.check(v4(`the session token's amr claim is [mfa, otp, pwd] (${style === "authjs" ? "@auth/core/jwt" : "next-auth/jwt"} decode)`), async () => {
      const token = user.jar.get(base, names.session);
      assert(token, "no session cookie");
      const claims = style === "authjs"
        ? await (await import("@auth/core/jwt")).decode({ token, secret: ctx.secret, salt: names.session })
        : await require("next-auth/jwt").decode({ token, secret: ctx.secret });
      eq([...(claims?.amr ?? [])].sort(), ["mfa", "otp", "pwd"], "amr");
      eq(claims?.email, email, "email");
    });
  }
  await t.check(v4("signOut ends the two-factor session"), async () => {
    await run(user, (c) => c.signOut({ redirect: false, callbackUrl: `${origin}/bye` }));
    eq(await session(user), null, "session");
  });
  await t.check(v4("the same code again, in the next sign-in, is refused (one code per step): TwoFactorInvalid"), async () => {
    await held(user);
    eq(await signInCode(user, used), invalid, "signIn result");
    eq(await session(user), null, "getSession()");
  });
  await t.check(v4("a recovery code finishes the held sign-in"), async () => {
    eq(await signInCode(user, enrolled.codes[0]), { error: null, status: 200, ok: true, url: home }, "signIn result");
    eq((await session(user))?.user?.email, email, "session.user.email");
    await run(user, (c) => c.signOut({ redirect: false, callbackUrl: `${origin}/bye` }));
  });
  await t.check(v4("that recovery code is refused in the next sign-in: TwoFactorInvalid"), async () => {
    await held(user);
    eq(await signInCode(user, enrolled.codes[0]), invalid, "signIn result");
    eq(await session(user), null, "getSession()");
  });
  await t.check(v4("signIn(\"two-factor\") with no held sign-in resolves {error: \"TwoFactorExpired\", status: 401}"), async () => {
    const c = newClient();
    eq(await signInCode(c, enrolled.codes[1]), { error: "TwoFactorExpired", status: 401, ok: false, url: null }, "signIn result");
    eq(await session(c), null, "getSession()");
  });
}

/**
 * Auth.js v5 mode: the requests next-auth v5's signIn sends (form body, no
 * json field, X-Auth-Return-Redirect: 1) and its reading of the 200 {url}
 * answer ({error, code} from the url's query).
 */
async function v5Checks(t, ctx, server, variant) {
  const { base, origin } = server;
  const style = variant.cookieStyle;
  const slug = variant.name.replace(/[^a-z0-9]+/gi, "");
  const email = `v5.${slug}@example.com`;
  const home = `${origin}/home`;
  const jar = new CookieJar();
  const f = jarFetch(jar);
  const v5 = (c) => `v5 mode: ${c}`;
  // POST {base}{path} as the v5 client does; returns what its signIn returns.
  const post = async (p, fields) => {
    const { csrfToken } = await (await f(`${base}/csrf`)).json();
    const res = await f(`${base}${p}`, { method: "POST", headers: { ...FORM, "X-Auth-Return-Redirect": "1" }, body: form({ ...fields, csrfToken, callbackUrl: home }) });
    const text = await res.text();
    const body = parseJson(text);
    assert(typeof body?.url === "string", () => `POST ${p}: ${evidence(res, text)}`);
    const u = new URL(body.url);
    const error = u.searchParams.get("error") ?? undefined;
    return { result: { error, code: u.searchParams.get("code") ?? undefined, status: res.status, ok: res.ok, url: error ? null : body.url }, url: body.url };
  };
  const session = async () => parseJson(await (await f(`${base}/session`)).text());
  let enrolled;
  if (!(await t.check(v5("before enrolment the password alone signs in: 200 {url: callbackUrl}"), async () => {
    await createUser(server, email);
    const { result } = await post("/callback/credentials", { email, password: PASSWORD });
    eq(result, { status: 200, ok: true, url: home }, "signIn result");
    eq((await session())?.user?.email, email, "session.user.email");
    enrolled = await enrol(jar, base, email);
    await post("/signout", {});
    assert(isEmptySession(await session()), "still signed in after sign-out");
  }))) return;
  await t.check(v5("the held sign-in answers 200 {url: …/two-factor?…error=TwoFactorRequired&code=two-factor}; no session"), async () => {
    const { result, url } = await post("/callback/credentials", { email, password: PASSWORD });
    eq(result, { error: "TwoFactorRequired", code: "two-factor", status: 200, ok: true, url: null }, "signIn result");
    eq(urlParts(url), { path: `${base}/two-factor`, callbackUrl: home, error: "TwoFactorRequired", code: "two-factor" }, "url");
    assert(isEmptySession(await session()), "a session before the second step");
  });
  await t.check(v5("a wrong code answers 200 {url: …/two-factor?…error=TwoFactorInvalid&code=two-factor}"), async () => {
    const { result, url } = await post("/callback/two-factor", { code: enrolled.auth.wrong() });
    eq(result, { error: "TwoFactorInvalid", code: "two-factor", status: 200, ok: true, url: null }, "signIn result");
    eq(urlParts(url).path, `${base}/two-factor`, "url");
    assert(isEmptySession(await session()), "a session after a wrong code");
  });
  await t.check(v5("oathtool's code answers 200 {url: callbackUrl}; the session has the user"), async () => {
    const { result } = await post("/callback/two-factor", { code: await enrolled.auth.code() });
    eq(result, { status: 200, ok: true, url: home }, "signIn result");
    eq((await session())?.user?.email, email, "session.user.email");
    assert(jar.get(base, `${style}.session-token`), `no ${style}.session-token cookie`);
  });
}

/**
 * Two instances on one PostgreSQL database, asked directly by their own
 * ports: enrolled at A, a sign-in held at B is finished at A and both see
 * the session; the code, spent at A, is refused at B.
 */
async function instancesChecks(t, ctx, server) {
  // Named by their letters in the checks (the proxy's names).
  const [A, B] = server.backends.map((b) => ({ ...b, name: b.name.split(" ").pop() }));
  const email = "x2.two.factor@example.com";
  const home = `${server.origin}/home`;
  const jar = new CookieJar();
  const f = jarFetch(jar);
  const post = async (b, p, fields) => {
    const { csrfToken } = await (await f(`${b.base}/csrf`)).json();
    const res = await f(`${b.base}${p}`, { method: "POST", headers: FORM, body: form({ ...fields, csrfToken, callbackUrl: home, json: "true" }) });
    const text = await res.text();
    return { status: res.status, url: parseJson(text)?.url };
  };
  const sessionAt = async (b) => parseJson(await (await f(`${b.base}/session`)).text());
  let enrolled;
  let used;
  if (!(await t.check(`instances: two-factor turned on at ${A.name}`, async () => {
    await createUser(A, email);
    eq(await post(A, "/callback/credentials", { email, password: PASSWORD }), { status: 200, url: home }, `${A.name}: password sign-in`);
    enrolled = await enrol(jar, A.base, email);
    eq((await post(A, "/signout", {})).status, 200, `${A.name}: sign-out`);
  }))) return;
  await t.check(`instances: a sign-in held at ${B.name} is finished with oathtool's code at ${A.name}; both see the session`, async () => {
    const h = await post(B, "/callback/credentials", { email, password: PASSWORD });
    eq([h.status, urlParts(h.url).error], [401, "TwoFactorRequired"], `${B.name}: password sign-in`);
    assert(isEmptySession(await sessionAt(A)), `${A.name}: a session before the code`);
    used = await enrolled.auth.code();
    eq(await post(A, "/callback/two-factor", { code: used }), { status: 200, url: home }, `${A.name}: the code`);
    for (const b of [A, B]) eq((await sessionAt(b))?.user?.email, email, `${b.name}: session.user.email`);
  });
  await t.check(`instances: the code spent at ${A.name} is refused at ${B.name} (one code per step across instances)`, async () => {
    assert(used, "no code was spent");
    eq((await post(A, "/signout", {})).status, 200, `${A.name}: sign-out`);
    const h = await post(A, "/callback/credentials", { email, password: PASSWORD });
    eq([h.status, urlParts(h.url).error], [401, "TwoFactorRequired"], `${A.name}: password sign-in`);
    const r = await post(B, "/callback/two-factor", { code: used });
    eq([r.status, urlParts(r.url).path, urlParts(r.url).error], [401, `${server.base}/two-factor`, "TwoFactorInvalid"], `${B.name}: the spent code`);
    assert(isEmptySession(await sessionAt(B)), "signed in with a spent code");
  });
}

/** Headless Chromium through the built-in pages. */
async function browserChecks(t, ctx, server) {
  const { base, origin } = server;
  const email = "chromium.two.factor@example.com";
  const home = `${origin}/home`;
  const basePath = new URL(base).pathname;
  const shots = process.env.COMPAT_SCREENSHOTS ? path.resolve(here, process.env.COMPAT_SCREENSHOTS) : path.join(ctx.tmp, "screenshots");
  const shot = async (page, name) => {
    fs.mkdirSync(shots, { recursive: true });
    const file = path.join(shots, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    return path.relative(path.resolve(here, "../.."), file);
  };
  const sessionEmail = async (page) => {
    const res = await page.goto(`${base}/session`);
    return JSON.parse(await res.text())?.user?.email;
  };
  const submit = (page, locator) => Promise.all([page.waitForNavigation({ timeout: 15000 }), locator.click()]);
  const passwordSignIn = async (page) => {
    await openPage(page, `${base}/signin?callbackUrl=${encodeURIComponent(home)}`, origin);
    await page.locator("#input-email-for-credentials-provider").fill(email);
    await page.locator("#input-password-for-credentials-provider").fill(PASSWORD);
    await submit(page, page.locator("form", { has: page.locator('input[type="password"]') }).locator("button"));
    return page.url();
  };
  const signOut = async (page) => {
    await openPage(page, `${base}/signout`, origin);
    await submit(page, page.getByRole("button", { name: /sign out/i }));
    eq(await sessionEmail(page), undefined, "session user after sign-out");
  };
  const onStepPage = (url) => {
    const u = new URL(url);
    eq([u.pathname, u.searchParams.get("callbackUrl")], [`${basePath}/two-factor`, home], "landed on (path, callbackUrl)");
  };

  let browser;
  if (!(await t.check("Chromium starts headless", async () => {
    browser = await launchChromium();
  }))) return;
  try {
    await createUser(server, email);
    const desktop = await newContext(browser, { width: 1280, height: 800 });
    const page = await desktop.newPage();
    let auth;
    let codes;
    if (!(await t.check("before enrolment the password alone signs in", async () => {
      eq(await passwordSignIn(page), home, "landed on");
      eq(await sessionEmail(page), email, "session.user.email");
    }))) return;
    if (!(await t.check("the setup page: a QR code; the key read off the page ('enter the key manually'); oathtool's code turns two-factor on; 10 recovery codes shown", async () => {
      const { res } = await openPage(page, `${base}/account/two-factor`, origin);
      eq(res.status(), 200, "status");
      assert(await page.locator(".qr svg").isVisible(), "no QR code shown");
      await page.getByText("Can't scan? Enter the key manually").click();
      const file = await shot(page, "two-factor-setup-desktop");
      const key = (await page.locator("code.secret").innerText()).replace(/\s+/g, "");
      assert(/^[A-Z2-7]{16,}$/.test(key), `the key on the page reads ${show(key)}`);
      auth = new Authenticator(key);
      await page.locator("#input-code").fill(await auth.code());
      await submit(page, page.locator("#submitButton"));
      codes = (await page.locator("ul.codes li").allInnerTexts()).map((s) => s.trim());
      eq(codes.length, 10, "recovery codes listed");
      assert(codes.every((c) => /^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/.test(c)), `codes ${show(codes)}`);
      return `${file}, ${await shot(page, "two-factor-recovery-codes-desktop")}`;
    }))) return;
    await t.check("'Continue' leads to the settings page: on, 10 recovery codes unused", async () => {
      await submit(page, page.getByRole("link", { name: /continue/i }));
      eq(new URL(page.url()).pathname, `${basePath}/account/two-factor`, "path");
      assert(await page.getByText("Unused recovery codes: 10").isVisible(), "no 'Unused recovery codes: 10'");
      eq(await page.locator("#input-disable-code").count(), 1, "turn-off code fields");
      return await shot(page, "two-factor-settings-desktop");
    });
    await t.check("signed in and enrolled, GET /two-factor is the step-up form", async () => {
      const { res } = await openPage(page, `${base}/two-factor?callbackUrl=${encodeURIComponent(home)}`, origin);
      eq(res.status(), 200, "status");
      eq(await page.locator("#input-code").count(), 1, "code fields");
      return await shot(page, "two-factor-step-up-desktop");
    });
    await t.check("signs out", () => signOut(page));

    await t.check("the password now leads to the second-step page, with no session yet", async () => {
      onStepPage(await passwordSignIn(page));
      const file = await shot(page, "two-factor-step-desktop");
      eq(await page.locator("#input-code").getAttribute("autocomplete"), "one-time-code", "the code field's autocomplete");
      eq(await sessionEmail(page), undefined, "session user");
      return file;
    });
    await t.check("oathtool's code typed on the second-step page arrives at the callbackUrl, signed in", async () => {
      await openPage(page, `${base}/two-factor?callbackUrl=${encodeURIComponent(home)}`, origin); // the pending step's page again
      await page.locator("#input-code").fill(await auth.code());
      await submit(page, page.locator("#submitButton"));
      eq(page.url(), home, "landed on");
      eq(await sessionEmail(page), email, "session.user.email");
    });
    await t.check("signs out", () => signOut(page));
    await t.check("a recovery code ('Can't use your authenticator app?') on the second-step page signs in", async () => {
      onStepPage(await passwordSignIn(page));
      await page.getByText("Can't use your authenticator app?").click();
      await page.locator("#input-code").fill(codes[0]);
      await submit(page, page.locator("#submitButton"));
      eq(page.url(), home, "landed on");
      eq(await sessionEmail(page), email, "session.user.email");
    });
    await t.check("signs out", () => signOut(page));
    await t.check("that recovery code is refused in the next sign-in: the page says so (role=alert), no session", async () => {
      onStepPage(await passwordSignIn(page));
      await page.locator("#input-code").fill(codes[0]);
      await submit(page, page.locator("#submitButton"));
      const u = new URL(page.url());
      eq([u.pathname, u.searchParams.get("error")], [`${basePath}/two-factor`, "TwoFactorInvalid"], "back on the page with");
      assert(await page.locator("[role=alert]").first().isVisible(), "no visible role=alert message");
      const file = await shot(page, "two-factor-step-invalid-desktop");
      eq(await sessionEmail(page), undefined, "session user");
      return file;
    });
    await t.check("oathtool's code with 'Remember this device' checked signs in and leaves a device cookie", async () => {
      await openPage(page, `${base}/two-factor?callbackUrl=${encodeURIComponent(home)}`, origin); // the refused sign-in's step is still pending
      await page.locator("#input-code").fill(await auth.code());
      await page.getByLabel(/Remember this device for 30 days/).check();
      await submit(page, page.locator("#submitButton"));
      eq(page.url(), home, "landed on");
      eq(await sessionEmail(page), email, "session.user.email");
      const device = (await desktop.cookies(base)).find((c) => c.name === "next-auth.two-factor-device");
      assert(device, "no next-auth.two-factor-device cookie");
      assert(device.httpOnly, "the device cookie is not HttpOnly");
      const days = (device.expires - Date.now() / 1000) / 86400;
      assert(days > 29 && days < 31, `the device cookie lasts ${days.toFixed(1)} days, expected 30`);
    });
    await t.check("signs out", () => signOut(page));
    await t.check("on the remembered browser the password alone signs in (no second-step page)", async () => {
      eq(await passwordSignIn(page), home, "landed on");
      eq(await sessionEmail(page), email, "session.user.email");
    });
    await t.check("another browser still gets the second-step page", async () => {
      const other = await newContext(browser, { width: 1280, height: 800 });
      try {
        const p2 = await other.newPage();
        await openPage(p2, `${base}/signin?callbackUrl=${encodeURIComponent(home)}`, origin);
        await p2.locator("#input-email-for-credentials-provider").fill(email);
        await p2.locator("#input-password-for-credentials-provider").fill(PASSWORD);
        await submit(p2, p2.locator("form", { has: p2.locator('input[type="password"]') }).locator("button"));
        onStepPage(p2.url());
        eq(other.blocked, [], "blocked requests");
        eq(other.csp, [], "CSP violations");
      } finally {
        await other.close();
      }
    });
    await t.check("no request left 127.0.0.1 and no CSP violation", async () => {
      eq(desktop.blocked, [], "blocked requests");
      eq(desktop.csp, [], "CSP violations");
    });
    await desktop.close();

    const phone = await newContext(browser, { width: 390, height: 844 });
    await t.check("the second-step page at 390px: no horizontal scrolling", async () => {
      const p = await phone.newPage();
      await openPage(p, `${base}/signin?callbackUrl=${encodeURIComponent(home)}`, origin);
      await p.locator("#input-email-for-credentials-provider").fill(email);
      await p.locator("#input-password-for-credentials-provider").fill(PASSWORD);
      await submit(p, p.locator("form", { has: p.locator('input[type="password"]') }).locator("button"));
      onStepPage(p.url());
      const sw = await p.evaluate(() => document.documentElement.scrollWidth);
      assert(sw <= 390, `the page is ${sw}px wide`);
      return await shot(p, "two-factor-step-phone");
    });
    await phone.close();
  } finally {
    await browser.close();
  }
}
