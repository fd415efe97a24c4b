//go:build !packaging

package packaging_test

import "testing"

// Without the build tag, say where the release's checks run instead of
// finding no Go files (see main_test.go for why they have a tag).
func TestReleaseNeedsTheTag(t *testing.T) {
	t.Skip("the release's checks build with -tags packaging: go tool task test:packaging (part of go tool task test), or go test -tags packaging ./test/packaging/")
}
