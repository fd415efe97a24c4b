// The Caddy forward-auth snippet (docs/forward-auth.md) behind a real Caddy: apps on
// sibling hosts, each site block that page's shape
//
//   forward_auth 127.0.0.1:LK { uri /authz/forward-auth; copy_headers Remote-User Remote-Email Remote-Name Remote-Groups Remote-Amr }
//   reverse_proxy 127.0.0.1:UP
//
//   app.example.test:P     the snippet as docs/forward-auth.md prints it: inside a
//                          route, request_header -Remote-* first
//   admin.example.test:P   the same; an access rule keeps it for root@example.com
//   bare.example.test:P    forward_auth + reverse_proxy alone
//   naive.example.test:P   request_header -Remote-* beside them, unordered
//
// Requests are plain HTTP from Node to 127.0.0.1 with the site's Host header;
// the session cookie comes from signing in straight at latchkey (the IdP,
// or an e-mail link for a user without a name). latchkey trusts 127.0.0.1/32
// (Caddy's address); the suite's own direct requests to latchkey come from
// 127.0.0.2, which it does not trust. The app (a node:http server) records
// the Remote-* headers it received.
import http from "node:http";
import path from "node:path";
import { ALICE } from "./idp.mjs";
import { CookieJar, jarFetch, followRedirects } from "./jar.mjs";
import { latchkeyBinary, latchkeyConfig, startLatchkey } from "./latchkey.mjs";
import { startCaddy } from "./caddy.mjs";
import { confirmIfAsked } from "./rotation.test.mjs";
import { signInLink } from "./smtp.mjs";
import { assert, eq, show } from "./report.mjs";
import { FORM, evidence, form, freePorts } from "./util.mjs";

const DOMAIN = "example.test";
const COOKIE = "next-auth.session-token";
// Every header docs/forward-auth.md copies, as nginx's suite (forwardauth.test.mjs) forges them.
const FORGED = { "Remote-User": "0", "Remote-Email": "admin@example.com", "Remote-Name": "Administrator",
  "Remote-Groups": "admins", "Remote-Amr": "pwd,otp,mfa" };

/** One spec: latchkey's own port and redirect URI; the suite starts its servers itself. */
export function plan(target) {
  return target === "latchkey" ? [{ id: "caddy", kind: "own" }] : [];
}

/**
 * One HTTP/1.1 request to 127.0.0.1:port from localAddress with a Host
 * header of our choosing (fetch may not set Host). Returns {status, headers, body}.
 */
function request(port, pathname, { host, headers = {}, localAddress = "127.0.0.1" } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, path: pathname, localAddress, headers: { ...headers, ...(host ? { host } : {}) }, timeout: 10000, agent: false },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d) => { body += d; });
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer from 127.0.0.1:${port}${pathname}`)));
    req.on("error", reject);
    req.end();
  });
}

/** The protected app: records the identity headers of every request it gets. */
async function startUpstream(port) {
  const seen = [];
  const server = http.createServer((req, res) => {
    const h = (name) => req.headers[name] ?? null;
    seen.push({ url: req.url, host: h("host"), remoteUser: h("remote-user"), remoteEmail: h("remote-email"), remoteName: h("remote-name"),
      remoteGroups: h("remote-groups"), remoteAmr: h("remote-amr") });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(seen.at(-1)));
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { seen, close: () => new Promise((resolve) => server.close(resolve)) };
}

/**
 * The Caddyfile site blocks. app and admin: docs/forward-auth.md's snippet (the
 * client's Remote-* dropped first, in a route so that runs before
 * forward_auth). bare: the same without the drop. naive: the drop written
 * beside forward_auth, where the Caddyfile's own directive order runs it after.
 */
function caddySites({ port, lk, up }) {
  // The site's own host written into X-Forwarded-Host, as docs/forward-auth.md does.
  const snippetFor = (name) => `forward_auth 127.0.0.1:${lk} {
	uri /authz/forward-auth
	header_up X-Forwarded-Host ${name}.${DOMAIN}:${port}
	copy_headers Remote-User Remote-Email Remote-Name Remote-Groups Remote-Amr
}
reverse_proxy 127.0.0.1:${up}`;
  const indent = (text, tabs) => text.replace(/^/gm, "\t".repeat(tabs));
  const site = (name, body) => `http://${name}.${DOMAIN}:${port} {
	bind 127.0.0.1
