// Accessibility of latchkey's built-in pages (WCAG 2.1 AA), in headless
// Chromium (Debian's /usr/bin/chromium driven by playwright-core):
//  - axe-core (npm axe-core, injected into the page) on every built-in page,
//    in every language of A11Y_LANGS in light, and in dark in the first
//    language (prefers-color-scheme emulated; the default theme links
//    static/dark.css for it, which changes colours only, the same in
//    every language) (?lang=xx on the GET pages, and the browser's Accept-Language), each
//    page checked to say so (<html lang>, and dir="rtl" for Arabic);
//    any violation of the wcag2a/wcag2aa/wcag21a/wcag21aa rules fails the
//    page's check, listing rule, impact, elements and help;
//  - every visible input has a <label for>, whose text starts at the
//    input's start edge (right-to-left too);
//  - reflow: at 320 CSS px (a 640 px window at 200% zoom) no page scrolls
//    sideways (in light: dark.css changes no layout), also with WCAG
//    1.4.12's text spacing,
//    with long e-mail addresses on the pages;
//  - keyboard only: the e-mail sign-in (Tab, typing, Enter; then the mailed
//    link) and the sign-out (Tab, Enter), with the focused element checked
//    at every step;
//  - visible focus: every element Tab reaches on the sign-in page shows an
//    outline (3:1 against the card) or a box-shadow, in light, dark and
//    forced colours;
//  - the checks can fail: planted faults are found.
// The password user also reaches the account page ({base}/account: plain,
// with a notice, with an error) and the e-mail change link's page.
// One latchkey instance (jwt sessions) has every kind of provider: OIDC (the
// suite's IdP), e-mail, credentials with sign-up, passkeys, and two-factor
// (mode optional: users without it sign in with one factor, so the other
// pages are reached as before). The two-factor pages (setup, recovery
// codes, settings, step-up, second step, its refusal) are reached by a user
// of their own, who enrols with oathtool's code for the key on the page.
// The OpenID Provider is on too, with one client (not first-party, so the
// consent page shows): its consent page and its logout confirm page are
// reached by a user of their own per language (a fresh one, as a consent
// is remembered), signed in with a password; the client's redirect URIs are
// answered by a small HTTP server on 127.0.0.1. WebAuthn needs a
// domain name, so it is served as http://localhost:PORT. The axe contexts
// bypass the pages' Content-Security-Policy to inject axe; the keyboard and
// focus contexts keep it.
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { latchkeyBinary, latchkeyConfig, startLatchkey } from "./latchkey.mjs";
import { launchChromium } from "./browser.test.mjs";
import { sessionIn } from "./passkeys.test.mjs";
import { Authenticator } from "./twofactor.test.mjs";
import { signInLink } from "./smtp.mjs";
import { assert, eq, show } from "./report.mjs";
import { freePorts } from "./util.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const AXE_FILE = path.join(here, "node_modules/axe-core/axe.min.js");
let AXE = null; // axe.min.js's text, read when the suite runs
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
const LANGS = (process.env.A11Y_LANGS || "en,ar,ja").split(",").map((l) => l.trim()).filter(Boolean);
const SCHEMES = ["light", "dark"];
const DESKTOP = { width: 1280, height: 800 };
const REFLOW_WIDTH = 320; // a 640 px wide window at 200% zoom
// WCAG 1.4.12 (text spacing): line height 1.5, paragraphs 2em apart,
// letters 0.12em, words 0.16em.
const TEXT_SPACING = "* { line-height: 1.5 !important; letter-spacing: 0.12em !important; word-spacing: 0.16em !important; } p { margin-bottom: 2em !important; }";
const PASSWORD = "a11y long passphrase number one";
const NEW_PASSWORD = "a11y long passphrase number two";
// Long addresses, so the pages that show one must wrap it at 320 px.
// No hyphen in them: a browser may break a line at one.
const address = (who, lang) => `${who}.withaverylongmailboxnamethatdoesnotfit.${lang}@accessibility.example.com`;

export function plan(target) {
  return target === "latchkey" ? [{ id: "a11y", kind: "own", host: "localhost" }] : [];
}

/** url with lang=<lang> added to its query (the language of a GET page). */
function withLang(url, lang) {
  const u = new URL(url);
  u.searchParams.set("lang", lang);
  return u.href;
}

