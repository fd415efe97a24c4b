// Differences between latchkey and next-auth v4 that are deliberate. Each one
// is described in docs/compatibility.md under the same id. The differential
// check (diff.test.mjs) accepts a difference only when an entry here matches
// the scenario name and the path of the differing field.
export const KNOWN = [
  {
    id: "oauth-state-from-csrf",
    scenario: /^(POST \/signin\/idp|OIDC sign-in|GET \/callback\/idp)/,
    path: /^cookies\.next-auth\.state(\[\d+\])?(\.|$)/,
    reason: "latchkey derives the OAuth state from the CSRF token and recomputes it at the callback; next-auth v4 keeps a random state in a next-auth.state cookie",
  },
  {
    id: "protocol-relative-callback",
    scenario: /\/\/evil\.example/,
    path: /^body\.url$/,
    reason: "latchkey treats //host as another origin and falls back to the site origin; next-auth v4 prefixes it with its origin (http://host//evil.example/x)",
  },
  {
    id: "invalid-callbackurl-no-500",
    scenario: /callbackUrl=foo/,
    path: /.*/,
    reason: "an invalid callbackUrl (not absolute, no leading slash) is ignored by latchkey; next-auth v4 answers 500 (configuration error)",
  },
];

export function matchKnown(scenario, d) {
  return KNOWN.find((k) => k.scenario.test(scenario) && k.path.test(d.path)) ?? null;
}