${indent(body, 1)}
}
`;
  const readme = (name) => `route {
	request_header -Remote-*
${indent(snippetFor(name), 1)}
}`;
  return site("app", readme("app")) + site("admin", readme("admin")) + site("bare", snippetFor("bare")) + site("naive", `request_header -Remote-*\n${snippetFor("naive")}`);
}

/** Whether caddy's version ("2.6.2", "v2.10.0") is before major.minor. */
function caddyBefore(version, major, minor) {
  const [a, b] = version.replace(/^v/, "").split(".").map(Number);
  return a < major || (a === major && b < minor);
}

export async function run(report, ctx) {
  if (ctx.target !== "latchkey") return;
  const t = report.scope("caddy ");
  const spec = ctx.specs.find((s) => s.id === "caddy");
  const [up, port] = await freePorts(2);
  const lk = spec.port;
  const origin = (name) => `http://${name}.${DOMAIN}:${port}`;
  const dir = path.join(ctx.tmp, "caddy");

  let upstream;
  let latchkey;
  let caddy;
  const ok = await t.check("latchkey, the app and caddy (the README's forward_auth snippet) start", async () => {
    upstream = await startUpstream(up);
    const config =
      latchkeyConfig({
        issuer: ctx.idp.issuer, clientId: ctx.clientId, clientSecret: ctx.clientSecret, smtpUrl: ctx.smtp.url,
        from: "Sign in <no-reply@example.com>", strategy: "database",
      }) +
      `trusted_proxies: [127.0.0.1/32]
allowed_redirect_origins: [${["app", "admin", "bare", "naive"].map((n) => JSON.stringify(origin(n))).join(", ")}]
access:
  - hosts: [admin.${DOMAIN}]
    emails: [root@example.com]
  - hosts: [app.${DOMAIN}, bare.${DOMAIN}, naive.${DOMAIN}]
    anyone: true
`;
    latchkey = await startLatchkey({ bin: latchkeyBinary(), port: lk, secret: ctx.secret, config, dir: path.join(dir, "latchkey"), name: "caddy", serviceUrl: spec.base });
    caddy = await startCaddy({ dir: path.join(dir, "caddy"), sites: caddySites({ port, lk, up }), waitUrl: `http://127.0.0.1:${port}/` });
    return `caddy ${caddy.version} on ${port}, latchkey on ${lk}`;
  });
  if (!ok) {
    await Promise.all([caddy?.stop(), latchkey?.stop(), upstream?.close()]);
    return;
  }

  /** A request to one of caddy's sites; cookie is a session token or null. */
  const viaCaddy = (name, pathname, { cookie = null, headers = {} } = {}) =>
    request(port, pathname, { host: `${name}.${DOMAIN}:${port}`, headers: { ...headers, ...(cookie ? { cookie: `${COOKIE}=${cookie}` } : {}) } });
  const seenFor = (pathname) => upstream.seen.filter((w) => w.url === pathname);
  /** The X-Forwarded-* headers naming a request to site name, as caddy's forward_auth sends them. */
  const forwardedFor = (name, uri) => ({ "x-forwarded-proto": "http", "x-forwarded-host": `${name}.${DOMAIN}:${port}`, "x-forwarded-uri": uri });
  const signinFor = (url) => {
    const u = new URL(`${spec.base}/signin`);
    u.searchParams.set("callbackUrl", url);
    return u.href;
  };

  try {
    await t.check("no session: 302 to latchkey's sign-in page with the URL asked for as callbackUrl; the app is not reached", async () => {
      const res = await viaCaddy("app", "/hello?x=1&y=two");
      eq(res.status, 302, "status");
      eq(res.headers.location, signinFor(`${origin("app")}/hello?x=1&y=two`), "Location");
      eq(seenFor("/hello?x=1&y=two"), [], "requests that reached the app");
    });
    await t.check("no session, forged Remote-* headers: still 302, the app is not reached", async () => {
      const res = await viaCaddy("app", "/forged-anon", { headers: FORGED });
      eq(res.status, 302, "status");
      eq(seenFor("/forged-anon"), [], "requests that reached the app");
    });
    await t.check("the X-Forwarded-* headers caddy sends are believed because 127.0.0.1 is in trusted_proxies, not from 127.0.0.2", async () => {
      const url = `${origin("app")}/direct`;
      const xf = forwardedFor("app", "/direct");
      const trusted = await request(lk, "/authz/forward-auth", { headers: xf, localAddress: "127.0.0.1" });
      eq([trusted.status, trusted.headers.location], [302, signinFor(url)], "from 127.0.0.1 (listed): status, Location");
      const untrusted = await request(lk, "/authz/forward-auth", { headers: xf, localAddress: "127.0.0.2" });
      eq(untrusted.status, 401, "from 127.0.0.2 (not listed): status");
      assert(!untrusted.headers.location, `from 127.0.0.2: a Location ${show(untrusted.headers.location)}`);
    });

    let aliceCookie = null;
    await t.check("sign in as alice at latchkey (the IdP)", async () => {
      const jar = new CookieJar();
      const f = jarFetch(jar);
      const { csrfToken } = await (await f(`${spec.base}/csrf`)).json();
      const callbackUrl = `${origin("app")}/landed`;
      const res = await f(`${spec.base}/signin/idp`, { method: "POST", headers: FORM, body: form({ csrfToken, callbackUrl, json: "true" }) });
      const { url } = await res.json();
      const out = await followRedirects(f, url, { stop: (u) => u === callbackUrl });
      eq(out.url, callbackUrl, "landed on");
      const token = jar.get(spec.base, COOKIE);
      assert(token, () => `no ${COOKIE} (jar: ${jar.header(spec.base)})`);
      aliceCookie = token;
    });
    const literal = (name) => `{http.reverse_proxy.header.${name}}`;
    // Before 2.10 copy_headers sets a header the answer lacks to its own placeholder text.
    const before210 = caddyBefore(caddy.version, 2, 10);
    const absent = (name) => (before210 ? literal(name) : null);
    await t.check("signed in: the app receives alice's Remote-User, Remote-Email, Remote-Name and Remote-Amr, and no Remote-Groups (she has none)", async () => {
      const res = await viaCaddy("app", "/me", { cookie: aliceCookie });
      eq(res.status, 200, "status");
      const [who] = seenFor("/me");
      eq([who?.remoteEmail, who?.remoteName, who?.remoteGroups, who?.remoteAmr], [ALICE.email, ALICE.name, absent("Remote-Groups"), "fed"],
        "Remote-Email, Remote-Name, Remote-Groups, Remote-Amr");
      assert(/^[0-9a-f-]{36}$/.test(who.remoteUser ?? ""), `Remote-User ${show(who.remoteUser)} is not a user id`);
      return `Remote-User ${who.remoteUser}`;
    });
    await t.check("signed in, forged Remote-* headers: the app receives alice's, not the forgery", async () => {
      await viaCaddy("app", "/forged-alice", { cookie: aliceCookie, headers: FORGED });
      const [who] = seenFor("/forged-alice");
      const [real] = seenFor("/me");
      const pick = (w) => [w?.remoteUser, w?.remoteEmail, w?.remoteName, w?.remoteGroups, w?.remoteAmr];
      eq(pick(who), pick(real), "Remote-User, -Email, -Name, -Groups, -Amr (latchkey's, not the client's)");
    });
    await t.check("an access rule answers 403 on admin.example.test (alice is not root); the app is not reached", async () => {
      const res = await viaCaddy("admin", "/secret", { cookie: aliceCookie });
      eq(res.status, 403, "status");
      eq(upstream.seen.filter((w) => w.host?.startsWith("admin.")), [], "requests for admin that reached the app");
    });
    await t.check("a client's own X-Forwarded-Host naming app does not get it into admin (caddy replaces it): 403", async () => {
      const res = await viaCaddy("admin", "/xfh", { cookie: aliceCookie, headers: { "X-Forwarded-Host": `app.${DOMAIN}:${port}`, "X-Forwarded-Uri": "/xfh" } });
      eq(res.status, 403, "status");
      eq(seenFor("/xfh"), [], "requests that reached the app");
    });

    // A user latchkey knows no name for: its answer has no Remote-Name.
    let namelessCookie = null;
    await t.check("sign in as a user without a name (e-mail link)", async () => {
      const jar = new CookieJar();
      const f = jarFetch(jar);
      const email = "noname@example.com";
      const { csrfToken } = await (await f(`${spec.base}/csrf`)).json();
      const since = Date.now();
      const res = await f(`${spec.base}/signin/email`, { method: "POST", headers: FORM, body: form({ email, csrfToken, callbackUrl: `${origin("app")}/r`, json: "true" }) });
      assert(res.ok, () => `POST /signin/email: ${evidence(res)}`);
      const link = signInLink(await ctx.smtp.waitForMail(email, { since }));
      await confirmIfAsked(f, await f(link), spec.base);
      const token = jar.get(spec.base, COOKIE);
      assert(token, () => `no ${COOKIE} (jar: ${jar.header(spec.base)})`);
      const direct = await request(lk, "/authz/forward-auth", { headers: { ...forwardedFor("app", "/"), cookie: `${COOKIE}=${token}` } });
      eq([direct.status, direct.headers["remote-email"], direct.headers["remote-name"]], [200, email, undefined], "latchkey's answer: status, Remote-Email, Remote-Name");
      namelessCookie = token;
    });
    await t.check("README snippet, forged Remote-* and an answer without Remote-Name: no forgery reaches the app, the identity does", async () => {
      await viaCaddy("app", "/forged-nameless", { cookie: namelessCookie, headers: FORGED });
      const [who] = seenFor("/forged-nameless");
      eq(who?.remoteEmail, "noname@example.com", "Remote-Email");
      assert(/^[0-9a-f-]{36}$/.test(who.remoteUser ?? ""), `Remote-User ${show(who.remoteUser)} is not a user id`);
      eq([who.remoteName, who.remoteGroups], [absent("Remote-Name"), absent("Remote-Groups")], "Remote-Name, Remote-Groups");
      assert(who.remoteAmr && who.remoteAmr !== FORGED["Remote-Amr"], `Remote-Amr ${show(who.remoteAmr)}: not latchkey's`);
      await viaCaddy("app", "/forged-alice-readme", { cookie: aliceCookie, headers: FORGED });
      const [a] = seenFor("/forged-alice-readme");
      eq([a?.remoteEmail, a?.remoteName, a?.remoteGroups, a?.remoteAmr], [ALICE.email, ALICE.name, absent("Remote-Groups"), "fed"],
        "alice: Remote-Email, -Name, -Groups, -Amr");
      return `Remote-Name ${show(who.remoteName)}`;
    });
    await t.check("without request_header, an answer without Remote-Name: what the app receives for a forged one", async () => {
      await viaCaddy("bare", "/forged-bare", { cookie: namelessCookie, headers: FORGED });
      const [who] = seenFor("/forged-bare");
      eq(who?.remoteEmail, "noname@example.com", "Remote-Email");
      // Caddy 2.10 up to the fix for GHSA-7r4p-vjf4-gxv4 passes the forgery on.
      if (before210) eq([who.remoteName, who.remoteGroups], [literal("Remote-Name"), literal("Remote-Groups")], "Remote-Name, Remote-Groups");
      return `Remote-Name ${show(who.remoteName)}, Remote-Groups ${show(who.remoteGroups)}`;
    });
    await t.check("request_header -Remote-* outside a route runs after forward_auth: the app receives no identity at all", async () => {
      await viaCaddy("naive", "/naive", { cookie: aliceCookie });
      const [who] = seenFor("/naive");
      eq([who?.remoteUser, who?.remoteEmail, who?.remoteName, who?.remoteGroups, who?.remoteAmr], [null, null, null, null, null],
        "Remote-User, -Email, -Name, -Groups, -Amr");
    });
  } finally {
    await caddy.stop();
    await latchkey.stop();
    await upstream.close();
  }
}
