// A real Next.js app (nextapp/: next build, next start; next-auth@4 client,
// no [...nextauth] route) whose /api/auth/* is rewritten to latchkey, driven
// by headless Chromium:
//  - jwt strategy: /protected while signed out → middleware (getToken) sends
//    the browser to latchkey's sign-in page through the rewrite → IdP →
//    /protected, where useSession shows the user → signOut() → /protected is
//    refused again; then signIn("idp") from the app's own page, and the
//    server-side getSession page (/account);
//  - database strategy: the same sign-in and sign-out with useSession and
//    /account; /protected stays refused, since getToken reads only JWTs
//    (next-auth's own limitation; docs/compatibility.md).
// One build serves both: latchkey (jwt, then database) runs on the port the
// build's rewrite names, one after the other.
//
// The app is opened as http://localhost:PORT: Next's middleware renames a
// loopback IP host to "localhost" in the redirects it returns, so an app
// opened as 127.0.0.1 would be sent to another cookie host.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium } from "./browser.test.mjs";
import { ALICE, startIdp } from "./idp.mjs";
import { latchkeyBinary, latchkeyConfig, startLatchkey } from "./latchkey.mjs";
import { buildNextApp, latchkeyPort, startNextApp } from "./nextapp.mjs";
import { assert, eq, show } from "./report.mjs";
import { freePorts } from "./util.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

/** The suite starts its own IdP, latchkey instances and Next.js server. */
export function plan() {
  return [];
}

export async function run(report, ctx) {
  const t = report.scope("nextjs ");
  if (ctx.target !== "latchkey") return;
  const [appPort, idpPort] = await freePorts(2);
  const lkPort = await latchkeyPort();
  const app = `http://localhost:${appPort}`;
  const lkOrigin = `http://127.0.0.1:${lkPort}`;
  const dir = path.join(ctx.tmp, "nextjs");
  fs.mkdirSync(dir, { recursive: true });

  const built = await t.check("next build (rewrite /api/auth/* to latchkey)", async () => {
    const { built, seconds } = await buildNextApp({ latchkeyOrigin: lkOrigin, log: path.join(dir, "next-build.log") });
    return built ? `built in ${seconds.toFixed(1)} s` : "the last build fits: sources and latchkey origin unchanged";
  });
  if (!built) return;

  const idp = await startIdp({
    port: idpPort,
    clients: [{ client_id: ctx.clientId, client_secret: ctx.clientSecret, redirect_uris: [`${app}/api/auth/callback/idp`] }],
  });
  let next;
  let browser;
  try {
    const bin = latchkeyBinary();
    const startLk = (strategy) =>
      startLatchkey({
        bin, port: lkPort, secret: ctx.secret, dir: path.join(dir, `latchkey-${strategy}`), name: `nextjs latchkey ${strategy}`,
        serviceUrl: `${app}/api/auth`,
        config: latchkeyConfig({ issuer: idp.issuer, clientId: ctx.clientId, clientSecret: ctx.clientSecret, smtpUrl: ctx.smtp.url, from: "Sign in <no-reply@example.com>", strategy })
          + "trusted_proxies: [127.0.0.1/32]\n",
      });
    let lk = await startLk("jwt");
    next = await startNextApp({
      port: appPort,
      log: path.join(dir, "next-start.log"),
      env: { NEXTAUTH_URL: `${app}/api/auth`, NEXTAUTH_SECRET: ctx.secret, NEXTAUTH_URL_INTERNAL: `${lkOrigin}/api/auth` },
    });
    browser = await launchChromium();
    const env = { app, lkOrigin, idp, browser, next };
    try {
      await jwtFlow(t.scope("[jwt] "), ctx, env);
    } finally {
      await lk.stop();
    }
    lk = await startLk("database");
    try {
      await databaseFlow(t.scope("[database] "), ctx, env);
    } finally {
      await lk.stop();
    }
  } catch (e) {
    report.fail("nextjs suite", `${e.stack || e}${next ? `\n--- next start ---\n${next.logTail(20)}` : ""}`);
  } finally {
    await browser?.close();
    await next?.stop();
    await idp.close();
  }
}

/**
 * A browser context that lets requests reach only the app and the IdP: a
 * request straight to latchkey's own port, or to any other host, is aborted
 * and recorded.
 */
async function appContext({ browser, app, idp }) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, deviceScaleFactor: 1, locale: "en-US" });
  context.blocked = [];
  const allowed = new Set([new URL(app).origin, new URL(idp.issuer).origin]);
  await context.route("**/*", (route) => {
    const u = new URL(route.request().url());
    if (!allowed.has(u.origin)) {
      context.blocked.push(u.href);
      return route.abort("blockedbyclient");
    }
    return route.continue();
  });
  return context;
}

/** The e-mail useSession shows on the page, once it has loaded. */
async function shownEmail(page) {
  const status = page.getByTestId("status");
  await status.filter({ hasNotText: "Loading" }).waitFor({ timeout: 15000 });
  const email = page.getByTestId("email");
  return (await email.count()) ? email.textContent() : `(none: ${await status.textContent()})`;
}

/** Open url and assert the browser ends on latchkey's sign-in page, served through the app's origin. */
async function expectSignInPage(page, url, app, callbackUrl) {
  await page.goto(url);
  const at = new URL(page.url());
  eq(at.origin + at.pathname, `${app}/api/auth/signin`, "landed on");
  eq(at.searchParams.get("callbackUrl"), callbackUrl, "callbackUrl");
  eq(await page.title(), "Sign In", "title");
  return `at ${page.url()}`;
}

async function sessionCookie(context, app) {
  return (await context.cookies(app)).find((c) => c.name === "next-auth.session-token");
}

