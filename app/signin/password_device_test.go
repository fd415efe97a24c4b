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
	none := notBefore{}
	var v deviceCookie
	for i := range DeviceAccounts + 2 {
		v = v.signedIn(fmt.Sprintf("u%d@example.com", i), fmt.Sprintf("id%d", i), now.Add(time.Duration(i)*time.Hour), keep, none)
	}
	require.Len(t, v.Accounts, DeviceAccounts)
	_, ok := v.find("u0@example.com", "id0", now.Add(10*time.Hour), keep, none)
	require.False(t, ok, "the oldest left")
	before, ok := v.find("u3@example.com", "id3", now.Add(10*time.Hour), keep, none)
	require.True(t, ok)

	again := v.signedIn("u6@example.com", "id6", now.Add(10*time.Hour), keep, none)
	after, _ := again.find("u3@example.com", "id3", now.Add(10*time.Hour), keep, none)
	require.Equal(t, before, after, "another account's entry is kept as it was")
	old, _ := v.find("u6@example.com", "id6", now.Add(10*time.Hour), keep, none)
	fresh, _ := again.find("u6@example.com", "id6", now.Add(10*time.Hour), keep, none)
	require.NotEqual(t, old.ID, fresh.ID, "a new id for the account that signed in")

	_, ok = again.find("u6@example.com", "id6", now.Add(10*time.Hour+keep), keep, none)
	require.False(t, ok, "past keep")
	require.Len(t, again.signedIn("x@example.com", "idx", now.Add(7*time.Hour+keep), keep, none).Accounts, 2, "expired entries dropped: u6's is left")

	oldKeys, err := NewDevices([]string{"old-secret-0123456789abcdef0123456789abcdef"}, keep, none)
	require.NoError(t, err)
	rotated, err := NewDevices([]string{"new-secret-0123456789abcdef0123456789abcdef", "old-secret-0123456789abcdef0123456789abcdef"}, keep, none)
	require.NoError(t, err)
	other, err := NewDevices([]string{"unrelated-0123456789abcdef0123456789abcdef"}, keep, none)
	require.NoError(t, err)
	sealed, err := oldKeys.seal(again)
	require.NoError(t, err)
	require.NotContains(t, sealed, "example")
	require.Equal(t, again, rotated.open(sealed))
	require.Empty(t, other.open(sealed).Accounts)
	require.Empty(t, (*Devices)(nil).open(sealed).Accounts)
}

// notBefore is a Revocations: user id → the first second of a sign-in
// that is not revoked (session.Revocations' rule).
type notBefore map[string]int64

func (n notBefore) Revoked(userID string, signedIn time.Time) bool {
	nb, ok := n[userID]
	return ok && signedIn.Unix() < nb
}

// An entry signed in before its user's "not before" time exempts nothing
// and is dropped at the next sign-in, one signed in from it on does; an
// entry without a user (sealed before entries named one) is void; and
// NewDevices refuses to run without revocations (fail closed).
func TestDeviceCookieRevoked(t *testing.T) {
	const keep = 30 * 24 * time.Hour
	now := time.Unix(1_700_000_000, 0)
	v := deviceCookie{}.signedIn("ann@example.com", "ann", now, keep, notBefore{})
	v = v.signedIn("bob@example.com", "bob", now, keep, notBefore{})
	later := now.Add(time.Hour)
	revoked := notBefore{"ann": now.Unix() + 1}

	_, ok := v.find("ann@example.com", "ann", later, keep, notBefore{"bob": now.Unix() + 1})
	require.True(t, ok, "another user's revocation")
	_, ok = v.find("ann@example.com", "ann", later, keep, revoked)
	require.False(t, ok, "revoked in the second it signed in")
	_, ok = v.find("bob@example.com", "bob", later, keep, revoked)
	require.True(t, ok)
	_, ok = v.find("ann@example.com", "ann", later, keep, notBefore{"ann": now.Unix()})
	require.True(t, ok, "signed in at the not-before second: after the revocation")
	_, ok = v.find("ann@example.com", "ann-2", later, keep, notBefore{})
	require.False(t, ok, "the address's next holder: another user")
	_, ok = v.find("ann@example.com", "", later, keep, notBefore{})
	require.False(t, ok, "no holder")

	again := v.signedIn("bob@example.com", "bob", later, keep, revoked)
	require.Len(t, again.Accounts, 1, "the revoked entry is dropped")
	fresh := again.signedIn("ann@example.com", "ann", later, keep, revoked)
	_, ok = fresh.find("ann@example.com", "ann", later, keep, revoked)
	require.True(t, ok, "a sign-in after the revocation")

	legacy := deviceCookie{Accounts: []deviceAccount{{Key: deviceKey("ann@example.com"), ID: "x", At: now.Unix()}}}
	_, ok = legacy.find("ann@example.com", "ann", later, keep, notBefore{})
	require.False(t, ok, "no user: void")
	require.Len(t, legacy.signedIn("bob@example.com", "bob", later, keep, notBefore{}).Accounts, 1, "and dropped")

	_, err := NewDevices([]string{"a-secret-0123456789abcdef0123456789abcdef"}, keep, nil)
	require.Error(t, err)
}

// Throttle.DeviceCookie (a reset link's browser): the cookie sent, with
// the account signed in as the user given, first, and the browser's other
// live accounts kept; a forged cookie is none; no throttle or no device
// cookies, nothing.
func TestThrottleDeviceCookie(t *testing.T) {
	const keep = 30 * 24 * time.Hour
	now := time.Unix(1_700_000_000, 0)
	d, err := NewDevices([]string{"a-secret-0123456789abcdef0123456789abcdef"}, keep, notBefore{})
	require.NoError(t, err)
	th := NewThrottle(nil)
	th.Devices = d
	sent, err := d.seal(deviceCookie{}.signedIn("bob@example.com", "bob", now, keep, notBefore{}))
	require.NoError(t, err)

	for _, c := range []struct {
		sent     string
		accounts int
	}{{sent, 2}, {"", 1}, {"forged", 1}} {
		v, expires, err := th.DeviceCookie(c.sent, "ann@example.com", "ann-owner", now.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, now.Add(time.Hour+KnownFor), expires)
		got := d.open(v)
		require.Len(t, got.Accounts, c.accounts, "%q", c.sent)
		ann, ok := got.find("ann@example.com", "ann-owner", now.Add(time.Hour), keep, notBefore{})
		require.True(t, ok)
		require.Equal(t, "ann-owner", ann.User, "it names the user given")
		require.Equal(t, got.Accounts[0], ann, "first")
		_, ok = got.find("ann@example.com", "ann-owner", now.Add(time.Hour), keep, notBefore{"ann-owner": now.Unix() + 3601})
		require.False(t, ok, "that user's revocations void it")
	}
	for _, none := range []*Throttle{nil, NewThrottle(nil)} {
		v, _, err := none.DeviceCookie(sent, "ann@example.com", "ann-owner", now)
		require.NoError(t, err)
		require.Empty(t, v)
	}
}
