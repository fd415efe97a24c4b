// Package providertokens is the rules of the provider tokens kept for the
// app (issue #35, docs/provider-tokens.md): for providers with
// store_tokens, the access and refresh tokens an OAuth sign-in brought are
// kept sealed under the service secret, and GET {base}/token/:provider
// hands the access token to the app's backend, refreshed first when it
// expires within the skew.
//
// One refresh, everywhere: a provider that rotates refresh tokens revokes
// the whole grant when one is spent twice (next-auth #11240), so however
// many requests on however many instances want the token at once, one of
// them calls the provider. Within a process the requests for one account
// share one call (singleflight); across processes the account row's lease
// (a conditional UPDATE, models/tokenstore) lets one holder refresh while
// the others poll the row, for at most the configured wait, and take the
// token it saved. The rotated refresh token is saved in the same statement
// that ends the lease.
//
// No HTTP here: the handler (app/tokenapi) maps the errors to answers.
package providertokens
