package signin

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/models/twofactorstore"
)

// gate asks the second-factor rules whether in may start its session now;
// held reports that it may not (in.SecondStep is then set). A browser
// already signed in as the same user with two factors keeps them: linking
// an identity or signing in again does not ask for a code again.
func (s *Service) gate(ctx context.Context, b Browser, in *SignedIn) (held bool, err error) {
	if s.SecondFactor == nil || in.stepped {
		return false, nil
	}
	if uid, methods, err := b.SignedInMethods(ctx); err == nil && uid == in.User.ID && twofactor.MultiFactor(methods) {
		in.Methods = methods
		return false, nil
	}
	d, err := s.SecondFactor.Gate(ctx, in.User, twofactor.FirstFactor{
		UserID: in.User.ID, Provider: in.Provider, Methods: in.Methods, IsNew: in.IsNew,
	}, b.Cookie(s.DeviceCookie))
	if err != nil {
		return false, Failf(CodeCallback, "second-factor gate: %w", err)
	}
	if d.Step != nil {
		in.SecondStep = d.Step
		return true, nil
	}
	in.Methods = d.Methods
	return false, nil
}

// SecondStep finishes a sign-in held for its second factor with a code
// (an authenticator code or a recovery code): the session the first
// factor earned starts, with both factors recorded, and, with remember,
// the browser is remembered. Every refusal is one of the TwoFactor codes
// (SecondFactorFailure) and changes nothing but the attempt counts.
func (s *Service) SecondStep(ctx context.Context, b Browser, cookie, code string, remember bool) (*SignedIn, error) {
	if s.SecondFactor == nil {
		return nil, Fail(CodeTwoFactorExpired, errors.New("two-factor is off"))
	}
	done, err := s.SecondFactor.Finish(ctx, cookie, code)
	if err != nil {
		return nil, SecondFactorFailure(err)
	}
	return s.completeStep(ctx, b, done, remember)
}

// EnrolAndSignIn finishes a sign-in held for enrolment (the policy
// requires two-factor): the code confirms the new secret, the session
// starts, and the recovery codes are returned to show once.
func (s *Service) EnrolAndSignIn(ctx context.Context, b Browser, cookie, code string) (*SignedIn, []string, error) {
	if s.SecondFactor == nil {
		return nil, nil, Fail(CodeTwoFactorExpired, errors.New("two-factor is off"))
	}
	done, codes, err := s.SecondFactor.FinishEnrolment(ctx, cookie, code)
	if err != nil {
		return nil, nil, SecondFactorFailure(err)
	}
	out, err := s.completeStep(ctx, b, done, false)
	return out, codes, err
}

// ErrSteppedUp is StepUp's answer for a session that has proved its
// second factor already: no code is checked (none is spent), nothing
// changes, and the caller goes on to where it was going. A double submit
// of the step-up form, or of the second step whose first post signed the
// browser in, spent a second recovery code otherwise.
var ErrSteppedUp = errors.New("the session has its second factor already")

// StepUp raises the browser's signed-in session to two factors with a
// code (forward-auth's hosts that require it, the privileged changes): a
// new session of the same user replaces it, with the code's method added.
// A session that has its second factor (twofactor.ProvedSecondFactor) is
// ErrSteppedUp, the code unchecked.
func (s *Service) StepUp(ctx context.Context, b Browser, code string, remember bool) (*SignedIn, error) {
	if s.SecondFactor == nil {
		return nil, Fail(CodeTwoFactorExpired, errors.New("two-factor is off"))
	}
	uid, methods, err := b.SignedInMethods(ctx)
	if err != nil {
		return nil, Failf(CodeCallback, "read the session: %w", err)
	}
	if uid == "" {
		return nil, Fail(CodeTwoFactorExpired, errors.New("step-up without a session"))
	}
	if twofactor.ProvedSecondFactor(methods) {
		return nil, ErrSteppedUp
	}
	used, err := s.SecondFactor.CheckCode(ctx, uid, code)
	if err != nil {
		return nil, SecondFactorFailure(err)
	}
	return s.completeStep(ctx, b, &twofactor.Completed{
		Step:    &twofactorstore.SecondStep{UserID: uid, Provider: "two-factor"},
		Methods: twofactor.WithSecond(methods, used.Method), Used: used,
	}, remember)
}

// AbandonSecondStep ends the browser's pending second step (cookie) on
// sign-out; nothing when two-factor is off.
func (s *Service) AbandonSecondStep(ctx context.Context, cookie string) error {
	if s.SecondFactor == nil {
		return nil
	}
	return s.SecondFactor.Abandon(ctx, cookie)
}

// completeStep starts the session a finished second step earned.
func (s *Service) completeStep(ctx context.Context, b Browser, done *twofactor.Completed, remember bool) (*SignedIn, error) {
	u, err := s.Users.UserByID(ctx, done.Step.UserID)
	if err != nil {
		return nil, Failf(CodeTwoFactorExpired, "the pending sign-in's user: %w", err)
	}
	out := &SignedIn{User: u, Provider: done.Step.Provider, IsNew: done.Step.IsNew, Methods: done.Methods, SecondFactor: done.Used, stepped: true}
	if err := s.startSession(ctx, b, out); err != nil {
		return nil, err
	}
	if remember {
		if out.Device, out.DeviceExpires, err = s.SecondFactor.RememberDevice(ctx, u.ID); err != nil {
			s.Log.Warn("browser not remembered after a second step", "user", u.ID, "err", err)
		}
	}
	return out, nil
}

// SecondFactorFailure is a second-factor refusal's code.
func SecondFactorFailure(err error) error {
	switch {
	case errors.Is(err, twofactor.ErrInvalidCode):
		return Fail(CodeTwoFactorInvalid, err)
	case errors.Is(err, twofactor.ErrThrottled):
		return Fail(CodeTwoFactorThrottled, err)
	case errors.Is(err, twofactor.ErrNoStep), errors.Is(err, twofactor.ErrNotOn):
		return Fail(CodeTwoFactorExpired, err)
	case errors.Is(err, twofactor.ErrEnrolFirst):
		return Fail(CodeTwoFactorSetupRequired, err)
	case errors.Is(err, twofactor.ErrAlreadyOn):
		return Fail(CodeTwoFactorInvalid, err)
	}
	return Fail(CodeCallback, fmt.Errorf("second step: %w", err))
}
