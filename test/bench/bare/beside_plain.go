//go:build !linked

package main

import "errors"

// holdLatchkey needs latchkey linked in: see beside_linked.go.
func holdLatchkey(string) (func(), error) {
	return nil, errors.New("-beside needs a build with -tags linked")
}
