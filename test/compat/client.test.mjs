// Real-client suite: the published next-auth v4 client functions, next-auth/jwt
// and @auth/core/jwt against one running latchkey instance, or against two
// sharing a PostgreSQL database behind one round-robin proxy.
//
// runClientSuite(t, ctx, server, variant)
//   t: Report (scoped), ctx: {idp, smtp, secret}, server: {base, origin},
//   variant: {strategy: "jwt"|"database", cookieStyle: "next-auth"|"authjs"}
import { createRequire } from "node:module";
import { CookieJar, jarFetch, followRedirects } from "./jar.mjs";
import { NodeClient, loadNextAuthReact } from "./nodeclient.mjs";
import { signInLink } from "./smtp.mjs";
import { ALICE } from "./idp.mjs";
import { assert, eq, show } from "./report.mjs";
import { evidence, FORM, JSONCT, form, fetchT } from "./util.mjs";
import { credentialsChecks } from "./client-credentials.mjs";

const require = createRequire(import.meta.url);

/** The parsed JSON body, or a marker string that never equals a JSON value. */
function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return `<not JSON: ${text.slice(0, 120)}>`;
  }
}
/** An empty session as a v4 ({}) or v5 (null) server sends it. */
const isEmptySession = (text) => {
  const v = parseJson(text);
  return v === null || (typeof v === "object" && Object.keys(v).length === 0);
};
const HEX64 = /^[0-9a-f]{64}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export async function runClientSuite(t, ctx, server, variant) {
  const { base, origin } = server;
  const style = variant.cookieStyle ?? "next-auth";
  const names = {
    csrf: `${style}.csrf-token`,
    session: `${style}.session-token`,
    callback: `${style}.callback-url`,
  };
  const na = loadNextAuthReact(base); // one module copy for this server
  const newClient = (jar = new CookieJar()) => new NodeClient(server, jar, { module: na });
  const app = `${origin}/app`; // the front end's page the shimmed window is "on"

  // ---- CSRF -------------------------------------------------------------
  const anon = newClient();
  let csrf1;
  await t.check("getCsrfToken returns a 64-hex token and sets the CSRF cookie", async () => {
    csrf1 = await anon.run((c) => c.getCsrfToken());
    assert(typeof csrf1 === "string" && HEX64.test(csrf1), () => `token ${show(csrf1)}; client errors: ${anon.lastErrors()}`);
    const cookie = anon.jar.get(base, names.csrf);
    assert(cookie, () => `no ${names.csrf} cookie in the jar (has: ${anon.jar.header(base) || "none"})`);
    const [tok, hash] = decodeURIComponent(cookie).split("|");
    eq(tok, csrf1, "token in the cookie");
    assert(HEX64.test(hash ?? ""), `cookie hash part ${show(hash)} is not 64 hex`);
  });
  await t.check("getCsrfToken keeps the same token while the cookie is valid", async () => {
    const again = await anon.run((c) => c.getCsrfToken());
    eq(again, csrf1, "second token");
  });

  // ---- providers --------------------------------------------------------
  await t.check("getProviders lists idp and email with v4 fields", async () => {
    const p = await anon.run((c) => c.getProviders());
    assert(p, () => `getProviders returned ${show(p)}; client errors: ${anon.lastErrors()}`);
    eq(Object.keys(p).sort(), variant.credentials ? ["credentials", "email", "idp"] : ["email", "idp"], "provider ids");
    // v4 knows only "oauth"; v5 (the authjs cookie style) reports OpenID Connect providers as "oidc".
    const idpType = style === "authjs" && p.idp?.type === "oidc" ? "oidc" : "oauth";
    eq(p.idp, { id: "idp", name: "Company SSO", type: idpType, signinUrl: `${base}/signin/idp`, callbackUrl: `${base}/callback/idp` }, "providers.idp");
    eq(Object.keys(p.email).sort(), ["callbackUrl", "id", "name", "signinUrl", "type"], "providers.email keys");
    eq([p.email.id, p.email.type, p.email.signinUrl, p.email.callbackUrl], ["email", "email", `${base}/signin/email`, `${base}/callback/email`], "providers.email");
  });

  // ---- empty session ----------------------------------------------------
  await t.check("getSession without a session returns null", async () => {
    const s = await anon.run((c) => c.getSession());
    eq(s, null, "session");
    const res = await fetchT(`${base}/session`);
    const body = await res.text();
    eq(res.status, 200, "GET /session status");
    if (style === "next-auth") eq(parseJson(body), {}, "GET /session body (v4 style)");
  });

  // ---- OIDC sign-in through the real IdP ---------------------------------
  const oidc = newClient();
  const dashboard = `${origin}/dashboard`;
  let signedIn = false;
  await t.check("signIn(\"idp\") redirects to the IdP with state, PKCE S256 and nonce", async () => {
    const authUrl = await oidc.run(async (c, loc) => {
      const r = await c.signIn("idp", { callbackUrl: dashboard });
      assert(r === undefined, `signIn returned ${show(r)} (a redirect flow returns nothing)`);
      assert(loc.assigned.length === 1, () => `window.location.href assigned ${loc.assigned.length} times: ${show(loc.assigned)}; client errors: ${oidc.lastErrors()}`);
      return loc.href;
    }, { windowHref: app });
    const u = new URL(authUrl);
    eq(u.origin + u.pathname, `${ctx.idp.issuer}/auth`, "authorization endpoint");
    const q = Object.fromEntries(u.searchParams);
    eq(q.client_id, ctx.clientId, "client_id");
    eq(q.redirect_uri, `${base}/callback/idp`, "redirect_uri");
    eq(q.response_type, "code", "response_type");
    assert(q.state && q.nonce && q.code_challenge, `missing state/nonce/code_challenge in ${show(q)}`);
    eq(q.code_challenge_method, "S256", "code_challenge_method");
    oidc.authUrl = authUrl;
  });
  await t.check("the IdP signs in and the callback lands on callbackUrl", async () => {
    assert(oidc.authUrl, "no authorization URL from the previous check");
    const f = jarFetch(oidc.jar);
    const tokenCalls = ctx.idp.tokenRequests.length;
    const out = await followRedirects(f, oidc.authUrl, { stop: (u) => u === dashboard });
    const last = out.chain.at(-1);
    assert(out.url === dashboard, () => `ended at ${out.url} (HTTP ${out.res?.status}) instead of ${dashboard}; chain: ${out.chain.map((c) => `${c.status} ${c.url}`).join(" -> ")}; latchkey log: ${server.logTail?.(5)}`);
    assert(ctx.idp.tokenRequests.length > tokenCalls, "latchkey never called the IdP token endpoint");
    const tr = ctx.idp.tokenRequests.at(-1);
    assert(tr.has_code_verifier, "token request carried no code_verifier");
    assert(oidc.jar.get(base, names.session), () => `no ${names.session} cookie after the callback (jar: ${oidc.jar.header(base)})`);
    signedIn = true;
    return `callback ${last.status} -> ${dashboard}`;
  });
  let session1;
  await t.check("getSession after the OIDC sign-in shows the user", async () => {
    session1 = await oidc.run((c) => c.getSession());
    assert(session1, () => `getSession returned null; client errors: ${oidc.lastErrors()}`);
    eq(session1.user?.email, ALICE.email, "session.user.email");
    eq(session1.user?.name, ALICE.name, "session.user.name");
    assert(ISO.test(session1.expires ?? ""), `expires ${show(session1.expires)} is not ISO-8601 with milliseconds`);
    const days = (Date.parse(session1.expires) - Date.now()) / 86400e3;
    assert(days > 29 && days < 31, `expires is ${days.toFixed(2)} days away, expected ~30 (max_age 720h)`);
    const extra = Object.keys(session1).filter((k) => !["user", "expires"].includes(k));
    eq(extra, [], "extra top-level session keys");
    const userKeys = Object.keys(session1.user).filter((k) => !["name", "email", "image"].includes(k));
    eq(userKeys, [], "extra session.user keys (client-safe shape)");
  });
  await t.check("getSession({req}) forwards the cookie header (server-side use)", async () => {
    const cookie = oidc.jar.header(base);
    const s = await newClient(new CookieJar()).run((c) => c.getSession({ req: { headers: { cookie } } }));
    eq(s?.user?.email, ALICE.email, "session.user.email");
  });

  // ---- session update (POST /session) ------------------------------------
  await t.check("session update (useSession().update) returns the session", async () => {
    const s = await oidc.updateSession({ name: "Renamed by client" });
    assert(s, () => `update returned null; client errors: ${oidc.lastErrors()}`);
    eq(s.user?.email, ALICE.email, "updated session.user.email");
  });
  await t.check("session update with a wrong csrfToken is refused with 400", async () => {
    const f = jarFetch(oidc.jar);
    const res = await f(`${base}/session`, { method: "POST", headers: JSONCT, body: JSON.stringify({ csrfToken: "0".repeat(64), data: { name: "x" } }) });
    const text = await res.text();
    assert(res.status === 400, () => `expected 400, got ${evidence(res, text)}`);
    if (style === "next-auth") eq(parseJson(text), {}, "body");
  });

  // ---- next-auth/jwt and @auth/core/jwt -----------------------------------
  if (variant.strategy === "jwt") await jwtChecks(t, ctx, server, oidc, names, style, signedIn, newClient);

  // ---- sign-out ---------------------------------------------------------
  await t.check("signOut({redirect:false}) returns {url: callbackUrl} and ends the session", async () => {
    assert(signedIn, "not signed in (OIDC sign-in failed above)");
    const before = oidc.jar.get(base, names.session);
    const bye = `${origin}/bye`;
    const data = await oidc.run((c) => c.signOut({ redirect: false, callbackUrl: bye }), { windowHref: app });
    eq(data, { url: bye }, "signOut result");
    assert(!oidc.jar.get(base, names.session), () => `session cookie still in the jar: ${oidc.jar.header(base)}`);
    const s = await oidc.run((c) => c.getSession());
    eq(s, null, "session after sign-out");
    oidc.oldSessionCookie = before;
  });
  if (variant.strategy === "database") {
    await t.check("after sign-out the old database session token is dead", async () => {
      assert(oidc.oldSessionCookie, "no session cookie recorded before sign-out");
      const res = await fetchT(`${base}/session`, { headers: { cookie: `${names.session}=${oidc.oldSessionCookie}` } });
      const text = await res.text();
      assert(isEmptySession(text), () => `replayed session cookie still answers ${text.slice(0, 200)}`);
    });
  }

  // ---- e-mail sign-in through the SMTP catcher ---------------------------
  const mailer = newClient();
  let link;
  await t.check("signIn(\"email\", {redirect:false}) returns the verify-request URL", async () => {
    const since = Date.now();
    const r = await mailer.run((c) => c.signIn("email", { email: ALICE.email, redirect: false, callbackUrl: `${origin}/mail` }), { windowHref: app });
    eq(r, { error: null, status: 200, ok: true, url: `${base}/verify-request?provider=email&type=email` }, "signIn result");
    const msg = await ctx.smtp.waitForMail(ALICE.email, { since });
    mailer.msg = msg;
  });
  await t.check("the sign-in e-mail has text and HTML parts and the v4 link format", async () => {
    const msg = mailer.msg;
    assert(msg, "no e-mail caught");
    assert(msg.text && msg.html, `expected text and HTML parts (content-type ${msg.contentType})`);
    link = signInLink(msg);
    assert(link, () => `no callback link in the text part: ${show(msg.text.slice(0, 300))}`);
    const u = new URL(link);
    eq(u.origin + u.pathname, `${base}/callback/email`, "link path");
    eq([...u.searchParams.keys()].sort(), ["callbackUrl", "email", "token"], "link query keys");
    eq(u.searchParams.get("callbackUrl"), `${origin}/mail`, "link callbackUrl");
    eq(u.searchParams.get("email"), ALICE.email, "link email");
    assert(HEX64.test(u.searchParams.get("token")), `token ${show(u.searchParams.get("token"))} is not 64 hex`);
    assert(msg.html.includes(link.replace(/&/g, "&amp;")) || msg.html.includes(link), "the HTML part does not contain the same link");
  });
  if (ctx.target !== "reference") {
    // latchkey binds a link to the browser that asked for it (a cookie set by
    // the sign-in POST). Any other browser only gets a confirm page naming the
    // stored address, and nothing is spent; next-auth v4 binds nothing.
    await t.check("opening the e-mail link in another browser shows the confirm page and spends nothing", async () => {
      assert(link, "no link");
      const res = await jarFetch(new CookieJar())(link);
      const text = await res.text();
      assert(res.status === 200, () => `expected the 200 confirm page, got ${evidence(res)}`);
      assert(text.includes(`<strong>${ALICE.email}</strong>`) && text.includes('id="submitButton"'), () => `not the confirm page for ${ALICE.email}: ${show(text.slice(0, 300))}`);
    });
  }
  const clicker = mailer; // the link is opened in the browser that asked for it
  let emailSignedIn = false;
  await t.check("opening the e-mail link signs in and redirects to callbackUrl", async () => {
    assert(link, "no link");
    const f = jarFetch(clicker.jar);
    const res = await f(link);
    await res.text();
    const loc = res.headers.get("location");
    assert(res.status === 302 && loc === `${origin}/mail`, () => `expected 302 to ${origin}/mail, got ${evidence(res)}`);
    const s = await clicker.run((c) => c.getSession());
    eq(s?.user?.email, ALICE.email, "session.user.email");
    emailSignedIn = true;
  });
  await t.check("the e-mail link is single-use (second use -> error=Verification)", async () => {
    assert(link, "no link");
    const res = await jarFetch(new CookieJar())(link);
    const loc = res.headers.get("location") ?? "";
    assert(res.status === 302 && loc === `${base}/error?error=Verification`, () => `expected 302 to ${base}/error?error=Verification, got HTTP ${res.status} location=${loc}`);
  });

  // ---- CSRF failure -----------------------------------------------------
  await t.check("signIn without the CSRF cookie looks like success but points at ?csrf=true (v4)", async () => {
    const noCookies = newClient();
    noCookies.jar.store = () => {}; // a client whose cookies get lost
    const since = Date.now();
    const r = await noCookies.run((c) => c.signIn("email", { email: "bob@example.com", redirect: false, callbackUrl: `${origin}/x` }), { windowHref: app });
    eq(r, { error: null, status: 200, ok: true, url: `${base}/signin?csrf=true` }, "signIn result");
    await new Promise((res) => setTimeout(res, 300));
    assert(!ctx.smtp.messages.some((m) => m.at >= since && m.envelope.to.includes("bob@example.com")), "an e-mail was sent despite the CSRF failure");
  });
  await t.check("POST /signin/idp with a wrong csrfToken (JSON mode) -> {url: .../signin?csrf=true}", async () => {
    const j = new CookieJar();
    const f = jarFetch(j);
    await (await f(`${base}/csrf`)).text();
    const res = await f(`${base}/signin/idp`, { method: "POST", headers: FORM, body: form({ csrfToken: "f".repeat(64), callbackUrl: `${origin}/x`, json: "true" }) });
    const text = await res.text();
    eq([res.status, parseJson(text)], [200, { url: `${base}/signin?csrf=true` }], "status and body");
  });
  await t.check("POST /signout with a wrong csrfToken keeps the session", async () => {
    assert(emailSignedIn, "not signed in (the e-mail sign-in failed above)");
    const c = newClient(clicker.jar);
    const f = jarFetch(clicker.jar);
    const res = await f(`${base}/signout`, { method: "POST", headers: FORM, body: form({ csrfToken: "f".repeat(64), callbackUrl: `${origin}/x`, json: "true" }) });
    const text = await res.text();
    eq([res.status, parseJson(text)], [200, { url: `${base}/signout?csrf=true` }], "status and body");
    const s = await c.run((cl) => cl.getSession());
    eq(s?.user?.email, ALICE.email, "session still there");
  });

  // ---- unknown provider -------------------------------------------------
  await t.check("signIn(\"nope\") sends the browser to the sign-in page (client side)", async () => {
    const c = newClient();
    const href = await c.run(async (cl, loc) => {
      await cl.signIn("nope", { callbackUrl: `${origin}/x` });
      return loc.assigned[0];
    }, { windowHref: app });
    const basePath = new URL(base).pathname;
    eq(href, `${basePath}/signin?${new URLSearchParams({ callbackUrl: `${origin}/x` })}`, "window.location.href");
  });
  await t.check("POST /signin/nope with a valid CSRF token -> redirect to the sign-in page, no 5xx", async () => {
    const j = new CookieJar();
    const f = jarFetch(j);
    const { csrfToken } = await (await f(`${base}/csrf`)).json();
    const res = await f(`${base}/signin/nope`, { method: "POST", headers: FORM, body: form({ csrfToken, callbackUrl: `${origin}/x`, json: "true" }) });
    const text = await res.text();
    assert(res.status < 500, () => `HTTP ${res.status} ${text.slice(0, 200)}`);
    let url;
    try {
      url = JSON.parse(text).url;
    } catch {}
    assert(typeof url === "string" && url.startsWith(`${base}/signin`), () => `expected {url: ${base}/signin...}, got HTTP ${res.status} ${text.slice(0, 200)}`);
    return url.slice(base.length);
  });

  // ---- password sign-in (credentials provider) ----------------------------
  if (variant.credentials) await credentialsChecks(t, ctx, server, variant, { newClient, names, app });

  if (new URL(base).pathname !== "/api/auth") {
    await t.check("the default /api/auth path is not served under a custom base path", async () => {
      const res = await fetchT(`${origin}/api/auth/csrf`);
      await res.text();
      eq(res.status, 404, "GET /api/auth/csrf status");
    });
  }
}

