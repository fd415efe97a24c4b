// Differences between latchkey and next-auth v4 that are deliberate or
// harmless. Each one is described in docs/compatibility.md under the same id.
// The differential check (diff.test.mjs) accepts a difference only when an
// entry matches the scenario name, the path of the differing field and, where
// given, the predicate on the two values (a: latchkey, b: next-auth v4).
const absent = (x) => x === undefined;
const isClearing = (c) => c && typeof c === "object" && c.value === "" && c.maxAge === 0;

export const KNOWN = [
  {
    id: "oauth-state-from-csrf",
    scenario: /^(POST \/signin\/idp|OIDC sign-in|GET \/callback\/idp)/,
    path: /^cookies\.next-auth\.state$/,
    when: (d) => absent(d.a),
    reason: "latchkey derives the OAuth state from the CSRF token and the attempt nonce in its check cookie, and recomputes it at the callback; next-auth v4 keeps a random state in a next-auth.state cookie",
  },
  {
    id: "protocol-relative-callback",
    scenario: /\/\/evil\.example/,
    path: /^(body\.url|cookies\.next-auth\.callback-url)$/,
    reason: "latchkey treats //host as another origin and falls back to the site origin; next-auth v4 prefixes it with its origin (http://host//evil.example/x)",
  },
  {
    id: "invalid-callbackurl-no-500",
    scenario: /callbackUrl=foo/,
    path: /.*/,
    when: (d) => d.path !== "status" || d.a < 500,
    reason: "an invalid callbackUrl (not absolute, no leading slash) is ignored by latchkey; next-auth v4 answers 500 (configuration error)",
  },
  {
    id: "csrf-rotates-at-sign-in",
    scenario: /^(OIDC sign-in: callback response|GET e-mail link \((fresh|requesting) browser\)|POST \/callback\/credentials .*\(.*right password\))$/,
    path: /^cookies\.next-auth\.csrf-token$/,
    // One new CSRF cookie where v4 sends none (or its init cookie); two Set-Cookies
    // for the same name in one response are not accepted (RFC 6265 §4.1.1).
    when: (d) => d.a && !Array.isArray(d.a) && d.a.value === "<hex64>%7C<hex64>",
    reason: "latchkey issues a new CSRF token when a sign-in completes, so states and forms from before the sign-in are retired; next-auth v4 keeps the token for the life of the cookie. The v4 client fetches a fresh token before every POST",
  },
  {
    id: "email-link-binding-cookie",
    scenario: /^(POST \/signin\/email with CSRF|GET e-mail link \(requesting browser\))/,
    path: /^cookies\.next-auth\.email-binding$/,
    // Set with the link (Max-Age = the link's 24 h), cleared when it is used;
    // HttpOnly, SameSite=Lax, scoped to the base path (never sent to the app).
    when: (d) =>
      absent(d.b) && d.a && !Array.isArray(d.a) && d.a.httpOnly && d.a.sameSite === "lax" && d.a.path !== "/" &&
      (isClearing(d.a) || d.a.maxAge === 86400),
    reason: "latchkey binds an e-mail link to the browser that asked for it with an encrypted cookie of its own (next-auth v4 binds nothing), set by the sign-in POST and cleared when the link is used. No client reads it",
  },
  {
    id: "email-link-other-browser-confirm-page",
    scenario: /^GET e-mail link \(fresh browser\)$/,
    path: /^(status|type|location|body|headers\.(cache-control|pragma|expires)|cookies\.next-auth\.session-token)$/,
    when: (d) => {
      switch (d.path) {
        case "status":
          return d.a === 200 && d.b === 302;
        case "type":
          return d.a === "text/html" && absent(d.b);
        case "location":
          return absent(d.a) && typeof d.b === "string";
        case "body":
          return d.a?.title === "Sign In" && d.a.forms?.length === 1 && absent(d.b);
        case "cookies.next-auth.session-token":
          return absent(d.a);
        default: // the confirm page's no-store headers against the redirect's
          return true;
      }
    },
    reason: "a link opened in a browser that did not ask for it (another device, a mail scanner, a victim lured to an attacker's own link: login CSRF) shows latchkey's confirm page naming the address stored with the token, and signs in only when its button is pressed; nothing is spent before. next-auth v4 signs in on GET. In the browser that asked for the link latchkey signs in on GET as v4 does",
  },
  {
    id: "v5-return-redirect-header",
    scenario: /X-Auth-Return-Redirect/,
    path: /.*/,
    reason: "latchkey serves the v5 client too: a redirecting POST with X-Auth-Return-Redirect answers 200 {url} (as @auth/core does); next-auth v4 ignores the header and answers 302",
  },
  {
    id: "oauth-check-cookie",
    scenario: /(\/signin\/idp|OIDC sign-in|\/callback\/idp)/,
    path: /^cookies\.next-auth\.(oauth-check|pkce\.code_verifier|nonce)$/,
    // latchkey sets (sign-in) or clears (every callback) its one cookie; v4 sets
    // or clears its two, and clears them only after a successful callback.
    when: (d) => (d.path.endsWith(".oauth-check") ? absent(d.b) && (d.a.value === "" ? isClearing(d.a) : d.a.maxAge === 900) : absent(d.a)),
    reason: "latchkey keeps an OAuth attempt (attempt nonce, PKCE verifier, OIDC nonce, provider) in one gorilla/securecookie cookie, next-auth.oauth-check with Path = the base path, and clears it at every callback, failed ones included; next-auth v4 keeps the verifier and the nonce in two JWE cookies (next-auth.pkce.code_verifier, next-auth.nonce) and clears them only after a successful callback. Both live 15 minutes and are read only by the server",
  },
  {
    id: "csrf-rotates-after-failed-callback",
    scenario: /\/callback\/idp/,
    path: /^cookies\.next-auth\.csrf-token$/,
    when: (d) => absent(d.b) && d.a && !Array.isArray(d.a) && d.a.value === "<hex64>%7C<hex64>",
    reason: "a failed OAuth callback gets a new CSRF token from latchkey, which retires every state derived from the old one; next-auth v4 keeps the token. The v4 client fetches a fresh token before every POST",
  },
  {
    id: "signout-always-clears",
    scenario: /^POST \/signout with CSRF/,
    path: /^cookies\.next-auth\.session-token$/,
    when: (d) => isClearing(d.a) && absent(d.b),
    reason: "on a valid sign-out latchkey always clears the session cookie; next-auth v4 clears it only when one was sent. Clearing an absent cookie is a no-op",
  },
  {
    id: "signin-page-callbackurl-fields",
    scenario: /^GET \/signin/,
    path: /^body\.forms\[\d+\]\.inputs(\[\d+\]\.value)?$/,
    when: (d) => {
      if (Array.isArray(d.a) && Array.isArray(d.b)) {
        // latchkey's e-mail form carries a hidden callbackUrl; v4's relies on the callback-url cookie.
        const rest = d.a.filter((i) => i.name !== "callbackUrl");
        return JSON.stringify(rest) === JSON.stringify(d.b);
      }
      // latchkey fills the hidden callbackUrl with the resolved absolute URL, v4 with the raw query value.
      return typeof d.b === "string" && d.b.startsWith("/") && d.a === `{origin}${d.b}`;
    },
    reason: "the sign-in page's hidden callbackUrl fields: latchkey puts the resolved absolute URL in every form, including the e-mail form; next-auth v4 echoes the raw query value and leaves it out of the e-mail form. The POST resolves it the same way",
  },
  {
    id: "jwt-reissued-per-update-age",
    scenario: /^(GET \/session signed in|POST \/session \(update\) with CSRF|GET \/session after the password sign-in)$/,
    path: /^cookies\.next-auth\.session-token$/,
    // v4 re-encodes the JWT on every call: one Set-Cookie, a JWE expiring in
    // max_age (30 days). latchkey sends none for a token issued within
    // update_age whose claims the hooks left alone (the default hooks ignore
    // update data).
    when: (d) =>
      absent(d.a) && d.b && !Array.isArray(d.b) && d.b.value === "<jwe>" && d.b.expires === "+30d" &&
      (d.b.maxAge === undefined || d.b.maxAge === 2592000),
    reason: "latchkey re-issues a JWT session cookie at most once per update_age (as it extends database sessions), at once when it was read with an older secret or the hooks changed its claims; next-auth v4 re-encodes and re-sets it on every GET and POST /session. The body's expires is the cookie's real expiry either way; no client reads the Set-Cookie",
  },
  {
    id: "database-cookie-set-per-update-age",
    scenario: /^(GET \/session signed in|POST \/session \(update\) with CSRF)$/,
    path: /^cookies\.next-auth\.session-token$/,
    // v4's database strategy re-sets the cookie (the same token, Expires now
    // + max_age) on every call; latchkey only when it extends the row.
    when: (d) => absent(d.a) && d.b && !Array.isArray(d.b) && d.b.value === "<uuid>" && d.b.expires === "+30d",
    reason: "latchkey re-sets a database session's cookie only when it extends the row (at most once per update_age), with the row's new expiry, so the cookie expires with its session; next-auth v4 re-sets it on every GET and POST /session with Expires now + maxAge while extending the row once per updateAge. The token is the same; no client reads the Set-Cookie",
  },
  {
    id: "pages-no-store",
    scenario: /^GET \//,
    path: /^headers\.cache-control$/,
    when: (d) => d.a === "no-store" && absent(d.b),
    reason: "latchkey's built-in pages (sign-in, sign-out, error, verify-request) send Cache-Control: no-store: they embed the CSRF token or set the CSRF and callback-url cookies, which a shared cache must not hand to the next visitor; next-auth v4's pages send no Cache-Control. /csrf and /session keep v4's exact headers",
  },
  {
    id: "credentials-database-sessions",
    scenario: /^(POST \/callback\/credentials .*right password\)|GET \/session after the password sign-in)$/,
    path: /^(body\.(user|expires)|cookies\.next-auth\.session-token(\.value)?)$/,
    // Only the database strategy: latchkey's cookie is a session row's token
    // (a UUID) and GET /session finds the user; v4's is a JWT its database
    // strategy cannot read, so its /session is {} and clears the cookie.
    when: (d) => {
      switch (d.path) {
        case "body.user":
          return d.a?.email === "pat@example.com" && absent(d.b);
        case "body.expires":
          return d.a === "<date now+30d>" && absent(d.b);
        case "cookies.next-auth.session-token.value": // the sign-in's cookie
          return d.a === "<uuid>" && d.b === "<jwe>";
        default: // GET /session: v4 clears the cookie it cannot read; latchkey's stays (database-cookie-set-per-update-age)
          return absent(d.a) && d.b?.value === "" && d.b?.maxAge === 0;
      }
    },
    reason: "password sign-in works with database sessions in latchkey: a session row and its token, as for every other provider. next-auth v4 refuses credentials-only setups with the database strategy and, beside other providers, writes a JWT cookie that its database strategy cannot read, so the user is never signed in (nextauthjs/next-auth#3729)",
  },
  {
    id: "credentials-device-cookie",
    scenario: /^POST \/callback\/credentials .*right password/,
    path: /^cookies\.next-auth\.password-device$/,
    // Set by a right password only: sealed, HttpOnly, SameSite=Lax, scoped to
    // the base path (never sent to the app), 30 days.
    when: (d) =>
      absent(d.b) && d.a && !Array.isArray(d.a) && d.a.value !== "" && d.a.httpOnly && d.a.sameSite === "lax" &&
      d.a.path !== "/" && d.a.expires === "+30d",
    reason: "a right password gives the browser latchkey's sealed device cookie (OWASP's device cookies), so that an attacker failing on the account from elsewhere does not block the owner's browser; next-auth v4 has no password throttle and no such cookie. No client reads it",
  },
  {
    id: "credentials-callback-get-400",
    scenario: /^GET \/callback\/credentials/,
    path: /^(status|body|cookies\.next-auth\.(csrf-token|callback-url))$/,
    when: (d) => (d.path === "status" ? d.a === 400 && d.b === 500 : d.path === "body" ? /not supported/.test(d.a) : absent(d.a)),
    reason: "a GET of a credentials provider's callback gets latchkey's 400 \"not supported\" (as any unsupported action) before any cookie is set; next-auth v4 answers 500 \"Callback for provider type credentials not supported\" with its init cookies. Nothing is signed in either way",
  },
];

const used = new Set();

export function matchKnown(scenario, d) {
  const k = KNOWN.find((k) => k.scenario.test(scenario) && k.path.test(d.path) && (!k.when || k.when(d))) ?? null;
  if (k) used.add(k.id);
  return k;
}

/** Known differences that no scenario produced (the Go side may have closed them). */
export function unusedKnown() {
  return KNOWN.filter((k) => !used.has(k.id)).map((k) => k.id);
}
