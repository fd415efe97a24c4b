package twofactor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gorilla/securecookie"

	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/twofactorstore"
)

// Held is a pending second step as the browser keeps it: a sealed cookie
// (a random token; its row holds the rest) and when it expires.
type Held struct {
	Cookie  string
	Expires time.Time
	// Enrol: the step is enrolment (the policy requires two-factor and
	// the user has none), not a code.
	Enrol bool
}

// FirstFactor is a sign-in whose first factor passed.
type FirstFactor struct {
	UserID   string
	Provider string
	Methods  []string
	IsNew    bool
}

// hold stores a pending second step for f and seals its token.
func (s *Service) hold(ctx context.Context, f FirstFactor, enrol bool) (*Held, error) {
	token := random.Base64URL(32)
	now := s.Now().UTC()
	row := &twofactorstore.SecondStep{
		TokenHash: stepHash(token), UserID: f.UserID, Provider: f.Provider, Methods: strings.Join(f.Methods, " "),
		IsNew: f.IsNew, Enrol: enrol, Expires: now.Add(StepLifetime), CreatedAt: now,
	}
	if err := s.Store.CreateSecondStep(ctx, row); err != nil {
		return nil, fmt.Errorf("store the pending second step: %w", err)
	}
	sealed, err := securecookie.EncodeMulti("second-step", token, s.steps[0])
	if err != nil {
		return nil, fmt.Errorf("seal the pending second step: %w", err)
	}
	return &Held{Cookie: sealed, Expires: row.Expires, Enrol: enrol}, nil
}

func stepHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Step is the live pending second step of a browser's cookie; ErrNoStep
// when the cookie is absent, forged, too old, or its step is used, expired
// or gone, or is an enrolment of a user who has two-factor on by now (the
// setup page, which sends a user with it on to the settings, and the
// settings, which send a pending enrolment to the setup, sent it round in
// a redirect loop).
func (s *Service) Step(ctx context.Context, cookie string) (*twofactorstore.SecondStep, error) {
	if cookie == "" {
		return nil, ErrNoStep
	}
	var token string
	if err := securecookie.DecodeMulti("second-step", cookie, &token, s.steps...); err != nil {
		return nil, fmt.Errorf("%w: unreadable cookie: %v", ErrNoStep, err)
	}
	row, err := s.Store.SecondStepByHash(ctx, stepHash(token))
	if errors.Is(err, models.ErrNotFound) {
		return nil, ErrNoStep
	}
	if err != nil {
		return nil, fmt.Errorf("read the pending second step: %w", err)
	}
	if !row.Expires.After(s.Now()) {
		return nil, ErrNoStep
	}
	if row.Enrol { // an enrolment finished meanwhile, in another browser: void, the code is asked for
		if _, err := s.inForce(ctx, row.UserID); err == nil {
			return nil, fmt.Errorf("%w: two-factor was turned on meanwhile", ErrNoStep)
		} else if !errors.Is(err, ErrNotOn) {
			return nil, err
		}
	}
	return row, nil
}

// Completed is a pending step finished: the sign-in it held, and the
// session's methods.
type Completed struct {
	Step    *twofactorstore.SecondStep
	Methods []string
	Used    Used
}

// Finish completes the browser's pending step with a code: the step must
// be live and have attempts left (each try counts, across instances, but
// input that cannot be a code: wellFormed), the code right (CheckCode),
// and the step is then spent, so it completes at most once.
func (s *Service) Finish(ctx context.Context, cookie, code string) (*Completed, error) {
	st, err := s.attempt(ctx, cookie, false, wellFormed(code))
	if err != nil {
		return nil, err
	}
	used, err := s.CheckCode(ctx, st.UserID, code)
	if err != nil {
		return nil, err
	}
	if err := s.consume(ctx, st); err != nil {
		return nil, err
	}
	return &Completed{Step: st, Methods: WithSecond(strings.Fields(st.Methods), used.Method), Used: used}, nil
}

// FinishEnrolment completes a pending enrolment: the code confirms the
// user's new secret (Confirm) and the step is spent. It returns the
// recovery codes to show once.
func (s *Service) FinishEnrolment(ctx context.Context, cookie, code string) (*Completed, []string, error) {
	st, err := s.attempt(ctx, cookie, true, isCode(strings.TrimSpace(code)))
	if err != nil {
		return nil, nil, err
	}
	codes, err := s.Confirm(ctx, st.UserID, code, st.TokenHash)
	if err != nil {
		return nil, nil, err
	}
	if err := s.consume(ctx, st); err != nil {
		return nil, nil, err
	}
	return &Completed{Step: st, Methods: WithSecond(strings.Fields(st.Methods), MethodOTP), Used: Used{Method: MethodOTP}}, codes, nil
}

// attempt opens the step, checks its kind and counts one attempt when
// counted (false: input that cannot be a code, which spends none, though
// a step out of attempts stays void for it too; nor does a code refused
// unchecked while the user's codes back off).
func (s *Service) attempt(ctx context.Context, cookie string, enrol, counted bool) (*twofactorstore.SecondStep, error) {
	st, err := s.Step(ctx, cookie)
	if err != nil {
		return nil, err
	}
	if st.Enrol != enrol {
		if st.Enrol {
			return nil, ErrEnrolFirst
		}
		return nil, fmt.Errorf("%w: enrolment posted for a code step", ErrNoStep)
	}
	if !counted {
		if st.Attempts >= MaxAttempts {
			return nil, fmt.Errorf("%w: out of attempts", ErrNoStep)
		}
		return st, nil
	}
	if err := s.notBackingOff(ctx, st.UserID); err != nil {
		return nil, err
	}
	ok, err := s.Store.CountSecondStepAttempt(ctx, st.TokenHash, MaxAttempts, s.Now().UTC())
	if err != nil {
		return nil, fmt.Errorf("count a second-step attempt: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: out of attempts or expired", ErrNoStep)
	}
	return st, nil
}

// notBackingOff is ErrThrottled while the user's codes are backing off: a
// code refused then is never checked, so it spends no attempt of the step
// (reserve refuses it again should the backoff begin meanwhile).
func (s *Service) notBackingOff(ctx context.Context, userID string) error {
	row, err := s.Store.TwoFactorOf(ctx, userID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("read two-factor: %w", err)
	case row.BlockedUntil != nil && row.BlockedUntil.After(s.Now()):
		return ErrThrottled
	}
	return nil
}

func (s *Service) consume(ctx context.Context, st *twofactorstore.SecondStep) error {
	ok, err := s.Store.ConsumeSecondStep(ctx, st.TokenHash)
	if err != nil {
		return fmt.Errorf("spend the pending second step: %w", err)
	}
	if !ok {
		return fmt.Errorf("%w: used by a concurrent request", ErrNoStep)
	}
	return nil
}

// Abandon ends the browser's pending second step, if its cookie opens to
// one, as signing out does: the first factor it holds must not outlive
// the sign-out (under `required` a pending enrolment turns into a session
// with any authenticator app). A cookie that does not open, or whose
// step is gone, is nothing to end.
func (s *Service) Abandon(ctx context.Context, cookie string) error {
	var token string
	if cookie == "" || securecookie.DecodeMulti("second-step", cookie, &token, s.steps...) != nil {
		return nil
	}
	if _, err := s.Store.ConsumeSecondStep(ctx, stepHash(token)); err != nil {
		return fmt.Errorf("end the pending second step: %w", err)
	}
	return nil
}
