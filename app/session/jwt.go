package session

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/finish"
	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models/accountstore"
)

// JWT keeps the session in the cookie as an encrypted JWT that next-auth
// (v4 format) or Auth.js (v5 format) can also read.
type JWT struct {
	keys   []*jwt.Key // the first encrypts; every one decrypts (secret rotation)
	name   string
	writer cookies.Writer
	life   Lifetime
	// revoked are the revocations polled from the database; nil: none.
	revoked *Revocations
	// fixedClaims: no hook can change the claims between Read and
	// Refresh, so Refresh need not compare them (WithFixedClaims).
	fixedClaims bool
	// decoded are recently decoded tokens; nil: none kept.
	decoded *decodeCache
	// records keep a row per sign-in (its sid claim), so the account page
	// can list and end JWT sessions one by one; nil: none kept.
	records  SignInRecords
	clientIP ClientIP
}

// SignInRecords are the JWT sessions' rows (models/accountstore): one per
// sign-in, created with the token, seen again when it is re-issued, listed
// and ended from the account page (records.go).
type SignInRecords interface {
	CreateSignIn(ctx context.Context, s *accountstore.SignIn) error
	SeenSignIn(ctx context.Context, id string, at, end time.Time) error
	SignInsOfUser(ctx context.Context, userID string, now time.Time) ([]accountstore.SignIn, error)
	EndSignIn(ctx context.Context, userID, id string, at time.Time) (bool, error)
	EndOtherSignIns(ctx context.Context, userID, keepID string, at time.Time) (int64, error)
	// SignedOut reports a sign-out (the webhook event; no row changes),
	// when WantsSignOuts says someone is told.
	SignedOut(ctx context.Context, userID, id string) error
	WantsSignOuts() bool
}

// SIDClaim names the token's sign-in record (SignInRecords).
const SIDClaim = "sid"

// WithRecords keeps a record of every sign-in (the account page's list of
// sessions); clientIP tells the client's address as the trusted proxies
// do (nil: the peer's).
func (j *JWT) WithRecords(r SignInRecords, clientIP ClientIP) *JWT {
	j.records, j.clientIP = r, clientIP
	return j
}

// NewJWT derives one key per secret, once: v4 uses an empty salt, v5 the
// cookie name. The first secret encrypts new tokens.
func NewJWT(secrets []string, format jwt.Format, name string, w cookies.Writer, life Lifetime) (*JWT, error) {
	if len(secrets) == 0 {
		return nil, errors.New("session key: no secret")
	}
	salt := ""
	if format == jwt.V5 {
		salt = name
	}
	j := &JWT{name: name, writer: w, life: life}
	for i, secret := range secrets {
		key, err := jwt.NewKey(secret, salt, format)
		if err != nil {
			return nil, fmt.Errorf("session key %d: %w", i+1, err)
		}
		j.keys = append(j.keys, key)
	}
	return j, nil
}

// WithRevocations makes Read refuse tokens whose sign-in a revocation
// covers: the only way to recall a session that lives in its cookie.
func (j *JWT) WithRevocations(r *Revocations) *JWT {
	j.revoked = r
	return j
}

// WithFixedClaims tells the strategy that nothing changes a session's
// claims between Read and Refresh (the JWT and Session hooks are latchkey's
// own, which leave them alone): Refresh skips SameClaims' re-serialisation,
// and Read keeps recently decoded tokens (decodeCache), whose claims every
// reader then shares.
func (j *JWT) WithFixedClaims() *JWT {
	j.fixedClaims = true
	j.decoded = newDecodeCache()
	return j
}

// Name implements Strategy.
func (j *JWT) Name() string { return "jwt" }

