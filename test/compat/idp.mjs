// A real OpenID Connect provider (panva's oidc-provider) for the tests.
//
// It validates redirect URIs exactly, requires PKCE (S256) for every client,
// signs ID tokens with a fresh RSA key, and has a tiny interaction that logs in
// a fixed user (alice@example.com, "Alice") and approves consent without any
// page. Development interactions are off.
import http from "node:http";
import crypto from "node:crypto";
import querystring from "node:querystring";

// oidc-provider prints development warnings (Node version, in-memory adapter,
// pre-parsed body); they are expected here and only clutter the report.
const origWarn = console.warn;
const origInfo = console.info;
console.warn = (...a) => (String(a[0]).includes("oidc-provider WARNING") ? undefined : origWarn(...a));
console.info = (...a) => (String(a[0]).includes("oidc-provider NOTICE") ? undefined : origInfo(...a));
const { default: Provider } = await import("oidc-provider");

export const ALICE = { sub: "alice", email: "alice@example.com", name: "Alice" };

/**
 * Start the IdP on 127.0.0.1:port.
 * clients: [{client_id, client_secret, redirect_uris}]
 * Returns {issuer, authRequests, tokenRequests, logins, close()}.
 */
export async function startIdp({ port, clients }) {
  const issuer = `http://127.0.0.1:${port}`;
  const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: "jwk" }), kid: "test-key", use: "sig", alg: "RS256" };

  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      redirect_uris: c.redirect_uris,
      response_types: ["code"],
      grant_types: ["authorization_code"],
      // oidc-provider fixes one auth method per client; POST-style credentials
      // are translated to Basic in the middleware below, so both are accepted.
      token_endpoint_auth_method: "client_secret_basic",
    })),
    jwks: { keys: [jwk] },
    cookies: { keys: [crypto.randomBytes(32).toString("hex")] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      // No RP-initiated logout page needed.
    },
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name", "preferred_username"],
    },
    // Put the profile claims into the ID token too (next-auth v4 builds the
    // profile from the ID token claims of an OIDC provider).
    conformIdTokenClaims: false,
    async findAccount(ctx, sub) {
      if (sub !== ALICE.sub) return undefined;
      return {
        accountId: sub,
        async claims() {
          return { sub, email: ALICE.email, email_verified: true, name: ALICE.name, preferred_username: "alice" };
        },
      };
    },
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: { Session: 3600, Interaction: 600, Grant: 3600, AccessToken: 600, AuthorizationCode: 60, IdToken: 600 },
    renderError(ctx, out, error) {
      ctx.type = "text/plain";
      ctx.body = `IdP error: ${out.error}: ${out.error_description ?? ""}`;
    },
  });
  provider.proxy = false;

  const authRequests = [];
  const tokenRequests = [];
  const logins = [];

  // Accept client_secret_post too: move body credentials into a Basic header.
  provider.use(async (ctx, next) => {
    if (ctx.method === "POST" && ctx.path === "/token" && ctx.is("application/x-www-form-urlencoded")) {
      const raw = await new Promise((resolve, reject) => {
        const chunks = [];
        ctx.req.on("data", (c) => chunks.push(c));
        ctx.req.on("end", () => resolve(Buffer.concat(chunks).toString()));
        ctx.req.on("error", reject);
      });
      const body = querystring.parse(raw);
      let method = ctx.get("authorization").startsWith("Basic ") ? "client_secret_basic" : "none";
      if (body.client_secret && !ctx.get("authorization")) {
        method = "client_secret_post";
        const enc = (s) => encodeURIComponent(s);
        ctx.req.headers.authorization = "Basic " + Buffer.from(`${enc(body.client_id)}:${enc(body.client_secret)}`).toString("base64");
        delete body.client_secret;
        delete body.client_id;
      }
      tokenRequests.push({ method, grant_type: body.grant_type, has_code_verifier: !!body.code_verifier, redirect_uri: body.redirect_uri });
      ctx.req.body = querystring.stringify(body);
    }
    if (ctx.path === "/auth" && ctx.method === "GET") {
      authRequests.push({ ...ctx.query });
    }
    await next();
  });

  const callback = provider.callback();

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, issuer);
    if (url.pathname.startsWith("/interaction/")) {
      try {
        const details = await provider.interactionDetails(req, res);
        const { prompt, params, session } = details;
        let result;
        if (prompt.name === "login") {
          logins.push({ client_id: params.client_id, at: Date.now() });
          result = { login: { accountId: ALICE.sub } };
        } else if (prompt.name === "consent") {
          const grant = details.grantId
            ? await provider.Grant.find(details.grantId)
            : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
          if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(" "));
          if (prompt.details.missingOIDCClaims) grant.addOIDCClaims(prompt.details.missingOIDCClaims);
          if (prompt.details.missingResourceScopes) {
            for (const [indicator, scopes] of Object.entries(prompt.details.missingResourceScopes)) {
              grant.addResourceScope(indicator, scopes.join(" "));
            }
          }
          result = { consent: { grantId: await grant.save() } };
        } else {
          result = { error: "access_denied", error_description: `unexpected prompt ${prompt.name}` };
        }
        await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
      } catch (e) {
        res.statusCode = 500;
        res.setHeader("content-type", "text/plain");
        res.end(`IdP interaction error: ${e.message}`);
      }
      return;
    }
    callback(req, res);
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    issuer,
    provider,
    authRequests,
    tokenRequests,
    logins,
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  };
}
