// Package static embeds latchkey's CSS, images (logo.svg, an example logo
// for the theme option) and the passkey pages' script (passkeys.js), so the binary is self-contained and pages load nothing
// from elsewhere.
package static

import "embed"

// Files is served at {base}/static/.
//
//go:embed *.css *.js *.svg
var Files embed.FS
