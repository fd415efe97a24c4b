// The reference: the real next-auth v4 route handler (next-auth/next, the
// Pages-Router API handler) hosted in a tiny node:http server with a fake
// Next.js req/res, as in the wire reference §0. No Next.js needed.
//
// Run as a child process (NEXTAUTH_URL is process-wide and read per request):
//   NEXTAUTH_REF_CONFIG='{"port":..,"url":"http://127.0.0.1:P/api/auth",...}' node nextauth-server.mjs
// Config keys: port, url, secret, strategy ("jwt"|"database"), issuer,
// clientId, clientSecret, smtpUrl, from, maxAge, updateAge, credentials.
// Prints "ready <port>" on stdout when listening.
import http from "node:http";
import querystring from "node:querystring";
import { createRequire } from "node:module";
import { PASSWORD_USER } from "./credentials.mjs";

const require = createRequire(import.meta.url);

/** An in-memory v4 adapter that behaves like a SQL one (missing columns are null). */
export function memoryAdapter() {
  const users = new Map();
  const accounts = new Map();
  const sessions = new Map();
  const tokens = new Map();
  let seq = 0;
  const row = (u) => ({
    id: u.id,
    name: u.name ?? null,
    email: u.email ?? null,
    emailVerified: u.emailVerified ?? null,
    image: u.image ?? null,
  });
  const copy = (x) => (x ? { ...x } : null);
  return {
    async createUser(u) {
      const r = row({ ...u, id: `user-${++seq}` });
      users.set(r.id, r);
      return copy(r);
    },
    async getUser(id) {
      return copy(users.get(id));
    },
    async getUserByEmail(email) {
      for (const u of users.values()) if (u.email === email) return copy(u);
      return null;
    },
    async getUserByAccount({ provider, providerAccountId }) {
      const a = accounts.get(`${provider}\u0000${providerAccountId}`);
      return a ? copy(users.get(a.userId)) : null;
    },
    async updateUser(u) {
      const r = { ...users.get(u.id), ...u };
      users.set(u.id, r);
      return copy(r);
    },
    async deleteUser(id) {
      const u = users.get(id);
      users.delete(id);
      return copy(u);
    },
    async linkAccount(a) {
      accounts.set(`${a.provider}\u0000${a.providerAccountId}`, { ...a });
      return a;
    },
    async unlinkAccount({ provider, providerAccountId }) {
      accounts.delete(`${provider}\u0000${providerAccountId}`);
    },
    async createSession(s) {
      sessions.set(s.sessionToken, { ...s });
      return { ...s };
    },
    async getSessionAndUser(sessionToken) {
      const s = sessions.get(sessionToken);
      if (!s) return null;
      const u = users.get(s.userId);
      if (!u) return null;
      return { session: { ...s }, user: { ...u } };
    },
    async updateSession(s) {
      const cur = sessions.get(s.sessionToken);
      if (!cur) return null;
      const r = { ...cur, ...s };
      sessions.set(s.sessionToken, r);
      return { ...r };
    },
    async deleteSession(sessionToken) {
      const s = sessions.get(sessionToken);
      sessions.delete(sessionToken);
      return copy(s);
    },
    async createVerificationToken(v) {
      tokens.set(`${v.identifier}\u0000${v.token}`, { ...v });
      return v;
    },
    async useVerificationToken({ identifier, token }) {
      const k = `${identifier}\u0000${token}`;
      const v = tokens.get(k);
      if (!v) return null;
      tokens.delete(k);
      return v;
    },
  };
}

export function authOptions(cfg) {
  const EmailProvider = require("next-auth/providers/email").default;
  return {
    secret: cfg.secret,
    adapter: memoryAdapter(),
    session: { strategy: cfg.strategy, maxAge: cfg.maxAge ?? 30 * 24 * 3600, updateAge: cfg.updateAge ?? 24 * 3600 },
    providers: [
      {
        id: "idp",
        name: "Company SSO",
        type: "oauth",
        wellKnown: `${cfg.issuer}/.well-known/openid-configuration`,
        clientId: cfg.clientId,
        clientSecret: cfg.clientSecret,
        authorization: { params: { scope: "openid email profile" } },
        idToken: true,
        checks: ["pkce", "state", "nonce"],
        profile(p) {
          return { id: p.sub, name: p.name ?? p.preferred_username, email: p.email, image: p.picture };
        },
      },
      EmailProvider({ server: cfg.smtpUrl, from: cfg.from }),
      ...(cfg.credentials ? [passwordProvider()] : []),
    ],
  };
}

