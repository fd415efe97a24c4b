package signin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/models/throttlestore"
)

// Throttles is the storage of password sign-in's failure counters.
// *models.Store implements it.
type Throttles interface {
	PasswordThrottles(ctx context.Context, now time.Time, buckets ...string) (map[string]throttlestore.PasswordThrottle, error)
	RecordPasswordFailure(ctx context.Context, now time.Time, bucket string, keep time.Duration) (int, error)
	ClaimPasswordBucket(ctx context.Context, bucket string, now, until time.Time) (bool, error)
	ForgetPasswordFailure(ctx context.Context, bucket string) error
	MarkPasswordBucket(ctx context.Context, bucket string, until time.Time) error
	ClearPasswordThrottles(ctx context.Context, buckets ...string) error
}

// BackOff is one throttle tier: Free failures within Keep of each other
// are allowed, then each further failure blocks the bucket for twice as
// long as the one before, starting at one second, never more than Max.
type BackOff struct {
	Free int
	Max  time.Duration
	Keep time.Duration // a bucket with no failure for this long starts again
}

// delay is the block after the n-th failure.
func (b BackOff) delay(n int) time.Duration {
	over := n - b.Free
	if over <= 0 {
		return 0
	}
	if over > 30 {
		return b.Max
	}
	return min(time.Second<<(over-1), b.Max)
}

// Throttle slows down password guessing with exponential back-off on
// four buckets, none of which an attacker can turn into a lasting
// lock-out of someone else:
//
//   - Pair (this account from this client): the tightest; the account's
//     owner, on another client, is not affected by it.
//   - Client (any account from this client; IP or IPv6 /64, as read through
//     trusted_proxies): one client spraying many accounts.
//   - Network (any account from the client's IPv6 /48 or IPv4 /24:
//     Network6, Network4): one attacker spraying from many clients of one
//     network, a /64 or an address each.
//   - Account (this account from any client): guessing spread over many
//     clients.
//
// The network and account buckets an attacker can raise for someone else
// (a neighbour on the network, a victim's account), so a known client is
// exempt from them, and their blocks are capped like the others. A client
// is known to an account when its user signed in from its IP during the
// last KnownFor, or when it presents a device cookie (Devices) the account
// got at a sign-in during KnownFor: a phone whose IP changes with every
// network keeps its exemption. Either is a sign-in's credential like a
// session, so a revocation of the user's sessions voids those made before
// it, and both name the user, not the address, so an address that changes
// hands (a deleted user's, signed up again) does not hand them on. A device
// cookie's own failures count in a fifth bucket:
//
//   - Device (this account with this device cookie): blocks like the pair,
//     and once it holds Device.Free failures the cookie is no exemption
//     (OWASP's device lock-out), so a stolen cookie buys a few guesses
//     past a blocked account, not unlimited ones.
//
// Every block is capped (Max, a few minutes) and counts expire (Keep), so
// the worst an attacker can do is slow an account down for minutes at a
// time, and only on clients it never signed in from. Attempts refused
// while blocked check no password and count no failure, so they cannot
// extend a block either. A success clears the pair's count and marks the
// client known to the user; the client and account counts only expire (a
// success on an attacker's own account must not reset its spraying
// count).
type Throttle struct {
	Store    Throttles
	Pair     BackOff
	Client   BackOff
	Network6 BackOff // per IPv6 /48
	Network4 BackOff // per IPv4 /24
	Account  BackOff
	Device   BackOff
	KnownFor time.Duration
	// Devices opens and seals the device cookies, and holds the users'
	// revocations that the IP marks are checked against (nil: no device
	// cookies, and no IP is known either: a mark no revocation could void
	// is not trusted).
	Devices *Devices
}

// NewThrottle is a Throttle with latchkey's tiers: 5 free failures per
// account and client, 30 per client, 50 per IPv6 /48 or IPv4 /24, 20 per
// account, 5 per device cookie; blocks of 1 s, 2 s, 4 s… capped at 5
// minutes; counts kept 15 minutes (pair) or an hour. It has no device
// cookies (Devices) until given them.
func NewThrottle(store Throttles) *Throttle {
	return &Throttle{
		Store:    store,
		Pair:     BackOff{Free: 5, Max: 5 * time.Minute, Keep: 15 * time.Minute},
		Client:   BackOff{Free: 30, Max: 5 * time.Minute, Keep: time.Hour},
		Network6: BackOff{Free: 50, Max: 5 * time.Minute, Keep: time.Hour},
		Network4: BackOff{Free: 50, Max: 5 * time.Minute, Keep: time.Hour},
		Account:  BackOff{Free: 20, Max: 5 * time.Minute, Keep: time.Hour},
		Device:   BackOff{Free: 5, Max: 5 * time.Minute, Keep: time.Hour},
		KnownFor: KnownFor,
	}
}

