// Package twofactor holds the rules of the second factor: authenticator-app
// codes (TOTP, RFC 6238, through pquerna/otp), single-use recovery codes,
// the pending second step a first factor leaves instead of a session, the
// browsers a user asked to remember, and the operator's policy. It has no
// HTTP in it: app/signin consults it before starting a session, and
// app/twofactorpages reads forms and calls it. Its storage is the Store
// interface (*twofactorstore.Store, in models/twofactorstore); its tests use
// an in-memory fake.
//
// What is secret never leaves it in the clear: the TOTP secret is sealed
// under the service secret before it is stored, recovery codes are stored
// as keyed hashes, and the cookies it makes are sealed (AES-256 and
// HMAC-SHA256, keys derived per purpose from every configured secret, so
// AUTH_SECRET_1..3 rotation opens old ones).
package twofactor
