// Browser end-to-end in headless Chromium (Debian's /usr/bin/chromium driven
// by playwright-core; no browser is ever downloaded):
//  - OIDC: /signin → click the IdP button → the IdP signs in → callbackUrl →
//    /session shows the user → /signout page → confirm → /session is empty;
//  - e-mail: /signin → e-mail form → verify-request page → link → signed in;
//  - screenshots of the sign-in, sign-out, error and verify-request pages at
//    390 px (phone) and 1280 px (desktop) (`npm run screenshots` writes them
//    to docs/screenshots/);
//  - a themed sign-in page (config.yaml theme: brand colour, logo) on its own
//    instance, screenshot signin-themed;
//  - the sign-in page in Japanese and Arabic (right to left) by ?lang=, and in
//    German from the browser's locale, screenshots signin-ja, signin-ar; in
//    dark mode with an error message, screenshot signin-dark;
//  - every request a latchkey page makes is recorded: none may leave its origin;
//  - latchkey's pages send a Content-Security-Policy, no page reports a
//    violation of it (its form-action lets the IdP button's redirect through),
//    and a page on another origin cannot frame the sign-in page.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { signInLink } from "./smtp.mjs";
import { ALICE } from "./idp.mjs";
import { assert, eq, show } from "./report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
// Screenshots go to the run's temporary directory unless COMPAT_SCREENSHOTS names
// a folder: `npm run screenshots` refreshes the committed ones in docs/screenshots/
// (a normal test run leaves the work tree untouched).
const shotsDir = (ctx) => (process.env.COMPAT_SCREENSHOTS ? path.resolve(here, process.env.COMPAT_SCREENSHOTS) : path.join(ctx.tmp, "screenshots"));
let SHOTS;

// Flags that keep Chromium from calling out to Google services on a closed network.
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

// THEME is next-auth's theme option as config.yaml writes it; the logo is the
// example one latchkey serves (static/logo.svg).
const THEME = { color_scheme: "light", brand_color: "#0a7f5a", logo: "/api/auth/static/logo.svg", button_text: "#ffffff" };

export function plan(target) {
  const specs = [{ id: "browser", kind: target, strategy: "database", basePath: "/api/auth", cookieStyle: "next-auth" }];
  if (target === "latchkey") specs.push({ id: "browser-theme", kind: "latchkey", strategy: "database", basePath: "/api/auth", cookieStyle: "next-auth", theme: THEME });
  return specs;
}

/** Launch Chromium with a fresh profile directory (playwright creates and removes it). */
export async function launchChromium() {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run test/compat/install.sh (apt-get install chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, chromiumSandbox: false, timeout: 60000 });
}

/**
 * A browser context that records every request and blocks any host but
 * 127.0.0.1. It also records Content-Security-Policy violations, from the
 * console ("Refused to ...") and from securitypolicyviolation events, in
 * context.csp; every page sets window.__cspWatch so a check can tell the
 * listener ran (init scripts come through the DevTools protocol, which the
 * pages' own CSP does not block).
 */
export async function newContext(browser, viewport) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, locale: "en-US" });
  context.requests = [];
  context.blocked = [];
  context.csp = [];
  context.on("request", (r) => context.requests.push({ url: r.url(), type: r.resourceType(), nav: r.isNavigationRequest() }));
  context.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) context.csp.push(`console on ${m.page()?.url()}: ${m.text()}`);
  });
  await context.exposeBinding("__cspViolation", (_src, v) => context.csp.push(`event: ${v}`));
  await context.addInitScript(() => {
    window.__cspWatch = true;
    document.addEventListener("securitypolicyviolation", (e) =>
      window.__cspViolation(`${e.violatedDirective} blocked ${e.blockedURI} on ${e.documentURI}`),
    );
  });
  await context.route("**/*", (route) => {
    const u = new URL(route.request().url());
    if (u.hostname !== "127.0.0.1" && u.protocol !== "data:") {
      context.blocked.push(u.href);
      return route.abort("blockedbyclient");
    }
    return route.continue();
  });
  return context;
}

/** Open a latchkey page and assert it loads nothing from another origin. Returns the response. */
export async function openPage(page, url, origin) {
  const context = page.context();
  const from = context.requests.length;
  const res = await page.goto(url, { waitUntil: "networkidle" });
  const made = context.requests.slice(from).filter((r) => !(r.nav && r.url === url));
  const foreign = made.filter((r) => new URL(r.url).origin !== origin);
  assert(!foreign.length, () => `the page requested other hosts: ${foreign.map((r) => `${r.type} ${r.url}`).join(", ")}`);
  return { res, resources: made.length };
}

async function shot(page, name) {
  fs.mkdirSync(SHOTS, { recursive: true });
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file.startsWith(path.resolve(here, "../..")) ? path.relative(path.resolve(here, "../.."), file) : file;
}

