package models

import "github.com/latchkey-auth/latchkey/models/stmtcache"

// Statements is the store's prepared statements for the reads of request
// paths that bypass GORM (package stmtcache; groupstore's Groups).
func (s *Store) Statements() *stmtcache.Cache { return s.stmts }

// CountFailure counts err, when it is a failure of the database (see
// countFailure), as latchkey_db_errors_total: for queries made through
// Statements, which GORM's callbacks do not see.
func (s *Store) CountFailure(err error) { s.countFailure(err) }