// KnownFor is how long a client stays known to an account after a
// password sign-in from it (its IP, or its device cookie).
const KnownFor = 30 * 24 * time.Hour

// throttleKeys are one attempt's bucket names. They hold hashes, not the
// address or the IP: the table is no place for either. network is "" for
// a client that is no IP (then it has no network tier); ipv6 tells which
// network tier it is. known, the mark of a user's sign-in from the client,
// is "" without a user (an unknown address is never a known client).
// device is "" without a valid device cookie for the account.
type throttleKeys struct {
	pair, client, network, account, known, device string
	ipv6                                          bool
}

// keysOf counts clients and networks as the e-mail rate limits do
// (email.ClientKey, email.NetworkKey). The failures count against the
// address (what is guessed); the known mark is the user's, userID ("":
// none), so that it ends with the user. Its tier is "user-known": the
// marks of the "known" tier, which were the address's, count no more. A
// user without an address (the password page of one whose provider gave
// none) is counted by user id in tiers of their own: the empty address
// would be one bucket that every such user shares, where one user's wrong
// passwords blocked all the others.
func keysOf(addr, userID, clientIP string) throttleKeys {
	c := email.ClientKey(clientIP)
	pair, account, subject := "pair", "account", addr
	if addr == "" && userID != "" {
		pair, account, subject = "user-pair", "user-account", userID
	}
	k := throttleKeys{
		pair:    throttleBucket(pair, subject, c),
		client:  throttleBucket("client", c),
		account: throttleBucket(account, subject),
	}
	if userID != "" {
		k.known = throttleBucket("user-known", userID, c)
	}
	if n, ipv6, ok := email.NetworkKey(clientIP); ok {
		k.ipv6 = ipv6
		k.network = throttleBucket("net4", n)
		if ipv6 {
			k.network = throttleBucket("net6", n)
		}
	}
	return k
}

// throttleBucket names a bucket: the tier in clear, the key's parts as a
// SHA-256 (parts end in NUL, so ("ab","c") is not ("a","bc")).
func throttleBucket(tier string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte("latchkey password throttle v1\x00"))
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return "pw:" + tier + ":" + hex.EncodeToString(h.Sum(nil))
}

// ErrThrottled is the cause of a refusal by the throttle (the client sees
// CredentialsSignin, as for a wrong password).
var ErrThrottled = errors.New("too many failed password sign-ins")

// Reserve starts a password check. The attempt is counted as a failure
// in every tier before the password is checked, in one statement per tier,
// so that attempts sent together cannot all pass a check that reads the
// counters and only count failures afterwards (40 parallel guesses would
// all be hashed). An attempt past a tier's free failures must also claim
// that tier's next block (ClaimPasswordBucket): of attempts racing past
// it, one goes on and the others are refused. A refusal (ErrThrottled,
// wrapped with the tier) checks no password and takes its counts back;
// an error reading or writing the counters refuses too (fail closed).
//
// The network and account tiers do not refuse a known client (an IP that
// userID, the user holding addr ("": none), signed in from during
// KnownFor, or device, the device cookie as the browser sent it, naming
// the account and userID; either not revoked since, the cookie not locked
// out); its
// attempts are counted all the same. A device cookie that is not valid
// for the account is no device cookie: no error, an unknown client.
func (t *Throttle) Reserve(ctx context.Context, addr, userID, clientIP, device string, now time.Time) (*Reservation, error) {
	k := keysOf(addr, userID, clientIP)
	cookie := t.Devices.open(device)
	if d, ok := cookie.find(addr, userID, now, t.KnownFor, t.Devices.revocations()); ok {
		k.device = throttleBucket("device", addr, d.ID)
	}
	rows, err := t.Store.PasswordThrottles(ctx, now, k.pair, k.client, k.network, k.account, k.known, k.device)
	if err != nil {
		return nil, fmt.Errorf("check password throttle: %w", err)
	}
	known := t.knownIP(rows, k.known, userID)
	if k.device != "" && rows[k.device].Failures < t.Device.Free {
		known = true
	}
	type tier struct {
		name, bucket string
		b            BackOff
		exempt       bool
	}
	tiers := []tier{{"account and client", k.pair, t.Pair, false}, {"client", k.client, t.Client, false}}
	if k.device != "" {
		tiers = append(tiers, tier{"account and device cookie", k.device, t.Device, false})
	}
	switch {
	case k.network == "":
	case k.ipv6:
		tiers = append(tiers, tier{"IPv6 /48", k.network, t.Network6, known})
	default:
		tiers = append(tiers, tier{"IPv4 /24", k.network, t.Network4, known})
	}
	tiers = append(tiers, tier{"account", k.account, t.Account, known})
	for _, tier := range tiers {
		row, ok := rows[tier.bucket]
		if !ok || tier.exempt {
			continue
		}
		if left := time.UnixMicro(row.BlockedUntil).Sub(now); left > 0 {
			return nil, fmt.Errorf("%w: %s blocked for %s more (%d failures)", ErrThrottled, tier.name, left.Round(time.Second), row.Failures)
		}
	}
	r := &Reservation{t: t, k: k, cookie: cookie, addr: addr, userID: userID}
	for _, tier := range tiers {
		n, err := t.Store.RecordPasswordFailure(ctx, now, tier.bucket, tier.b.Keep)
		if err != nil {
			r.Release(ctx)
			return nil, err
		}
		r.counted = append(r.counted, tier.bucket)
		d := tier.b.delay(n)
		if d <= 0 {
			continue
		}
		won, err := t.Store.ClaimPasswordBucket(ctx, tier.bucket, now, now.Add(d))
		if err != nil {
			r.Release(ctx)
			return nil, err
		}
		if !won && !tier.exempt {
			r.Release(ctx)
			return nil, fmt.Errorf("%w: %s: another attempt holds this block (%d failures)", ErrThrottled, tier.name, n)
		}
	}
	return r, nil
}