/** The first URL in an e-mail's text part whose path ends with `page`. */
function linkTo(msg, page) {
  return (msg.text.match(/https?:\/\/[^\s<>"']+/g) || []).find((u) => new URL(u).pathname.endsWith(page));
}

/**
 * A context that blocks every host but localhost and 127.0.0.1 (the IdP).
 * context.blocked lists the requests to other hosts: those blocked, and the
 * hops of a redirect there, which a route never sees (Playwright routes
 * only a redirect chain's first URL), so cannot stop, but which are counted.
 */
async function newContext(browser, { lang = "en", bypassCSP = false, noConditionalUI = false } = {}) {
  const context = await browser.newContext({ viewport: DESKTOP, deviceScaleFactor: 1, locale: lang, bypassCSP });
  context.blocked = [];
  const local = (u) => u.protocol === "data:" || u.protocol === "blob:" || u.hostname === "localhost" || u.hostname === "127.0.0.1";
  await context.route("**/*", (route) => {
    const u = new URL(route.request().url());
    if (!local(u)) {
      context.blocked.push(u.href);
      return route.abort("blockedbyclient");
    }
    return route.continue();
  });
  context.on("request", (req) => {
    const u = new URL(req.url());
    if (req.redirectedFrom() && !local(u)) context.blocked.push(`${u.href} (a redirect from ${req.redirectedFrom().url()})`);
  });
  // Without autofill for passkeys the sign-in page shows its "Sign in with
  // a passkey" button, which must be checked too.
  if (noConditionalUI) {
    await context.addInitScript(() => {
      if (window.PublicKeyCredential) PublicKeyCredential.isConditionalMediationAvailable = async () => false;
    });
  }
  return context;
}

/** A virtual authenticator (CDP WebAuthn) for page: internal, resident keys, UV. */
async function addAuthenticator(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
}

/**
 * axe-core's WCAG 2.1 A/AA results on the page: {violations: one line each,
 * passed: how many rules passed}.
 */
async function axeRun(page) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.addScriptTag({ content: AXE });
  const r = await page.evaluate(async (tags) => {
    const r = await window.axe.run(document, { runOnly: { type: "tag", values: tags } });
    return {
      violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) })),
      passed: r.passes.length,
      // Contrast axe could not measure (text over another element's
      // edge, e.g. a line that overflows its box): a failure too, but for a
      // single letter, which axe does not take for text.
      undecided: r.incomplete
        .filter((v) => v.id === "color-contrast")
        .flatMap((v) => v.nodes.filter((n) => !n.any.some((c) => c.data?.messageKey === "shortTextContent")))
        .map((n) => `color-contrast undecided on ${n.target.join(" ")}: ${n.any.map((c) => c.message).join(" ")}`),
    };
  }, AXE_TAGS);
  return { ...r, violations: [...r.violations.map((v) => `${v.id} (${v.impact}) on ${v.targets.join(", ")}: ${v.help}`), ...r.undecided] };
}

/** Inputs a person sees that have no <label for=their id>. */
async function unlabelledInputs(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll("input, select, textarea")]
      .filter((el) => el.type !== "hidden" && el.getClientRects().length > 0)
      .filter((el) => !el.id || ![...document.querySelectorAll("label[for]")].some((l) => l.htmlFor === el.id && l.textContent.trim() !== ""))
      .map((el) => el.outerHTML.slice(0, 120)),
  );
}

/**
 * Separators (<hr>) a person sees, or a screen reader announces, that do
 * not stand between two shown things: first, last, or next to another.
 */
async function straySeparators(page) {
  return page.evaluate(() => {
    const shown = [...document.querySelector(".card").children].filter((el) => el.getClientRects().length > 0);
    return shown.flatMap((el, i) => {
      if (el.tagName !== "HR") return [];
      if (i === 0 || i === shown.length - 1) return [`a separator at the ${i === 0 ? "start" : "end"}`];
      return shown[i + 1].tagName === "HR" ? ["two separators in a row"] : [];
    });
  });
}

/**
 * Labels whose text does not start at their input's starting edge (the
 * left one, or the right one in a right-to-left page): the layout must
 * follow the writing direction.
 */
async function misalignedLabels(page) {
  return page.evaluate(() => {
    const rtl = getComputedStyle(document.documentElement).direction === "rtl";
    const out = [];
    for (const label of document.querySelectorAll("label[for]")) {
      const input = document.getElementById(label.htmlFor);
      if (!input || !label.getClientRects().length || !input.getClientRects().length) continue;
      const range = document.createRange();
      range.selectNodeContents(label);
      const t = range.getBoundingClientRect();
      const i = input.getBoundingClientRect();
      const gap = rtl ? i.right - t.right : t.left - i.left;
      if (Math.abs(gap) > 1) out.push(`#${label.htmlFor}: its label starts ${gap.toFixed(0)}px off the input's ${rtl ? "right" : "left"} edge`);
    }
    return out;
  });
}

// Right-to-left languages: their pages must say <html dir="rtl">.
const RTL = new Set(["ar", "he", "fa", "ur"]);

const bodyBackground = (page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);

/**
 * The checks of the page as loaded now: lang and dir, labels; axe at 1280
 * px in light, and in dark in the first language only; no horizontal
 * scrolling at 320 px, in light only. dark.css changes nothing but colours
 * (custom properties and color-scheme), so the layout, and with it the
 * reflow, is the same in both schemes, and the dark colours are the same
 * in every language: the per-language passes keep what a language changes
 * (lang/dir, labels, text length and direction, axe in light). The page
 * is restored to light at 1280 px afterwards.
 */
