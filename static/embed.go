// Package static embeds latchkey's CSS and images so the binary is self-contained.
package static

import "embed"

// Files is served at {base}/static/.
//
//go:embed *.css
var Files embed.FS
