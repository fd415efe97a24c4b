package signin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/gorilla/securecookie"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/random"
)

// DeviceAccounts is how many accounts one device cookie holds (a shared
// computer): past it, the account that signed in longest ago is dropped.
const DeviceAccounts = 5

// devicePurpose names the device cookie's keys (cookies.SealedCodecs).
const devicePurpose = "latchkey password device"

// Devices seals and opens the password sign-in's device cookies (OWASP's
// "device cookies" against account lock-out): after a right password the
// browser gets a sealed cookie naming the account, and a later attempt
// on that account that presents it is a known client wherever its IP is
// (Throttle). The cookie names accounts by a hash of their address, never
// the address itself, each with a random id of its own: failures with the
// cookie count against that id (the Device tier), so a stolen cookie does
// not guess without limit, and a sign-in on another account of the same
// browser does not give the first a fresh count.
type Devices struct {
	codecs []securecookie.Codec
}

// NewDevices returns the device cookies sealed with the first of secrets
// and opened with any (secret rotation), refused once older than keep.
func NewDevices(secrets []string, keep time.Duration) (*Devices, error) {
	codecs, err := cookies.SealedCodecs(secrets, devicePurpose, keep)
	if err != nil {
		return nil, fmt.Errorf("password device cookie: %w", err)
	}
	return &Devices{codecs: codecs}, nil
}

// deviceCookie is the sealed value: the accounts that signed in with a
// password on this browser, the latest first.
type deviceCookie struct {
	Accounts []deviceAccount `json:"a"`
}

// deviceAccount is one account of a device cookie: its address's hash
// (deviceKey), the id its failures count against, and when it signed in
// (Unix seconds; the entry is void KnownFor later).
type deviceAccount struct {
	Key string `json:"k"`
	ID  string `json:"d"`
	At  int64  `json:"t"`
}

// deviceKey is the name of an account in a device cookie: a short hash of
// its normalised address (the cookie is sealed; the hash keeps the address
// out of it all the same).
func deviceKey(addr string) string {
	h := sha256.Sum256([]byte("latchkey password device v1\x00" + addr))
	return base64.RawURLEncoding.EncodeToString(h[:16])
}

// open reads a cookie as sent: nothing (no error) when it is absent,
// forged, sealed with a secret no longer configured or too old.
func (d *Devices) open(cookie string) deviceCookie {
	var v deviceCookie
	if d == nil || cookie == "" || securecookie.DecodeMulti(devicePurpose, cookie, &v, d.codecs...) != nil {
		return deviceCookie{}
	}
	return v
}

// find is addr's entry of v when it signed in within keep of now.
func (v deviceCookie) find(addr string, now time.Time, keep time.Duration) (deviceAccount, bool) {
	key := deviceKey(addr)
	for _, a := range v.Accounts {
		if subtle.ConstantTimeCompare([]byte(a.Key), []byte(key)) == 1 && now.Before(time.Unix(a.At, 0).Add(keep)) {
			return a, true
		}
	}
	return deviceAccount{}, false
}

// signedIn is v after addr signed in at now: its entry first, with a new
// id (failures counted against the old one, by a copy of the cookie, stay
// there), the other accounts' entries as they were but those past keep,
// at most DeviceAccounts.
func (v deviceCookie) signedIn(addr string, now time.Time, keep time.Duration) deviceCookie {
	key := deviceKey(addr)
	out := deviceCookie{Accounts: []deviceAccount{{Key: key, ID: random.Base64URL(16), At: now.Unix()}}}
	for _, a := range v.Accounts {
		if a.Key != key && now.Before(time.Unix(a.At, 0).Add(keep)) && len(out.Accounts) < DeviceAccounts {
			out.Accounts = append(out.Accounts, a)
		}
	}
	return out
}

// seal is v as a cookie value.
func (d *Devices) seal(v deviceCookie) (string, error) {
	s, err := securecookie.EncodeMulti(devicePurpose, v, d.codecs[0])
	if err != nil {
		return "", fmt.Errorf("seal the password device cookie: %w", err)
	}
	return s, nil
}