async function audit(t, page, name, lang) {
  await t.check(`${name} [${lang}]: the page is in ${lang}: <html lang dir>`, async () => {
    const want = [lang, RTL.has(lang.split("-")[0]) ? "rtl" : "ltr"];
    eq(await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir]), want, "html lang, dir");
  });
  await t.check(`${name} [${lang}]: every visible input has a <label for>, starting at the input's start edge`, async () => {
    eq(await unlabelledInputs(page), [], "inputs without a label");
    eq(await misalignedLabels(page), [], "labels");
  });
  let lightBg;
  for (const scheme of lang === LANGS[0] ? SCHEMES : ["light"]) {
    await page.emulateMedia({ colorScheme: scheme });
    await t.check(`${name} [${scheme}, ${lang}]: axe finds no WCAG 2.1 AA violation`, async () => {
      const bg = await bodyBackground(page);
      if (scheme === "light") lightBg = bg;
      else assert(bg !== lightBg, `dark.css did not apply: the body background is ${bg} in both schemes`);
      const { violations: v, passed } = await axeRun(page);
      assert(!v.length, () => `${v.length} violation(s) on ${page.url()}:\n${v.join("\n")}`);
      assert(passed > 0, "axe passed no rule: it did not look at the page");
      return `${passed} rules passed`;
    });
    if (scheme !== "light") continue; // dark.css changes colours only: the same layout
    await t.check(`${name} [${lang}]: no horizontal scrolling at ${REFLOW_WIDTH}px, also with WCAG text spacing`, async () => {
      await page.setViewportSize({ width: REFLOW_WIDTH, height: 640 });
      try {
        const width = () => page.evaluate(() => ({ sw: document.documentElement.scrollWidth, cw: document.documentElement.clientWidth }));
        const plain = await width();
        assert(plain.sw <= plain.cw, `the page is ${plain.sw}px wide in a ${plain.cw}px wide viewport`);
        // WCAG 1.4.12's spacing, as a reader's style sheet would set it.
        await page.evaluate((css) => {
          const style = document.createElement("style");
          style.id = "a11y-text-spacing";
          style.textContent = css;
          document.head.append(style);
        }, TEXT_SPACING);
        const spaced = await width();
        await page.evaluate(() => document.getElementById("a11y-text-spacing").remove());
        assert(spaced.sw <= spaced.cw, `with text spacing the page is ${spaced.sw}px wide in a ${spaced.cw}px wide viewport`);
      } finally {
        await page.setViewportSize(DESKTOP);
      }
    });
  }
  await page.emulateMedia({ colorScheme: "light" });
}

const submit = (page, locator) => Promise.all([page.waitForNavigation({ timeout: 15000 }), locator.click()]);

export async function run(report, ctx) {
  const t = report.scope("a11y ");
  const spec = ctx.specs.find((s) => s.id === "a11y");
  if (!spec) return;
  const origin = `http://localhost:${spec.port}`;
  const base = `${origin}/api/auth`;
  const installed = await t.check("axe-core is installed (npm ci)", async () => {
    AXE = fs.readFileSync(AXE_FILE, "utf8");
    return `axe-core ${JSON.parse(fs.readFileSync(path.join(here, "node_modules/axe-core/package.json"), "utf8")).version}`;
  });
  if (!installed) return;
  let latchkey;
  // The OpenID Provider's client: its redirect URIs on a loopback server that notes the URLs it gets.
  const [rpPort] = await freePorts(1);
  const seen = [];
  const rpServer = http.createServer((req, res) => {
    if (req.url !== "/favicon.ico") seen.push(req.url);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end('<!doctype html><html lang="en"><title>client</title><p>client</p></html>');
  });
  await new Promise((resolve) => rpServer.listen(rpPort, "127.0.0.1", resolve));
  rpServer.unref(); // also when the suite stops early
  const client = {
    seen,
    id: "a11y-rp",
    name: "Accessible App",
    secret: crypto.randomBytes(32).toString("base64url"),
    origin: `http://127.0.0.1:${rpPort}`,
    redirect: `http://127.0.0.1:${rpPort}/callback`,
    postLogout: `http://127.0.0.1:${rpPort}/signed-out`,
  };
  const started = await t.check("latchkey starts with OIDC, e-mail, credentials (sign-up) and passkey providers, two-factor (optional) and the OpenID Provider (one client)", async () => {
    const config = latchkeyConfig({
      issuer: ctx.idp.issuer, clientId: ctx.clientId, clientSecret: ctx.clientSecret, smtpUrl: ctx.smtp.url, from: "Sign in <no-reply@example.com>",
      strategy: "jwt", credentials: true, passkeys: true, emailLimits: false, twoFactor: "optional",
      oidc: {
        clients: [{
          id: client.id, name: client.name, secret: client.secret, redirect_uris: [client.redirect], post_logout_redirect_uris: [client.postLogout],
          scopes: ["openid", "profile", "email", "groups", "offline_access"],
        }],
      },
    });
    latchkey = await startLatchkey({ bin: latchkeyBinary(), port: spec.port, secret: ctx.secret, config, dir: path.join(ctx.tmp, "a11y"), name: "a11y", serviceUrl: base });
    const providers = await (await fetch(`${latchkey.base}/providers`)).json();
    eq(Object.entries(providers).map(([id, p]) => `${id}:${p.type}`).sort(), ["credentials:credentials", "email:email", "idp:oauth", "passkey:webauthn", "two-factor:credentials"], "providers");
  });
  if (!started) return;

  let browser;
  try {
    browser = await launchChromium();
    await checksCanFail(t, browser, { base });
    for (const lang of LANGS) {
      await everyPage(t, ctx, browser, { base, origin }, lang);
      await twoFactorPages(t, browser, { base, origin, latchkey }, lang);
      await openidPages(t, browser, { base, origin, latchkey, client }, lang);
    }
    await keyboardEmailSignIn(t, ctx, browser, { base, origin });
    await visibleFocus(t, browser, { base });
  } finally {
    await browser?.close();
    await latchkey?.stop();
    rpServer.closeAllConnections();
    await new Promise((resolve) => rpServer.close(resolve));
  }
}

