package twofactor

import (
	"context"
	"sync"
	"time"

	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/twofactorstore"
)

// memStore is Store in memory, with the real one's atomicity (one mutex),
// for the rules' fast tests; models tests the real one on both dialects.
type memStore struct {
	mu    sync.Mutex
	rows  map[string]twofactorstore.TwoFactor
	codes map[string][]twofactorstore.RecoveryCode
	steps map[string]twofactorstore.SecondStep
}

func newMemStore() *memStore {
	return &memStore{rows: map[string]twofactorstore.TwoFactor{}, codes: map[string][]twofactorstore.RecoveryCode{}, steps: map[string]twofactorstore.SecondStep{}}
}

func (m *memStore) TwoFactorOf(_ context.Context, uid string) (*twofactorstore.TwoFactor, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[uid]
	if !ok {
		return nil, models.ErrNotFound
	}
	return &r, nil
}

func (m *memStore) BeginTwoFactor(_ context.Context, uid, sealed, key string, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.rows[uid]; ok && r.ConfirmedAt != nil {
		return models.ErrConflict
	}
	m.rows[uid] = twofactorstore.TwoFactor{UserID: uid, Secret: sealed, DeviceKey: key, CreatedAt: now, UpdatedAt: now}
	return nil
}

func (m *memStore) ConfirmTwoFactor(_ context.Context, uid, pending, sealed string, step int64, hashes []string, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[uid]
	if !ok || r.ConfirmedAt != nil || r.Secret != pending {
		return false, nil
	}
	r.Secret, r.ConfirmedAt, r.LastStep, r.Failures, r.BlockedUntil = sealed, &now, step, 0, nil
	m.rows[uid] = r
	m.codes[uid] = nil
	for _, h := range hashes {
		m.codes[uid] = append(m.codes[uid], twofactorstore.RecoveryCode{ID: random.UUID(), UserID: uid, CodeHash: h, CreatedAt: now})
	}
	return true, nil
}

func (m *memStore) UseTOTPStep(_ context.Context, uid string, step int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[uid]
	if !ok || r.ConfirmedAt == nil || r.LastStep >= step {
		return false, nil
	}
	r.LastStep, r.Failures, r.BlockedUntil = step, 0, nil
	m.rows[uid] = r
	return true, nil
}

func (m *memStore) ReserveTwoFactorCheck(_ context.Context, uid string, now time.Time, free int, hold time.Time) (int, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[uid]
	if !ok || (r.BlockedUntil != nil && r.BlockedUntil.After(now)) {
		return 0, false, nil
	}
	r.Failures++
	r.BlockedUntil = nil
	if r.Failures >= free {
		r.BlockedUntil = &hold
	}
	m.rows[uid] = r
	return r.Failures, true, nil
}

func (m *memStore) BackOffTwoFactor(_ context.Context, uid string, failures int, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.rows[uid]; ok && r.Failures >= failures {
		r.BlockedUntil = &until
		m.rows[uid] = r
	}
	return nil
}

func (m *memStore) UnusedRecoveryCodes(_ context.Context, uid string) ([]twofactorstore.RecoveryCode, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []twofactorstore.RecoveryCode
	for _, c := range m.codes[uid] {
		if c.UsedAt == nil {
			out = append(out, c)
		}
	}
	return out, nil
}

func (m *memStore) UseRecoveryCode(_ context.Context, uid, id string, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, c := range m.codes[uid] {
		if c.ID == id && c.UsedAt == nil {
			m.codes[uid][i].UsedAt = &now
			r := m.rows[uid]
			r.Failures, r.BlockedUntil = 0, nil
			m.rows[uid] = r
			return true, nil
		}
	}
	return false, nil
}

func (m *memStore) ReplaceRecoveryCodes(_ context.Context, uid string, hashes []string, now time.Time) (bool, error) {
	m.mu.Lock()
	r, ok := m.rows[uid]
	m.mu.Unlock()
	if !ok || r.ConfirmedAt == nil {
		return false, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.codes[uid] = nil
	for _, h := range hashes {
		m.codes[uid] = append(m.codes[uid], twofactorstore.RecoveryCode{ID: random.UUID(), UserID: uid, CodeHash: h, CreatedAt: now})
	}
	return true, nil
}

func (m *memStore) DeleteTwoFactor(_ context.Context, uid string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.rows[uid]
	delete(m.rows, uid)
	delete(m.codes, uid)
	for h, s := range m.steps {
		if s.UserID == uid {
			delete(m.steps, h)
		}
	}
	return ok, nil
}

func (m *memStore) ForgetDevices(_ context.Context, uid, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[uid]
	if !ok {
		return false, nil
	}
	r.DeviceKey = key
	m.rows[uid] = r
	return true, nil
}

func (m *memStore) CreateSecondStep(_ context.Context, s *twofactorstore.SecondStep) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps[s.TokenHash] = *s
	return nil
}

func (m *memStore) SecondStepByHash(_ context.Context, h string) (*twofactorstore.SecondStep, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.steps[h]
	if !ok {
		return nil, models.ErrNotFound
	}
	return &s, nil
}

func (m *memStore) CountSecondStepAttempt(_ context.Context, h string, max int, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.steps[h]
	if !ok || s.Attempts >= max || !s.Expires.After(now) {
		return false, nil
	}
	s.Attempts++
	m.steps[h] = s
	return true, nil
}

func (m *memStore) ConsumeSecondStep(_ context.Context, h string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.steps[h]
	delete(m.steps, h)
	return ok, nil
}

func (m *memStore) DeleteSecondStepsOf(_ context.Context, uid string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, st := range m.steps {
		if st.UserID == uid {
			delete(m.steps, h)
		}
	}
	return nil
}
