// Forward-auth behind a real nginx, in headless Chromium: apps on sibling
// hosts protected by latchkey's /authz routes, one sign-in for all of them.
//
//   auth.example.test:P1   nginx: latchkey under /api/auth/, and an app
//                          behind `auth_request` → /authz/auth-request
//                          (401 → error_page → the sign-in page)
//   app.example.test:P2    nginx standing in for Traefik / Caddy: the app
//   admin.example.test:P2  behind /authz/forward-auth, whose 302 to the
//                          sign-in page nginx hands to the browser
//
// Chromium resolves *.example.test to 127.0.0.1 (--host-resolver-rules);
// latchkey has cookies.domain: example.test, trusts nginx (127.0.0.1/32),
// allows the app's origin as a callbackUrl, and an access rule keeps
// admin.example.test for root@example.com. The app (a node:http server)
// shows the Remote-* headers it received.
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { chromium } from "playwright-core";
import { ALICE } from "./idp.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./browser.test.mjs";
import { latchkeyBinary, latchkeyConfig, startLatchkey } from "./latchkey.mjs";
import { startNginx } from "./nginx.mjs";
import { assert, eq, show } from "./report.mjs";
import { freePorts } from "./util.mjs";

const DOMAIN = "example.test";

/** One spec: the public origin of latchkey (nginx), so the IdP knows its redirect URI. */
export function plan(target) {
  return target === "latchkey" ? [{ id: "forward-auth", kind: "own", host: `auth.${DOMAIN}` }] : [];
}

/** rawStatus sends one raw HTTP request to nginx on 127.0.0.1:port and returns its status code. */
function rawStatus(port, request) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, "127.0.0.1", () => sock.write(request));
    let data = "";
    sock.setTimeout(10000, () => sock.destroy(new Error("no answer from nginx")));
    sock.on("data", (d) => { data += d; });
    sock.on("end", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0)));
    sock.on("error", reject);
  });
}