async function noHorizontalScroll(page, width) {
  const sw = await page.evaluate(() => document.documentElement.scrollWidth);
  assert(sw <= width, `the page is ${sw}px wide at a ${width}px viewport (horizontal scrolling)`);
}

async function sessionIn(page, base) {
  const res = await page.goto(`${base}/session`);
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return `<not JSON: ${text.slice(0, 100)}>`;
  }
}

/** The directives of a Content-Security-Policy header: {name: [sources]}. */
function cspDirectives(header) {
  const out = {};
  for (const d of (header ?? "").split(";")) {
    const [name, ...sources] = d.trim().split(/\s+/);
    if (name) out[name] = sources;
  }
  return out;
}

/** A page on another origin (another port of 127.0.0.1) that frames url. */
async function framingSite(url) {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(`<!doctype html><title>framer</title><iframe id="victim" src="${url}" width="600" height="400"></iframe>`);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((resolve) => server.close(resolve)) };
}

export async function run(report, ctx) {
  const t = report.scope("browser ");
  SHOTS = shotsDir(ctx);
  const server = await ctx.server("browser");
  if (!server) return;
  const { base, origin } = server;

  let browser;
  const ok = await t.check("Chromium starts headless (playwright-core, system chromium)", async () => {
    browser = await launchChromium();
    return `Chromium ${browser.version()}`;
  });
  if (!ok) return;

  try {
    const desktop = await newContext(browser, { width: 1280, height: 800 });
    const page = await desktop.newPage();
    const dashboard = `${origin}/dashboard`;

    // ---- OIDC round trip -------------------------------------------------
    await t.check("sign-in page loads with only same-origin resources", async () => {
      const { res, resources } = await openPage(page, `${base}/signin?callbackUrl=${encodeURIComponent(dashboard)}`, origin);
      eq(res.status(), 200, "status");
      eq(await page.title(), "Sign In", "title");
      if (ctx.target === "latchkey") {
        const csp = cspDirectives(res.headers()["content-security-policy"]);
        eq(csp["frame-ancestors"], ["'none'"], "CSP frame-ancestors");
        eq(csp["default-src"], ["'none'"], "CSP default-src");
        assert(csp["form-action"]?.includes(new URL(ctx.idp.issuer).origin), `CSP form-action ${show(csp["form-action"])} lacks the IdP`);
        eq(res.headers()["x-frame-options"], "DENY", "X-Frame-Options");
        eq(await page.evaluate(() => window.__cspWatch === true), true, "the violation listener runs on the page");
        eq(desktop.csp, [], "CSP violations");
      }
      return `${resources} sub-resources; ${await shot(page, "signin-desktop")}`;
    });
    await t.check("clicking the IdP button signs in through the IdP and lands on callbackUrl", async () => {
      const button = page.getByRole("button", { name: /Company SSO/ });
      await button.click();
      await page.waitForURL(dashboard, { timeout: 15000 });
      return `at ${page.url()}`;
    });
    await t.check("/session shows the user after the OIDC sign-in", async () => {
      const s = await sessionIn(page, base);
      eq([s?.user?.email, s?.user?.name], [ALICE.email, ALICE.name], "session user");
    });
    await t.check("sign-out page loads with only same-origin resources", async () => {
      const { res } = await openPage(page, `${base}/signout`, origin);
      eq(res.status(), 200, "status");
      return await shot(page, "signout-desktop");
    });
    await t.check("confirming on the sign-out page signs out", async () => {
      await Promise.all([page.waitForNavigation({ timeout: 15000 }), page.getByRole("button", { name: /sign out/i }).click()]);
      const landed = page.url();
      const s = await sessionIn(page, base);
      assert(s && typeof s === "object" && Object.keys(s).length === 0, `session after sign-out: ${show(s)}`);
      return `landed on ${landed}`;
    });

    // ---- e-mail round trip ---------------------------------------------
    let link;
    await t.check("the e-mail form leads to the verify-request page", async () => {
      await openPage(page, `${base}/signin?callbackUrl=${encodeURIComponent(`${origin}/inbox`)}`, origin);
      const since = Date.now();
      await page.locator('input[type="email"]').fill(ALICE.email);
      await Promise.all([
        page.waitForNavigation({ timeout: 15000 }),
        page.locator("form", { has: page.locator('input[type="email"]') }).locator('button, input[type="submit"]').first().click(),
      ]);
      const u = new URL(page.url());
      eq(u.origin + u.pathname, `${base}/verify-request`, "landed on");
      const msg = await ctx.smtp.waitForMail(ALICE.email, { since });
      link = signInLink(msg);
      assert(link, "no link in the e-mail");
    });
    await t.check("verify-request page loads with only same-origin resources", async () => {
      const { res } = await openPage(page, `${base}/verify-request?provider=email&type=email`, origin);
      eq(res.status(), 200, "status");
      return await shot(page, "verify-request-desktop");
    });
    await t.check("the e-mail link signs the browser in", async () => {
      assert(link, "no link");
      await page.goto(link);
      const landed = page.url();
      assert(!landed.includes("/error"), `landed on ${landed}`);
      const s = await sessionIn(page, base);
      eq(s?.user?.email, ALICE.email, "session.user.email");
      return `landed on ${landed}`;
    });

    // ---- error page ------------------------------------------------------
    await t.check("error page (Verification) loads with only same-origin resources", async () => {
      const { res } = await openPage(page, `${base}/error?error=Verification`, origin);
      eq(res.status(), 403, "status");
      return await shot(page, "error-desktop");
    });
    await t.check("no request left 127.0.0.1 during the desktop run", async () => {
      eq(desktop.blocked, [], "blocked requests");
      return `${desktop.requests.length} requests recorded`;
    });
    if (ctx.target === "latchkey") {
      await t.check("no page reported a Content-Security-Policy violation (IdP sign-in, e-mail, sign-out)", async () => {
        eq(desktop.csp, [], "CSP violations");
      });
      await t.check("a page on another origin cannot frame the sign-in page", async () => {
        const signin = `${base}/signin`;
        const site = await framingSite(signin);
        try {
          const framed = page.waitForResponse((r) => r.url() === signin, { timeout: 15000 });
          await page.goto(site.url, { waitUntil: "load" });
          const res = await framed;
          assert(cspDirectives(res.headers()["content-security-policy"])["frame-ancestors"]?.includes("'none'"), "the framed answer has no frame-ancestors 'none'");
          const frame = page.frames().find((f) => f !== page.mainFrame());
          assert(frame, "no child frame");
          const forms = await frame.locator("form").count().catch(() => 0);
          eq(forms, 0, "forms rendered inside the frame");
          // The one violation this check provokes, and no other.
          const reported = desktop.csp.splice(0);
          assert(reported.some((v) => /frame-ancestors/.test(v)), `no frame-ancestors violation reported: ${show(reported)}`);
          return `frame at ${frame.url()}`;
        } finally {
          await site.close();
        }
      });
      await t.check("a page on another origin cannot frame a JSON answer (GET /session: X-Frame-Options, no CSP)", async () => {
        const session = `${base}/session`;
        const site = await framingSite(session);
        try {
          const framed = page.waitForResponse((r) => r.url() === session, { timeout: 15000 });
          await page.goto(site.url, { waitUntil: "load" });
          const res = await framed;
          eq(res.headers()["x-frame-options"], "DENY", "X-Frame-Options");
          eq(res.headers()["content-security-policy"], undefined, "a JSON answer's CSP");
          assert(/^application\/json/.test(res.headers()["content-type"] ?? ""), `content-type ${res.headers()["content-type"]}`);
          const frame = page.frames().find((f) => f !== page.mainFrame());
          assert(frame, "no child frame");
          // Chromium replaces a refused frame with its error page: the
          // answer's JSON is never rendered in it.
          const text = await frame.evaluate(() => document.body?.innerText ?? "").catch(() => "");
          assert(!text.includes("expires") && !text.startsWith("{"), `the JSON was rendered in the frame: ${show(text.slice(0, 80))}`);
          // The one report this check provokes, Chromium's refusal, and no other.
          const reported = desktop.csp.splice(0);
          assert(reported.length === 1 && /X-Frame-Options.*deny/i.test(reported[0]), `reports: ${show(reported)}`);
          return `frame at ${frame.url()}`;
        } finally {
          await site.close();
        }
      });
    }
    await desktop.close();

    // ---- phone-width screenshots -----------------------------------------
    const phone = await newContext(browser, { width: 390, height: 844 });
    const p2 = await phone.newPage();
    for (const [name, url, status] of [
      ["signin", `${base}/signin`, 200],
      ["signout", `${base}/signout`, 200],
      ["verify-request", `${base}/verify-request?provider=email&type=email`, 200],
      ["error", `${base}/error?error=Verification`, 403],
    ]) {
      await t.check(`${name} page at 390px: same-origin only, no horizontal scrolling`, async () => {
        const { res } = await openPage(p2, url, origin);
        eq(res.status(), status, "status");
        await noHorizontalScroll(p2, 390);
        return await shot(p2, `${name}-phone`);
      });
    }
    await t.check("no request left 127.0.0.1 during the phone run", async () => {
      eq(phone.blocked, [], "blocked requests");
    });
    await phone.close();

    // ---- a themed sign-in page (config.yaml theme) --------------------------
    if (ctx.target === "latchkey") await themedSignIn(t, ctx, browser);
    // ---- the pages in other languages (?lang=, Accept-Language) -------------
    if (ctx.target === "latchkey") await languages(t, base, origin, browser);
  } finally {
    await browser.close();
  }
}