// Read decrypts the (possibly chunked) cookie: one decryption with the
// current secret, no I/O; older secrets are tried only when it fails.
func (j *JWT) Read(_ context.Context, r *http.Request) (*Session, bool, error) {
	raw := cookies.ReadChunked(r, j.name)
	if raw == "" {
		_, err := r.Cookie(j.name)
		return nil, err == nil, nil
	}
	now := j.life.Now()
	claims, payload, used, shared, err := j.decode(raw, now)
	if errors.Is(err, jwt.ErrInvalid) {
		return nil, true, nil
	}
	if err != nil {
		return nil, true, fmt.Errorf("decode session token: %w", err)
	}
	signedIn, assumed, ok := signInTime(claims, now)
	if !ok || j.life.over(signedIn, now) {
		return nil, true, nil
	}
	userID := claimString(claims, "sub")
	if j.revoked.Revoked(userID, signedIn) || j.revoked.Ended(claimString(claims, SIDClaim)) {
		return nil, true, nil
	}
	s := &Session{
		SignedIn: signedIn,
		assumed:  assumed,
		Claims:   claims,
		payload:  payload,
		shared:   shared,
	}
	s.Expires, s.reissue = j.plan(claims, signedIn, now, used > 0)
	s.User = User{
		ID:            userID,
		Name:          claimPtr(claims, "name", &s.userFields[0]),
		Email:         claimPtr(claims, "email", &s.userFields[1]),
		Image:         claimPtr(claims, "picture", &s.userFields[2]),
		EmailVerified: EmailVerified(claims),
	}
	return s, true, nil
}

// decode decrypts raw with the first key that can, or finds it in the
// decode cache and checks its time claims again; shared reports claims
// that belong to the cache. used is the index of the key.
func (j *JWT) decode(raw string, now time.Time) (claims map[string]any, payload string, used int, shared bool, err error) {
	var sum [sha256.Size]byte
	if j.decoded != nil {
		sum = tokenSum(raw)
		if d, ok := j.decoded.tokens.Get(sum); ok {
			err = jwt.CheckTimes(d.claims, now)
			if err != nil {
				// Expired (or not yet valid): no reason to hold it until
				// the LRU gets to it. A token whose time comes is decrypted
				// and kept again.
				j.decoded.tokens.Remove(sum)
			}
			return d.claims, d.payload, d.key, true, err
		}
	}
	err = jwt.ErrInvalid
	for i, key := range j.keys {
		if claims, payload, err = key.DecodePayload(raw, now); !errors.Is(err, jwt.ErrInvalid) {
			used = i
			break
		}
	}
	if err != nil || j.decoded == nil {
		return claims, payload, used, false, err
	}
	j.decoded.tokens.Add(sum, decodedToken{claims: claims, payload: payload, key: used})
	return claims, payload, used, true, nil
}

// plan decides whether this response re-issues the token whatever the
// hooks do, and so which expiry GET /session reports: the one the client's
// cookie will then hold.
//
// next-auth v4 re-encodes the token on every GET /session. latchkey does so
// at most once per update_age, as it extends database sessions: a token
// issued (iat) at least update_age ago is re-issued when that moves its
// expiry (with absolute_max_age at its default, the sign-in's end, nothing
// moves and nothing is re-issued). Re-issued at once, whatever its age, is
// a token:
//   - read with an older rotation secret, so it moves to the first one in
//     this same response (the rotation test and suite rely on it);
//   - without auth_time (minted by next-auth's encode, or by latchkey before
//     the absolute lifetime), so it carries the sign-in time from now on;
//   - without iat, or issued in the future (beyond the clock tolerance), or
//     whose exp is later than latchkey would write (more than max_age after
//     iat, or past the absolute end: a longer-lived token from elsewhere, or
//     a max_age or absolute_max_age shortened since), so the cookie follows
//     the configured lifetime.
//
// A token that is not re-issued keeps its exp, and that is what is reported.
// Refresh also re-issues, keeping the expiry, when the hooks change the
// claims.
func (j *JWT) plan(c map[string]any, signedIn, now time.Time, rotated bool) (time.Time, bool) {
	next := j.life.capped(signedIn, now.Add(j.life.MaxAge))
	iat, hasIat := c["iat"].(float64)
	_, hasAuthTime := c[authTime]
	if rotated || !hasAuthTime || !hasIat {
		return next, true
	}
	exp := c["exp"].(float64) // Decode requires a number, later than now-15 s
	if iat > float64(now.Unix()+clockTolerance) || exp > iat+j.life.MaxAge.Seconds() {
		return next, true
	}
	// Both in range now: now-15 s-max_age < iat <= now+15 s, and exp in between.
	cur := time.Unix(int64(exp), 0)
	if j.life.capped(signedIn, cur).Before(cur) {
		return next, true
	}
	issued := time.Unix(int64(iat), 0)
	if !issued.Add(j.life.UpdateAge).After(now) && next.After(cur) {
		return next, true
	}
	return cur, false
}