// knownIP reports whether rows hold userID's mark bucket, made by a
// sign-in (MarkPasswordBucket: it lives KnownFor from then) that no
// revocation of the user's sessions followed. Without the revocations copy
// (no Devices) nothing is known: fail closed.
func (t *Throttle) knownIP(rows map[string]throttlestore.PasswordThrottle, bucket, userID string) bool {
	row, ok := rows[bucket]
	revoked := t.Devices.revocations()
	if bucket == "" || !ok || revoked == nil {
		return false
	}
	return !revoked.Revoked(userID, time.UnixMicro(row.Expires).Add(-t.KnownFor))
}

// Reservation is one attempt counted in advance as a failure (Reserve). A
// wrong password needs nothing more; a right one calls Succeeded; an
// attempt that ends before its password could be judged calls Release.
type Reservation struct {
	t       *Throttle
	k       throttleKeys
	counted []string
	cookie  deviceCookie // the device cookie as sent, opened (empty: none)
	addr    string
	userID  string // the user holding addr at Reserve ("": none)
}

// Succeeded: the password was right. The pair starts again, and the
// client is marked known to the user for KnownFor (not without one: a
// sign-up's check, before the user exists); the client, network, account and device tiers get
// this attempt's count back, and keep the rest (a success on an attacker's own
// account must not reset its spraying count).
func (r *Reservation) Succeeded(ctx context.Context, now time.Time) error {
	for _, b := range []string{r.k.client, r.k.network, r.k.account, r.k.device} {
		if b == "" {
			continue
		}
		if err := r.t.Store.ForgetPasswordFailure(ctx, b); err != nil {
			return err
		}
	}
	if err := r.t.Store.ClearPasswordThrottles(ctx, r.k.pair); err != nil {
		return err
	}
	if r.k.known == "" {
		return nil
	}
	return r.t.Store.MarkPasswordBucket(ctx, r.k.known, now.Add(r.t.KnownFor))
}

// DeviceCookie is the device cookie to give the browser after Succeeded,
// and when it expires: the one it sent (any valid one, whatever its
// accounts) with this account, signed in as userID, first and a new id
// for it; "" without device cookies (Devices).
func (r *Reservation) DeviceCookie(userID string, now time.Time) (string, time.Time, error) {
	return r.t.deviceCookie(r.cookie, r.addr, userID, now)
}

// DeviceCookie is the device cookie to give a browser that set addr's
// password without typing the old one (a reset link: the inbox proved it,
// and the browser knows the new password as a sign-in would), and when it
// expires: device, the cookie the browser sent ("" none; any valid one,
// whatever its accounts), with addr, signed in as userID at now, first and
// a new id for it; "" without a throttle or device cookies (Devices).
func (t *Throttle) DeviceCookie(device, addr, userID string, now time.Time) (string, time.Time, error) {
	if t == nil {
		return "", time.Time{}, nil
	}
	return t.deviceCookie(t.Devices.open(device), addr, userID, now)
}

// deviceCookie seals sent with addr signed in as userID at now.
func (t *Throttle) deviceCookie(sent deviceCookie, addr, userID string, now time.Time) (string, time.Time, error) {
	if t.Devices == nil {
		return "", time.Time{}, nil
	}
	v, err := t.Devices.seal(sent.signedIn(addr, userID, now, t.KnownFor, t.Devices.revoked))
	if err != nil {
		return "", time.Time{}, err
	}
	return v, now.Add(t.KnownFor), nil
}

// Release takes the attempt's counts back: it was not a failure (the
// password was never judged, or was right and something else refused).
// A block it claimed stays; it expires.
func (r *Reservation) Release(ctx context.Context) {
	for _, b := range r.counted {
		_ = r.t.Store.ForgetPasswordFailure(context.WithoutCancel(ctx), b)
	}
	r.counted = nil
}
