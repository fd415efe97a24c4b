package signin

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A device cookie keeps the latest DeviceAccounts accounts, drops those
// past keep, gives the account that signed in a new id and leaves the
// others' ids alone; it opens under an older secret and not under an
// unrelated one, and never holds an address.
func TestDeviceCookieAccounts(t *testing.T) {
	const keep = 30 * 24 * time.Hour
	now := time.Unix(1_700_000_000, 0)
	var v deviceCookie
	for i := range DeviceAccounts + 2 {
		v = v.signedIn(fmt.Sprintf("u%d@example.com", i), now.Add(time.Duration(i)*time.Hour), keep)
	}
	require.Len(t, v.Accounts, DeviceAccounts)
	_, ok := v.find("u0@example.com", now.Add(10*time.Hour), keep)
	require.False(t, ok, "the oldest left")
	before, ok := v.find("u3@example.com", now.Add(10*time.Hour), keep)
	require.True(t, ok)

	again := v.signedIn("u6@example.com", now.Add(10*time.Hour), keep)
	after, _ := again.find("u3@example.com", now.Add(10*time.Hour), keep)
	require.Equal(t, before, after, "another account's entry is kept as it was")
	old, _ := v.find("u6@example.com", now.Add(10*time.Hour), keep)
	fresh, _ := again.find("u6@example.com", now.Add(10*time.Hour), keep)
	require.NotEqual(t, old.ID, fresh.ID, "a new id for the account that signed in")

	_, ok = again.find("u6@example.com", now.Add(10*time.Hour+keep), keep)
	require.False(t, ok, "past keep")
	require.Len(t, again.signedIn("x@example.com", now.Add(7*time.Hour+keep), keep).Accounts, 2, "expired entries dropped: u6's is left")

	oldKeys, err := NewDevices([]string{"old-secret-0123456789abcdef0123456789abcdef"}, keep)
	require.NoError(t, err)
	rotated, err := NewDevices([]string{"new-secret-0123456789abcdef0123456789abcdef", "old-secret-0123456789abcdef0123456789abcdef"}, keep)
	require.NoError(t, err)
	other, err := NewDevices([]string{"unrelated-0123456789abcdef0123456789abcdef"}, keep)
	require.NoError(t, err)
	sealed, err := oldKeys.seal(again)
	require.NoError(t, err)
	require.NotContains(t, sealed, "example")
	require.Equal(t, again, rotated.open(sealed))
	require.Empty(t, other.open(sealed).Accounts)
	require.Empty(t, (*Devices)(nil).open(sealed).Accounts)
}