// authTime is the claim that carries the sign-in time, in epoch seconds, as
// OpenID Connect names it. iat cannot carry it: next-auth and Auth.js set
// iat to now on every encode, and readers of their tokens take it to mean
// "issued at"; a claim of its own also survives a next-auth app re-encoding
// the token with its own encode.
const authTime = "auth_time"

// AssumedSignInClaim marks a token whose auth_time latchkey took from the
// iat of a token without one: the next re-encode by a next-auth app keeps
// it, and the session stays unproven (Session.Proven) until a real sign-in.
const AssumedSignInClaim = "auth_time_assumed"

// signInTime reads auth_time; a token without one (minted by next-auth's
// encode, or by latchkey before the absolute lifetime existed) counts from
// its iat, the latest sign-in it can have had, and gets auth_time at its
// next re-encode, marked AssumedSignInClaim. assumed reports either: a
// sign-in time that bounds the lifetime but proves no recent sign-in. A
// token with neither, or whose sign-in lies in the future (beyond the 15 s
// clock tolerance the decoders allow), has no usable bound and is refused.
func signInTime(c map[string]any, now time.Time) (t time.Time, assumed, ok bool) {
	k := authTime
	if _, has := c[k]; !has {
		k, assumed = "iat", true
	}
	v, isNum := c[k].(float64)
	if !isNum || math.IsNaN(v) || v < 0 || v > float64(now.Unix()+clockTolerance) {
		return time.Time{}, false, false
	}
	if mark, _ := c[AssumedSignInClaim].(bool); mark {
		assumed = true
	}
	return time.Unix(int64(v), 0), assumed, true
}

// clockTolerance is the decoders' allowance for clocks that disagree.
const clockTolerance = 15

// Refresh re-issues the token when Read planned it (update_age, rotation,
// see plan) or when the hooks changed the claims since Read: a POST /session
// update or a JWT hook returning different claims, detected by value (a hook
// may edit the map in place), with SameClaims unless WithFixedClaims says
// none can. A change alone keeps the token's expiry: it is no extension.
// The sign-in time is the one Read found, whatever a JWT hook did to the
// claims in between. A session that Read did not plan (no payload) is
// written as a fresh one.
func (j *JWT) Refresh(ctx context.Context, w http.ResponseWriter, r *http.Request, s *Session) error {
	if s.payload == "" {
		return j.write(w, r, s.Claims, s.SignedIn, time.Time{})
	}
	if !s.reissue && (j.fixedClaims || j.keys[0].SameClaims(s.Claims, s.payload)) {
		return nil
	}
	if s.reissue {
		j.seen(ctx, s)
	}
	claims := s.Claims
	if s.shared { // write stamps auth_time into them
		claims = maps.Clone(claims)
	}
	markAssumed(claims, s)
	return j.write(w, r, claims, s.SignedIn, s.Expires)
}

// markAssumed keeps, in the claims of s about to be re-encoded, that its
// sign-in time is assumed (AssumedSignInClaim).
func markAssumed(claims map[string]any, s *Session) {
	if s.assumed && claims[AssumedSignInClaim] != true {
		claims[AssumedSignInClaim] = true
	}
}

// seen records, when the token is re-issued (at most once per
// update_age), that its sign-in was seen now, and that its tokens may now
// live until the sign-in's absolute end under this config (a raised
// absolute_max_age: the record, and an ending of it, must last as long).
// It is the account page's "last seen", not a check: a failed write
// loses only that.
func (j *JWT) seen(ctx context.Context, s *Session) {
	if sid := claimString(s.Claims, SIDClaim); j.records != nil && sid != "" {
		_ = j.records.SeenSignIn(ctx, sid, j.life.Now(), j.life.recordEnd(s.SignedIn))
	}
}

// Create writes a token holding claims, signed in now, with how the user
// signed in (AMRClaim) when that is known, and the id of its sign-in
// record (SIDClaim) when records are kept.
func (j *JWT) Create(ctx context.Context, w http.ResponseWriter, r *http.Request, u User, claims map[string]any) error {
	if claims == nil {
		claims = map[string]any{}
	}
	if len(u.Methods) > 0 {
		claims[AMRClaim] = u.Methods
	}
	now := j.life.Now()
	if j.records != nil {
		device, network := describe(r, j.clientIP)
		rec := &accountstore.SignIn{
			ID: random.Base64URL(16), UserID: u.ID, Device: device, Network: network,
			CreatedAt: now, LastSeen: now, Expires: j.life.recordEnd(now),
			Provider: u.Provider, Methods: u.Methods,
		}
		if err := j.records.CreateSignIn(ctx, rec); err != nil {
			return fmt.Errorf("record the sign-in: %w", err)
		}
		claims[SIDClaim] = rec.ID
	}
	return j.write(w, r, claims, now, time.Time{})
}