/** The protected app: echoes what it received as JSON inside a page. */
async function startUpstream(port) {
  const seen = [];
  const server = http.createServer((req, res) => {
    const who = {
      url: req.url,
      host: req.headers.host,
      remoteUser: req.headers["remote-user"] ?? null,
      remoteEmail: req.headers["remote-email"] ?? null,
      remoteName: req.headers["remote-name"] ?? null,
      remoteGroups: req.headers["remote-groups"] ?? null,
      remoteAmr: req.headers["remote-amr"] ?? null,
    };
    seen.push(who);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(`<!doctype html><title>protected</title><pre id="who">${JSON.stringify(who).replace(/</g, "\\u003c")}</pre>`);
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { seen, close: () => new Promise((resolve) => server.close(resolve)) };
}

/**
 * The nginx server blocks: auth_request style on p1, forward-auth style on
 * p2, one server block per host with the host written literally into the
 * forwarded URL (docs/forward-auth.md's advice: $host is the client's Host header
 * whenever no server_name matches). admin's block is p2's default server,
 * so a request naming a host nginx does not know lands there and is judged
 * as admin, never as a host the client chose.
 */
function nginxServers({ p1, p2, lk, up }) {
  // docs/forward-auth.md's: every identity header set from the answer, so
  // none of the client's own passes (nginx sends no header whose value is empty).
  const identity = `
      auth_request_set $lk_user $upstream_http_remote_user;
      auth_request_set $lk_email $upstream_http_remote_email;
      auth_request_set $lk_name $upstream_http_remote_name;
      auth_request_set $lk_groups $upstream_http_remote_groups;
      auth_request_set $lk_amr $upstream_http_remote_amr;
      proxy_set_header Remote-User $lk_user;
      proxy_set_header Remote-Email $lk_email;
      proxy_set_header Remote-Name $lk_name;
      proxy_set_header Remote-Groups $lk_groups;
      proxy_set_header Remote-Amr $lk_amr;`;
  const askLatchkey = (route, headers) => `
    location = /_latchkey {
      internal;
      proxy_pass http://127.0.0.1:${lk}${route};
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
${headers}
    }`;
  return `
  server {
    listen 127.0.0.1:${p1};
    server_name auth.${DOMAIN};
    location /api/auth/ {
      proxy_pass http://127.0.0.1:${lk};
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
    }
${askLatchkey("/authz/auth-request", `      proxy_set_header X-Original-URL http://auth.${DOMAIN}:${p1}$request_uri;`)}
    location / {
      auth_request /_latchkey;${identity}
      error_page 401 = @signin;
      proxy_pass http://127.0.0.1:${up};
    }
    # docs/forward-auth.md's: latchkey's forward-auth route builds the sign-in redirect,
    # with the URL asked for encoded as callbackUrl (nginx cannot encode it).
    location @signin {
      rewrite ^ /authz/forward-auth? break;
      proxy_pass http://127.0.0.1:${lk};
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Original-URL http://auth.${DOMAIN}:${p1}$request_uri;
    }
  }${["admin", "app"].map((name) => forwardAuthServer(name)).join("")}`;

  // One forward-auth style server block for name.example.test on p2.
  function forwardAuthServer(name) {
    return `
  server {
    listen 127.0.0.1:${p2}${name === "admin" ? " default_server" : ""};
    server_name ${name}.${DOMAIN};
${askLatchkey("/authz/forward-auth", `      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host ${name}.${DOMAIN}:${p2};
      proxy_set_header X-Forwarded-Uri $request_uri;`)}
    location / {
      auth_request /_latchkey;${identity}
      # forward-auth answers 302 when not signed in; auth_request calls that
      # an error (500), so hand the browser latchkey's Location, as Traefik does.
      auth_request_set $lk_location $upstream_http_location;
      error_page 500 = @latchkey_redirect;
      proxy_pass http://127.0.0.1:${up};
    }
    location @latchkey_redirect {
      if ($lk_location = "") { return 503; }
      return 302 $lk_location;
    }
  }`;
  }
}

async function whoIsShown(page) {
  const text = await page.locator("#who").textContent({ timeout: 5000 }).catch(() => null);
  if (!text) assert(false, `not the protected app's page: ${page.url()}: ${show((await page.content()).slice(0, 300))}`);
  return JSON.parse(text);
}

export async function run(report, ctx) {
  if (ctx.target !== "latchkey") return;
  const t = report.scope("forward-auth ");
  const spec = ctx.specs.find((s) => s.id === "forward-auth");
  const [lk, up, p2] = await freePorts(3);
  const p1 = spec.port;
  const authOrigin = `http://auth.${DOMAIN}:${p1}`;
  const appOrigin = `http://app.${DOMAIN}:${p2}`;
  const adminOrigin = `http://admin.${DOMAIN}:${p2}`;
  const dir = path.join(ctx.tmp, "forward-auth");

  let upstream;
  let latchkey;
  let nginx;
  let browser;
  const ok = await t.check("latchkey, the app and nginx (auth_request, forward-auth) start", async () => {
    upstream = await startUpstream(up);
    const config =
      latchkeyConfig({
        issuer: ctx.idp.issuer, clientId: ctx.clientId, clientSecret: ctx.clientSecret, smtpUrl: ctx.smtp.url,
        from: "Sign in <no-reply@example.com>", strategy: "database", cookieDomain: DOMAIN,
      }) +
      `trusted_proxies: [127.0.0.1/32]
allowed_redirect_origins: [${JSON.stringify(appOrigin)}, ${JSON.stringify(adminOrigin)}]
access:
  - hosts: [admin.${DOMAIN}]
    emails: [root@example.com]
  - hosts: [auth.${DOMAIN}, app.${DOMAIN}]
    anyone: true
`;
    latchkey = await startLatchkey({ bin: latchkeyBinary(), port: lk, secret: ctx.secret, config, dir: path.join(dir, "latchkey"), name: "forward-auth", serviceUrl: spec.base });
    nginx = await startNginx({ dir: path.join(dir, "nginx"), servers: nginxServers({ p1, p2, lk, up }), waitUrl: `http://127.0.0.1:${p1}/api/auth/providers` });
    // The browser suite's flags, plus the resolver rule for the sibling hosts.
    browser = await chromium.launch({
      executablePath: CHROMIUM, headless: true, chromiumSandbox: false, timeout: 60000,
      args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP *.${DOMAIN} 127.0.0.1`],
    });
    return `nginx on ${p1} and ${p2}, latchkey on ${lk}`;
  });
  if (!ok) {
    await Promise.all([browser?.close(), nginx?.stop(), latchkey?.stop(), upstream?.close()]);
    return;
  }

  const newContext = async () => {
    const context = await browser.newContext({ locale: "en-US" });
    context.blocked = [];
    await context.route("**/*", (route) => {
      const u = new URL(route.request().url());
      if (u.hostname !== "127.0.0.1" && !u.hostname.endsWith(`.${DOMAIN}`)) {
        context.blocked.push(u.href);
        return route.abort("blockedbyclient");
      }
      return route.continue();
    });
    return context;
  };
  const signInWithIdp = async (page, landing) => {
    await page.getByRole("button", { name: /Company SSO/ }).click();
    await page.waitForURL(landing, { timeout: 15000 });
  };

  try {
    // ---- nginx auth_request, on latchkey's own host ------------------------
    const a = await newContext();
    const pa = await a.newPage();
    const protectedUrl = `${authOrigin}/protected?x=1&y=two%20words`; // & and % survive the round trip
    await t.check("auth_request: a protected page sends a signed-out browser to the sign-in page", async () => {
      const res = await pa.goto(protectedUrl);
      const u = new URL(pa.url());
      eq(u.origin + u.pathname, `${spec.base}/signin`, "landed on");
      eq(u.searchParams.get("callbackUrl"), protectedUrl, "callbackUrl");
      eq(res.status(), 200, "sign-in page status");
      eq(upstream.seen.length, 0, "requests that reached the app");
    });
    await t.check("auth_request: signing in through the IdP lands on the page, and the app receives Remote-Email", async () => {
      await signInWithIdp(pa, protectedUrl);
      const who = await whoIsShown(pa);
      eq([who.remoteEmail, who.remoteName], [ALICE.email, ALICE.name], "Remote-Email, Remote-Name");
      assert(/^[0-9a-f-]{36}$/.test(who.remoteUser ?? ""), `Remote-User ${show(who.remoteUser)} is not a user id`);
      const cookie = (await a.cookies()).find((c) => c.name === "next-auth.session-token");
      eq(cookie?.domain, `.${DOMAIN}`, "the session cookie's domain (cookies.domain)");
      return `Remote-User ${who.remoteUser}`;
    });
    await t.check("the same browser is signed in on a sibling host (cookies.domain), forward-auth style", async () => {
      await pa.goto(`${appOrigin}/sibling`);
      eq(pa.url(), `${appOrigin}/sibling`, "no detour through sign-in");
      eq((await whoIsShown(pa)).remoteEmail, ALICE.email, "Remote-Email");
    });
    await t.check("an access rule answers 403 on admin.example.test (alice is not root)", async () => {
      const res = await pa.goto(`${adminOrigin}/`);
      eq(res.status(), 403, "status");
      assert(!upstream.seen.some((w) => w.host?.startsWith("admin.")), "the app saw a request for admin");
    });
    await t.check("an absolute URL in the request line naming admin, with Host: app, is judged for admin (403)", async () => {
      // nginx picks the server block by the request line's host; the config
      // names the host for latchkey with $host, not the raw Host header.
      const cookie = (await a.cookies(appOrigin)).map((c) => `${c.name}=${c.value}`).join("; ");
      const status = await rawStatus(p2, `GET ${adminOrigin}/secret HTTP/1.1\r\nHost: app.${DOMAIN}:${p2}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`);
      eq(status, 403, "status");
      assert(!upstream.seen.some((w) => w.url === "/secret"), "the app served /secret");
    });
    await t.check("a foreign Host (no server_name matches: admin's default server block) is judged as admin, not as the client's name (403)", async () => {
      // issue 26 M1: with $host in the forwarded URL this host would be
      // 203.0.113.5, which no rule names, and passed before the fix.
      const cookie = (await a.cookies(appOrigin)).map((c) => `${c.name}=${c.value}`).join("; ");
      for (const host of ["203.0.113.5", `other.${DOMAIN}:${p2}`]) {
        const status = await rawStatus(p2, `GET /foreign HTTP/1.1\r\nHost: ${host}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`);
        eq(status, 403, `status with Host: ${host}`);
      }
      assert(!upstream.seen.some((w) => w.url === "/foreign"), "the app served /foreign");
    });
    await a.close();

    // ---- forward-auth redirect style, a sibling host ------------------------
    const b = await newContext();
    const pb = await b.newPage();
    const appUrl = `${appOrigin}/hello?x=1&y=two`;
    await t.check("forward-auth: a signed-out browser is sent to latchkey's sign-in page with the app URL as callbackUrl", async () => {
      await pb.goto(appUrl);
      const u = new URL(pb.url());
      eq(u.origin + u.pathname, `${spec.base}/signin`, "landed on");
      eq(u.searchParams.get("callbackUrl"), appUrl, "callbackUrl");
    });
    await t.check("forward-auth: signing in through the IdP lands back on the app, which receives Remote-Email", async () => {
      await signInWithIdp(pb, appUrl);
      const who = await whoIsShown(pb);
      eq([who.url, who.remoteEmail], ["/hello?x=1&y=two", ALICE.email], "url, Remote-Email");
    });
    await t.check("no Remote-* header the browser sends itself reaches the app", async () => {
      await pb.goto(`${appOrigin}/real`);
      const real = await whoIsShown(pb);
      await b.setExtraHTTPHeaders({ "Remote-Email": "mallory@example.com", "Remote-User": "admin", "Remote-Name": "Admin",
        "Remote-Groups": "admins", "Remote-Amr": "pwd,otp,mfa" });
      await pb.goto(`${appOrigin}/forged`);
      const who = await whoIsShown(pb);
      await b.setExtraHTTPHeaders({});
      const pick = (w) => [w.remoteUser, w.remoteEmail, w.remoteName, w.remoteGroups, w.remoteAmr];
      eq(pick(who), pick(real), "Remote-User, -Email, -Name, -Groups, -Amr (latchkey's, not the browser's)");
      eq([real.remoteEmail, real.remoteGroups, real.remoteAmr], [ALICE.email, null, "fed"], "Remote-Email, Remote-Groups (alice has none), Remote-Amr");
    });
    await t.check("after signing out on latchkey's page the app sends the browser to sign in again", async () => {
      await pb.goto(`${spec.base}/signout`);
      await Promise.all([pb.waitForNavigation({ timeout: 15000 }), pb.getByRole("button", { name: /sign out/i }).click()]);
      const before = upstream.seen.length;
      await pb.goto(`${appOrigin}/after`);
      const u = new URL(pb.url());
      eq(u.origin + u.pathname, `${spec.base}/signin`, "landed on");
      eq(upstream.seen.length, before, "requests that reached the app");
    });
    await t.check("no request left 127.0.0.1 and *.example.test", async () => {
      eq(b.blocked, [], "blocked requests");
    });
    await b.close();
  } finally {
    await browser.close();
    await nginx.stop();
    await latchkey.stop();
    await upstream.close();
  }
}
