package twofactorpages

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/a-h/templ"
	"github.com/boombuler/barcode/qr"
)

// qrSVG draws text as a QR code in an inline SVG: rendered here, so the
// setup page loads nothing from elsewhere and the secret never leaves the
// origin (no image service, no data: URL the CSP would have to allow).
// Each dark module is one unit square of a single path; a four-module
// quiet zone surrounds it, as scanners expect. The page's wrapper names
// the image (role="img", TwoFactorQRLabel), so the SVG is hidden from
// assistive technology.
func qrSVG(text string) (templ.Component, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return nil, fmt.Errorf("encode the QR code: %w", err)
	}
	n := code.Bounds().Dx()
	const quiet = 4
	size := n + 2*quiet
	var path strings.Builder
	for y := range n {
		for x := range n {
			if r, _, _, _ := code.At(x, y).RGBA(); r == 0 {
				fmt.Fprintf(&path, "M%d %dh1v1h-1z", x+quiet, y+quiet)
			}
		}
	}
	svg := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" aria-hidden="true" shape-rendering="crispEdges"><rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="%s"/></svg>`,
		size, size, size*5, size*5, size, size, path.String())
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, svg)
		return err
	}), nil
}
