package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

// `users list` and `sessions list` page by --limit and --after: each page
// prints the cursor of the next, the pages end to end are every row once,
// a bad cursor is refused; on SQLite and PostgreSQL.
func TestListCommandsPage(t *testing.T) {
	eachAdminDatabase(t, "", func(t *testing.T, cfgPath string, store *models.Store) {
		ctx := context.Background()
		now := time.Now()
		for i := range 7 {
			addr := fmt.Sprintf("user%d@example.com", i)
			u := &models.User{Email: &addr}
			require.NoError(t, store.CreateUser(ctx, u))
			require.NoError(t, store.CreateSession(ctx, models.NewSession{UserID: u.ID, TokenHash: fmt.Sprint("h", i),
				SignedIn: now.Add(time.Duration(i) * time.Second), Expires: now.Add(time.Hour)}))
		}
		next := regexp.MustCompile(`next page: --after (\S+)\n`)
		for _, list := range []struct {
			cmd  []string
			row  *regexp.Regexp
			unit string
		}{{[]string{"users", "list"}, regexp.MustCompile(`user\d@example.com`), "user"},
			{[]string{"sessions", "list"}, regexp.MustCompile(`user\d@example.com`), "database session"}} {
			seen := map[string]bool{}
			args := append(list.cmd, "--config", cfgPath, "--limit", "3")
			for pages := 1; ; pages++ {
				code, stdout, stderr := runCmd(args...)
				require.Equal(t, 0, code, stderr)
				for _, addr := range list.row.FindAllString(stdout, -1) {
					require.False(t, seen[addr], "%s twice", addr)
					seen[addr] = true
				}
				m := next.FindStringSubmatch(stdout)
				if m == nil {
					require.Equal(t, 3, pages)
					require.Contains(t, stdout, "1 "+list.unit+"\n")
					break
				}
				require.Contains(t, stdout, "3 "+list.unit+"s\n")
				args = append(list.cmd, "--config", cfgPath, "--limit", "3", "--after", m[1])
			}
			require.Len(t, seen, 7, strings.Join(list.cmd, " "))
			code, _, stderr := runCmd(append(list.cmd, "--config", cfgPath, "--after", "nonsense")...)
			require.Equal(t, 1, code)
			require.Contains(t, stderr, "not a cursor")
		}
	})
}

// A negative --limit is a bad command line (exit 2, one line, before the
// database is opened), not "every row": the listing a script pages through
// must not silently become the whole table.
func TestListCommandsRefuseNegativeLimit(t *testing.T) {
	eachAdminDatabase(t, "", func(t *testing.T, cfgPath string, store *models.Store) {
		ctx := context.Background()
		for i := range 3 {
			addr := fmt.Sprintf("user%d@example.com", i)
			require.NoError(t, store.CreateUser(ctx, &models.User{Email: &addr}))
		}
		for _, cmd := range [][]string{{"users", "list"}, {"sessions", "list"}} {
			code, stdout, stderr := runCmd(append(cmd, "--config", cfgPath, "--limit", "-1")...)
			require.Equal(t, 2, code, stdout)
			require.Empty(t, stdout)
			require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
			require.Contains(t, stderr, "--limit -1: must be at least 0")
		}
	})
}
