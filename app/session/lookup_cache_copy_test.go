package session

import (
	"crypto/sha256"
	"database/sql"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

// TestLookupCacheCopiesEveryField: a cached row gives back every exported
// field of models.SessionRow, so a column added to the lookup (as amr was)
// cannot be served empty from the cache while the database has it. Each
// field is set to a non-zero value by reflection: a new field fails here
// until the cache copies it. Groups is the exception: forward-auth's
// stored groups are kept by app/groups' cache, and a session from this
// cache reports none read (Database.ReadWithGroups).
func TestLookupCacheCopiesEveryField(t *testing.T) {
	var in models.SessionRow
	v := reflect.ValueOf(&in).Elem()
	at := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		switch f.Interface().(type) {
		case string:
			f.SetString("value of " + sf.Name)
		case bool:
			f.SetBool(true)
		case time.Time:
			f.Set(reflect.ValueOf(at))
		case sql.NullTime:
			f.Set(reflect.ValueOf(sql.NullTime{Time: at, Valid: true}))
		case sql.NullString:
			f.Set(reflect.ValueOf(sql.NullString{String: "value of " + sf.Name, Valid: true}))
		default:
			t.Fatalf("SessionRow.%s is a %s: give it a value here", sf.Name, sf.Type)
		}
	}
	c, err := newLookupCache(time.Minute, 0)
	require.NoError(t, err)
	key := sha256.Sum256([]byte("token"))
	c.put(key, c.begin(), &in)
	var out models.SessionRow
	require.True(t, c.get(key, &out))
	o := reflect.ValueOf(&out).Elem()
	require.False(t, out.Groups.Valid, "groups are not the lookup cache's")
	for i := range v.NumField() {
		if sf := v.Type().Field(i); sf.IsExported() && sf.Name != "Groups" {
			require.Equal(t, v.Field(i).Interface(), o.Field(i).Interface(), "SessionRow.%s", sf.Name)
		}
	}
}

// The outage grace (getStale) answers copies older than the TTL, until
// something may have ended them: one user's sign-out drops that user's
// copy only, so everyone else keeps their grace; sign-out everywhere or
// ending another device (invalidate) takes every copy's grace away; a
// lookup that ran across a sign-out keeps no copy at all.
func TestLookupCacheOutageGrace(t *testing.T) {
	c, err := newLookupCache(time.Nanosecond, time.Minute)
	require.NoError(t, err)
	ann, bob := sha256.Sum256([]byte("ann")), sha256.Sum256([]byte("bob"))
	row := models.SessionRow{UserID: "u"}
	c.put(ann, c.begin(), &row)
	c.put(bob, c.begin(), &row)
	time.Sleep(time.Millisecond)
	var out models.SessionRow
	require.False(t, c.get(ann, &out), "past the TTL")
	require.True(t, c.getStale(ann, &out), "within the grace")

	c.ended(bob)
	require.False(t, c.getStale(bob, &out), "bob signed out")
	require.True(t, c.getStale(ann, &out), "ann did not")

	tk := c.begin()
	c.ended(ann)
	c.put(ann, tk, &row) // a lookup that began before ann's sign-out
	require.False(t, c.getStale(ann, &out), "no copy kept from across a sign-out")

	c.put(bob, c.begin(), &row)
	c.invalidate()
	require.False(t, c.getStale(bob, &out), "sign-out everywhere ends every copy's grace")

	off, err := newLookupCache(time.Nanosecond, 0)
	require.NoError(t, err)
	off.put(ann, off.begin(), &row)
	require.False(t, off.getStale(ann, &out), "outage_grace 0: none")
}