/** The checks see faults: a page with an unlabelled input, faint text and a too-wide line fails them. */
async function checksCanFail(t, browser, { base }) {
  const context = await newContext(browser, { bypassCSP: true });
  const page = await context.newPage();
  try {
    await t.check("the checks can fail: a planted unlabelled input, a centred label, faint text and a 1000px wide box are found", async () => {
      await page.goto(`${base}/verify-request`, { waitUntil: "networkidle" });
      await page.evaluate(() => {
        document.querySelector(".card").insertAdjacentHTML(
          "beforeend",
          '<input type="text" name="planted"><label for="centred" style="text-align:center">Centred</label><input id="centred" type="text">' +
            '<p style="color:#ccc">faint</p><div style="width:1000px">wide</div>',
        );
      });
      const ids = (await axeRun(page)).violations.map((v) => v.split(" ")[0]);
      assert(ids.includes("label") && ids.includes("color-contrast"), `axe found ${show(ids)}`);
      eq((await unlabelledInputs(page)).length, 1, "unlabelled inputs found");
      eq((await misalignedLabels(page)).length, 1, "misaligned labels found");
      await page.setViewportSize({ width: REFLOW_WIDTH, height: 640 });
      assert(await page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth), "no horizontal scrolling found");
    });
  } finally {
    await context.close();
  }
}

