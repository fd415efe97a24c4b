package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
)

// A database whose newest step is applied but an older one is not (a step
// merged after a later one ran) is not this binary's schema: the admin
// commands refuse it, naming the step, until `migrate` applies it.
func TestAdminCommandsRefuseASchemaGap(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "latchkey.db")
	t.Setenv("DATABASE_URL", db)
	code, _, stderr := runCmd("migrate")
	require.Equal(t, 0, code, stderr)

	g, err := gorm.Open(sqlite.Open(db), &gorm.Config{})
	require.NoError(t, err)
	require.NoError(t, g.Exec("DELETE FROM schema_migrations WHERE version = 3").Error)
	require.NoError(t, g.Exec("DROP TABLE rate_limits").Error)
	sqlDB, _ := g.DB()
	require.NoError(t, sqlDB.Close())

	code, stdout, stderr := runCmd("users", "list")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, "latchkey: users list: the database schema lacks step 3 rate_limits: run this latchkey's `migrate` first\n", stderr)

	code, _, stderr = runCmd("migrate")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = runCmd("users", "list")
	require.Equal(t, 0, code, stderr)
}