/** next-auth's Credentials provider accepting PASSWORD_USER only, as latchkey's user table would. */
function passwordProvider() {
  const CredentialsProvider = require("next-auth/providers/credentials").default;
  return CredentialsProvider({
    credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
    async authorize(c) {
      const email = String(c?.email ?? "").trim().toLowerCase();
      if (email !== PASSWORD_USER.email || c?.password !== PASSWORD_USER.password) return null;
      return { id: "pat", email, name: null, image: null };
    },
  });
}

/** Parse a Cookie header like Next.js does (values percent-decoded). */
function parseCookies(header) {
  const out = {};
  if (!header) return out;
  for (const part of header.split(";")) {
    const i = part.indexOf("=");
    if (i < 0) continue;
    const k = part.slice(0, i).trim();
    let v = part.slice(i + 1).trim();
    if (v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
    if (out[k] === undefined) {
      try {
        out[k] = decodeURIComponent(v);
      } catch {
        out[k] = v;
      }
    }
  }
  return out;
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const raw = Buffer.concat(chunks).toString();
  const ct = (req.headers["content-type"] || "").split(";")[0].trim().toLowerCase();
  if (!raw) return ct ? {} : undefined;
  if (ct === "application/json") return JSON.parse(raw);
  if (ct === "application/x-www-form-urlencoded") return { ...querystring.parse(raw) };
  return raw;
}

/** Wrap node's ServerResponse with the bits of Next's NextApiResponse that next-auth uses. */
function apiResponse(res) {
  res.status = (code) => {
    res.statusCode = code;
    return res;
  };
  res.json = (obj) => {
    res.setHeader("Content-Type", "application/json; charset=utf-8");
    res.end(JSON.stringify(obj));
    return res;
  };
  res.send = (body) => {
    if (body === undefined || body === null) {
      res.end();
    } else if (typeof body === "object" && !Buffer.isBuffer(body)) {
      res.json(body);
    } else {
      res.setHeader("Content-Length", Buffer.byteLength(body));
      res.end(body);
    }
    return res;
  };
  return res;
}

/** Serve next-auth's handler with options (default: authOptions(cfg), the in-memory adapter). */
export async function startReference(cfg, options = authOptions(cfg)) {
  process.env.NEXTAUTH_URL = cfg.url;
  process.env.NEXTAUTH_SECRET = cfg.secret;
  const NextAuth = require("next-auth/next").default;
  const basePath = new URL(cfg.url).pathname.replace(/\/$/, "");

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, cfg.url);
    if (url.pathname !== basePath && !url.pathname.startsWith(basePath + "/")) {
      res.statusCode = 404;
      res.setHeader("content-type", "text/plain");
      res.end("not found (reference server only hosts the auth routes)");
      return;
    }
    try {
      const segments = url.pathname.slice(basePath.length).split("/").filter(Boolean).map(decodeURIComponent);
      const query = {};
      for (const [k, v] of url.searchParams) {
        query[k] = query[k] === undefined ? v : [].concat(query[k], v);
      }
      query.nextauth = segments;
      req.query = query;
      req.cookies = parseCookies(req.headers.cookie);
      req.body = await readBody(req);
      await NextAuth(req, apiResponse(res), options);
    } catch (e) {
      // What Next.js does with an unhandled exception in an API route.
      console.error("reference handler threw:", e);
      if (!res.headersSent) {
        res.statusCode = 500;
        res.setHeader("content-type", "text/plain");
      }
      res.end("Internal Server Error");
    }
  });
  await new Promise((r) => server.listen(cfg.port, "127.0.0.1", r));
  return server;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cfg = JSON.parse(process.env.NEXTAUTH_REF_CONFIG);
  await startReference(cfg);
  console.log(`ready ${cfg.port}`);
}

/** Spawn the reference server as a child process (see the header comment). */
export async function spawnReference(cfg, { dir, name }) {
  const { spawnLogged, waitHttp, stopChild, logTail } = await import("./procs.mjs");
  const fs = await import("node:fs");
  fs.mkdirSync(dir, { recursive: true });
  const log = `${dir}/nextauth.log`;
  const env = { ...process.env, NEXTAUTH_REF_CONFIG: JSON.stringify(cfg), NODE_ENV: "development", NEXTAUTH_URL: cfg.url };
  const proc = spawnLogged(process.execPath, [new URL(import.meta.url).pathname], { env, logFile: log });
  await waitHttp(proc, `${cfg.url}/providers`, log);
  const origin = new URL(cfg.url).origin;
  return { name, base: cfg.url, origin, port: cfg.port, dir, log, proc, logTail: (n) => logTail(log, n), stop: () => stopChild(proc) };
}
