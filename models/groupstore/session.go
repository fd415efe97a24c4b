package groupstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/onerow"
)

// ReadSession is models.Store.ReadSession for forward-auth: the session,
// its user and the user's stored groups (row.Groups, comma-separated:
// names hold no comma; in no order) in one statement. Forward-auth asks
// for both on every request; at a million users the groups cache rarely
// holds the user, and a second query cost PostgreSQL a round trip per
// request (issue #36). GET /session keeps models' lookup, which reads no
// groups.
func (s *Store) ReadSession(ctx context.Context, tokenHash string, row *models.SessionRow) error {
	rows, err := s.store.Statements().Query(ctx, s.sessionSQL, tokenHash)
	if err == nil {
		err = onerow.From(rows, row.Targets(true)...)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return models.ErrNotFound
	}
	if err != nil {
		s.store.CountFailure(err)
		return fmt.Errorf("find session with groups: %w", err)
	}
	return nil
}

// SessionSQL is ReadSession's statement, for the EXPLAIN test of the
// request paths (models/scalefill): the session lookup with the groups
// as a subquery on user_groups' primary key (user_id, name).
func (s *Store) SessionSQL() string { return s.sessionSQL }

func (s *Store) buildSessionSQL() string {
	agg := `group_concat(g.name, ',')`
	if s.store.Dialect() == models.DialectPostgres {
		agg = `string_agg(g.name, ',')`
	}
	return s.store.SessionLookupSQL(`(SELECT ` + agg + ` FROM user_groups g WHERE g.user_id = s.user_id)`)
}
