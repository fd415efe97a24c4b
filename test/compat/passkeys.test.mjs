// Passkeys end to end in headless Chromium with a virtual authenticator
// (Chrome DevTools Protocol WebAuthn.addVirtualAuthenticator: CTAP2, internal
// transport, resident keys, user verification):
//  - sign in by e-mail, add a passkey on {base}/passkeys (latchkey's own
//    script, no third-party request, no CSP violation);
//  - sign out, sign back in through the e-mail field's passkey autofill
//    (conditional UI), sign out, sign in with "Sign in with a passkey";
//  - the real next-auth client's getSession() (from Node, with the browser's
//    cookies) sees the user;
//  - screenshots of the passkeys page and the sign-in page with the passkey
//    button (`npm run screenshots` writes them to docs/screenshots/).
// WebAuthn needs a secure context and an RP id that is a domain name, so
// latchkey's SERVICE_URL is http://localhost:PORT/api/auth here.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { latchkeyBinary, startLatchkey } from "./latchkey.mjs";
import { launchChromium } from "./browser.test.mjs";
import { signInLink } from "./smtp.mjs";
import { CookieJar } from "./jar.mjs";
import { NodeClient } from "./nodeclient.mjs";
import { assert, eq, show } from "./report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const ADDRESS = "passkey.user@example.com";

export function plan(target) {
  return target === "latchkey" ? [{ id: "passkeys", kind: "own", host: "localhost" }] : [];
}

/** A context that records requests and CSP violations and blocks every host but localhost. */
async function newContext(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, locale: "en-US" });
  context.blocked = [];
  context.csp = [];
  context.scripts = [];
  context.on("request", (r) => {
    if (r.resourceType() === "script") context.scripts.push(r.url());
  });
  context.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) context.csp.push(`console on ${m.page()?.url()}: ${m.text()}`);
  });
  await context.exposeBinding("__cspViolation", (_src, v) => context.csp.push(`event: ${v}`));
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => window.__cspViolation(`${e.violatedDirective} blocked ${e.blockedURI} on ${e.documentURI}`));
  });
  await context.route("**/*", (route) => {
    const u = new URL(route.request().url());
    if (u.hostname !== "localhost") {
      context.blocked.push(u.href);
      return route.abort("blockedbyclient");
    }
    return route.continue();
  });
  return context;
}

async function shot(ctx, page, name) {
  const dir = process.env.COMPAT_SCREENSHOTS ? path.resolve(here, process.env.COMPAT_SCREENSHOTS) : path.join(ctx.tmp, "screenshots");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return path.relative(path.resolve(here, "../.."), file);
}

/** GET {base}/session in page: the parsed JSON, or null. */
export async function sessionIn(page, base) {
  const res = await page.goto(`${base}/session`);
  try {
    return JSON.parse(await res.text());
  } catch {
    return null;
  }
}

