package smtptest

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
)

const cramMD5 = "CRAM-MD5"

// cramMD5Server is the server side of RFC 2195, which go-sasl lacks: a
// challenge, then "user hex(HMAC-MD5(password, challenge))".
type cramMD5Server struct {
	user, pass string
	ok         func(user, pass string) error
	challenge  []byte
}

func (c *cramMD5Server) Next(response []byte) (challenge []byte, done bool, err error) {
	if c.challenge == nil {
		c.challenge = []byte("<" + rand.Text() + "@smtptest.localhost>")
		return c.challenge, false, nil
	}
	user, digest, found := strings.Cut(string(response), " ")
	mac := hmac.New(md5.New, []byte(c.pass))
	mac.Write(c.challenge)
	if !found || user != c.user || !hmac.Equal([]byte(digest), []byte(hex.EncodeToString(mac.Sum(nil)))) {
		return nil, true, errors.New("invalid credentials")
	}
	return nil, true, c.ok(c.user, c.pass)
}