/** Every built-in page in one language: reached as a user would, then audited. */
async function everyPage(t, ctx, browser, { base, origin }, lang) {
  const L = (url) => withLang(url, lang);
  const context = await newContext(browser, { lang, bypassCSP: true, noConditionalUI: true });
  const page = await context.newPage();
  await addAuthenticator(page);
  const open = async (url, status = 200) => {
    const res = await page.goto(L(url), { waitUntil: "networkidle" });
    eq(res.status(), status, `status of ${url}`);
  };
  const step = async (name, fn) => t.check(`${name} [${lang}]: reached`, fn);
  const user = address("pat", lang);
  const other = address("sam", lang);

  const alertShown = async () => assert(await page.locator("[role=alert]").isVisible(), `no visible role=alert message on ${page.url()}`);

  // Signed out: the pages anyone can open.
  const pages = [
    ["signin", `${base}/signin?callbackUrl=${encodeURIComponent(`${origin}/home`)}`, 200],
    ["signin with an error (role=alert)", `${base}/signin?error=CredentialsSignin`, 200],
    ["signout with ?csrf=true", `${base}/signout?csrf=true`, 200],
    ["error Configuration", `${base}/error?error=Configuration`, 500],
    ["error AccessDenied", `${base}/error?error=AccessDenied`, 403],
    ["error Verification", `${base}/error?error=Verification`, 403],
    ["error Default", `${base}/error?error=Default`, 200],
    ["verify-request", `${base}/verify-request?provider=email&type=email`, 200],
    ["signup", `${base}/signup`, 200],
    ["reset", `${base}/reset`, 200],
  ];
  for (const [name, url, status] of pages) {
    const reached = await step(name, async () => {
      await open(url, status);
      if (name === "signin") {
        await page.locator("#passkey-signin").waitFor({ state: "visible", timeout: 10000 });
        eq(await page.locator("[role=alert]:not([hidden])").count(), 0, "alerts on a plain sign-in page");
      }
      if (name.startsWith("signin")) eq(await straySeparators(page), [], "separators");
      if (name.includes("role=alert") || name.includes("csrf")) await alertShown();
    });
    if (reached) await audit(t, page, name, lang);
  }

  // Sign-up: a refused password, the notice, the link's page (a wrong
  // password, then the right one), the account is ready, a dead link.
  if (await step("signup with a refused password (role=alert)", async () => {
    await open(`${base}/signup`);
    await page.locator("#input-email").fill(user);
    await page.locator("#input-password").fill("password123");
    await submit(page, page.locator("#submitButton"));
    await alertShown();
  })) await audit(t, page, "signup with a refused password", lang);
  let link;
  const sendPassword = async (password) => {
    await page.locator("#input-password").fill(password);
    await submit(page, page.locator("#submitButton"));
  };
  // Fill in the form on url ({selector: value}), send it: the link to linkPath mailed to user.
  const mailedLink = async (url, fields, linkPath) => {
    await open(url);
    const since = Date.now();
    for (const [selector, value] of Object.entries(fields)) await page.locator(selector).fill(value);
    await submit(page, page.locator("#submitButton"));
    const found = linkTo(await ctx.smtp.waitForMail(user, { since }), linkPath);
    assert(found, `no ${linkPath} link in the e-mail`);
    return found;
  };
  if (await step("sign-up notice (check your email)", async () => {
    link = await mailedLink(`${base}/signup`, { "#input-email": user, "#input-password": PASSWORD }, "/signup/verify");
  })) await audit(t, page, "sign-up notice", lang);
  if (link && (await step("signup/verify", () => open(link)))) {
    await audit(t, page, "signup/verify", lang);
    if (await step("signup/verify with a wrong password (role=alert)", async () => {
      await sendPassword(NEW_PASSWORD);
      await alertShown();
    })) await audit(t, page, "signup/verify with a wrong password", lang);
    if (await step("account ready notice", async () => {
      await sendPassword(PASSWORD);
    })) await audit(t, page, "account ready notice", lang);
    if (await step("dead link notice", () => open(link, 400))) await audit(t, page, "dead link notice", lang);
  }

  // Signed in with the password: the account page, passkeys, sign-out.
  const signedIn = await step("account/password with a password", async () => {
    await open(`${base}/signin`);
    await page.locator("#input-email-for-credentials-provider").fill(user);
    await page.locator("#input-password-for-credentials-provider").fill(PASSWORD);
    await submit(page, page.locator("form", { has: page.locator('input[type="password"]') }).locator("button"));
    eq((await sessionIn(page, base))?.user?.email, user, "session user");
    await open(`${base}/account/password`);
    eq(await page.locator("#input-current-password").count(), 1, "current-password field");
  });
  if (signedIn) {
    await audit(t, page, "account/password with a password", lang);
    if (await step("passkeys (none yet)", () => open(`${base}/passkeys`))) await audit(t, page, "passkeys (none yet)", lang);
    if (await step("passkeys (one added)", async () => {
      await page.locator("#passkey-name").fill("Laptop");
      await Promise.all([page.waitForURL(/\/passkeys\?added=1/, { timeout: 15000 }), page.locator("#passkey-add").click()]);
      await page.goto(L(page.url()), { waitUntil: "networkidle" });
      eq(await page.locator(".passkey-item").count(), 1, "listed passkeys");
    })) await audit(t, page, "passkeys (one added)", lang);
    // The account page (issue #29): plain, with a notice, with an error; the
    // e-mail change link's page (a link mailed to a new address, opened).
    if (await step("account", async () => {
      await open(`${base}/account`);
      eq(await page.locator("section[aria-labelledby=sessions-heading] .tag.current").count(), 1, "sessions marked current");
      eq(await page.locator("#input-new-email").count(), 1, "new e-mail fields");
    })) await audit(t, page, "account", lang);
    if (await step("account with a notice (role=status)", async () => {
      await open(`${base}/account?notice=OtherSessionsEnded&count=2`);
      assert(await page.locator("[role=status]").isVisible(), `no visible role=status notice on ${page.url()}`);
    })) await audit(t, page, "account with a notice", lang);
    if (await step("account with an error (role=alert)", async () => {
      await open(`${base}/account?error=LastSignInMethod`, 400); // the page with a refusal answers 400
      await alertShown();
    })) await audit(t, page, "account with an error", lang);
    if (await step("account/email/confirm (the e-mail change link's page)", async () => {
      await open(`${base}/account`);
      const to = address("kim", lang);
      const since = Date.now();
      await page.locator("#input-new-email").fill(to);
      await submit(page, page.locator("form", { has: page.locator("#input-new-email") }).locator("button"));
      const found = linkTo(await ctx.smtp.waitForMail(to, { since }), "/account/email/confirm");
      assert(found, "no /account/email/confirm link in the e-mail");
      await open(found);
      eq(await page.locator("#submitButton").count(), 1, "the page's button");
      assert(await page.getByText(to).isVisible(), "the page does not show the new address");
    })) await audit(t, page, "account/email/confirm", lang);
    if (await step("signout (signed in)", () => open(`${base}/signout`))) await audit(t, page, "signout (signed in)", lang);
    await step("signing out", async () => {
      await submit(page, page.locator("#submitButton"));
      eq(await sessionIn(page, base), {}, "session after sign-out");
    });
  }

  // Reset: the notice, the link's page, password changed.
  link = null;
  if (await step("reset notice (check your email)", async () => {
    link = await mailedLink(`${base}/reset`, { "#input-email": user }, "/reset/confirm");
  })) await audit(t, page, "reset notice", lang);
  if (link && (await step("reset/confirm", () => open(link)))) {
    await audit(t, page, "reset/confirm", lang);
    if (await step("password changed notice", async () => {
      await sendPassword(NEW_PASSWORD);
    })) await audit(t, page, "password changed notice", lang);
  }

  // E-mail sign-in, the link opened in another browser: the confirm page,
  // then a user without a password.
  link = null;
  await step("e-mail sign-in request", async () => {
    await open(`${base}/signin`);
    const since = Date.now();
    await page.locator("#input-email-for-email-provider").fill(other);
    await Promise.all([page.waitForURL(/verify-request/, { timeout: 15000 }), page.locator("#submitButton").click()]);
    link = signInLink(await ctx.smtp.waitForMail(other, { since }));
    assert(link, "no sign-in link in the e-mail");
  });
  const elsewhere = await newContext(browser, { lang, bypassCSP: true });
  const p2 = await elsewhere.newPage();
  if (link && (await step("e-mail confirm page (link in another browser)", async () => {
    await p2.goto(L(link), { waitUntil: "networkidle" });
    assert(await p2.locator("form button").isVisible(), `no confirm button on ${p2.url()}`);
  }))) {
    await audit(t, p2, "e-mail confirm page", lang);
    if (await step("account/password without a password", async () => {
      await submit(p2, p2.locator("form button"));
      eq((await sessionIn(p2, base))?.user?.email, other, "session user");
      await p2.goto(L(`${base}/account/password`), { waitUntil: "networkidle" });
      eq(await p2.locator("#input-current-password").count(), 0, "current-password fields");
    })) {
      await audit(t, p2, "account/password without a password", lang);
      if (await step("add-a-password notice", () => submit(p2, p2.locator("#submitButton")))) await audit(t, p2, "add-a-password notice", lang);
    }
  }
  await t.check(`[${lang}] no request left localhost`, async () => {
    eq([...context.blocked, ...elsewhere.blocked], [], "blocked requests");
  });
  await elsewhere.close();
  await context.close();
}

