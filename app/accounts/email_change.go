package accounts

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/finish"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

// EmailChangeLinkMaxAge is how long a change link lives: like a reset
// link, it hands over the account's address.
const EmailChangeLinkMaxAge = ResetLinkMaxAge

// purposeEmailChange prefixes the change links' tokens (see purposeReset).
const purposeEmailChange = "email-change:"

// StartEmailChange sends a link to the new address, which replaces the
// user's earlier links; the change happens only when it is opened
// (ApplyEmailChange). The answer is the same
// whether or not another user has the address, so the page tells no one
// which addresses have accounts: that address is sent a notice instead of
// a link. The e-mails count against the e-mail limits as every account
// e-mail does. It needs a session that may (Privileged: a recent
// sign-in, with the second factor once it is on), as unlinking and
// deleting do: the link proves the new address, not the account's owner,
// so a borrowed or stolen session could otherwise move the address to
// one its holder reads, and a password reset there would take the
// account.
func (s *Service) StartEmailChange(ctx context.Context, who SignedIn, u *models.User, typed, clientIP string) error {
	if s.Mail == nil {
		return ErrBadAddress // nothing can send the link: the page offers no form
	}
	if err := s.Privileged(ctx, who); err != nil {
		return err
	}
	addr, err := email.Normalize(typed)
	if err != nil {
		return ErrBadAddress
	}
	if u.Email != nil && strings.EqualFold(*u.Email, addr) {
		return ErrNothingToChange
	}
	holder, err := s.userByEmail(ctx, addr)
	if err != nil {
		return err
	}
	if err := s.allowMail(ctx, "e-mail change", addr, clientIP, nil); err != nil {
		return err
	}
	// The new link replaces the user's earlier ones (for a taken address
	// too, the same work): an address typed wrong and then corrected must
	// not get the account when its holder opens the first link.
	if _, err := s.Centre.DeleteEmailChanges(ctx, u.ID); err != nil {
		return fmt.Errorf("e-mail change: end the earlier links: %w", err)
	}
	mail := func(token string) error { return s.Mail.EmailChangeLink(ctx, addr, token) }
	if holder != nil {
		// The same work as for a free address, so the answer's time does
		// not tell (as reset's and sign-up's): a change row is stored,
		// inert, as its token is never sent (and opening one re-checks the
		// holder), and goes with the expired links; the address is told.
		mail = func(string) error { return s.Mail.EmailInUse(ctx, addr) }
	}
	_, err = s.links(purposeEmailChange).Send(ctx,
		func(hash string) error {
			return s.Centre.CreateEmailChange(ctx, u.ID, addr, hash, s.Now().Add(EmailChangeLinkMaxAge))
		},
		mail,
		func(ctx context.Context, hash string) error { return s.Centre.DeleteEmailChange(ctx, u.ID, hash) })
	if err != nil {
		return fmt.Errorf("e-mail change link: %w", err)
	}
	if holder != nil {
		s.Log.Info("e-mail change to an address another user has: the address is told, nothing changes", "user", u.ID)
		return nil
	}
	s.Log.Info("e-mail change link sent", "user", u.ID, "to", email.Mask(addr))
	return nil
}

// PendingEmailChange is the new address of a live change link, spending
// nothing: unknown, spent or expired is ErrDeadLink.
func (s *Service) PendingEmailChange(ctx context.Context, token string) (string, error) {
	var addr string
	_, _, err := signin.FindLink(s.links(purposeEmailChange), token, func(hash string) (string, error) {
		_, a, err := s.Centre.EmailChangeByHash(ctx, hash, s.Now())
		addr = a
		return a, err
	})
	if errors.Is(err, models.ErrNotFound) {
		return "", ErrDeadLink
	}
	return addr, err
}

// ApplyEmailChange spends a change link and moves the user to its address,
// verified (the link proved it), in one transaction; a link opened twice
// is ErrDeadLink the second time, and an address another user took
// meanwhile is ErrAddressTaken with the link left unspent. Linked
// identities stay with the user: nothing moves between users by e-mail.
// The old address is told.
func (s *Service) ApplyEmailChange(ctx context.Context, b AddressBrowser, token string) (string, error) {
	var old, addr, uid string
	_, _, err := signin.FindLink(s.links(purposeEmailChange), token, func(hash string) (string, error) {
		var err error
		uid, old, addr, err = s.Centre.ApplyEmailChange(ctx, hash, s.Now())
		return addr, err
	})
	switch {
	case errors.Is(err, models.ErrNotFound):
		return "", ErrDeadLink
	case errors.Is(err, models.ErrConflict):
		return "", ErrAddressTaken
	case err != nil:
		return "", fmt.Errorf("e-mail change: %w", err)
	}
	if s.UserChanged != nil {
		s.UserChanged()
	}
	s.Log.Info("e-mail address changed", "user", uid, "to", email.Mask(addr))
	s.sessionsFollow(ctx, b, uid, addr)
	s.enrolFirst(ctx, uid, addr)
	if old != "" && s.Mail != nil {
		s.notify(ctx, old, "e-mail address changed, but the notice to the old address failed",
			func(ctx context.Context) error { return s.Mail.EmailChanged(ctx, old, addr) }, "user", uid)
	}
	return addr, nil
}

// AddressBrowser is the browser that confirms an e-mail change.
type AddressBrowser interface {
	// AddressChanged makes the sessions that carry the address in their
	// token follow the change (session.Browser.AddressChanged): the
	// browser's own, when it is the user's, names the new address; the
	// user's others end. It returns how many ended.
	AddressChanged(ctx context.Context, userID, addr string) (int64, error)
}

// sessionsFollow has the user's sessions follow an address change that
// has committed, to its end whether or not the browser waits: a session
// left naming the old address would pass it to forward-auth, and to its
// access rules, after another user may have taken it. A failure is
// logged; the change stands.
func (s *Service) sessionsFollow(ctx context.Context, b AddressBrowser, userID, addr string) {
	ctx, cancel := finish.Detached(ctx)
	defer cancel()
	n, err := b.AddressChanged(ctx, userID, addr)
	if err != nil {
		s.Log.ErrorContext(ctx, "e-mail address changed, but sessions naming the old one were not ended", "user", userID, "err", err)
		return
	}
	if n > 0 {
		s.Log.Info("sessions naming the old address ended", "user", userID, "ended", n)
		s.reloadRevocations(ctx)
	}
}

// enrolFirst ends every session of a user whose new address the
// two-factor policy requires it of while none is in force (the confirming
// browser's too): the policy holds a required user's sign-in for the
// enrolment before any session, and a change into required_for must not
// let the sessions begun before it go on with one factor. The next
// sign-in is the enrolment. A failure is logged; the change stands.
func (s *Service) enrolFirst(ctx context.Context, userID, addr string) {
	if s.SecondFactor == nil {
		return
	}
	ctx, cancel := finish.Detached(ctx)
	defer cancel()
	must, err := s.SecondFactor.MustEnrol(ctx, userID, &addr)
	if err == nil && must {
		_, err = s.revokeSessions(ctx, userID)
	}
	if err != nil {
		s.Log.ErrorContext(ctx, "e-mail address changed into the two-factor policy, but the sessions were not ended", "user", userID, "err", err)
		return
	}
	if must {
		s.Log.Info("e-mail address changed into the two-factor policy: sessions ended, enrolment at the next sign-in", "user", userID)
	}
}
