package twofactor

import (
	"context"
	"time"

	"github.com/latchkey-auth/latchkey/models/twofactorstore"
)

// Store is the storage of second factors. *twofactorstore.Store implements it;
// each write is atomic where the rules depend on it (a code step, a
// recovery code and a pending step are each used at most once, by any
// instance).
type Store interface {
	TwoFactorOf(ctx context.Context, userID string) (*twofactorstore.TwoFactor, error)
	BeginTwoFactor(ctx context.Context, userID, sealedSecret, deviceKey string, now time.Time) error
	ConfirmTwoFactor(ctx context.Context, userID, pending, sealedSecret string, step int64, codeHashes []string, now time.Time) (bool, error)
	UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error)
	ReserveTwoFactorCheck(ctx context.Context, userID string, now time.Time, free int, hold time.Time) (int, bool, error)
	BackOffTwoFactor(ctx context.Context, userID string, failures int, until time.Time) error
	UnusedRecoveryCodes(ctx context.Context, userID string) ([]twofactorstore.RecoveryCode, error)
	UseRecoveryCode(ctx context.Context, userID, id string, now time.Time) (bool, error)
	ReplaceRecoveryCodes(ctx context.Context, userID string, codeHashes []string, now time.Time) (bool, error)
	DeleteTwoFactor(ctx context.Context, userID string) (bool, error)
	ForgetDevices(ctx context.Context, userID, newKey string) (bool, error)

	CreateSecondStep(ctx context.Context, s *twofactorstore.SecondStep) error
	SecondStepByHash(ctx context.Context, tokenHash string) (*twofactorstore.SecondStep, error)
	CountSecondStepAttempt(ctx context.Context, tokenHash string, max int, now time.Time) (bool, error)
	ConsumeSecondStep(ctx context.Context, tokenHash string) (bool, error)
	DeleteSecondStepsOf(ctx context.Context, userID string) error
}