// AMRClaim is how the token's user signed in (RFC 8176 amr values, as
// app/twofactor names them): forward-auth's two-factor rule reads it.
const AMRClaim = "amr"

// write encodes claims (stamping auth_time into them) with exp, and the
// cookie's Expires, at expires, which the caller has capped at the absolute
// end; zero means now+max_age, capped.
func (j *JWT) write(w http.ResponseWriter, r *http.Request, claims map[string]any, signedIn, expires time.Time) error {
	now := j.life.Now()
	signedIn = time.Unix(signedIn.Unix(), 0) // whole seconds, as the claim holds it
	if expires.IsZero() {
		expires = j.life.capped(signedIn, now.Add(j.life.MaxAge))
	}
	if claims == nil {
		claims = map[string]any{}
	}
	// Set only when it differs: the decoded value is usually there already.
	if v, ok := claims[authTime].(float64); !ok || v != float64(signedIn.Unix()) {
		claims[authTime] = signedIn.Unix()
	}
	// Encode sets exp = now.Unix() + whole seconds of the duration: measured
	// from the whole second, exp is expires in whole seconds, never later.
	tok, err := j.keys[0].Encode(claims, expires.Sub(time.Unix(now.Unix(), 0)), now)
	if err != nil {
		return fmt.Errorf("encode session token: %w", err)
	}
	j.writer.SetChunked(w, r, j.name, tok, expires)
	return nil
}

// Destroy clears every chunk: the token is not stored server-side.
// A sign-out with webhooks reads the token first, to report which
// sign-in ended; the report failing does not keep the cookie, and a
// browser that hangs up meanwhile does not stop it.
func (j *JWT) Destroy(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	var err error
	if j.records != nil && j.records.WantsSignOuts() {
		if s, _, rerr := j.Read(ctx, r); rerr == nil && s != nil {
			if sid := claimString(s.Claims, SIDClaim); sid != "" {
				ctx, cancel := finish.Detached(ctx)
				defer cancel()
				err = j.records.SignedOut(ctx, s.User.ID, sid)
			}
		}
	}
	j.Clear(w, r)
	return err
}

// Clear implements Strategy.
func (j *JWT) Clear(w http.ResponseWriter, r *http.Request) {
	j.writer.ClearChunked(w, r, j.name)
}

// DefaultClaims is next-auth's token at sign-in: name, email, picture,
// sub; and, when the address is verified, VerifiedEmailClaim.
func DefaultClaims(u User) map[string]any {
	c := map[string]any{"name": u.Name, "email": u.Email, "picture": u.Image, "sub": u.ID}
	if u.EmailVerified && u.Email != nil {
		c[VerifiedEmailClaim] = *u.Email
	}
	return c
}

// VerifiedEmailClaim is latchkey's own claim saying the token's e-mail was
// verified when it signed in: the address itself, so it vouches for that
// address only. A hook, an update or a next-auth app that re-encodes the
// token with another "email" leaves it naming the old one, and the new
// address counts as unverified. A token without it (minted before this
// claim existed, or by next-auth's encode) has no verified address: its
// user signs in again to pass forward-auth's e-mail rules (fail closed).
const VerifiedEmailClaim = "latchkey_verified_email"

// EmailVerified reports whether claims carry a verified e-mail: a string
// "email" that VerifiedEmailClaim names (e-mail addresses are stored
// lower-case; the comparison ignores case all the same).
func EmailVerified(claims map[string]any) bool {
	email, ok := claims["email"].(string)
	verified, ok2 := claims[VerifiedEmailClaim].(string)
	return ok && ok2 && email != "" && strings.EqualFold(email, verified)
}

func claimString(c map[string]any, k string) string {
	s, _ := c[k].(string)
	return s
}

// claimPtr copies a string claim into *dst and returns dst, or nil when the
// claim is not a string.
func claimPtr(c map[string]any, k string, dst *string) *string {
	s, ok := c[k].(string)
	if !ok {
		return nil
	}
	*dst = s
	return dst
}
