// Package onerow reads the one row of a GORM query into plain values, in
// place of GORM's Row().Scan: with PrepareStmt (models' setting) a
// statement that cannot be prepared — the database closed, restarting or
// failing over — makes Row() return an empty *sql.Row, whose Scan panics
// (a nil *sql.Rows) instead of returning the error. The revocation poll
// runs every second on every instance, so during an outage that panic
// would take the whole process down.
package onerow

import (
	"database/sql"

	"gorm.io/gorm"
)

// Scan runs q and scans its first row into dest; sql.ErrNoRows when it
// has none.
func Scan(q *gorm.DB, dest ...any) error {
	rows, err := q.Rows()
	if err != nil {
		return err
	}
	return From(rows, dest...)
}

// From scans the first row of rows into dest and closes them; sql.ErrNoRows
// when there is none. It is QueryRow(...).Scan without the *sql.Row
// QueryRow allocates.
func From(rows *sql.Rows, dest ...any) error {
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}