export async function run(report, ctx) {
  const t = report.scope("passkeys ");
  const spec = ctx.specs.find((s) => s.id === "passkeys");
  if (!spec) return;
  const base = `http://localhost:${spec.port}/api/auth`;
  const origin = `http://localhost:${spec.port}`;
  let latchkey;
  const started = await t.check("latchkey starts with a passkey provider on http://localhost", async () => {
    const config = `providers:
  - id: email
    type: email
    server: ${JSON.stringify(ctx.smtp.url)}
    from: "Sign in <no-reply@example.com>"
  - id: passkey
    type: webauthn
    name: Passkey
session:
  strategy: jwt
`;
    latchkey = await startLatchkey({ bin: latchkeyBinary(), port: spec.port, secret: ctx.secret, config, dir: path.join(ctx.tmp, "passkeys"), name: "passkeys", serviceUrl: base });
    const providers = await (await fetch(`${latchkey.base}/providers`)).json();
    eq(providers.passkey?.type, "webauthn", "GET /providers passkey.type");
  });
  if (!started) return;

  let browser;
  try {
    browser = await launchChromium();
    const context = await newContext(browser);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await t.check("a virtual authenticator is attached (CDP WebAuthn, ctap2, internal, resident key, UV)", async () => {
      await cdp.send("WebAuthn.enable");
      const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
        options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
      });
      page.authenticatorId = authenticatorId;
    });

    await t.check("sign in by e-mail", async () => {
      await page.goto(`${base}/signin`);
      const since = Date.now();
      await page.locator('input[type="email"]').fill(ADDRESS);
      await Promise.all([page.waitForURL(/verify-request/, { timeout: 15000 }), page.locator("#submitButton").click()]);
      const link = signInLink(await ctx.smtp.waitForMail(ADDRESS, { since }));
      assert(link, "no link in the e-mail");
      await page.goto(link);
      eq((await sessionIn(page, base))?.user?.email, ADDRESS, "session user");
    });

    await t.check("the passkeys page adds a passkey through the authenticator", async () => {
      await page.goto(`${base}/passkeys`);
      eq(await page.title(), "Passkeys", "title");
      await page.locator("#passkey-name").fill("Laptop");
      await Promise.all([page.waitForURL(/\/passkeys\?added=1$/, { timeout: 15000 }), page.locator("#passkey-add").click()]);
      const names = await page.locator('.passkey-item input[name="name"]').evaluateAll((els) => els.map((e) => e.value));
      eq(names, ["Laptop"], "listed passkeys");
      const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId: page.authenticatorId });
      eq(credentials.length, 1, "credentials in the authenticator");
      eq(credentials[0].isResidentCredential, true, "resident (discoverable) credential");
      return await shot(ctx, page, "passkeys-desktop");
    });

    const dashboard = `${origin}/dashboard`;
    const signOut = async () => {
      await page.goto(`${base}/signout`);
      await Promise.all([page.waitForNavigation({ timeout: 15000 }), page.getByRole("button", { name: /sign out/i }).click()]);
      const s = await sessionIn(page, base);
      assert(s && Object.keys(s).length === 0, `session after sign-out: ${show(s)}`);
    };
    await t.check("sign out through the sign-out page", signOut);
    await t.check("passkey autofill (conditional UI) on the sign-in page signs back in", async () => {
      // The virtual authenticator answers the page's conditional request
      // at once, as a user picking the passkey in the e-mail field would.
      await page.goto(`${base}/signin?callbackUrl=${encodeURIComponent(dashboard)}`);
      await page.waitForURL(dashboard, { timeout: 15000 });
      eq((await sessionIn(page, base))?.user?.email, ADDRESS, "session user");
      await signOut();
    });
    await t.check('"Sign in with a passkey" signs back in (a browser without autofill for passkeys)', async () => {
      await page.addInitScript(() => {
        if (window.PublicKeyCredential) PublicKeyCredential.isConditionalMediationAvailable = async () => false;
      });
      await page.goto(`${base}/signin?callbackUrl=${encodeURIComponent(dashboard)}`);
      const button = page.getByRole("button", { name: /Sign in with a passkey/ });
      await button.waitFor({ state: "visible", timeout: 10000 });
      const file = await shot(ctx, page, "signin-passkey-desktop");
      await Promise.all([page.waitForURL(dashboard, { timeout: 15000 }), button.click()]);
      eq((await sessionIn(page, base))?.user?.email, ADDRESS, "session user");
      return file;
    });

    await t.check("the real next-auth client's getSession() sees the user", async () => {
      const jar = new CookieJar();
      for (const c of await context.cookies(origin)) jar.store(`${origin}${c.path}`, [`${c.name}=${c.value}; Path=${c.path}`]);
      const client = new NodeClient({ base, origin }, jar);
      const s = await client.run((na) => na.getSession());
      eq(s?.user?.email, ADDRESS, `getSession().user.email (${client.lastErrors()})`);
    });

    await t.check("the passkeys page at 390px: no horizontal scrolling", async () => {
      const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, locale: "en-US" });
      try {
        await phone.addCookies(await context.cookies(origin));
        const p2 = await phone.newPage();
        await p2.goto(`${base}/passkeys`);
        eq(await p2.title(), "Passkeys", "title");
        const sw = await p2.evaluate(() => document.documentElement.scrollWidth);
        assert(sw <= 390, `the page is ${sw}px wide at a 390px viewport`);
        return await shot(ctx, p2, "passkeys-phone");
      } finally {
        await phone.close();
      }
    });

    await t.check("only latchkey's own script ran, nothing left localhost, no CSP violation", async () => {
      eq([...new Set(context.scripts)], [`${base}/static/passkeys.js`], "scripts loaded");
      eq(context.blocked, [], "blocked requests");
      eq(context.csp, [], "CSP violations");
    });
    await context.close();
  } finally {
    await browser?.close();
    await latchkey?.stop();
  }
}