/**
 * The two-factor pages in one language, reached by a user of their own
 * (made with `latchkey users create`): signed in with the password (one
 * factor: no two-factor yet), the setup page (the key shown), the recovery
 * codes (after oathtool's code), the settings, the step-up form; signed
 * out, the password leads to the second-step page (the recovery help
 * open), then a refused code (role=alert).
 */
async function twoFactorPages(t, browser, { base, origin, latchkey }, lang) {
  const L = (url) => withLang(url, lang);
  const context = await newContext(browser, { lang, bypassCSP: true });
  const page = await context.newPage();
  const open = async (url, status = 200) => {
    const res = await page.goto(L(url), { waitUntil: "networkidle" });
    eq(res.status(), status, `status of ${url}`);
  };
  const step = async (name, fn) => t.check(`${name} [${lang}]: reached`, fn);
  const user = address("tess", lang);
  const home = `${origin}/home`;
  const passwordSignIn = async () => {
    await open(`${base}/signin?callbackUrl=${encodeURIComponent(home)}`);
    await page.locator("#input-email-for-credentials-provider").fill(user);
    await page.locator("#input-password-for-credentials-provider").fill(PASSWORD);
    await submit(page, page.locator("form", { has: page.locator('input[type="password"]') }).locator("button"));
  };
  const onPage = (p) => eq(new URL(page.url()).pathname, new URL(`${base}${p}`).pathname, "page");
  let auth;
  try {
    const setup = await step("two-factor setup (the key shown)", async () => {
      const made = await latchkey.admin(["users", "create", user, "--password-stdin"], PASSWORD + "\n");
      assert(made.code === 0, `users create: exit ${made.code}: ${made.stderr}`);
      await passwordSignIn();
      eq((await sessionIn(page, base))?.user?.email, user, "session user (one factor: no two-factor yet)");
      await open(`${base}/account/two-factor`);
      assert(await page.locator(".qr svg").isVisible(), "no QR code shown");
      // Open "enter the key manually": the key and the URI (a long line with the address) shown too.
      await page.locator("details.help summary").click();
      assert(await page.locator("code.uri").isVisible(), "the otpauth URI is not shown");
      auth = new Authenticator((await page.locator("code.secret").innerText()).replace(/\s+/g, ""));
    });
    if (!setup) return;
    await audit(t, page, "two-factor setup", lang);
    if (!(await step("recovery codes (shown once)", async () => {
      await page.locator("#input-code").fill(await auth.code());
      await submit(page, page.locator("#submitButton"));
      eq(await page.locator("ul.codes li").count(), 10, "recovery codes listed");
    }))) return;
    await audit(t, page, "recovery codes", lang);
    if (await step("two-factor settings (on)", async () => {
      await open(`${base}/account/two-factor`);
      eq(await page.locator("#input-disable-code").count(), 1, "turn-off code fields");
    })) await audit(t, page, "two-factor settings", lang);
    if (await step("two-factor step-up (signed in)", async () => {
      await open(`${base}/two-factor?callbackUrl=${encodeURIComponent(home)}`);
      eq(await page.locator("#input-code").count(), 1, "code fields");
    })) await audit(t, page, "two-factor step-up", lang);
    if (!(await step("two-factor second step (after the password)", async () => {
      await open(`${base}/signout`);
      await submit(page, page.locator("#submitButton"));
      eq(await sessionIn(page, base), {}, "session after sign-out");
      await passwordSignIn();
      onPage("/two-factor");
      await page.goto(L(page.url()), { waitUntil: "networkidle" });
      // "Can't use your authenticator app?" opened: its help shown too.
      await page.locator("details.help summary").click();
      assert(await page.locator("details.help p").first().isVisible(), "the recovery help is not shown");
    }))) return;
    await audit(t, page, "two-factor second step", lang);
    if (await step("two-factor second step with a wrong code (role=alert)", async () => {
      await page.locator("#input-code").fill(auth.wrong());
      await submit(page, page.locator("#submitButton"));
      onPage("/two-factor");
      assert(await page.locator("[role=alert]").first().isVisible(), `no visible role=alert message on ${page.url()}`);
    })) await audit(t, page, "two-factor second step with a wrong code", lang);
    await t.check(`[${lang}] two-factor pages: no request left localhost`, async () => {
      eq(context.blocked, [], "blocked requests");
    });
  } finally {
    await context.close();
  }
}

/**
 * The OpenID Provider's pages in one language, reached by a user of their
 * own (made with `latchkey users create`, signed in with the password): the
 * consent page (an authorization request of a client that is not
 * first-party; "allow" ends at the client's redirect URI with a code and the
 * state), then the logout confirm page (end_session without id_token_hint;
 * "sign out" ends the session and goes to the post-logout URI). The client's
 * URIs are answered by a loopback server of the suite's (a route would not
 * do: Playwright routes only the first URL of a redirect chain).
 */
