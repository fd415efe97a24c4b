// Package signin holds next-auth's sign-in rules with no HTTP framework in
// them: the OAuth account-linking table, e-mail link issue and redemption,
// password sign-in and its throttle,
// the SignIn and JWT hooks, and starting the session. Its dependencies are
// small interfaces (Users, Tokens, Browser, Limiter, Mailer) that the HTTP
// layer fills from the store and the request, so the rules are tested with
// in-memory fakes.
//
// The path of a sign-in through it:
//
//	POST /signin/email      → SendLink:  normalise → limits → SignIn hook (verification request)
//	                                      → store token hash → mail (undo the row when mailing fails)
//	GET  /callback/email    → RedeemLink: look up hash → expiry → SignIn hook → consume + verify
//	                                      → end another user's session → start session
//	                                      (restore the token when the session cannot start)
//	GET  /callback/{oauth}  → OAuth:     (state, PKCE, nonce and code exchange happen before,
//	                                      in the HTTP layer) → linking table → SignIn hook → start session
//	POST /callback/{credentials} → SignInWithPassword: normalise → throttle → user and hash →
//	                                      Argon2id (a dummy hash for unknown users) → verified address
//	                                      → SignIn hook → re-hash if stale → start session
//
// Every failure is an *Error whose Code is what the client sees.
package signin