/**
 * After the whole client suite ran through the round-robin proxy: every
 * instance answered its share of it. Then, independent of which instance the
 * proxy happened to pick for each step, flows started at one instance finish
 * at another (asked directly, by their own port): the OAuth check cookie,
 * e-mail tokens, link binding and sessions are shared, not per process.
 */
async function instancesChecks(t, ctx, server, counted) {
  const { backends, proxy } = server;
  const names = Object.keys(proxy.counts); // the proxy's names of backends[0], [1], ...
  const served = names.map((n) => proxy.counts[n] - (counted[n] ?? 0));
  const total = served.reduce((a, b) => a + b, 0);
  await t.check("every instance served a share of the suite's requests through the proxy", async () => {
    eq(proxy.errors, [], "proxy errors");
    assert(total >= 20, `only ${total} requests went through the proxy`);
    names.forEach((n, i) => assert(served[i] >= total / (2 * names.length), () => `instance ${n} answered ${served[i]} of ${total} requests`));
    const failed = proxy.requests.filter((r) => r.status >= 500);
    assert(!failed.length, () => `5xx answers: ${failed.map((r) => `${r.backend} ${r.method} ${r.path} ${r.status}`).join(", ")}`);
    return names.map((n, i) => `${n} ${served[i]}`).join(", ") + ` of ${total}`;
  });

  const [first, second] = backends;
  const [A, B] = names;
  // A URL of the public base (the proxy's), sent to one instance instead.
  const at = (b, url) => (url.startsWith(server.base) ? b.base + url.slice(server.base.length) : url);
  const sessionAt = async (b, cookie) => parseJson(await (await fetchT(`${b.base}/session`, { headers: { cookie } })).text());
  const csrfAt = async (f, b) => (await (await f(`${b.base}/csrf`)).json()).csrfToken;
  let oidcJar;
  await t.check(`an OIDC sign-in started at ${A} completes at ${B}; both see the session`, async () => {
    const jar = new CookieJar();
    const f = jarFetch(jar);
    const dash = `${server.origin}/dash`;
    const res = await f(`${first.base}/signin/idp`, { method: "POST", headers: FORM, body: form({ csrfToken: await csrfAt(f, first), callbackUrl: dash, json: "true" }) });
    const text = await res.text();
    const authUrl = parseJson(text)?.url;
    assert(res.status === 200 && typeof authUrl === "string" && authUrl.startsWith(ctx.idp.issuer), () => `${A}: POST /signin/idp: ${evidence(res, text)}`);
    const idp = await followRedirects(f, authUrl, { stop: (u) => u.startsWith(`${server.base}/callback/idp`) });
    assert(idp.url.startsWith(`${server.base}/callback/idp`), () => `the IdP did not send back to ${server.base}/callback/idp: ${idp.chain.map((c) => `${c.status} ${c.url}`).join(" -> ")}`);
    const cb = await f(at(second, idp.url));
    await cb.text();
    assert(cb.status === 302 && cb.headers.get("location") === dash, () => `${B}: callback: ${evidence(cb)}; ${server.logTail(3)}`);
    const cookie = jar.header(server.base);
    for (const b of [first, second]) eq((await sessionAt(b, cookie))?.user?.email, ALICE.email, `${b.name}: session.user.email`);
    oidcJar = jar;
  });
  await t.check(`an e-mail link requested at ${B} signs in at ${A}`, async () => {
    const email = "multi-instance@example.com";
    const jar = new CookieJar();
    const f = jarFetch(jar);
    const since = Date.now();
    const res = await f(`${second.base}/signin/email`, { method: "POST", headers: FORM, body: form({ email, csrfToken: await csrfAt(f, second), callbackUrl: `${server.origin}/mail`, json: "true" }) });
    const text = await res.text();
    assert(res.status === 200, () => `${B}: POST /signin/email: ${evidence(res, text)}`);
    const link = signInLink(await ctx.smtp.waitForMail(email, { since }));
    assert(link?.startsWith(`${server.base}/callback/email`), () => `link ${show(link)} is not under the public base ${server.base}`);
    const open = await f(at(first, link));
    await open.text();
    assert(open.status === 302 && open.headers.get("location") === `${server.origin}/mail`, () => `${A}: opening the link: ${evidence(open)}`);
    eq((await sessionAt(second, jar.header(server.base)))?.user?.email, email, `${second.name}: session.user.email`);
  });
  // A read the session in the checks above: its lookup cache may answer it
  // for session.cache_ttl (1 s) after the sign-out at B, no longer.
  await t.check(`signing out at ${B} ends the session at ${B} at once and at ${A} within session.cache_ttl (1 s)`, async () => {
    assert(oidcJar, "not signed in (the OIDC check above failed)");
    const cookie = oidcJar.header(server.base);
    eq((await sessionAt(first, cookie))?.user?.email, ALICE.email, `${first.name}: signed in before`);
    const f = jarFetch(oidcJar);
    const res = await f(`${second.base}/signout`, { method: "POST", headers: FORM, body: form({ csrfToken: await csrfAt(f, second), callbackUrl: `${server.origin}/bye`, json: "true" }) });
    const text = await res.text();
    eq([res.status, parseJson(text)], [200, { url: `${server.origin}/bye` }], `${second.name}: POST /signout`);
    const signedOut = Date.now();
    eq(await sessionAt(second, cookie), {}, `${second.name}: GET /session with the signed-out cookie`);
    for (;;) {
      const s = await sessionAt(first, cookie);
      if (JSON.stringify(s) === "{}") break;
      assert(Date.now() - signedOut < 1250, () => `${first.name}: still answers the signed-out cookie ${Date.now() - signedOut} ms after the sign-out: ${show(s)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return `${first.name} ended it after ${Date.now() - signedOut} ms`;
  });
}

async function jwtChecks(t, ctx, server, oidc, names, style, signedIn, newClient) {
  const { base } = server;
  const v4jwt = require("next-auth/jwt");
  if (style === "next-auth") {
    await t.check("next-auth/jwt decode reads latchkey's v4 session cookie", async () => {
      assert(signedIn, "not signed in");
      const token = oidc.jar.get(base, names.session);
      assert(token, `no ${names.session} cookie`);
      const claims = await v4jwt.decode({ token, secret: ctx.secret });
      eq([claims?.email, claims?.name], [ALICE.email, ALICE.name], "email, name");
      assert(typeof claims.sub === "string" && claims.sub, `sub ${show(claims.sub)}`);
      for (const k of ["iat", "exp"]) assert(Number.isInteger(claims[k]), `${k} ${show(claims[k])}`);
      assert(typeof claims.jti === "string", `jti ${show(claims.jti)}`);
      const days = (claims.exp - claims.iat) / 86400;
      assert(Math.abs(days - 30) < 0.01, `exp - iat = ${days} days, expected 30`);
      return `claims: ${Object.keys(claims).join(",")}`;
    });
    await t.check("next-auth/jwt getToken reads the session cookie", async () => {
      const token = oidc.jar.get(base, names.session);
      const claims = await v4jwt.getToken({ req: { cookies: { [names.session]: token }, headers: {} }, secret: ctx.secret, secureCookie: false });
      eq(claims?.email, ALICE.email, "getToken().email");
    });
    await t.check("a token minted by next-auth/jwt encode is accepted by latchkey", async () => {
      const minted = await v4jwt.encode({ token: { name: "Minted Mona", email: "mona@example.com", picture: null, sub: "minted-1" }, secret: ctx.secret });
      const c = newClient();
      c.jar.set(base, names.session, minted);
      const s = await c.run((cl) => cl.getSession());
      eq(s?.user?.email, "mona@example.com", "session.user.email");
      eq(s?.user?.name, "Minted Mona", "session.user.name");
    });
    await t.check("a v4 token encrypted with another secret is rejected", async () => {
      const minted = await v4jwt.encode({ token: { name: "Eve", email: "eve@example.com", sub: "eve" }, secret: "not-the-secret" });
      const res = await fetchT(`${base}/session`, { headers: { cookie: `${names.session}=${minted}` } });
      const text = await res.text();
      assert(isEmptySession(text), `body ${text.slice(0, 200)}`);
      const cleared = res.headers.getSetCookie().some((c) => c.startsWith(`${names.session}=;`) || /Max-Age=0/i.test(c) && c.startsWith(`${names.session}=`));
      assert(cleared, () => `the bad session cookie was not cleared: ${show(res.headers.getSetCookie())}`);
    });
  } else {
    const v5jwt = await import("@auth/core/jwt");
    await t.check("@auth/core/jwt decode reads latchkey's v5 session cookie", async () => {
      assert(signedIn, "not signed in");
      const token = oidc.jar.get(base, names.session);
      assert(token, `no ${names.session} cookie (jar: ${oidc.jar.header(base)})`);
      const claims = await v5jwt.decode({ token, secret: ctx.secret, salt: names.session });
      eq([claims?.email, claims?.name], [ALICE.email, ALICE.name], "email, name");
      return `claims: ${Object.keys(claims).join(",")}`;
    });
    await t.check("a token minted by @auth/core/jwt encode is accepted by latchkey", async () => {
      const minted = await v5jwt.encode({ token: { name: "Minted Mona", email: "mona@example.com", picture: null, sub: "minted-1" }, secret: ctx.secret, salt: names.session });
      const c = newClient();
      c.jar.set(base, names.session, minted);
      const s = await c.run((cl) => cl.getSession());
      eq(s?.user?.email, "mona@example.com", "session.user.email");
    });
    await t.check("a v4 (next-auth/jwt) token is not accepted in authjs style", async () => {
      const minted = await v4jwt.encode({ token: { name: "Old", email: "old@example.com", sub: "old" }, secret: ctx.secret });
      const res = await fetchT(`${base}/session`, { headers: { cookie: `${names.session}=${minted}` } });
      const text = await res.text();
      assert(isEmptySession(text), `body ${text.slice(0, 200)}`);
    });
  }
}

/** The latchkey configurations the client suite runs against. */
export const CLIENT_VARIANTS = [
  { name: "database", strategy: "database", basePath: "/api/auth", cookieStyle: "next-auth", credentials: true },
  { name: "jwt", strategy: "jwt", basePath: "/api/auth", cookieStyle: "next-auth", credentials: true },
  { name: "database /custom/auth", strategy: "database", basePath: "/custom/auth", cookieStyle: "next-auth" },
  { name: "jwt /custom/auth", strategy: "jwt", basePath: "/custom/auth", cookieStyle: "next-auth" },
  { name: "jwt authjs-cookies", strategy: "jwt", basePath: "/api/auth", cookieStyle: "authjs" },
  // Two instances sharing one PostgreSQL database behind a round-robin proxy:
  // every step of a flow may land on either instance.
  { name: "database postgres x2", strategy: "database", basePath: "/api/auth", cookieStyle: "next-auth", database: "postgres", instances: 2, credentials: true },
];

/** Instances this suite needs. target: "latchkey" or "reference" (self-test against next-auth v4). */
export function plan(target) {
  // The reference next-auth v4 server keeps its adapter in memory: one process, no PostgreSQL.
  const forReference = (v) => v.cookieStyle === "next-auth" && !v.database && !v.instances;
  return CLIENT_VARIANTS.filter((v) => target === "latchkey" || forReference(v)).map((v) => ({ id: `client ${v.name}`, kind: target, ...v }));
}

export async function run(t, ctx) {
  for (const v of CLIENT_VARIANTS) {
    const server = await ctx.server(`client ${v.name}`);
    if (!server) continue;
    const t2 = t.scope(`client [${v.name}] `);
    const counted = { ...server.proxy?.counts };
    await runClientSuite(t2, ctx, server, v);
    if (server.backends) await instancesChecks(t2, ctx, server, counted);
  }
}