async function signInFromApp(t, page, app) {
  await t.check('signIn("idp") from the app\'s page goes through the IdP and back; useSession shows the user', async () => {
    await page.goto(`${app}/`);
    eq(await shownEmail(page), `(none: Not signed in.)`, "before sign-in");
    const callback = page.waitForResponse((r) => r.url().startsWith(`${app}/api/auth/callback/idp`), { timeout: 15000 });
    await page.getByRole("button", { name: "Sign in with Company SSO" }).click();
    eq((await callback).status(), 302, "the IdP callback's status");
    await page.waitForURL(`${app}/`, { timeout: 15000 });
    await page.waitForLoadState("load");
    eq(await shownEmail(page), ALICE.email, "useSession's e-mail");
  });
}

async function signOutFromApp(t, page, app, from) {
  await t.check(`signOut() from ${from} signs out; useSession shows nobody`, async () => {
    await page.goto(`${app}${from}`);
    eq(await shownEmail(page), ALICE.email, "signed in before");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${app}/`, { timeout: 15000 });
    eq(await shownEmail(page), "(none: Not signed in.)", "after signOut()");
    eq(await sessionCookie(page.context(), app), undefined, "session cookie after signOut()");
  });
}

async function jwtFlow(t, ctx, { app, browser, idp, next }) {
  const context = await appContext({ browser, app, idp });
  const page = await context.newPage();
  await t.check("signed out, /protected is sent by the middleware (getToken) to latchkey's sign-in page through the rewrite", () =>
    expectSignInPage(page, `${app}/protected`, app, "/protected"));
  await t.check("signing in there through the IdP lands on /protected; useSession shows the user", async () => {
    await page.getByRole("button", { name: /Company SSO/ }).click();
    await page.waitForURL(`${app}/protected`, { timeout: 15000 });
    eq(await shownEmail(page), ALICE.email, "useSession's e-mail");
  });
  await t.check("latchkey's session cookie came through the rewrite, host-only to the app's host, and getToken's decode reads it", async () => {
    const c = await sessionCookie(context, app);
    const names = (await context.cookies()).map((x) => `${x.name}@${x.domain}`);
    assert(c, () => `no next-auth.session-token for ${app}: ${show(names)}`);
    eq([c.domain, c.path, c.httpOnly, c.sameSite], ["localhost", "/", true, "Lax"], "cookie domain (host-only), path, httpOnly, sameSite");
    const { decode } = await import("next-auth/jwt");
    eq((await decode({ token: c.value, secret: ctx.secret }))?.email, ALICE.email, "decoded email");
  });
  await t.check("the middleware lets the signed-in browser through to /protected", async () => {
    const res = await page.goto(`${app}/protected`);
    eq([res.status(), page.url()], [200, `${app}/protected`], "status and URL");
    eq(await page.getByRole("heading").first().textContent(), "Protected page", "heading");
    eq(await shownEmail(page), ALICE.email, "useSession's e-mail");
    if (process.env.COMPAT_SCREENSHOTS) {
      const dirShots = path.resolve(here, process.env.COMPAT_SCREENSHOTS);
      fs.mkdirSync(dirShots, { recursive: true });
      await page.screenshot({ path: path.join(dirShots, "nextjs-protected.png") });
      return path.relative(path.resolve(here, "../.."), path.join(dirShots, "nextjs-protected.png"));
    }
  });
  await signOutFromApp(t, page, app, "/protected");
  await t.check("signed out again, /protected is refused (sent to sign-in)", () => expectSignInPage(page, `${app}/protected`, app, "/protected"));
  await signInFromApp(t, page, app);
  await t.check("the middleware lets the browser through to /protected after signIn(\"idp\")", async () => {
    const res = await page.goto(`${app}/protected`);
    eq([res.status(), page.url()], [200, `${app}/protected`], "status and URL");
  });
  await accountPage(t, page, app, next);
  await t.check("no request went anywhere but the app's origin and the IdP (none straight to latchkey)", async () => {
    eq(context.blocked, [], "blocked requests");
  });
  await context.close();
}

async function accountPage(t, page, app, next) {
  await t.check("/account (server-side getSession through latchkey) shows the user", async () => {
    const res = await page.goto(`${app}/account`);
    assert(res.status() === 200 && page.url() === `${app}/account`, () => `HTTP ${res.status()} at ${page.url()}\n--- next start ---\n${next.logTail(10)}`);
    eq(await page.getByTestId("server-email").textContent(), ALICE.email, "server-rendered e-mail");
  });
}

async function databaseFlow(t, ctx, { app, browser, idp, next }) {
  const context = await appContext({ browser, app, idp });
  const page = await context.newPage();
  await t.check("signed out, /account (server-side getSession) is sent to latchkey's sign-in page", () =>
    expectSignInPage(page, `${app}/account`, app, "/account"));
  await signInFromApp(t, page, app);
  await t.check("the session cookie is a database session token (not a JWT), host-only to the app's host", async () => {
    const c = await sessionCookie(context, app);
    assert(c, "no next-auth.session-token");
    eq(c.domain, "localhost", "cookie domain (host-only)");
    assert(c.value.split(".").length !== 5, `the cookie looks like a JWE: ${c.value.slice(0, 20)}…`);
  });
  await accountPage(t, page, app, next);
  await t.check("/protected stays refused: getToken cannot read a database session (next-auth's limitation, documented)", () =>
    expectSignInPage(page, `${app}/protected`, app, "/protected"));
  await signOutFromApp(t, page, app, "/account");
  await t.check("signed out again, /account is refused (sent to sign-in)", () => expectSignInPage(page, `${app}/account`, app, "/account"));
  await t.check("no request went anywhere but the app's origin and the IdP (none straight to latchkey)", async () => {
    eq(context.blocked, [], "blocked requests");
  });
  await context.close();
}
