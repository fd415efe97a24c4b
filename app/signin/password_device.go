package signin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
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
// browser does not give the first a fresh count. An entry is a sign-in's
// credential like a session: what ends the user's sessions (sign out
// everywhere, a password change or reset, `latchkey sessions revoke`)
// voids the entries issued before it (Revocations).
type Devices struct {
	codecs  []securecookie.Codec
	revoked Revocations
}

// Revocations is this instance's copy of the users' "not before" times
// (session.Revocations, polled): a lookup in memory, no query.
type Revocations interface {
	// Revoked reports whether a sign-in of userID at signedIn was
	// revoked since.
	Revoked(userID string, signedIn time.Time) bool
}

// NewDevices returns the device cookies sealed with the first of secrets
// and opened with any (secret rotation), refused once older than keep,
// and void once revoked says so of their sign-in.
func NewDevices(secrets []string, keep time.Duration, revoked Revocations) (*Devices, error) {
	if revoked == nil {
		return nil, errors.New("password device cookie: no revocations")
	}
	codecs, err := cookies.SealedCodecs(secrets, devicePurpose, keep)
	if err != nil {
		return nil, fmt.Errorf("password device cookie: %w", err)
	}
	return &Devices{codecs: codecs, revoked: revoked}, nil
}

// deviceCookie is the sealed value: the accounts that signed in with a
// password on this browser, the latest first.
type deviceCookie struct {
	Accounts []deviceAccount `json:"a"`
}

// deviceAccount is one account of a device cookie: its address's hash
// (deviceKey), the id its failures count against, when it signed in (Unix
// seconds; the entry is void KnownFor later) and the user who did, whose
// revocations void it. An entry without a user (sealed before it was
// added) is void: no revocation could reach it.
type deviceAccount struct {
	Key  string `json:"k"`
	ID   string `json:"d"`
	At   int64  `json:"t"`
	User string `json:"u"`
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

// live reports whether a is still an exemption at now: signed in within
// keep, by a user it names, not revoked since (revoked nil: none are).
func (a deviceAccount) live(now time.Time, keep time.Duration, revoked Revocations) bool {
	at := time.Unix(a.At, 0)
	return a.User != "" && now.Before(at.Add(keep)) && (revoked == nil || !revoked.Revoked(a.User, at))
}

// find is addr's entry of v when it is live and names userID, the user
// holding addr now: an entry of the address's earlier holder (the user
// changed address, and it was signed up again) is no exemption for the
// next one, and an unknown address ("") has none.
func (v deviceCookie) find(addr, userID string, now time.Time, keep time.Duration, revoked Revocations) (deviceAccount, bool) {
	key := deviceKey(addr)
	for _, a := range v.Accounts {
		if subtle.ConstantTimeCompare([]byte(a.Key), []byte(key)) == 1 && a.User == userID && a.live(now, keep, revoked) {
			return a, true
		}
	}
	return deviceAccount{}, false
}

// signedIn is v after userID signed in as addr at now: its entry first,
// with a new id (failures counted against the old one, by a copy of the
// cookie, stay there), the other accounts' live entries as they were, at
// most DeviceAccounts.
func (v deviceCookie) signedIn(addr, userID string, now time.Time, keep time.Duration, revoked Revocations) deviceCookie {
	key := deviceKey(addr)
	out := deviceCookie{Accounts: []deviceAccount{{Key: key, ID: random.Base64URL(16), At: now.Unix(), User: userID}}}
	for _, a := range v.Accounts {
		if a.Key != key && a.live(now, keep, revoked) && len(out.Accounts) < DeviceAccounts {
			out.Accounts = append(out.Accounts, a)
		}
	}
	return out
}

// revocations is d's Revocations (nil for no Devices, which open no
// cookie).
func (d *Devices) revocations() Revocations {
	if d == nil {
		return nil
	}
	return d.revoked
}

// seal is v as a cookie value.
func (d *Devices) seal(v deviceCookie) (string, error) {
	s, err := securecookie.EncodeMulti(devicePurpose, v, d.codecs[0])
	if err != nil {
		return "", fmt.Errorf("seal the password device cookie: %w", err)
	}
	return s, nil
}
