package main

import (
	"fmt"
	"math/rand/v2"
	"net/url"

	"github.com/latchkey-auth/latchkey/models/scalefill"
)

// passwordProvider is the bench's credentials provider's id.
const passwordProvider = "credentials"

// passwordSignIn is the password round trip: GET csrf, POST
// /callback/credentials with the address and password of a filled user
// that has one (every tenth), answered with a redirect and the session
// cookie. Argon2id is most of its cost.
func passwordSignIn(users int) signInFlow {
	return func(_ int, b *browser) (string, error) {
		addr := scalefill.Email(10 * rand.IntN(max(1, users/10)))
		token, err := b.csrf()
		if err != nil {
			return "", err
		}
		form := url.Values{"csrfToken": {token}, "email": {addr}, "password": {scalefill.Password}}
		location, err := b.post(b.base+"/callback/"+passwordProvider, form)
		if err != nil {
			return "", err
		}
		if !b.hasSession() {
			return "", fmt.Errorf("POST /callback/%s as %s: no session cookie (redirected to %s)", passwordProvider, addr, location)
		}
		return addr, nil
	}
}
