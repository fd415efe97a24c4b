package config

import (
	"regexp"
	"strings"
)

// Theme is next-auth's `theme` option for the built-in pages and the
// sign-in e-mail: ColorScheme is "auto" (the browser's choice, the
// default), "light" or "dark"; BrandColor colours buttons and links;
// Logo is shown at the top of every page; ButtonText is the colour of the
// text on brand-coloured buttons. Values reach a stylesheet and HTML
// attributes, so Validate admits only plain colours and URLs.
type Theme struct {
	ColorScheme string `yaml:"color_scheme"`
	BrandColor  string `yaml:"brand_color"`
	Logo        string `yaml:"logo"`
	ButtonText  string `yaml:"button_text"`
}

// Colour schemes.
const (
	SchemeAuto  = "auto"
	SchemeLight = "light"
	SchemeDark  = "dark"
)

// validateTheme reports a theme value that is not what its key expects.
func (c *Config) validateTheme(add func(string, ...any)) {
	t := c.Theme
	switch t.ColorScheme {
	case "", SchemeAuto, SchemeLight, SchemeDark:
	default:
		add("theme.color_scheme: %q must be auto, light or dark", t.ColorScheme)
	}
	for key, v := range map[string]string{"brand_color": t.BrandColor, "button_text": t.ButtonText} {
		if v != "" && !IsCSSColor(v) {
			add("theme.%s: %q is not a CSS colour (#rgb, #rrggbb, #rrggbbaa, rgb()/rgba()/hsl()/hsla() with numbers, or a named colour)", key, v)
		}
	}
	if t.Logo != "" && !IsLogoURL(t.Logo) {
		add("theme.logo: %q must be an https URL or an absolute path on the service's origin (letters, digits and - . _ ~ / %% only)", t.Logo)
	}
}

var (
	hexColor = regexp.MustCompile(`^#([0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$`)
	// funcColor is rgb()/rgba()/hsl()/hsla() with three numbers and an
	// optional alpha, comma- or space-separated: no nested functions,
	// var() or anything else a stylesheet could be made to run.
	funcColor = regexp.MustCompile(`^(rgba?|hsla?)\(\s*` + colorNum + `(deg)?(\s*,\s*|\s+)` + colorNum + `(\s*,\s*|\s+)` + colorNum + `(\s*[,/]\s*` + colorNum + `)?\s*\)$`)
	// logoPath is an absolute path of plain characters: nothing that
	// could end an attribute or a url(), start a scheme or a query.
	logoPath = regexp.MustCompile(`^/[A-Za-z0-9._~/%-]*$`)
)

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

// IsLogoURL reports whether s is an https URL with a plain host and path,
// or an absolute path on the service's origin (not //host, no backslash).
func IsLogoURL(s string) bool {
	if strings.HasPrefix(s, "/") {
		return !strings.HasPrefix(s, "//") && logoPath.MatchString(s)
	}
	return logoHTTPS.MatchString(s)
}

// logoHTTPS is an https URL with a lower-case DNS name, an optional port and
// a plain path: no user info, query or fragment.
var logoHTTPS = regexp.MustCompile(`^https://[a-z0-9-]+(\.[a-z0-9-]+)*(:[0-9]{1,5})?(/[A-Za-z0-9._~/%-]*)?$`)

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