async function openidPages(t, browser, { base, origin, latchkey, client }, lang) {
  const L = (url) => withLang(url, lang);
  const context = await newContext(browser, { lang, bypassCSP: true });
  const page = await context.newPage();
  const step = async (name, fn) => t.check(`${name} [${lang}]: reached`, fn);
  const user = address("olive", lang);
  const b64url = (buf) => Buffer.from(buf).toString("base64url");
  let expectedState;
  try {
    const consent = await step("OpenID consent (an authorization request of a client that is not first-party)", async () => {
      const made = await latchkey.admin(["users", "create", user, "--password-stdin"], PASSWORD + "\n");
      assert(made.code === 0, `users create: exit ${made.code}: ${made.stderr}`);
      await page.goto(L(`${base}/signin?callbackUrl=${encodeURIComponent(`${origin}/home`)}`), { waitUntil: "networkidle" });
      await page.locator("#input-email-for-credentials-provider").fill(user);
      await page.locator("#input-password-for-credentials-provider").fill(PASSWORD);
      await submit(page, page.locator("form", { has: page.locator('input[type="password"]') }).locator("button"));
      eq((await sessionIn(page, base))?.user?.email, user, "session user");
      const verifier = b64url(crypto.randomBytes(32));
      const state = (expectedState = b64url(crypto.randomBytes(16)));
      const q = new URLSearchParams({
        client_id: client.id, redirect_uri: client.redirect, response_type: "code", scope: "openid profile email groups offline_access",
        state, code_challenge: b64url(crypto.createHash("sha256").update(verifier).digest()), code_challenge_method: "S256",
      });
      const res = await page.goto(L(`${base}/oidc/authorize?${q}`), { waitUntil: "networkidle" });
      eq(res.status(), 200, `status of ${page.url()}`);
      eq(new URL(page.url()).pathname, new URL(`${base}/oidc/continue`).pathname, "page");
      eq(await page.locator('button[name="decision"]').evaluateAll((els) => els.map((b) => b.value)), ["allow", "deny"], "the decision buttons");
      assert(await page.getByText(client.name).first().isVisible(), `the consent page does not name the client (${client.name})`);
    });
    if (!consent) return;
    await audit(t, page, "OpenID consent", lang);
    await t.check(`OpenID consent [${lang}]: allow ends at the client's redirect URI with a code and the state`, async () => {
      await Promise.all([page.waitForURL((u) => u.href.startsWith(client.redirect), { timeout: 15000 }), page.locator('button[name="decision"][value="allow"]').click()]);
      const back = new URL(page.url());
      eq(back.origin + back.pathname, client.redirect, "landed on");
      eq(back.searchParams.get("error"), null, "error");
      assert(back.searchParams.get("code"), `no code in ${back.href}`);
      eq(back.searchParams.get("state"), expectedState, "state");
    });
    const state = b64url(crypto.randomBytes(16));
    if (!(await step("OpenID logout confirm (end_session without id_token_hint)", async () => {
      const q = new URLSearchParams({ client_id: client.id, post_logout_redirect_uri: client.postLogout, state });
      const res = await page.goto(L(`${base}/oidc/end_session?${q}`), { waitUntil: "networkidle" });
      eq(res.status(), 200, `status of ${page.url()}`);
      eq(new URL(page.url()).pathname, new URL(`${base}/oidc/logout`).pathname, "page");
      eq(await page.locator('button[name="decision"]').evaluateAll((els) => els.map((b) => b.value)), ["signout", "stay"], "the decision buttons");
    }))) return;
    await audit(t, page, "OpenID logout confirm", lang);
    await t.check(`OpenID logout confirm [${lang}]: sign out ends the session and goes to the post-logout URI`, async () => {
      await Promise.all([page.waitForURL((u) => u.href.startsWith(client.postLogout), { timeout: 15000 }), page.locator('button[name="decision"][value="signout"]').click()]);
      const back = new URL(page.url());
      eq(back.origin + back.pathname, client.postLogout, "landed on");
      eq(back.searchParams.get("state"), state, "state");
      eq(await sessionIn(page, base), {}, "session after sign-out");
    });
    await t.check(`[${lang}] OpenID pages: no request left localhost (the client's URIs answered in the browser)`, async () => {
      eq(context.blocked, [], "blocked requests");
      eq(client.seen.splice(0).map((u) => new URL(u, client.origin).pathname), ["/callback", "/signed-out"], "requests the client got");
    });
  } finally {
    await context.close();
  }
}

/** The focused element, as the checks name it: #id, or tag and text. */
const focused = (page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return "body";
    return el.id ? `#${el.id}` : `${el.tagName.toLowerCase()} ${JSON.stringify(el.textContent.trim().replace(/\s+/g, " "))}`;
  });

/** Press key until the focused element is want (at most n presses); every element passed is returned. */
async function tabTo(page, want, { key = "Tab", n = 12 } = {}) {
  const passed = [];
  for (let i = 0; i < n; i++) {
    const f = await focused(page);
    if (f === want) return passed;
    passed.push(f);
    await page.keyboard.press(key);
  }
  throw new Error(`${key} never reached ${want}; focus went through ${passed.join(" → ")}`);
}

