package signin

import (
	"context"
	"errors"
	"time"

	"github.com/latchkey-auth/latchkey/app/oauth"
	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/models"
)

// OAuthIdentity is what an OAuth or OIDC provider vouched for, after the
// state, PKCE and nonce checks and the code exchange.
type OAuthIdentity struct {
	Provider string
	// AllowDangerousEmailAccountLinking links the identity to an existing
	// user with the same e-mail (the provider option of that name).
	AllowDangerousEmailAccountLinking bool
	Profile                           oauth.Profile
	// Account is the row to link; its UserID is filled here.
	Account *models.Account
}

// OAuth signs in with a provider identity by next-auth's linking table,
// asks the SignIn hook, and starts the session:
//
//	identity linked | browser signed in as | result
//	to U            | nobody or U          | sign in as U
//	to U            | someone else         | OAuthAccountNotLinked
//	to nobody       | V, signed in recently| link to V, sign in as V
//	to nobody       | V, longer ago        | SessionRequired: sign in again first
//	to nobody       | V, recently, without | SessionRequired: V has two-factor on and
//	                |   the second factor  |   the session did not use it
//	to nobody       | nobody               | e-mail of an existing user: OAuthAccountNotLinked
//	                |                      |   (linked instead with AllowDangerousEmailAccountLinking)
//	                |                      | else a new user with this account
//
// "Recently" is within ReauthWindow, as for adding a passkey (next-auth
// links whatever the session's age), and, once two-factor is in force for
// V, with it, as the account page's other privileged changes
// (accounts.Service.Privileged). The hook sees the linked user, or the
// user the profile would create. Nothing is written before the hook agreed.
// A link that committed is reported (SignedIn.Linked) even when the
// session then failed to start, with the error: the user is told of the
// link whatever became of the sign-in.
func (s *Service) OAuth(ctx context.Context, b Browser, in OAuthIdentity) (*SignedIn, error) {
	current, since, err := b.SignedInSince(ctx)
	if err != nil {
		return nil, Failf(CodeCallback, "read the current session: %w", err)
	}
	acc := in.Account
	linked, err := s.Users.UserByAccount(ctx, acc.Provider, acc.ProviderAccountID)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return nil, Fail(CodeCallback, err)
	}
	if linked == nil && current != "" && s.Now().Sub(since) > s.ReauthWindow {
		return nil, Failf(CodeSessionRequired, "linking a new %s identity to a session that signed in more than %s ago", in.Provider, s.ReauthWindow)
	}
	if linked == nil && current != "" {
		if err := s.linkNeedsNoStepUp(ctx, b, current); err != nil {
			return nil, err
		}
	}
	profileUser := userFromProfile(in.Profile, s.Now())
	candidate := profileUser
	if linked != nil {
		candidate = linked
	}
	hookIn := SignInInput{User: *candidate, Provider: in.Provider, Type: acc.Type, Email: in.Profile.Email, EmailVerified: in.Profile.EmailVerified}
	if err := s.checkSignIn(ctx, hookIn); err != nil {
		return nil, err
	}
	user, isNew, err := s.link(ctx, in, current, linked, profileUser)
	if err != nil {
		return nil, err
	}
	out := &SignedIn{User: user, Provider: in.Provider, IsNew: isNew, Linked: linked == nil && !isNew, Methods: []string{twofactor.MethodFederated}}
	if err := s.startSession(ctx, b, out); err != nil {
		if out.Linked { // the link has committed: the caller tells the user of it all the same
			return out, err
		}
		return nil, err
	}
	return out, nil
}

