// Package colour reads the CSS colours an operator may give latchkey's
// theme: which values are plain colours safe to write into a stylesheet
// and an e-mail as they are (IsCSSColor), and the WCAG 2.1 contrast of two
// of them. It knows nothing of latchkey's configuration: app/config
// decides what to refuse and what to warn about.
package colour

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/image/colornames"
)

var (
	// hexColor is #rgb, #rgba, #rrggbb or #rrggbbaa.
	hexColor = regexp.MustCompile(`^#([0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$`)
	// funcColor is rgb()/rgba()/hsl()/hsla() with three numbers and an
	// optional alpha, comma- or space-separated: no nested functions,
	// var() or anything else a stylesheet could be made to run.
	funcColor = regexp.MustCompile(`^(rgba?|hsla?)\(\s*` + colorNum + `(deg)?(\s*,\s*|\s+)` + colorNum + `(\s*,\s*|\s+)` + colorNum + `(\s*[,/]\s*` + colorNum + `)?\s*\)$`)
)

// colorNum is one number of a colour function: up to three digits and a
// fraction, or a percentage of that.
const colorNum = `([0-9]{1,3}(\.[0-9]{1,4})?|\.[0-9]{1,4})%?`

// IsCSSColor reports whether s is a colour latchkey writes into its theme
// stylesheet and e-mail as it is.
func IsCSSColor(s string) bool {
	if hexColor.MatchString(s) || funcColor.MatchString(s) {
		return true
	}
	_, ok := namedColors[strings.ToLower(s)]
	return ok
}

// namedColors are CSS's named colours (CSS Color Module Level 4).
var namedColors = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, n := range strings.Fields(`aliceblue antiquewhite aqua aquamarine azure beige bisque black
		blanchedalmond blue blueviolet brown burlywood cadetblue chartreuse chocolate coral
		cornflowerblue cornsilk crimson cyan darkblue darkcyan darkgoldenrod darkgray darkgreen
		darkgrey darkkhaki darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon
		darkseagreen darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink
		deepskyblue dimgray dimgrey dodgerblue firebrick floralwhite forestgreen fuchsia gainsboro
		ghostwhite gold goldenrod gray green greenyellow grey honeydew hotpink indianred indigo
		ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan
		lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen
		lightskyblue lightslategray lightslategrey lightsteelblue lightyellow lime limegreen linen
		magenta maroon mediumaquamarine mediumblue mediumorchid mediumpurple mediumseagreen
		mediumslateblue mediumspringgreen mediumturquoise mediumvioletred midnightblue mintcream
		mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid
		palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum
		powderblue purple rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown
		seagreen seashell sienna silver skyblue slateblue slategray slategrey snow springgreen
		steelblue tan teal thistle tomato turquoise violet wheat white whitesmoke yellow
		yellowgreen`) {
		m[n] = struct{}{}
	}
	return m
}()

// rgbFunc is rgb()/rgba() with three plain numbers (0-255) and an optional
// alpha, the forms IsCSSColor admits.
var rgbFunc = regexp.MustCompile(`^rgba?\(\s*([0-9.]+)(?:\s*,\s*|\s+)([0-9.]+)(?:\s*,\s*|\s+)([0-9.]+)\s*(?:[,/]\s*([0-9.]+%?))?\s*\)$`)

// OpaqueRGB is an opaque colour's red, green and blue (0-1): hex, a CSS
// name, or rgb() with numbers; ok is false for anything else.
func OpaqueRGB(s string) (rgb [3]float64, ok bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case strings.HasPrefix(s, "#"):
		h := s[1:]
		if len(h) == 3 || len(h) == 4 { // #rgb(a) is #rrggbb(aa)
			var long strings.Builder
			for i := range len(h) {
				long.WriteByte(h[i])
				long.WriteByte(h[i])
			}
			h = long.String()
		}
		if len(h) == 8 {
			if h[6:] != "ff" {
				return rgb, false
			}
			h = h[:6]
		}
		if len(h) != 6 {
			return rgb, false
		}
		for i := range 3 {
			v, err := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
			if err != nil {
				return rgb, false
			}
			rgb[i] = float64(v) / 255
		}
		return rgb, true
	case rgbFunc.MatchString(s):
		m := rgbFunc.FindStringSubmatch(s)
		if m[4] != "" && m[4] != "1" && m[4] != "100%" {
			return rgb, false
		}
		for i := range 3 {
			v, err := strconv.ParseFloat(m[i+1], 64)
			if err != nil || v > 255 {
				return rgb, false
			}
			rgb[i] = v / 255
		}
		return rgb, true
	}
	if s == "rebeccapurple" { // CSS Color 4; not in SVG 1.1's list
		return [3]float64{0x66 / 255.0, 0x33 / 255.0, 0x99 / 255.0}, true
	}
	if c, found := colornames.Map[s]; found {
		return [3]float64{float64(c.R) / 255, float64(c.G) / 255, float64(c.B) / 255}, true
	}
	return rgb, false
}

// Contrast is WCAG 2.1's contrast ratio of two sRGB colours (1 to 21).
func Contrast(a, b [3]float64) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// luminance is WCAG 2.1's relative luminance.
func luminance(c [3]float64) float64 {
	lin := func(v float64) float64 {
		if v <= 0.03928 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c[0]) + 0.7152*lin(c[1]) + 0.0722*lin(c[2])
}
