package models

import "time"

// dbTime is how every time is written to and compared in the database: in
// UTC, truncated to the microsecond. PostgreSQL's timestamptz keeps
// microseconds (pgx truncates the rest) while SQLite keeps the nanoseconds
// GORM writes, as text that compares correctly only within one zone; one
// precision and one zone make a stored time read back as the instant
// written, and "expires > ?" give the same answer, on both dialects.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// dbNow is GORM's clock for CreatedAt and UpdatedAt, at dbTime's precision so
// the values a create returns are the ones stored.
func dbNow() time.Time { return dbTime(time.Now()) }

// withDBTime is u with EmailVerified at dbTime's precision.
func withDBTime(u *User) *User {
	if u.EmailVerified != nil {
		v := dbTime(*u.EmailVerified)
		u.EmailVerified = &v
	}
	return u
}
