// latchkey as an OpenID Provider (issue #30), proven with real relying parties:
//
//  1. openid-client (npm, panva's certified RP library) from Node: discovery,
//     authorization code + PKCE (S256) + state + nonce, the browser's part done
//     by a cookie jar (jar.mjs) signing in with an e-mail link (the SMTP
//     catcher) and answering latchkey's consent page, iss in the redirect
//     (RFC 9207; openid-client refuses it missing or another issuer's), the
//     ID token validated by openid-client, userinfo, refresh (offline_access) with rotation, reuse of
//     a rotated refresh token (refused, and the newer one revoked with it), a
//     reused code, revocation (RFC 7009) then userinfo refused, and RP-initiated
//     logout (end_session with id_token_hint and post_logout_redirect_uri).
//  2. oauth2-proxy (the real program, bin/oauth2-proxy from
//     install-oauth2-proxy.sh) as an OIDC client of latchkey in front of a
//     small app: headless Chromium opens the app, signs in on latchkey's
//     page with a password, consents, and the app receives X-Forwarded-Email
//     and X-Forwarded-Groups; signed out of both and back, the sign-in form's
//     POST leads straight on to the app (consent remembered: the pages' CSP
//     form-action must allow the client's origin, as Chromium checks every
//     redirect after a form); a user outside --allowed-group gets
//     oauth2-proxy's 403 and the app is never reached.
//
// The suite starts its own latchkey (spec kind "own": the port is reserved)
// with an `oidc:` section naming both clients, e-mail and password sign-in.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import * as oidc from "openid-client";
import { CookieJar, jarFetch } from "./jar.mjs";
import { latchkeyBinary, latchkeyConfig, repoRoot, startLatchkey } from "./latchkey.mjs";
import { launchChromium, newContext } from "./browser.test.mjs";
import { confirmIfAsked } from "./rotation.test.mjs";
import { spawnLogged, waitHttp, stopChild, logTail } from "./procs.mjs";
import { signInLink } from "./smtp.mjs";
import { assert, eq, show } from "./report.mjs";
import { FORM, evidence, form, freePorts } from "./util.mjs";

export const OAUTH2_PROXY_VERSION = "v7.15.6"; // install-oauth2-proxy.sh pins the same
const GROUP = "staff";
const READERS = "readers";
const NODE_USER = "olivia@example.com";
const STAFF = { email: "sam@example.com", password: "sam's long pass phrase 7" };
const OUTSIDER = { email: "otto@example.com", password: "otto's long pass phrase 8" };

export function plan(target) {
  return target === "latchkey" ? [{ id: "openid", kind: "own" }] : [];
}

/** The oidc: section: a confidential client for openid-client and one for oauth2-proxy. */
function oidcYaml({ rp, proxy }) {
  const q = JSON.stringify;
  return `oidc:
  enabled: true
  clients:
    - id: node-rp
      name: "Node RP"
      secret: ${q(rp.secret)}
      redirect_uris: [${q(rp.redirect)}]
      post_logout_redirect_uris: [${q(rp.postLogout)}]
    - id: oauth2-proxy
      name: "Protected App"
      secret: ${q(proxy.secret)}
      redirect_uris: [${q(proxy.redirect)}]
`;
}

