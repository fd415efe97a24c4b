// Package password stores and checks passwords: Argon2id hashes in PHC
// string format (hash.go), and the NIST SP 800-63B rules a new password
// must meet (policy.go). It knows nothing about HTTP, users or storage.
//
// Every password is first passed through Normalize: at most MaxInputBytes
// bytes (so a megabyte of input is refused before any hashing work), valid
// UTF-8, no NUL, then Unicode NFKC. Hash and Verify both normalise, so a
// password typed as "ﬁ" (one ligature) and as "fi" is the same password,
// as 800-63B §5.1.1.2 asks.
package password
