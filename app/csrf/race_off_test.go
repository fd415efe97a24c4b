//go:build !race

package csrf_test

// raceDetector: see race_on_test.go.
const raceDetector = false