// linkNeedsNoStepUp refuses linking a new identity to the browser's
// session of userID when two-factor is in force for the user and the
// session did not use it (twofactor.Service.NeedsSecondFactor): a
// password session from before the owner turned two-factor on must not
// add a lasting way in. The account page sends such a session to the
// step-up form before the provider is asked.
func (s *Service) linkNeedsNoStepUp(ctx context.Context, b Browser, userID string) error {
	if s.SecondFactor == nil {
		return nil
	}
	_, methods, err := b.SignedInMethods(ctx)
	if err != nil {
		return Failf(CodeCallback, "read the current session's methods: %w", err)
	}
	need, err := s.SecondFactor.NeedsSecondFactor(ctx, userID, methods)
	switch {
	case err != nil:
		return Failf(CodeCallback, "ask whether two-factor is in force: %w", err)
	case need:
		return Fail(CodeSessionRequired, errors.New("linking a new identity to a session that did not use the second factor of a user with two-factor on"))
	}
	return nil
}

// link applies the table of OAuth to rows.
func (s *Service) link(ctx context.Context, in OAuthIdentity, current string, linked, profileUser *models.User) (*models.User, bool, error) {
	acc := in.Account
	switch {
	case linked != nil && current != "" && current != linked.ID:
		return nil, false, Fail(CodeOAuthAccountNotLinked, errors.New("the account is linked to another user than the signed-in one"))
	case linked != nil:
		return linked, false, nil
	case current != "":
		user, err := s.Users.UserByID(ctx, current)
		if err != nil {
			return nil, false, Failf(CodeCallback, "signed-in user: %w", err)
		}
		return user, false, s.linkTo(ctx, user, acc)
	}
	if in.Profile.Email != "" {
		byEmail, err := s.Users.UserByEmail(ctx, in.Profile.Email)
		if err != nil && !errors.Is(err, models.ErrNotFound) {
			return nil, false, Fail(CodeCallback, err)
		}
		if byEmail != nil {
			if !in.AllowDangerousEmailAccountLinking {
				return nil, false, Fail(CodeOAuthAccountNotLinked, errors.New("a user with this e-mail exists and the account is not linked"))
			}
			if !in.Profile.EmailVerified {
				// Linking by an address the provider did not verify would
				// hand the user to whoever typed it in ("nOAuth").
				return nil, false, Fail(CodeOAuthAccountNotLinked, errors.New("a user with this e-mail exists and the provider does not verify the address"))
			}
			// The other way round: a user holding the address unproved,
			// with a way in of its own, may be whoever typed it in at a
			// provider that does not verify addresses; linking the owner's
			// identity to it would hand the owner's account to them.
			claim, err := UnprovedClaim(ctx, s.Users, byEmail)
			if err != nil {
				return nil, false, Fail(CodeCallback, err)
			}
			if claim {
				return nil, false, Fail(CodeOAuthAccountNotLinked, errors.New("the user with this e-mail holds it unverified and can sign in another way"))
			}
			return byEmail, false, s.linkTo(ctx, byEmail, acc)
		}
	}
	if err := s.Users.CreateUserWithAccount(ctx, profileUser, acc); err != nil {
		if errors.Is(err, models.ErrConflict) {
			return nil, false, Fail(CodeOAuthAccountNotLinked, err)
		}
		return nil, false, Fail(CodeOAuthCreateAccount, err)
	}
	return profileUser, true, nil
}

func (s *Service) linkTo(ctx context.Context, u *models.User, acc *models.Account) error {
	acc.UserID = u.ID
	if err := s.Users.LinkAccount(ctx, acc); err != nil {
		return Fail(CodeOAuthAccountNotLinked, err)
	}
	return nil
}

// userFromProfile is the user a profile creates. Its e-mail is marked
// verified only when the provider vouches for it, so a later e-mail sign-in
// can tell an address someone merely typed in.
func userFromProfile(p oauth.Profile, now time.Time) *models.User {
	u := &models.User{}
	if p.Name != "" {
		u.Name = &p.Name
	}
	if p.Email != "" {
		u.Email = &p.Email
		if p.EmailVerified {
			u.EmailVerified = &now
		}
	}
	if p.Image != "" {
		u.Image = &p.Image
	}
	return u
}
