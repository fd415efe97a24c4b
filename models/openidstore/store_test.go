package openidstore_test

import (
	"github.com/latchkey-auth/latchkey/app/openid"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// The store is the core's Store (checked here, in the external test
// package: app/openid imports openidstore, so openidstore cannot import it).
var _ openid.Store = (*openidstore.Store)(nil)
