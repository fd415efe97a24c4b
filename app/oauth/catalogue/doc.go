// Package catalogue is latchkey's list of built-in OAuth 2 providers, taken
// from github.com/markbates/goth.
//
// goth is used only as a catalogue: per provider, its endpoints, default
// scopes, the extra authorization parameters it sends, and its code that turns
// an access token into a user. We never use gothic or goth's Session.Authorize:
// gothic's state check fails open, and latchkey owns state, PKCE and nonce
// (the state a hash of the CSRF token and a one-time attempt nonce, PKCE and
// the OIDC nonce on top, as Auth.js does). So latchkey builds the authorization URL and does the code
// exchange itself with the *oauth2.Config that [Build] returns, then calls
// [Provider.Profile] with the resulting token.
//
// goth keeps each provider's *oauth2.Config in an unexported field, with the
// endpoint URLs in unexported constants. Copying the URLs into a table here
// would drift from goth, so [Build] reads the config from the goth provider it
// just built, by type and read-only (reflect, no unsafe), and cross-checks it
// against the URL goth's own BeginAuth produces. If a goth upgrade changes that
// shape, Build fails with an error and the tests fail; nothing is built wrong
// silently.
//
// Only providers that fit that model are listed: OAuth 2 authorization code
// with a standard token response, configurable from a client id, a client
// secret and the documented extra fields, and whose profile request goes
// through an HTTP client we can supply. The rest are in excluded.go, each with
// the reason.
package catalogue
