// Turns an HTTP response into what a client can observe, with random values
// replaced by their shape, so two servers' answers can be compared.
import { parseSetCookie } from "./jar.mjs";

const HEX64 = /^[0-9a-f]{64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const JWE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
// OAuth parameters whose values are random by design (compared by presence only).
const RANDOM_PARAMS = new Set(["state", "nonce", "code_challenge", "code", "token"]);
const TOKENISH = /^[A-Za-z0-9_-]{16,}$/;

/** Placeholders for a server's origin and base URL and for the IdP. */
export function normalizer({ origin, base, issuer }) {
  const subst = (s) => {
    if (issuer && s.startsWith(issuer)) return "{idp}" + s.slice(issuer.length);
    if (s.startsWith(base)) return "{base}" + s.slice(base.length);
    if (s.startsWith(origin)) return "{origin}" + s.slice(origin.length);
    return s;
  };

  /** Shape of a scalar string value. */
  function value(s) {
    if (typeof s !== "string") return s;
    if (s === "") return "";
    if (/^https?:\/\//.test(s)) return url(s);
    if (HEX64.test(s)) return "<hex64>";
    if (/^[0-9a-f]{64}(\||%7C)[0-9a-f]{64}$/.test(s)) return `<hex64>${s.includes("|") ? "|" : "%7C"}<hex64>`;
    if (UUID.test(s)) return "<uuid>";
    if (JWE.test(s)) return "<jwe>";
    if (ISO.test(s)) return `<date ${relDays(Date.parse(s))}>`;
    if (TOKENISH.test(s) && /\d/.test(s) && /[A-Za-z]/.test(s)) return "<random>";
    return s;
  }

  /** An absolute or relative URL: placeholders for origins, query values by shape. */
  function url(s) {
    if (s == null) return s;
    let u;
    try {
      u = new URL(s);
    } catch {
      return `<not a URL: ${s}>`;
    }
    const head = subst(u.origin + u.pathname);
    // Query order carries no meaning for a client (Go sorts, URLSearchParams keeps insertion order).
    const q = [...u.searchParams].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${RANDOM_PARAMS.has(k) && v ? "<random>" : value(v)}`);
    return head + (q.length ? "?" + q.join("&") : "") + (u.hash ? "#" + u.hash : "");
  }

  /** Deep-map every string in a JSON value. */
  function json(v) {
    if (Array.isArray(v)) return v.map(json);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, json(x)]));
    return value(v);
  }

  return { value, url, json, subst };
}

function relDays(t) {
  const d = (t - Date.now()) / 86400e3;
  if (Math.abs(d) < 1 / 24) return "now";
  return `now${d >= 0 ? "+" : ""}${Math.round(d)}d`;
}

function relTime(t) {
  const s = (t - Date.now()) / 1000;
  if (s <= 0) return "past";
  if (s < 2 * 3600) return `+${Math.round(s / 60)}min`;
  if (s < 72 * 3600) return `+${Math.round(s / 3600)}h`;
  return `+${Math.round(s / 86400)}d`;
}

/** Summarise a Set-Cookie header. */
export function cookieShape(header, norm) {
  const c = parseSetCookie(header);
  let decoded = c.value;
  try {
    decoded = decodeURIComponent(c.value);
  } catch {}
  const out = { value: c.value === "" ? "" : norm.value(c.value.includes("%7C") ? c.value : decoded) };
  if (/^https?:/.test(decoded) && decoded !== c.value) out.value = norm.url(decoded);
  if (c.value && decoded !== c.value) out.percentEncoded = true;
  if (c.value && decoded === c.value && encodeURIComponent(decoded) !== decoded && !c.value.includes("%7C")) out.percentEncoded = false;
  const a = c.attrs;
  out.path = a.path ?? null;
  if (a.domain) out.domain = norm.subst(a.domain);
  out.httpOnly = !!a.httponly;
  out.secure = !!a.secure;
  out.sameSite = typeof a.samesite === "string" ? a.samesite.toLowerCase() : null;
  if (a["max-age"] !== undefined) out.maxAge = Number(a["max-age"]);
  if (typeof a.expires === "string") out.expires = relTime(Date.parse(a.expires));
  return { name: c.name, shape: out };
}

const V4_MESSAGES = [
  "Try signing in with a different account.",
  "To confirm your identity, sign in with the same account you used originally.",
  "The e-mail could not be sent.",
  "Sign in failed. Check the details you provided are correct.",
  "Please sign in to access this page.",
  "Unable to sign in.",
  "There is a problem with the server configuration.",
  "You do not have permission to sign in.",
  "The sign in link is no longer valid.",
  "A sign in link has been sent to your email address.",
  "Are you sure you want to sign out?",
];

const decodeEntities = (s) => s.replace(/&amp;/g, "&").replace(/&quot;/g, '"').replace(/&#x27;|&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">");
const attr = (tag, name) => {
  const m = tag.match(new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)'|([^\\s>]+))`, "i"));
  return m ? decodeEntities(m[2] ?? m[3] ?? m[4] ?? "") : null;
};

/** What matters in one of the built-in pages: title, forms and their fields, v4 messages shown. */
export function htmlShape(html, norm) {
  const title = (html.match(/<title[^>]*>([\s\S]*?)<\/title>/i)?.[1] ?? "").trim();
  const forms = [];
  const formRe = /<form\b([^>]*)>([\s\S]*?)<\/form>/gi;
  let m;
  while ((m = formRe.exec(html))) {
    const tag = `<form ${m[1]}>`;
    const inner = m[2];
    const inputs = [...inner.matchAll(/<input\b[^>]*>/gi)].map((x) => {
      const t = x[0];
      const type = (attr(t, "type") ?? "text").toLowerCase();
      const name = attr(t, "name");
      const o = { name, type };
      if (type === "hidden") o.value = norm.value(attr(t, "value") ?? "");
      return o;
    });
    forms.push({ action: norm.url(attr(tag, "action")), method: (attr(tag, "method") ?? "get").toLowerCase(), inputs });
  }
  const text = decodeEntities(html.replace(/<[^>]+>/g, " ")).replace(/\s+/g, " ");
  const messages = V4_MESSAGES.filter((msg) => text.includes(msg));
  return { title, forms, messages };
}

/**
 * Observe a fetch Response (body already read as text).
 * Returns {status, type, location, headers, body, cookies}.
 */
export function observe(res, text, norm) {
  let type = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase() || null;
  const redirect = res.status >= 300 && res.status < 400;
  // Next.js sends a plain string body without a Content-Type (browsers sniff
  // it as text); an explicit text/plain is the same to a client.
  if (type === null && text) type = "text/plain";
  const o = { status: res.status, type: redirect ? undefined : type };
  const loc = res.headers.get("location");
  if (loc !== null) o.location = /^https?:/.test(loc) ? norm.url(loc) : `<relative> ${loc}`;
  const h = {};
  for (const k of ["cache-control", "pragma", "expires"]) {
    const v = res.headers.get(k);
    if (v !== null) h[k] = v.toLowerCase();
  }
  o.headers = h;
  if (redirect) {
    // The body of a redirect (Go writes a small HTML link) is never read by a client.
  } else if (type === "application/json") {
    try {
      o.body = norm.json(JSON.parse(text));
    } catch {
      o.body = `<invalid JSON: ${text.slice(0, 80)}>`;
    }
  } else if (type === "text/html") {
    o.body = htmlShape(text, norm);
  } else {
    o.body = text.length > 200 ? text.slice(0, 200) + "…" : text;
  }
  const cookies = {};
  for (const sc of res.headers.getSetCookie()) {
    const { name, shape } = cookieShape(sc, norm);
    (cookies[name] ??= []).push(shape);
  }
  o.cookies = Object.fromEntries(Object.entries(cookies).map(([k, v]) => [k, v.length === 1 ? v[0] : v]));
  return o;
}

/** Deep differences between two observations: [{path, a, b}]. */
export function diff(a, b, path = "") {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  const isObj = (x) => x && typeof x === "object" && !Array.isArray(x);
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    return keys.flatMap((k) => diff(a[k], b[k], path ? `${path}.${k}` : k));
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return a.flatMap((x, i) => diff(x, b[i], `${path}[${i}]`));
  }
  return [{ path, a, b }];
}
