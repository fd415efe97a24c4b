//go:build race

package csrf_test

// raceDetector: under -race, crypto/rand's buffer escapes to the heap,
// so allocation counts are not the release build's.
const raceDetector = true
