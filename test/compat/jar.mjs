// A small RFC 6265-ish cookie jar plus a fetch wrapper that uses it.
//
// Node's fetch keeps no cookies and, with redirect:"follow", drops the
// Set-Cookie headers of intermediate hops. The next-auth client needs the CSRF
// cookie from GET /csrf to come back on the POST, and an OAuth round trip sets
// cookies on several hops, so every request here goes out with
// redirect:"manual" and redirects are followed by hand (followRedirects).
//
// Cookies are keyed by host name only, like a browser: 127.0.0.1:3000 and
// 127.0.0.1:9000 share cookies (the cookie names do not collide).

const nativeFetch = globalThis.fetch;

/** Parse one Set-Cookie header into {name, value, attrs}. attrs keys are lower-case. */
export function parseSetCookie(header) {
  const parts = header.split(";");
  const first = parts.shift();
  const eq = first.indexOf("=");
  const name = (eq < 0 ? first : first.slice(0, eq)).trim();
  const value = eq < 0 ? "" : first.slice(eq + 1).trim();
  const attrs = {};
  for (const p of parts) {
    const i = p.indexOf("=");
    const k = (i < 0 ? p : p.slice(0, i)).trim().toLowerCase();
    const v = i < 0 ? true : p.slice(i + 1).trim();
    if (k) attrs[k] = v;
  }
  return { name, value, attrs, raw: header };
}

export class CookieJar {
  constructor() {
    /** @type {Map<string, {name,value,host,path,expires:number|null,secure:boolean,httpOnly:boolean}>} */
    this.cookies = new Map();
  }

  #key(host, path, name) {
    return `${host}\u0000${path}\u0000${name}`;
  }

  /** Store the Set-Cookie headers of a response for the given request URL. */
  store(url, setCookieHeaders) {
    const u = new URL(url);
    for (const h of setCookieHeaders) {
      const c = parseSetCookie(h);
      if (!c.name) continue;
      let path = typeof c.attrs.path === "string" && c.attrs.path.startsWith("/") ? c.attrs.path : defaultPath(u.pathname);
      let expires = null;
      if (c.attrs["max-age"] !== undefined && /^-?\d+$/.test(String(c.attrs["max-age"]))) {
        expires = Date.now() + Number(c.attrs["max-age"]) * 1000;
      } else if (typeof c.attrs.expires === "string") {
        const t = Date.parse(c.attrs.expires);
        if (!Number.isNaN(t)) expires = t;
      }
      const host = typeof c.attrs.domain === "string" ? c.attrs.domain.replace(/^\./, "") : u.hostname;
      const key = this.#key(host, path, c.name);
      if (expires !== null && expires <= Date.now()) {
        this.cookies.delete(key);
        continue;
      }
      this.cookies.set(key, {
        name: c.name,
        value: c.value,
        host,
        path,
        expires,
        secure: !!c.attrs.secure,
        httpOnly: !!c.attrs.httponly,
      });
    }
  }

  /** Cookies that would be sent to url, most specific path first. */
  list(url) {
    const u = new URL(url);
    const now = Date.now();
    const out = [];
    for (const [key, c] of this.cookies) {
      if (c.expires !== null && c.expires <= now) {
        this.cookies.delete(key);
        continue;
      }
      if (c.host !== u.hostname) continue;
      if (!pathMatches(u.pathname, c.path)) continue;
      if (c.secure && u.protocol !== "https:") continue;
      out.push(c);
    }
    out.sort((a, b) => b.path.length - a.path.length);
    return out;
  }

  header(url) {
    return this.list(url).map((c) => `${c.name}=${c.value}`).join("; ");
  }

  get(url, name) {
    return this.list(url).find((c) => c.name === name)?.value;
  }

  /** Set a cookie by hand (e.g. a token minted by next-auth/jwt encode). */
  set(url, name, value, path = "/") {
    const u = new URL(url);
    this.cookies.set(this.#key(u.hostname, path, name), {
      name, value, host: u.hostname, path, expires: null, secure: false, httpOnly: true,
    });
  }

  delete(url, name) {
    const u = new URL(url);
    for (const [key, c] of this.cookies) if (c.host === u.hostname && c.name === name) this.cookies.delete(key);
  }

  clone() {
    const j = new CookieJar();
    for (const [k, v] of this.cookies) j.cookies.set(k, { ...v });
    return j;
  }
}

function defaultPath(p) {
  if (!p.startsWith("/")) return "/";
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

function pathMatches(reqPath, cookiePath) {
  if (reqPath === cookiePath) return true;
  if (!reqPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || reqPath[cookiePath.length] === "/";
}

/**
 * A fetch that sends and stores the jar's cookies and never follows redirects.
 * Relative URLs resolve against `base()` (the shimmed window.location when the
 * next-auth client runs in "browser" mode). Every exchange is appended to `log`.
 */
export function jarFetch(jar, { base = () => undefined, log = [] } = {}) {
  const f = async (input, init = {}) => {
    const url = new URL(typeof input === "string" || input instanceof URL ? String(input) : input.url, base()).toString();
    const headers = new Headers(init.headers || {});
    if (!headers.has("cookie")) {
      const c = jar.header(url);
      if (c) headers.set("cookie", c);
    }
    const res = await nativeFetch(url, { ...init, headers, redirect: "manual", signal: init.signal ?? AbortSignal.timeout(20000) });
    jar.store(url, res.headers.getSetCookie());
    log.push({ method: (init.method || "GET").toUpperCase(), url, status: res.status, location: res.headers.get("location") });
    return res;
  };
  f.log = log;
  f.jar = jar;
  return f;
}

/**
 * Follow redirects by hand from `url` with a jar fetch. Stops before fetching a
 * URL for which stop(url) is true, or after max hops. Returns {url, res, chain}
 * where url is the last URL reached (fetched or not) and res its response (or
 * null when stopped before fetching it).
 */
export async function followRedirects(fetchFn, url, { stop = () => false, max = 20, init } = {}) {
  const chain = [];
  let current = url;
  let req = init;
  for (let i = 0; i < max; i++) {
    if (stop(current)) return { url: current, res: null, chain };
    const res = await fetchFn(current, req);
    chain.push({ url: current, status: res.status, location: res.headers.get("location") });
    const loc = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && loc) {
      current = new URL(loc, current).toString();
      req = undefined; // 302/303 after POST become GET
      await res.arrayBuffer().catch(() => {});
      continue;
    }
    return { url: current, res, chain };
  }
  throw new Error(`too many redirects: ${chain.map((c) => c.url).join(" -> ")}`);
}