/**
 * The sign-in page in Japanese and Arabic (?lang=), and in German from the
 * browser's own language (Accept-Language): <html lang dir>, translated
 * texts, a right-to-left layout for Arabic, same-origin only, no CSP
 * violation; screenshots signin-ja, signin-ar.
 */
async function languages(t, base, origin, browser) {
  const context = await newContext(browser, { width: 1280, height: 800 });
  const page = await context.newPage();
  const look = () =>
    page.evaluate(() => {
      const h1 = document.querySelector("h1");
      // The label's text, not its box (a block as wide as the input).
      const range = document.createRange();
      range.selectNodeContents(document.querySelector("label"));
      const label = range.getBoundingClientRect();
      const input = document.querySelector('input[type="email"]').getBoundingClientRect();
      return {
        lang: document.documentElement.lang,
        dir: document.documentElement.dir,
        direction: getComputedStyle(h1).direction,
        heading: h1.textContent.trim(),
        title: document.title,
        // A label starts at its input's start edge: the left one in LTR, the right one in RTL.
        labelAtRight: Math.abs(label.right - input.right) < 2 && label.left > input.left + 2,
        hiddenLang: document.querySelector('form input[name="lang"]')?.value ?? null,
      };
    });
  for (const [tag, dir, heading] of [
    ["ja", "ltr", "サインイン"],
    ["ar", "rtl", "تسجيل الدخول"],
  ]) {
    await t.check(`sign-in page in ${tag} (?lang=${tag}): <html lang dir>, translated, ${dir} layout`, async () => {
      const { res } = await openPage(page, `${base}/signin?lang=${tag}`, origin);
      eq(res.status(), 200, "status");
      const got = await look();
      eq([got.lang, got.dir, got.direction, got.hiddenLang], [tag, dir, dir, tag], "lang, dir, computed direction, the form's lang");
      eq(got.heading, heading, "heading");
      assert(got.title !== "Sign In", `title still English: ${got.title}`);
      eq(got.labelAtRight, dir === "rtl", "labels at the start edge of their inputs");
      await noHorizontalScroll(page, 1280);
      eq(context.csp, [], "CSP violations");
      return await shot(page, `signin-${tag}`);
    });
  }
  await t.check("sign-in page in dark mode (prefers-color-scheme: dark) with an error message", async () => {
    await page.setViewportSize({ width: 800, height: 600 });
    await page.emulateMedia({ colorScheme: "dark" });
    const { res } = await openPage(page, `${base}/signin?error=OAuthSignin`, origin);
    eq(res.status(), 200, "status");
    const look = await page.evaluate(() => ({
      background: getComputedStyle(document.body).backgroundColor,
      alert: document.querySelector('[role="alert"]')?.textContent.trim(),
    }));
    assert(look.background !== "rgb(244, 245, 247)", `the light background in dark mode: ${look.background}`);
    eq(look.alert, "Try signing in with a different account.", "the error message, announced");
    eq(context.csp, [], "CSP violations");
    return await shot(page, "signin-dark");
  });
  await context.close();
  const german = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "de-DE" });
  await t.check("the browser's own language (Chromium locale de-DE → Accept-Language) picks German", async () => {
    const p = await german.newPage();
    await p.goto(`${base}/signin`);
    const got = await p.evaluate(() => [document.documentElement.lang, document.querySelector("h1").textContent.trim()]);
    eq(got, ["de", "Anmelden"], "lang and heading");
  });
  await german.close();
}

/** The sign-in page of an instance with a theme: brand-coloured buttons, the logo, no CSP violation. */
async function themedSignIn(t, ctx, browser) {
  const server = await ctx.server("browser-theme");
  if (!server) return;
  const themed = await newContext(browser, { width: 1280, height: 800 });
  const page = await themed.newPage();
  await t.check("themed sign-in page: brand colour on the buttons, the logo shown, no CSP violation", async () => {
    const { res } = await openPage(page, `${server.base}/signin`, server.origin);
    eq(res.status(), 200, "status");
    const look = await page.evaluate(() => {
      const button = getComputedStyle(document.querySelector("button"));
      const logo = document.querySelector("img.logo");
      return { background: button.backgroundColor, color: button.color, logo: logo?.complete && logo.naturalWidth > 0 };
    });
    eq(look, { background: "rgb(10, 127, 90)", color: "rgb(255, 255, 255)", logo: true }, "button colours and logo");
    eq(themed.csp, [], "CSP violations");
    return await shot(page, "signin-themed");
  });
  await themed.close();
}
