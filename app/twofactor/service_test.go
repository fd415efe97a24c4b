package twofactor

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/twofactor/oathtool"
	"github.com/latchkey-auth/latchkey/models"
)

const secretA, secretB = "test-secret-a-0123456789abcdefghijkl", "test-secret-b-0123456789abcdefghijkl"

type clock struct{ t time.Time }

func (c *clock) now() time.Time         { return c.t }
func (c *clock) add(d time.Duration)    { c.t = c.t.Add(d) }
func startClock() *clock                { return &clock{t: time.Unix(1_800_000_015, 0).UTC()} }
func required(p Policy) Policy          { p.Mode = ModeRequired; return p }
func optional() Policy                  { return Policy{Mode: ModeOptional, RememberFor: 30 * 24 * time.Hour} }
func user(id, addr string) *models.User { return &models.User{ID: id, Email: &addr} }

func newService(t *testing.T, st Store, p Policy, c *clock, secrets ...string) *Service {
	t.Helper()
	if len(secrets) == 0 {
		secrets = []string{secretA}
	}
	s, err := New(st, p, "latchkey test", secrets, func(v string) []string { return email.HashTokens(v, secrets) }, c.now, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// enrolled turns two-factor on for uid with a code from oathtool and
// returns the base32 secret and the recovery codes.
func enrolled(t *testing.T, s *Service, c *clock, uid string) (string, []string) {
	t.Helper()
	e, err := s.Enrol(context.Background(), uid, uid+"@example.com", "browser")
	if err != nil {
		t.Fatal(err)
	}
	codes, err := s.Confirm(context.Background(), uid, oathtool.Code(t, e.Secret, c.now()), "browser")
	if err != nil {
		t.Fatalf("confirm with oathtool's code: %v", err)
	}
	return e.Secret, codes
}

func TestEnrolShowsOneSecretUntilConfirmedAndStoresItSealed(t *testing.T) {
	ctx, c, st := context.Background(), startClock(), newMemStore()
	s := newService(t, st, optional(), c)
	e1, err := s.Enrol(ctx, "u1", "ada@example.com", "x")
	if err != nil {
		t.Fatal(err)
	}
	e2, _ := s.Enrol(ctx, "u1", "ada@example.com", "x")
	if e1.Secret != e2.Secret || e1.URI != e2.URI {
		t.Fatal("a reloaded setup page must show the secret the app may have scanned already")
	}
	if y, _ := s.Enrol(ctx, "u1", "ada@example.com", "y"); y.Secret == e1.Secret {
		t.Fatal("another browser must get its own secret")
	}
	if _, err := s.Confirm(ctx, "u1", oathtool.Code(t, e1.Secret, c.now()), "x"); !errors.Is(err, ErrInvalidCode) {
		t.Fatalf("a replaced secret's code confirms nothing: %v", err)
	}
	e1, _ = s.Enrol(ctx, "u1", "ada@example.com", "x")
	c.add(EnrolLifetime + time.Second)
	if late, _ := s.Enrol(ctx, "u1", "ada@example.com", "x"); late.Secret == e1.Secret {
		t.Fatal("a secret left longer than EnrolLifetime is not shown again")
	}
	e1, _ = s.Enrol(ctx, "u1", "ada@example.com", "x")
	u, err := url.Parse(e1.URI)
	if err != nil || u.Scheme != "otpauth" || u.Host != "totp" || u.Query().Get("secret") != e1.Secret || u.Query().Get("issuer") != "latchkey test" {
		t.Fatalf("otpauth URI %q", e1.URI)
	}
	row, _ := st.TwoFactorOf(ctx, "u1")
	if strings.Contains(row.Secret, e1.Secret) || row.ConfirmedAt != nil {
		t.Fatal("the secret must be stored sealed and the enrolment not in force before a code")
	}
	if _, err := s.Confirm(ctx, "u1", "000000", "x"); !errors.Is(err, ErrInvalidCode) && oathtool.Code(t, e1.Secret, c.now()) != "000000" {
		t.Fatalf("a wrong code confirms nothing: %v", err)
	}
	if _, err := s.Confirm(ctx, "u1", oathtool.Code(t, e1.Secret, c.now()), "y"); !errors.Is(err, ErrInvalidCode) {
		t.Fatalf("another browser's confirmation: %v", err)
	}
	codes, err := s.Confirm(ctx, "u1", oathtool.Code(t, e1.Secret, c.now()), "x")
	if err != nil || len(codes) != 10 {
		t.Fatalf("confirm: %v, %d codes", err, len(codes))
	}
	if _, err := s.Enrol(ctx, "u1", "ada@example.com", "x"); !errors.Is(err, ErrAlreadyOn) {
		t.Fatalf("enrolling again while on: %v", err)
	}
}

func TestCodeAcceptedOncePerStepWithOneStepOfDrift(t *testing.T) {
	ctx, c := context.Background(), startClock()
	s := newService(t, newMemStore(), optional(), c)
	secret, _ := enrolled(t, s, c, "u1")
	// The enrolment's code used this step: the next one is needed.
	c.add(30 * time.Second)
	code := oathtool.Code(t, secret, c.now())
	if used, err := s.CheckCode(ctx, "u1", code); err != nil || used.Method != MethodOTP {
		t.Fatalf("current code: %v", err)
	}
	if _, err := s.CheckCode(ctx, "u1", code); !errors.Is(err, ErrInvalidCode) {
		t.Fatalf("a replayed code must be refused: %v", err)
	}
	c.add(30 * time.Second)
	if _, err := s.CheckCode(ctx, "u1", oathtool.Code(t, secret, c.now().Add(-30*time.Second))); !errors.Is(err, ErrInvalidCode) {
		t.Fatalf("the previous step's code, used already: %v", err)
	}
	if _, err := s.CheckCode(ctx, "u1", oathtool.Code(t, secret, c.now().Add(30*time.Second))); err != nil {
		t.Fatalf("one step ahead (a fast phone clock) is accepted: %v", err)
	}
	if _, err := s.CheckCode(ctx, "u1", oathtool.Code(t, secret, c.now())); !errors.Is(err, ErrInvalidCode) {
		t.Fatalf("an earlier step after a later one is a replay: %v", err)
	}
	c.add(5 * time.Minute)
	if _, err := s.CheckCode(ctx, "u1", oathtool.Code(t, secret, c.now().Add(-2*time.Minute))); !errors.Is(err, ErrInvalidCode) {
		t.Fatalf("a code four steps old: %v", err)
	}
}

func TestWrongCodesBackOffPerUser(t *testing.T) {
	ctx, c := context.Background(), startClock()
	s := newService(t, newMemStore(), optional(), c)
	secret, _ := enrolled(t, s, c, "u1")
	c.add(time.Minute)
	wrong := wrongCode(t, secret, c.now())
	for i, wrong := range []string{wrong, "aaaa-aaaa-aaaa", wrong, "2222 2222 2222", wrong} { // each of a code's shape
		if _, err := s.CheckCode(ctx, "u1", wrong); !errors.Is(err, ErrInvalidCode) {
			t.Fatalf("wrong code %d: %v", i, err)
		}
	}
	if _, err := s.CheckCode(ctx, "u1", oathtool.Code(t, secret, c.now())); !errors.Is(err, ErrThrottled) {
		t.Fatalf("after five wrong codes even a right one waits: %v", err)
	}
	c.add(31 * time.Second)
	if _, err := s.CheckCode(ctx, "u1", oathtool.Code(t, secret, c.now())); err != nil {
		t.Fatalf("after the backoff a right code works and resets it: %v", err)
	}
	if backoff(6) != time.Minute || backoff(40) != 15*time.Minute || backoff(4) != 0 {
		t.Fatalf("backoff schedule: %v %v %v", backoff(4), backoff(6), backoff(40))
	}
}

func TestRecoveryCodesSingleUseEvenRaced(t *testing.T) {
	ctx, c := context.Background(), startClock()
	s := newService(t, newMemStore(), optional(), c)
	_, codes := enrolled(t, s, c, "u1")
	used, err := s.CheckCode(ctx, "u1", strings.ToUpper(strings.ReplaceAll(codes[0], "-", " ")))
	if err != nil || used.Method != MethodRecovery || used.CodesLeft != 9 {
		t.Fatalf("recovery code as typed loosely: %+v %v", used, err)
	}
	if _, err := s.CheckCode(ctx, "u1", codes[0]); !errors.Is(err, ErrInvalidCode) {
		t.Fatalf("a spent recovery code: %v", err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.CheckCode(ctx, "u1", codes[1]); err == nil {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("one recovery code used by %d racing requests", wins.Load())
	}
	c.add(3 * time.Minute) // the seven losers counted as wrong codes: past their backoff
	fresh, err := s.RegenerateRecoveryCodes(ctx, "u1")
	if err != nil || len(fresh) != 10 {
		t.Fatal(err)
	}
	if _, err := s.CheckCode(ctx, "u1", codes[2]); !errors.Is(err, ErrInvalidCode) {
		t.Fatalf("an old set's code after regenerating: %v", err)
	}
	c.add(5 * time.Minute)
	if _, err := s.CheckCode(ctx, "u1", fresh[9]); err != nil {
		t.Fatal(err)
	}
}

func TestGate(t *testing.T) {
	ctx, c := context.Background(), startClock()
	st := newMemStore()
	pwd := func(uid string) FirstFactor {
		return FirstFactor{UserID: uid, Provider: "credentials", Methods: []string{MethodPassword}}
	}

	off := newService(t, st, Policy{Mode: ModeOff}, c)
	if d, _ := off.Gate(ctx, user("u0", "a@x.test"), pwd("u0"), ""); d.Step != nil {
		t.Fatal("policy off holds nothing")
	}
	s := newService(t, st, optional(), c)
	if d, _ := s.Gate(ctx, user("u1", "a@x.test"), pwd("u1"), ""); d.Step != nil || strings.Join(d.Methods, " ") != "pwd" {
		t.Fatalf("optional, not enrolled: %+v", d)
	}
	enrolled(t, s, c, "u1")
	d, err := s.Gate(ctx, user("u1", "a@x.test"), pwd("u1"), "")
	if err != nil || d.Step == nil || d.Step.Enrol {
		t.Fatalf("enrolled: a code step: %+v %v", d, err)
	}
	passkey := FirstFactor{UserID: "u1", Provider: "passkey", Methods: []string{MethodPasskey, MethodMFA}}
	if d, _ := s.Gate(ctx, user("u1", "a@x.test"), passkey, ""); d.Step != nil {
		t.Fatal("a passkey that verified the user is two factors")
	}
	device, _, err := s.RememberDevice(ctx, "u1")
	if err != nil || device == "" {
		t.Fatal(err)
	}
	if d, _ := s.Gate(ctx, user("u1", "a@x.test"), pwd("u1"), device); d.Step != nil || strings.Join(d.Methods, " ") != "pwd device mfa" {
		t.Fatalf("remembered device: %+v", d)
	}
	if d, _ := s.Gate(ctx, user("u2", "b@x.test"), pwd("u2"), device); d.Step != nil {
		t.Fatal("u2 is not enrolled")
	}
	if err := s.ForgetDevices(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Gate(ctx, user("u1", "a@x.test"), pwd("u1"), device); d.Step == nil {
		t.Fatal("a forgotten device must not skip the code")
	}
	req := newService(t, st, required(Policy{RequiredFor: []string{"corp.test", "boss@x.test"}}), c)
	if d, _ := req.Gate(ctx, user("u3", "eve@corp.test"), pwd("u3"), ""); d.Step == nil || !d.Step.Enrol {
		t.Fatalf("required domain, not enrolled: enrolment step: %+v", d)
	}
	if d, _ := req.Gate(ctx, user("u4", "Boss@X.test"), pwd("u4"), ""); d.Step == nil || !d.Step.Enrol {
		t.Fatal("required address, any case")
	}
	if d, _ := req.Gate(ctx, user("u5", "joe@x.test"), pwd("u5"), ""); d.Step != nil {
		t.Fatal("an address the policy does not list")
	}
}

// required_for's entries are in ASCII (config writes them so); an address
// is compared in ASCII too, and one whose domain is no name must enrol
// (the list cannot be applied to it: fail closed).
func TestRequiresComparesDomainsInASCII(t *testing.T) {
	p := Policy{Mode: ModeRequired, RequiredFor: []string{"xn--bcher-kva.example", "ada@xn--mnchen-3ya.de"}}
	for addr, want := range map[string]bool{
		"x@Bücher.example":        true,
		"x@xn--bcher-kva.example": true,
		"Ada@München.de":          true,
		"bob@münchen.de":          false,
		"x@bucher.example":        false,
		"x@xn--zz.example":        true,
	} {
		if got := p.Requires(&addr); got != want {
			t.Errorf("Requires(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestFinishPendingStep(t *testing.T) {
	ctx, c := context.Background(), startClock()
	s := newService(t, newMemStore(), optional(), c)
	secret, _ := enrolled(t, s, c, "u1")
	first := FirstFactor{UserID: "u1", Provider: "idp", Methods: []string{MethodFederated}}
	hold := func() string {
		d, err := s.Gate(ctx, user("u1", "a@x.test"), first, "")
		if err != nil || d.Step == nil {
			t.Fatal("no step", err)
		}
		return d.Step.Cookie
	}
	c.add(time.Minute)
	step := hold()
	if _, err := s.Finish(ctx, step, "12345"); !errors.Is(err, ErrInvalidCode) {
		t.Fatal(err)
	}
	done, err := s.Finish(ctx, step, oathtool.Code(t, secret, c.now()))
	if err != nil || strings.Join(done.Methods, " ") != "fed otp mfa" || done.Step.Provider != "idp" {
		t.Fatalf("finish: %+v %v", done, err)
	}
	c.add(30 * time.Second)
	if _, err := s.Finish(ctx, step, oathtool.Code(t, secret, c.now())); !errors.Is(err, ErrNoStep) {
		t.Fatalf("a finished step again: %v", err)
	}

	// Five tries per step, then it is void even for the right code.
	step = hold()
	for range MaxAttempts {
		_, _ = s.Finish(ctx, step, wrongCode(t, secret, c.now()))
	}
	c.add(3 * time.Minute) // past the user's backoff
	if _, err := s.Finish(ctx, step, oathtool.Code(t, secret, c.now())); !errors.Is(err, ErrNoStep) {
		t.Fatalf("a sixth try: %v", err)
	}

	step = hold()
	c.add(StepLifetime + time.Second)
	if _, err := s.Finish(ctx, step, oathtool.Code(t, secret, c.now())); !errors.Is(err, ErrNoStep) {
		t.Fatalf("an expired step: %v", err)
	}
	if _, err := s.Finish(ctx, "forged"+step, "123456"); !errors.Is(err, ErrNoStep) {
		t.Fatalf("a forged cookie: %v", err)
	}
	if _, err := s.Finish(ctx, "", "123456"); !errors.Is(err, ErrNoStep) {
		t.Fatalf("no cookie: %v", err)
	}
}

// malformed is input that cannot be a code: not six digits, not a
// recovery code's shape.
var malformed = []string{"", "   ", "\x00", "\xff", "\xff\xfe\xfd\xfc\xfb\xfa", "abcdef", "12345", "1234567", "12345a", "123 456", "12345\x00", "aaaa-aaaa-aaa", "aaaa-aaaa-aaa1", strings.Repeat("9", 4000)}

// wrongCode is six digits that none of the codes accepted at now are.
func wrongCode(t *testing.T, secret string, now time.Time) string {
	t.Helper()
	near := map[string]bool{}
	for _, d := range []time.Duration{-30 * time.Second, 0, 30 * time.Second} {
		near[oathtool.Code(t, secret, now.Add(d))] = true
	}
	for _, w := range []string{"000000", "111111", "222222", "333333"} {
		if !near[w] {
			return w
		}
	}
	t.Fatal("no wrong code")
	return ""
}

// TestMalformedCodesSpendNothing: input that cannot be a code is refused
// as a wrong code is, but spends no attempt of the pending step and no
// step towards the user's backoff, at sign-in, at enrolment and where a
// signed-in user types a code: the right code still works after more of
// them than either limit allows.
func TestMalformedCodesSpendNothing(t *testing.T) {
	ctx, c := context.Background(), startClock()
	s := newService(t, newMemStore(), optional(), c)
	secret, _ := enrolled(t, s, c, "u1")
	c.add(time.Minute)
	d, err := s.Gate(ctx, user("u1", "a@x.test"), FirstFactor{UserID: "u1", Provider: "idp", Methods: []string{MethodFederated}}, "")
	if err != nil || d.Step == nil {
		t.Fatal("no step", err)
	}
	for _, in := range malformed {
		if _, err := s.Finish(ctx, d.Step.Cookie, in); !errors.Is(err, ErrInvalidCode) {
			t.Fatalf("Finish(%q): %v", in, err)
		}
		if _, err := s.CheckCode(ctx, "u1", in); !errors.Is(err, ErrInvalidCode) {
			t.Fatalf("CheckCode(%q): %v", in, err)
		}
	}
	if _, err := s.Finish(ctx, d.Step.Cookie, oathtool.Code(t, secret, c.now())); err != nil {
		t.Fatalf("the right code after %d malformed ones: %v", len(malformed), err)
	}

	// Enrolment takes six digits only: a recovery code's shape is no code there.
	s = newService(t, newMemStore(), required(Policy{}), c)
	d, err = s.Gate(ctx, user("u2", "b@x.test"), FirstFactor{UserID: "u2", Provider: "email", Methods: []string{MethodEmail}}, "")
	if err != nil || d.Step == nil || !d.Step.Enrol {
		t.Fatal("required: enrolment step", err)
	}
	st, err := s.Step(ctx, d.Step.Cookie)
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Enrol(ctx, "u2", "b@x.test", st.TokenHash)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range append(malformed, "aaaa-aaaa-aaaa") {
		if _, _, err := s.FinishEnrolment(ctx, d.Step.Cookie, in); !errors.Is(err, ErrInvalidCode) {
			t.Fatalf("FinishEnrolment(%q): %v", in, err)
		}
	}
	if _, _, err := s.FinishEnrolment(ctx, d.Step.Cookie, oathtool.Code(t, e.Secret, c.now())); err != nil {
		t.Fatalf("the right code after malformed ones: %v", err)
	}
}

func TestRequiredEnrolmentFinishesTheSignIn(t *testing.T) {
	ctx, c := context.Background(), startClock()
	s := newService(t, newMemStore(), required(Policy{}), c)
	d, err := s.Gate(ctx, user("u1", "a@x.test"), FirstFactor{UserID: "u1", Provider: "email", Methods: []string{MethodEmail}}, "")
	if err != nil || d.Step == nil || !d.Step.Enrol {
		t.Fatal("required: enrolment step", err)
	}
	if _, err := s.Finish(ctx, d.Step.Cookie, "123456"); !errors.Is(err, ErrEnrolFirst) {
		t.Fatalf("a code for an enrolment step: %v", err)
	}
	st, err := s.Step(ctx, d.Step.Cookie)
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Enrol(ctx, "u1", "a@x.test", st.TokenHash)
	if err != nil {
		t.Fatal(err)
	}
	done, codes, err := s.FinishEnrolment(ctx, d.Step.Cookie, oathtool.Code(t, e.Secret, c.now()))
	if err != nil || len(codes) != 10 || strings.Join(done.Methods, " ") != "email otp mfa" {
		t.Fatalf("finish enrolment: %v", err)
	}
	if st, _ := s.StatusOf(ctx, "u1"); !st.On || st.CodesLeft != 10 {
		t.Fatalf("status after enrolment: %+v", st)
	}
}

func TestSecretRotationOpensOldSecrets(t *testing.T) {
	ctx, c, st := context.Background(), startClock(), newMemStore()
	old := newService(t, st, optional(), c, secretA)
	secret, codes := enrolled(t, old, c, "u1")
	device, _, _ := old.RememberDevice(ctx, "u1")
	rotated := newService(t, st, optional(), c, secretB, secretA)
	c.add(time.Minute)
	if _, err := rotated.CheckCode(ctx, "u1", oathtool.Code(t, secret, c.now())); err != nil {
		t.Fatalf("a secret sealed under the old service secret: %v", err)
	}
	if _, err := rotated.CheckCode(ctx, "u1", codes[0]); err != nil {
		t.Fatalf("a recovery code hashed under the old service secret: %v", err)
	}
	if d, _ := rotated.Gate(ctx, user("u1", "a@x.test"), FirstFactor{UserID: "u1", Methods: []string{MethodPassword}}, device); d.Step != nil {
		t.Fatal("a device remembered under the old service secret")
	}
	gone := newService(t, st, optional(), c, secretB)
	c.add(time.Minute)
	if _, err := gone.CheckCode(ctx, "u1", oathtool.Code(t, secret, c.now())); err == nil || errors.Is(err, ErrInvalidCode) {
		t.Fatalf("without the old secret the stored secret cannot be opened, which is an error, not a wrong code: %v", err)
	}
}

func TestDisableNeedsACode(t *testing.T) {
	ctx, c := context.Background(), startClock()
	s := newService(t, newMemStore(), optional(), c)
	_, codes := enrolled(t, s, c, "u1")
	u := user("u1", "a@x.test")
	if err := s.Disable(ctx, u, "nope"); !errors.Is(err, ErrInvalidCode) {
		t.Fatal(err)
	}
	if st, _ := s.StatusOf(ctx, "u1"); !st.On {
		t.Fatal("a refused disable changes nothing")
	}
	if err := s.Disable(ctx, u, codes[3]); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.StatusOf(ctx, "u1"); st.On {
		t.Fatal("off")
	}
	if err := s.Reset(ctx, "u1"); !errors.Is(err, ErrNotOn) {
		t.Fatal(err)
	}
}

// A user the policy requires two-factor of may not turn it off, even with
// a right code, which stays unspent; another user, outside required_for,
// may. (The admin's Reset still removes it.)
func TestDisableRefusedWhenThePolicyRequiresIt(t *testing.T) {
	ctx, c := context.Background(), startClock()
	st := newMemStore()
	s := newService(t, st, required(Policy{RequiredFor: []string{"x.test"}}), c)
	_, codes := enrolled(t, s, c, "u1")
	if err := s.Disable(ctx, user("u1", "a@x.test"), codes[0]); !errors.Is(err, ErrRequired) {
		t.Fatalf("required: %v", err)
	}
	if st, _ := s.StatusOf(ctx, "u1"); !st.On || st.CodesLeft != 10 {
		t.Fatalf("a refused disable changes nothing and spends no code: %+v", st)
	}
	_, other := enrolled(t, s, c, "u2")
	if err := s.Disable(ctx, user("u2", "b@elsewhere.test"), other[0]); err != nil {
		t.Fatalf("not required of this address: %v", err)
	}
	if err := s.Reset(ctx, "u1"); err != nil {
		t.Fatalf("the admin's reset: %v", err)
	}
}

// A code pasted with the blanks around it (a trailing newline, a leading
// space) is the code at enrolment too, as at sign-in (CheckCode trims
// them): the setup refused what the second step took.
func TestCodeWithBlanksAroundItIsTheCode(t *testing.T) {
	ctx, c := context.Background(), startClock()
	s := newService(t, newMemStore(), optional(), c)
	e, err := s.Enrol(ctx, "u1", "u1@example.com", "browser")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Confirm(ctx, "u1", " "+oathtool.Code(t, e.Secret, c.now())+"\n", "browser"); err != nil {
		t.Fatalf("confirm with a pasted code: %v", err)
	}
	c.add(30 * time.Second)
	if _, err := s.CheckCode(ctx, "u1", "\t"+oathtool.Code(t, e.Secret, c.now())+" "); err != nil {
		t.Fatalf("sign in with a pasted code: %v", err)
	}

	s = newService(t, newMemStore(), required(Policy{}), c)
	d, err := s.Gate(ctx, user("u2", "b@x.test"), FirstFactor{UserID: "u2", Provider: "email", Methods: []string{MethodEmail}}, "")
	if err != nil || d.Step == nil {
		t.Fatal("required: enrolment step", err)
	}
	st, err := s.Step(ctx, d.Step.Cookie)
	if err != nil {
		t.Fatal(err)
	}
	if e, err = s.Enrol(ctx, "u2", "b@x.test", st.TokenHash); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.FinishEnrolment(ctx, d.Step.Cookie, oathtool.Code(t, e.Secret, c.now())+"\r\n"); err != nil {
		t.Fatalf("finish a required enrolment with a pasted code: %v", err)
	}
}

// A code refused unchecked because the user's codes are backing off is no
// attempt of the pending step: the step is still there, with its five
// tries, once the backoff is over. (Each such refusal spent one: a user
// who retried through a backoff another browser had earned found the
// step void and had to sign in again.)
func TestThrottledCodesSpendNoAttempt(t *testing.T) {
	ctx, c := context.Background(), startClock()
	s := newService(t, newMemStore(), optional(), c)
	secret, _ := enrolled(t, s, c, "u1")
	c.add(time.Minute)
	for range freeFailures {
		_, _ = s.CheckCode(ctx, "u1", wrongCode(t, secret, c.now()))
	}
	d, err := s.Gate(ctx, user("u1", "a@x.test"), FirstFactor{UserID: "u1", Provider: "idp", Methods: []string{MethodFederated}}, "")
	if err != nil || d.Step == nil {
		t.Fatal("no step", err)
	}
	for i := range MaxAttempts + 1 {
		if _, err := s.Finish(ctx, d.Step.Cookie, oathtool.Code(t, secret, c.now())); !errors.Is(err, ErrThrottled) {
			t.Fatalf("try %d while backing off: %v", i+1, err)
		}
	}
	c.add(firstBackoff + time.Second)
	if _, err := s.Finish(ctx, d.Step.Cookie, oathtool.Code(t, secret, c.now())); err != nil {
		t.Fatalf("the right code after the backoff: %v", err)
	}
}

// A remembered browser skips the code at sign-in, but it is not the
// second factor proved: a change that could hand the account over asks
// such a session for a code (the step-up), as it asks a one-factor one;
// a code, a recovery code or a verifying passkey, with or without the
// remembered browser before it, is enough.
func TestRememberedBrowserIsNoProofForPrivilegedChanges(t *testing.T) {
	ctx, c := context.Background(), startClock()
	s := newService(t, newMemStore(), optional(), c)
	enrolled(t, s, c, "u1")
	for methods, want := range map[string]bool{
		"pwd":                 true,
		"pwd device mfa":      true,
		"email device mfa":    true,
		"pwd otp mfa":         false,
		"fed recovery mfa":    false,
		"pwd device otp mfa":  false,
		"hwk mfa":             false,
		"pwd otp":             true,
		"pwd device recovery": true,
	} {
		need, err := s.NeedsSecondFactor(ctx, "u1", strings.Fields(methods))
		if err != nil || need != want {
			t.Errorf("NeedsSecondFactor(%q) = %v, %v; want %v", methods, need, err, want)
		}
	}
	if need, _ := s.NeedsSecondFactor(ctx, "u2", []string{"pwd", "device", "mfa"}); need {
		t.Error("a user without two-factor needs nothing more")
	}
}

// MustEnrol: an address the policy requires, of a user without two-factor
// in force (an address change into required_for ends their sessions).
func TestMustEnrol(t *testing.T) {
	ctx, c := context.Background(), startClock()
	s := newService(t, newMemStore(), required(Policy{RequiredFor: []string{"corp.test"}}), c)
	enrolled(t, s, c, "on")
	corp, other := "x@corp.test", "x@else.test"
	for _, tc := range []struct {
		uid  string
		addr *string
		want bool
	}{{"u1", &corp, true}, {"u1", &other, false}, {"u1", nil, false}, {"on", &corp, false}} {
		if got, err := s.MustEnrol(ctx, tc.uid, tc.addr); err != nil || got != tc.want {
			t.Errorf("MustEnrol(%s, %v) = %v, %v; want %v", tc.uid, tc.addr, got, err, tc.want)
		}
	}
}
