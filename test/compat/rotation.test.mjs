// Secret rotation, the Auth.js way, with the real JWT libraries as judges:
// sign in under secret A; restart with AUTH_SECRET_1=B and AUTH_SECRET=A →
// still signed in, and the refreshed cookie is encrypted under B (decoded by
// next-auth/jwt or @auth/core/jwt with B alone); restart with B alone →
// signed in with the refreshed cookie, signed out with the original one.
import crypto from "node:crypto";
import path from "node:path";
import { CookieJar, jarFetch } from "./jar.mjs";
import { latchkeyBinary, latchkeyConfig, startLatchkey } from "./latchkey.mjs";
import { signInLink } from "./smtp.mjs";
import { assert, eq, show } from "./report.mjs";
import { evidence, form, FORM, freePorts } from "./util.mjs";

const STYLES = ["next-auth", "authjs"];

/** The suite starts and restarts its own instances (one per cookie style). */
export function plan() {
  return [];
}

export async function run(t, ctx) {
  if (ctx.target !== "latchkey") return;
  const bin = latchkeyBinary();
  const ports = await freePorts(STYLES.length);
  for (const [i, style] of STYLES.entries()) {
    await rotation(t.scope(`rotation [${style}] `), ctx, { bin, port: ports[i], style });
  }
}

async function rotation(t, ctx, { bin, port, style }) {
  const a = crypto.randomBytes(32).toString("base64url");
  const b = crypto.randomBytes(32).toString("base64url");
  const dir = path.join(ctx.tmp, `rotation-${style}`);
  const cookie = `${style}.session-token`;
  const config = latchkeyConfig({ issuer: ctx.idp.issuer, clientId: ctx.clientId, clientSecret: ctx.clientSecret,
    smtpUrl: ctx.smtp.url, from: "Sign in <no-reply@example.com>", strategy: "jwt", cookieStyle: style });
  const start = (secret, env = {}) => startLatchkey({ bin, port, secret, config, dir, name: `rotation ${style}`, env });
  const decode = async (token, secret) => {
    try {
      if (style === "authjs") return await (await import("@auth/core/jwt")).decode({ token, secret, salt: cookie });
      return await (await import("next-auth/jwt")).decode({ token, secret });
    } catch {
      return null;
    }
  };
  const email = `rotate-${style}@example.com`;
  const sessionOf = async (token) => {
    const res = await fetch(`${base(port)}/session`, { headers: { cookie: `${cookie}=${token}` } });
    const body = await res.json();
    const next = res.headers.getSetCookie().find((c) => c.startsWith(`${cookie}=`))?.split(";")[0].slice(cookie.length + 1);
    return { body, next };
  };

  let server = await start(a);
  let original;
  try {
    await t.check("sign in under secret A (e-mail link)", async () => {
      const jar = new CookieJar();
      const f = jarFetch(jar);
      const { csrfToken } = await (await f(`${server.base}/csrf`)).json();
      const since = Date.now();
      const res = await f(`${server.base}/signin/email`, { method: "POST", headers: FORM, body: form({ email, csrfToken, callbackUrl: `${server.origin}/r`, json: "true" }) });
      assert(res.ok, () => `POST /signin/email: ${evidence(res)}`);
      const link = signInLink(await ctx.smtp.waitForMail(email, { since }));
      await confirmIfAsked(f, await f(link), server.base);
      original = jar.get(server.base, cookie);
      assert(original, () => `no ${cookie} after the link (jar: ${jar.header(server.base)})`);
      eq((await decode(original, a))?.email, email, "the cookie decodes under A");
    });
  } finally {
    await server.stop();
  }

  let refreshed;
  server = await start(a, { AUTH_SECRET_1: b });
  try {
    await t.check("AUTH_SECRET_1=B, AUTH_SECRET=A: still signed in, the refreshed cookie is under B", async () => {
      assert(original, "not signed in");
      const { body, next } = await sessionOf(original);
      eq(body?.user?.email, email, "session.user.email");
      assert(next, "no refreshed session cookie in the response");
      refreshed = next;
      eq((await decode(refreshed, b))?.email, email, `${style === "authjs" ? "@auth/core/jwt" : "next-auth/jwt"} decode with B alone`);
      eq(await decode(refreshed, a), null, "decode with A");
    });
  } finally {
    await server.stop();
  }

  server = await start(b);
  try {
    await t.check("B alone: the refreshed cookie is signed in, the original one is not", async () => {
      assert(refreshed, "no refreshed cookie");
      eq((await sessionOf(refreshed)).body?.user?.email, email, "with the refreshed cookie");
      const { body } = await sessionOf(original);
      assert(body && Object.keys(body).length === 0, () => `with the original cookie: ${show(body)}`);
    });
  } finally {
    await server.stop();
  }
}

const base = (port) => `http://127.0.0.1:${port}/api/auth`;

/** When the link shows a confirm page instead of signing in, press its button. */
export async function confirmIfAsked(f, res, base) {
  const text = await res.text();
  if (res.status === 302) return;
  const field = (name) => text.match(new RegExp(`name="${name}"[^>]*value="([^"]*)"`))?.[1]?.replace(/&amp;/g, "&");
  const token = field("token");
  assert(res.status === 200 && token, () => `the link neither signed in nor asked to confirm: ${evidence(res, text)}`);
  const post = await f(`${base}/callback/email`, { method: "POST", headers: FORM,
    body: form({ token, email: field("email") ?? "", csrfToken: field("csrfToken"), callbackUrl: field("callbackUrl") ?? "" }) });
  await post.text();
  assert(post.status === 302, () => `confirming: ${evidence(post)}`);
}
