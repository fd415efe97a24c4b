package twofactor

import "slices"

// The amr values (RFC 8176 where it has one) a session records: how its
// user signed in. A session's methods are its first factor's, then the
// second's, with MethodMFA whenever there were two.
const (
	MethodPassword  = "pwd"      // a password
	MethodEmail     = "email"    // an e-mailed link (latchkey's own value)
	MethodFederated = "fed"      // an OAuth or OpenID Connect provider (latchkey's own)
	MethodPasskey   = "hwk"      // a passkey: proof of possession of a key
	MethodOTP       = "otp"      // an authenticator app's code
	MethodRecovery  = "recovery" // a recovery code (latchkey's own)
	MethodDevice    = "device"   // a remembered browser (latchkey's own)
	MethodMFA       = "mfa"      // two factors
)

// MultiFactor reports whether methods include a second factor.
func MultiFactor(methods []string) bool { return slices.Contains(methods, MethodMFA) }

// ProvedSecondFactor reports whether methods include a second factor the
// user proved (a code, a recovery code, a passkey that verified them), not
// only a remembered browser: that one skips the code at sign-in, but a
// browser's cookie (a stolen laptop's, say) must not also make the
// session's holder new recovery codes or a passkey, or move the address.
func ProvedSecondFactor(methods []string) bool {
	return MultiFactor(methods) && (slices.Contains(methods, MethodOTP) ||
		slices.Contains(methods, MethodRecovery) || slices.Contains(methods, MethodPasskey))
}

// WithSecond is first followed by second and MethodMFA.
func WithSecond(first []string, second string) []string {
	out := make([]string, 0, len(first)+2)
	for _, m := range first {
		if m != MethodMFA {
			out = append(out, m)
		}
	}
	return append(out, second, MethodMFA)
}
