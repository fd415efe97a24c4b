// The password account flows in headless Chromium (latchkey only: next-auth
// has no such pages): sign up → the confirmation e-mail (the suite's SMTP
// catcher) → its page (the chosen password again) → sign in with the
// password → sign out → "Forgot your password?" → the reset e-mail → a new
// password → the old one is refused, the new one signs in. Every page loads
// only same-origin resources and reports no CSP violation; screenshots of
// the new pages go where browser.test.mjs puts its own (`npm run
// screenshots`: docs/screenshots/).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium, newContext, openPage } from "./browser.test.mjs";
import { assert, eq, show } from "./report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const ADDRESS = "pat@example.com";
const FIRST = "first long passphrase for pat";
const SECOND = "second long passphrase for pat";

export function plan(target) {
  if (target !== "latchkey") return [];
  return [{ id: "passwords", kind: "latchkey", strategy: "jwt", basePath: "/api/auth", cookieStyle: "next-auth", credentials: true }];
}

/** The first URL in an e-mail's text part below `page` (e.g. /signup/verify). */
function linkTo(msg, page) {
  return (msg.text.match(/https?:\/\/[^\s<>"']+/g) || []).find((u) => new URL(u).pathname.endsWith(page));
}

export async function run(report, ctx) {
  const t = report.scope("passwords ");
  const server = await ctx.server("passwords");
  if (!server) return;
  const { base, origin } = server;
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
  const submit = async (page, locator) => Promise.all([page.waitForNavigation({ timeout: 15000 }), locator.click()]);
  const heading = async (page) => (await page.locator("h1").first().textContent())?.trim();
  const passwordSignIn = async (page, password) => {
    await openPage(page, `${base}/signin?callbackUrl=${encodeURIComponent(`${origin}/home`)}`, origin);
    await page.locator("#input-email-for-credentials-provider").fill(ADDRESS);
    await page.locator("#input-password-for-credentials-provider").fill(password);
    await submit(page, page.locator("form", { has: page.locator('input[type="password"]') }).locator("button"));
    return page.url();
  };

  let browser;
  const ok = await t.check("Chromium starts headless", async () => {
    browser = await launchChromium();
  });
  if (!ok) return;
  try {
    const desktop = await newContext(browser, { width: 1280, height: 800 });
    const page = await desktop.newPage();

    let link;
    await t.check("sign-up: the form sends a confirmation e-mail and says so", async () => {
      const { res } = await openPage(page, `${base}/signup`, origin);
      eq(res.status(), 200, "status");
      const file = await shot(page, "signup-desktop");
      const since = Date.now();
      await page.locator('input[type="email"]').fill(ADDRESS);
      await page.locator('input[type="password"]').fill(FIRST);
      await submit(page, page.locator("#submitButton"));
      eq(await heading(page), "Check your email", "heading");
      link = linkTo(await ctx.smtp.waitForMail(ADDRESS, { since }), "/signup/verify");
      assert(link, "no confirmation link in the e-mail");
      return file;
    });
    await t.check("sign-up: the link's page asks for the password again, then the account is ready", async () => {
      const { res } = await openPage(page, link, origin);
      eq(res.status(), 200, "status");
      const file = await shot(page, "signup-verify-desktop");
      await page.locator('input[type="password"]').fill(FIRST);
      await submit(page, page.locator("#submitButton"));
      eq(await heading(page), "Your account is ready", "heading");
      return file;
    });
    await t.check("signs in with the password on the sign-in page", async () => {
      const landed = await passwordSignIn(page, FIRST);
      eq(landed, `${origin}/home`, "landed on");
      eq(await sessionEmail(page), ADDRESS, "session.user.email");
    });
    await t.check("the account page offers a password change", async () => {
      const { res } = await openPage(page, `${base}/account/password`, origin);
      eq(res.status(), 200, "status");
      eq(await page.locator('input[name="currentPassword"]').count(), 1, "current-password fields");
      return await shot(page, "account-password-desktop");
    });
    await t.check("signs out on the sign-out page", async () => {
      await openPage(page, `${base}/signout`, origin);
      await submit(page, page.getByRole("button", { name: /sign out/i }));
      eq(await sessionEmail(page), undefined, "session user after sign-out");
    });

    await t.check("forgot password: the sign-in page's link leads to the reset form, which mails a link", async () => {
      await openPage(page, `${base}/signin`, origin);
      await submit(page, page.getByRole("link", { name: /forgot your password/i }));
      eq(new URL(page.url()).pathname, new URL(`${base}/reset`).pathname, "reset page");
      const file = await shot(page, "reset-desktop");
      const since = Date.now();
      await page.locator('input[type="email"]').fill(ADDRESS);
      await submit(page, page.locator("#submitButton"));
      eq(await heading(page), "Check your email", "heading");
      link = linkTo(await ctx.smtp.waitForMail(ADDRESS, { since }), "/reset/confirm");
      assert(link, "no reset link in the e-mail");
      return file;
    });
    await t.check("reset: the link's page sets a new password", async () => {
      const { res } = await openPage(page, link, origin);
      eq(res.status(), 200, "status");
      const file = await shot(page, "reset-confirm-desktop");
      await page.locator('input[type="password"]').fill(SECOND);
      await submit(page, page.locator("#submitButton"));
      eq(await heading(page), "Password changed", "heading");
      return file;
    });
    await t.check("the reset link works once", async () => {
      const { res } = await openPage(page, link, origin);
      eq(res.status(), 400, "status");
    });
    await t.check("the old password is refused", async () => {
      const landed = await passwordSignIn(page, FIRST);
      assert(landed.includes("error=CredentialsSignin"), `landed on ${landed}`);
      eq(await sessionEmail(page), undefined, "session user");
    });
    await t.check("the new password signs in", async () => {
      const landed = await passwordSignIn(page, SECOND);
      eq(landed, `${origin}/home`, "landed on");
      eq(await sessionEmail(page), ADDRESS, "session.user.email");
    });
    await t.check("no request left 127.0.0.1 and no CSP violation", async () => {
      eq(desktop.blocked, [], "blocked requests");
      eq(desktop.csp, [], "CSP violations");
    });
    await desktop.close();

    const phone = await newContext(browser, { width: 390, height: 844 });
    const p2 = await phone.newPage();
    for (const name of ["signup", "reset"]) {
      await t.check(`${name} page at 390px: no horizontal scrolling`, async () => {
        await openPage(p2, `${base}/${name}`, origin);
        const sw = await p2.evaluate(() => document.documentElement.scrollWidth);
        assert(sw <= 390, `the page is ${sw}px wide (${show(p2.url())})`);
        return await shot(p2, `${name}-phone`);
      });
    }
    await phone.close();
  } finally {
    await browser.close();
  }
}