/** Keyboard only (page.keyboard: Tab, Shift+Tab, typing, Enter): e-mail sign-in, then sign-out. */
async function keyboardEmailSignIn(t, ctx, browser, { base, origin }) {
  const context = await newContext(browser);
  const page = await context.newPage();
  const who = address("kim", "kbd");
  const emailField = "#input-email-for-email-provider";
  const idpButton = 'button "C Sign in with Company SSO"';
  try {
    let link;
    const ok = await t.check("keyboard only: e-mail sign-in reaches the verify-request page (Tab, typing, Enter)", async () => {
      await page.goto(`${base}/signin?callbackUrl=${encodeURIComponent(`${origin}/home`)}`, { waitUntil: "networkidle" });
      // Here the passkey button may stay hidden (autofill offers passkeys): no separator before it then.
      eq(await straySeparators(page), [], "separators");
      // The e-mail field has autofocus; from the page's start Tab goes
      // through the IdP button to it. Shift+Tab goes back to the IdP button.
      const path = [];
      if ((await focused(page)) !== emailField) path.push(...(await tabTo(page, emailField)));
      await page.keyboard.press("Shift+Tab");
      eq(await focused(page), idpButton, "Shift+Tab from the e-mail field");
      await page.keyboard.press("Tab");
      eq(await focused(page), emailField, "Tab from the IdP button");
      await page.keyboard.type(who);
      await page.keyboard.press("Tab");
      eq(await focused(page), "#submitButton", "Tab from the e-mail field");
      eq(await page.evaluate(() => document.activeElement.form?.action), `${base}/signin/email`, "the focused button's form");
      const since = Date.now();
      await Promise.all([page.waitForURL(/\/verify-request/, { timeout: 15000 }), page.keyboard.press("Enter")]);
      link = signInLink(await ctx.smtp.waitForMail(who, { since }));
      assert(link, "no sign-in link in the e-mail");
      return path.length ? `focus started at ${path[0]}` : "focus started in the e-mail field (autofocus)";
    });
    if (!ok) return;
    const signedIn = await t.check("keyboard only: the mailed link signs in (GET /session shows the user)", async () => {
      await page.goto(link, { waitUntil: "networkidle" });
      eq((await sessionIn(page, base))?.user?.email, who, "session user");
    });
    if (!signedIn) return;
    await t.check("keyboard only: sign-out (Tab to the button, Enter) ends the session", async () => {
      await page.goto(`${base}/signout`, { waitUntil: "networkidle" });
      eq(await focused(page), "body", "focus on load");
      await page.keyboard.press("Tab");
      eq(await focused(page), "#submitButton", "first Tab");
      eq(await page.evaluate(() => document.activeElement.textContent.trim()), "Sign out", "the focused button");
      await Promise.all([page.waitForNavigation({ timeout: 15000 }), page.keyboard.press("Enter")]);
      eq(await sessionIn(page, base), {}, "session after sign-out");
    });
  } finally {
    await context.close();
  }
}

/** Every element Tab reaches on the sign-in page shows a focus indicator, light and dark. */
async function visibleFocus(t, browser, { base }) {
  const context = await newContext(browser, { noConditionalUI: true });
  const page = await context.newPage();
  try {
    // "forced colours": Windows' high-contrast themes, where the page's colours give way to the user's.
    for (const scheme of [...SCHEMES, "forced colours"]) {
      await t.check(`visible focus: every element Tab reaches on the sign-in page shows an outline (3:1 against the card) or a box-shadow [${scheme}]`, async () => {
        await page.emulateMedia(scheme === "forced colours" ? { colorScheme: "light", forcedColors: "active" } : { colorScheme: scheme, forcedColors: "none" });
        await page.goto(`${base}/signin`, { waitUntil: "networkidle" });
        await page.locator("#passkey-signin").waitFor({ state: "visible", timeout: 10000 });
        // From the autofocused e-mail field round the page (through the
        // browser's own UI, where no element has focus) back to it.
        const seen = [];
        const bad = [];
        const outlines = new Set();
        for (let i = 0, outside = 0; i < 40 && outside < 3; i++) {
          await page.keyboard.press("Tab");
          const f = await page.evaluate(() => {
            const el = document.activeElement;
            if (!el || el === document.body) return null;
            const s = getComputedStyle(el);
            // The outline is drawn on the card: 3:1 against it at least.
            const rgb = (c) => c.match(/[\d.]+/g).slice(0, 3).map(Number);
            const lum = (c) => {
              const [r, g, b] = rgb(c).map((v) => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
              return 0.2126 * r + 0.7152 * g + 0.0722 * b;
            };
            const card = getComputedStyle(el.closest(".card")).backgroundColor;
            const [hi, lo] = [lum(s.outlineColor), lum(card)].sort((a, b) => b - a);
            const contrast = (hi + 0.05) / (lo + 0.05);
            const outlined = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0 && !/, 0\)$/.test(s.outlineColor) && contrast >= 3;
            return {
              name: el.id ? `#${el.id}` : `${el.tagName.toLowerCase()} ${JSON.stringify(el.textContent.trim())}`,
              outline: `${s.outlineStyle} ${s.outlineWidth} ${s.outlineColor}, ${contrast.toFixed(1)}:1 against the card's ${card}`,
              visible: outlined || s.boxShadow !== "none",
            };
          });
          if (!f) {
            outside++;
            continue;
          }
          if (seen.includes(f.name)) break;
          seen.push(f.name);
          outlines.add(f.outline);
          if (!f.visible) bad.push(`${f.name} (outline ${f.outline})`);
        }
        assert(seen.length >= 8, `Tab reached only ${show(seen)}`);
        eq(bad, [], "focused elements without a visible indicator");
        return `${seen.length} elements; ${[...outlines].join("; ")}`;
      });
    }
  } finally {
    await context.close();
  }
}