/** The app behind oauth2-proxy: shows the headers it got as JSON in a page. */
async function startUpstream(port) {
  const seen = [];
  const server = http.createServer((req, res) => {
    const who = { url: req.url, headers: req.headers };
    seen.push(who);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(`<!doctype html><title>upstream</title><pre id="who">${JSON.stringify(who).replace(/</g, "\\u003c")}</pre>`);
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { seen, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** bin/oauth2-proxy at the pinned version (install-oauth2-proxy.sh builds it when missing). */
function oauth2ProxyBinary() {
  if (process.env.OAUTH2_PROXY_BIN) return path.resolve(process.env.OAUTH2_PROXY_BIN);
  execFileSync(path.join(repoRoot, "test/compat/install-oauth2-proxy.sh"), { stdio: ["ignore", "ignore", "inherit"] });
  return path.join(repoRoot, "bin", "oauth2-proxy");
}

/** The error code of an openid-client failure (ResponseBodyError's `error`, or a challenge's). */
function oauthError(e) {
  return e?.error ?? e?.cause?.[0]?.parameters?.error ?? e?.code ?? e?.message;
}

/** Runs fn, which must fail; returns the failure (for its error code). */
async function refused(fn, what) {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  assert(false, `${what} succeeded`);
}

export async function run(report, ctx) {
  if (ctx.target !== "latchkey") return;
  const t = report.scope("openid ");
  const spec = ctx.specs.find((s) => s.id === "openid");
  const [rpPort, proxyPort, upPort] = await freePorts(3);
  const rp = {
    secret: crypto.randomBytes(24).toString("base64url"),
    redirect: `http://127.0.0.1:${rpPort}/callback`, // never listened on: the jar stops there
    postLogout: `http://127.0.0.1:${rpPort}/signed-out`,
  };
  const proxy = {
    secret: crypto.randomBytes(24).toString("base64url"),
    origin: `http://127.0.0.1:${proxyPort}`,
    redirect: `http://127.0.0.1:${proxyPort}/oauth2/callback`,
  };
  const dir = path.join(ctx.tmp, "openid");

  let latchkey;
  const started = await t.check("latchkey starts with the OpenID Provider on (two clients, e-mail and password sign-in)", async () => {
    const config =
      latchkeyConfig({
        issuer: ctx.idp.issuer, clientId: ctx.clientId, clientSecret: ctx.clientSecret, smtpUrl: ctx.smtp.url,
        from: "Sign in <no-reply@example.com>", strategy: "database", credentials: true, emailLimits: false,
      }) + oidcYaml({ rp, proxy });
    latchkey = await startLatchkey({ bin: latchkeyBinary(), port: spec.port, secret: ctx.secret, config, dir: path.join(dir, "latchkey"), name: "openid" });
    return latchkey.base;
  });
  if (!started) return;
  const base = latchkey.base;
  try {
    await openidClient(t.scope("openid-client: "), ctx, latchkey, rp);
    await oauth2Proxy(t.scope("oauth2-proxy: "), ctx, latchkey, proxy, upPort, dir);
  } finally {
    await latchkey.stop();
  }
}

// ---- 1. openid-client ---------------------------------------------------------

async function openidClient(t, ctx, latchkey, rp) {
  const base = latchkey.base;
  let config;
  const ok = await t.check("discovery finds latchkey's issuer, endpoints, S256 and the scopes", async () => {
    config = await oidc.discovery(new URL(base), "node-rp", rp.secret, undefined, { execute: [oidc.allowInsecureRequests] });
    const m = config.serverMetadata();
    eq(m.introspection_endpoint_auth_methods_supported?.includes("client_secret_basic"), true, "introspection takes client_secret_basic");
    eq(m.issuer, base, "issuer");
    eq(m.authorization_response_iss_parameter_supported, true, "authorization_response_iss_parameter_supported (RFC 9207)");
    for (const k of ["authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri", "revocation_endpoint", "end_session_endpoint", "introspection_endpoint"]) {
      assert(typeof m[k] === "string" && m[k].startsWith(`${base}/oidc/`), `${k}: ${show(m[k])}`);
    }
    assert(m.code_challenge_methods_supported?.includes("S256"), `code_challenge_methods_supported: ${show(m.code_challenge_methods_supported)}`);
    for (const s of ["openid", "profile", "email", "groups", "offline_access"]) assert(m.scopes_supported?.includes(s), `scopes_supported lacks ${s}: ${show(m.scopes_supported)}`);
    return `openid-client ${pkgVersion("openid-client")}`;
  });
  if (!ok) return;
  // Introspection takes client_secret_basic (or private_key_jwt) only, as
  // discovery's introspection_endpoint_auth_methods_supported says; the
  // token and revocation endpoints get openid-client's default,
  // client_secret_post.
  const introspector = new oidc.Configuration(config.serverMetadata(), "node-rp", undefined, oidc.ClientSecretBasic(rp.secret));
  oidc.allowInsecureRequests(introspector);
  const introspect = (token) => oidc.tokenIntrospection(introspector, token);

  // The browser: a cookie jar signed in to latchkey with an e-mail link.
  const jar = new CookieJar();
  const f = jarFetch(jar);
  const signedIn = await t.check("the jar signs in to latchkey with an e-mail link (SMTP catcher)", async () => {
    const { csrfToken } = await (await f(`${base}/csrf`)).json();
    const since = Date.now();
    const res = await f(`${base}/signin/email`, { method: "POST", headers: FORM, body: form({ email: NODE_USER, csrfToken, callbackUrl: `${base}/session`, json: "true" }) });
    assert(res.ok, () => `POST /signin/email: ${evidence(res)}`);
    await res.arrayBuffer();
    await confirmIfAsked(f, await f(signInLink(await ctx.smtp.waitForMail(NODE_USER, { since }))), base);
    eq((await (await f(`${base}/session`)).json())?.user?.email, NODE_USER, "session.user.email");
  });
  if (!signedIn) return;
  // A group for the groups claim (before anything asks for it: instances cache a user's groups).
  await t.check(`latchkey users groups add ${NODE_USER} ${READERS}`, async () => {
    const g = await latchkey.admin(["users", "groups", "add", NODE_USER, READERS]);
    assert(g.code === 0, `exit ${g.code}: ${g.stderr}${g.stdout}`);
  });

  /**
   * One authorization: the URL openid-client builds, followed by the jar
   * through latchkey (the consent page answered "allow" when shown) to the
   * client's redirect URI. Returns {callback, checks, consented}.
   */
  const authorize = async (scope, extra = {}) => {
    const checks = { pkceCodeVerifier: oidc.randomPKCECodeVerifier(), expectedState: oidc.randomState(), expectedNonce: oidc.randomNonce() };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: rp.redirect, scope, state: checks.expectedState, nonce: checks.expectedNonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.pkceCodeVerifier), code_challenge_method: "S256", ...extra,
    });
    let consented = null;
    let at = url.href;
    for (let hop = 0; hop < 15; hop++) {
      if (at.startsWith(rp.redirect)) return { callback: new URL(at), checks, consented };
      const res = await f(at);
      const loc = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && loc) {
        await res.arrayBuffer();
        at = new URL(loc, at).href;
        continue;
      }
      const page = await res.text();
      const field = (name) => page.match(new RegExp(`name="${name}"[^>]*value="([^"]*)"`))?.[1];
      assert(res.status === 200 && page.includes('name="decision"') && field("id"), () => `stopped at ${at}: ${evidence(res, page)}`);
      assert(page.includes("Node RP"), "the consent page does not name the client");
      const post = await f(`${base}/oidc/consent`, { method: "POST", headers: FORM, body: form({ csrfToken: field("csrfToken"), id: field("id"), user: field("user"), decision: "allow" }) });
      await post.arrayBuffer();
      assert(post.status === 302 || post.status === 303, () => `POST /oidc/consent: ${evidence(post)}`);
      consented = field("id");
      at = new URL(post.headers.get("location"), at).href;
    }
    throw new Error(`no redirect to the client from ${url.href}`);
  };

  const SCOPE = "openid profile email groups offline_access";
  let first; // {callback, checks}
  let tokens; // the first exchange's
  let claims;
  await t.check("authorize (code, S256, state, nonce): latchkey's consent page, then the redirect URI gets a code and the state", async () => {
    first = await authorize(SCOPE, { prompt: "consent" });
    assert(first.consented, "no consent page was shown");
    eq(first.callback.searchParams.get("state"), first.checks.expectedState, "state");
    assert(first.callback.searchParams.get("code"), `no code: ${first.callback}`);
    eq(first.callback.searchParams.get("iss"), base, "iss in the redirect (RFC 9207: the issuer)");
  });
  await t.check("openid-client refuses that redirect without iss, or with another issuer's (discovery advertises iss: the mix-up defence), before any token request", async () => {
    const whys = [];
    for (const [what, iss] of [["without iss", null], ["with another issuer's iss", "https://attacker.example/api/auth"]]) {
      const u = new URL(first.callback);
      if (iss === null) u.searchParams.delete("iss");
      else u.searchParams.set("iss", iss);
      const e = await refused(() => oidc.authorizationCodeGrant(config, u, { ...first.checks, idTokenExpected: true }), `the redirect ${what}`);
      whys.push(`${what}: ${e?.code ?? e?.message}`);
    }
    return whys.join("; ");
  });
  await t.check("the code exchange (PKCE verifier): openid-client validates the ID token (JWKS signature, iss, aud, nonce, exp)", async () => {
    tokens = await oidc.authorizationCodeGrant(config, first.callback, { ...first.checks, idTokenExpected: true });
    claims = tokens.claims();
    eq([claims.iss, claims.aud === "node-rp" || (Array.isArray(claims.aud) && claims.aud.includes("node-rp")), claims.nonce], [base, true, first.checks.expectedNonce], "iss, aud has node-rp, nonce");
    eq([claims.email, claims.email_verified, claims.groups], [NODE_USER, true, [READERS]], "email, email_verified, groups");
    assert(/^[0-9a-f-]{36}$/.test(claims.sub), `sub ${show(claims.sub)}`);
    assert(typeof claims.auth_time === "number", `auth_time ${show(claims.auth_time)}`);
    eq(tokens.token_type?.toLowerCase(), "bearer", "token_type");
    assert(tokens.refresh_token, "no refresh token (offline_access was asked)");
    const alg = JSON.parse(Buffer.from(tokens.id_token.split(".")[0], "base64url")).alg;
    return `sub ${claims.sub}, alg ${alg}, expires_in ${tokens.expires_in}`;
  });
  if (!tokens) return;
  await t.check("userinfo answers for the access token (same sub, email, groups)", async () => {
    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    eq([info.sub, info.email, info.email_verified, info.groups], [claims.sub, NODE_USER, true, [READERS]], "sub, email, email_verified, groups");
  });
  await t.check("introspection (client_secret_basic): the access token is active, for node-rp", async () => {
    const i = await introspect(tokens.access_token);
    eq([i.active, i.client_id, i.sub], [true, "node-rp", claims.sub], "active, client_id, sub");
  });

  let second;
  await t.check("refresh: a new access token and a new (rotated) refresh token; userinfo answers for the new one", async () => {
    second = await oidc.refreshTokenGrant(config, tokens.refresh_token);
    assert(second.access_token && second.access_token !== tokens.access_token, "no new access token");
    assert(second.refresh_token && second.refresh_token !== tokens.refresh_token, `refresh token not rotated: ${show(second.refresh_token)}`);
    if (second.id_token) eq(second.claims().sub, claims.sub, "the refreshed ID token's sub");
    const info = await oidc.fetchUserInfo(config, second.access_token, claims.sub);
    eq(info.email, NODE_USER, "userinfo email");
    return second.id_token ? "with an ID token" : "no ID token";
  });
  if (second) {
    await t.check("rotation reuse: the old refresh token is refused (invalid_grant) and the new one is revoked with it", async () => {
      const old = await refused(() => oidc.refreshTokenGrant(config, tokens.refresh_token), "refreshing with the rotated-out token");
      eq(oauthError(old), "invalid_grant", "the old token's error");
      const next = await refused(() => oidc.refreshTokenGrant(config, second.refresh_token), "refreshing with the newer token after the reuse");
      eq(oauthError(next), "invalid_grant", "the newer token's error");
      eq((await introspect(second.access_token)).active, false, "the newer access token active (the family is revoked)");
    });
  }

  await t.check("a code used twice is refused (invalid_grant), and the tokens it gave are revoked", async () => {
    const a = await authorize("openid email");
    const got = await oidc.authorizationCodeGrant(config, a.callback, { ...a.checks, idTokenExpected: true });
    const again = await refused(() => oidc.authorizationCodeGrant(config, a.callback, { ...a.checks, idTokenExpected: true }), "the second exchange");
    eq(oauthError(again), "invalid_grant", "error");
    const i = await introspect(got.access_token);
    eq(i.active, false, "the first exchange's access token active");
    return a.consented ? "consent asked again" : "consent remembered";
  });

  await t.check("revocation (RFC 7009) of the access token: userinfo then refuses it, introspection says inactive", async () => {
    const a = await authorize(SCOPE);
    const got = await oidc.authorizationCodeGrant(config, a.callback, { ...a.checks, idTokenExpected: true });
    await oidc.fetchUserInfo(config, got.access_token, claims.sub); // works before
    await oidc.tokenRevocation(config, got.access_token, { token_type_hint: "access_token" });
    const e = await refused(() => oidc.fetchUserInfo(config, got.access_token, claims.sub), "userinfo after revocation");
    // RFC 6750 wants 401 + WWW-Authenticate: Bearer error="invalid_token";
    // the OP library answers a token its storage refuses with 403 and "{}".
    const status = e?.response?.status ?? e?.status ?? e?.cause?.status;
    assert(e instanceof oidc.WWWAuthenticateChallengeError || status === 401 || status === 403, `userinfo failed otherwise: ${e} (status ${status})`);
    eq((await introspect(got.access_token)).active, false, "introspection active");
    // the refresh token revoked by itself (hinted) no longer refreshes
    await oidc.tokenRevocation(config, got.refresh_token, { token_type_hint: "refresh_token" });
    const r = await refused(() => oidc.refreshTokenGrant(config, got.refresh_token), "refresh after its revocation");
    eq(oauthError(r), "invalid_grant", "refresh error");
    return `userinfo: ${status ?? "?"} ${oauthError(e)}`;
  });

  await t.check("end session (id_token_hint, post_logout_redirect_uri, state): back at the client with state, latchkey's session is {}", async () => {
    const a = await authorize(SCOPE);
    const got = await oidc.authorizationCodeGrant(config, a.callback, { ...a.checks, idTokenExpected: true });
    const state = oidc.randomState();
    const url = oidc.buildEndSessionUrl(config, { id_token_hint: got.id_token, post_logout_redirect_uri: rp.postLogout, state });
    let at = url.href;
    const chain = [];
    for (let hop = 0; hop < 10 && !at.startsWith(rp.postLogout); hop++) {
      const res = await f(at);
      chain.push(`${res.status} ${at}`);
      const loc = res.headers.get("location");
      await res.arrayBuffer();
      assert(res.status >= 300 && res.status < 400 && loc, () => `stopped at ${chain.join(" -> ")}`);
      at = new URL(loc, at).href;
    }
    const back = new URL(at);
    eq(back.origin + back.pathname, rp.postLogout, "landed on");
    eq(back.searchParams.get("state"), state, "state");
    eq(await (await f(`${base}/session`)).json(), {}, "GET /session");
    const r = await refused(() => oidc.refreshTokenGrant(config, got.refresh_token), "refresh after the logout");
    return `${chain.length} hops; refresh after it: ${oauthError(r)}`;
  });
}

function pkgVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(repoRoot, "test/compat/node_modules", name, "package.json"), "utf8")).version;
  } catch {
    return "?";
  }
}

// ---- 2. oauth2-proxy --------------------------------------------------------

async function oauth2Proxy(t, ctx, latchkey, proxy, upPort, dir) {
  const base = latchkey.base;
  let upstream;
  let proc;
  let browser;
  const log = path.join(dir, "oauth2-proxy.log");
  const ok = await t.check(`oauth2-proxy ${OAUTH2_PROXY_VERSION} starts as latchkey's OIDC client (allowed group ${GROUP}) in front of an app`, async () => {
    // The users: one in the group, one not (`latchkey users groups add`).
    for (const u of [STAFF, OUTSIDER]) {
      const out = await latchkey.admin(["users", "create", u.email, "--password-stdin"], u.password + "\n");
      assert(out.code === 0, `users create ${u.email}: exit ${out.code}: ${out.stderr}`);
    }
    const g = await latchkey.admin(["users", "groups", "add", STAFF.email, GROUP]);
    assert(g.code === 0, `users groups add: exit ${g.code}: ${g.stderr}${g.stdout}`);
    const bin = oauth2ProxyBinary();
    upstream = await startUpstream(upPort);
    const args = [
      "--provider=oidc", `--oidc-issuer-url=${base}`, "--client-id=oauth2-proxy", `--client-secret=${proxy.secret}`,
      `--redirect-url=${proxy.redirect}`, `--http-address=127.0.0.1:${new URL(proxy.origin).port}`,
      `--upstream=http://127.0.0.1:${upPort}/`, `--cookie-secret=${crypto.randomBytes(16).toString("hex")}`, "--cookie-secure=false",
      "--email-domain=*", `--allowed-group=${GROUP}`, "--scope=openid email profile groups", "--code-challenge-method=S256",
      "--insecure-oidc-skip-nonce=false", "--pass-user-headers=true", "--set-xauthrequest=true", "--skip-provider-button=true",
    ];
    proc = spawnLogged(bin, args, { env: { PATH: process.env.PATH, HOME: process.env.HOME }, cwd: dir, logFile: log });
    await waitHttp(proc, `${proxy.origin}/ping`, log);
    browser = await launchChromium();
    return `${path.relative(repoRoot, bin)} on ${proxy.origin}`;
  });
  if (!ok) {
    await Promise.all([browser?.close(), stopChild(proc), upstream?.close()]);
    return;
  }

  /** Open the app; sign in with a password on latchkey's page; allow on the consent page. Returns the last response. */
  const through = async (page, user, appUrl) => {
    const consentAt = [];
    await page.goto(appUrl);
    const u = new URL(page.url());
    eq(u.origin + u.pathname, `${base}/signin`, "the browser was sent to");
    assert(new URL(u.searchParams.get("callbackUrl")).pathname.endsWith("/oidc/continue"), `callbackUrl ${u.searchParams.get("callbackUrl")}`);
    await page.locator("#input-email-for-credentials-provider").fill(user.email);
    await page.locator("#input-password-for-credentials-provider").fill(user.password);
    await Promise.all([page.waitForNavigation({ timeout: 15000 }), page.locator("form", { has: page.locator('input[type="password"]') }).locator("button").click()]);
    consentAt.push(page.url());
    const allow = page.locator('button[name="decision"][value="allow"]');
    assert(await allow.count(), `no consent page at ${page.url()}: ${(await page.content()).slice(0, 300)}`);
    assert((await page.content()).includes("Protected App"), "the consent page does not name the client");
    const [res] = await Promise.all([page.waitForNavigation({ timeout: 15000 }), allow.click()]);
    return res;
  };
  const shown = async (page) => {
    const text = await page.locator("#who").textContent({ timeout: 5000 }).catch(() => null);
    assert(text, () => `not the app's page: ${page.url()}`);
    return JSON.parse(text);
  };

  try {
    const a = await newContext(browser, { width: 1280, height: 800 });
    const pa = await a.newPage();
    const appUrl = `${proxy.origin}/hello?x=1&y=two%20words`;
    await t.check(`Chromium: the app → latchkey's sign-in page → password → consent → the app, which gets X-Forwarded-Email and X-Forwarded-Groups (${GROUP})`, async () => {
      const res = await through(pa, STAFF, appUrl);
      eq(pa.url(), appUrl, "landed on");
      eq(res?.status(), 200, "status");
      const who = await shown(pa);
      const h = who.headers;
      eq(who.url, "/hello?x=1&y=two%20words", "the app's URL");
      eq(h["x-forwarded-email"], STAFF.email, "X-Forwarded-Email");
      assert((h["x-forwarded-groups"] ?? "").split(",").map((s) => s.trim()).includes(GROUP), `X-Forwarded-Groups ${show(h["x-forwarded-groups"])}`);
      return `X-Forwarded-User ${h["x-forwarded-user"]}, X-Forwarded-Groups ${h["x-forwarded-groups"]}`;
    });
    await t.check("a second page on the app needs no sign-in (oauth2-proxy's cookie)", async () => {
      await pa.goto(`${proxy.origin}/second`);
      eq((await shown(pa)).headers["x-forwarded-email"], STAFF.email, "X-Forwarded-Email");
    });
    await t.check("signed out of both, back to the app: the sign-in form's POST leads straight on to the app (consent remembered; form-action allows the client)", async () => {
      await pa.goto(`${base}/signout`);
      await Promise.all([pa.waitForNavigation({ timeout: 15000 }), pa.getByRole("button", { name: /sign out/i }).click()]);
      await a.clearCookies({ name: "_oauth2_proxy" });
      await pa.goto(`${proxy.origin}/again`);
      eq(new URL(pa.url()).pathname, new URL(`${base}/signin`).pathname, "sent to sign in at");
      await pa.locator("#input-email-for-credentials-provider").fill(STAFF.email);
      await pa.locator("#input-password-for-credentials-provider").fill(STAFF.password);
      await Promise.all([pa.waitForURL(`${proxy.origin}/again`, { timeout: 15000 }), pa.locator("form", { has: pa.locator('input[type="password"]') }).locator("button").click()]);
      eq((await shown(pa)).headers["x-forwarded-email"], STAFF.email, "X-Forwarded-Email");
    });
    await t.check("no request left 127.0.0.1, no CSP violation on latchkey's pages", async () => {
      eq(a.blocked, [], "blocked requests");
      eq(a.csp, [], "CSP violations");
    });
    await a.close();

    const b = await newContext(browser, { width: 1280, height: 800 });
    const pb = await b.newPage();
    await t.check(`Chromium: a user not in ${GROUP} signs in and consents, and oauth2-proxy answers 403; the app is never reached`, async () => {
      const before = upstream.seen.length;
      const res = await through(pb, OUTSIDER, `${proxy.origin}/secret`);
      eq(res?.status(), 403, "status");
      eq(upstream.seen.slice(before).map((w) => w.url), [], "requests that reached the app");
      // Again: signed in at latchkey, consent remembered, no page shown — and refused again.
      const again = await pb.goto(`${proxy.origin}/secret`);
      eq(again.status(), 403, "status of a second try");
      eq(new URL(pb.url()).pathname, "/oauth2/callback", "the second try ends at");
      eq(upstream.seen.slice(before).map((w) => w.url), [], "requests that reached the app after a second try");
    });
    await b.close();
  } catch (e) {
    throw new Error(`${e.message}\n--- oauth2-proxy log ---\n${logTail(log, 20)}`);
  } finally {
    await browser.close();
    await stopChild(proc);
    await upstream.close();
  }
}
