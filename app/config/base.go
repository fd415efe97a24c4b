package config

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/latchkey-auth/latchkey/app/config/weborigin"
)

// Base is the parsed public URL of latchkey's base path.
type Base struct {
	Origin string // scheme://host[:port], no trailing slash
	Path   string // e.g. /api/auth, never ending in "/"
	Secure bool   // https: cookies get __Secure- / __Host- prefixes
}

// URL returns the absolute URL of a path below the base ("/signin" → origin+base+"/signin").
func (b Base) URL(sub string) string { return b.Origin + b.Path + sub }

// ParseBase reads a SERVICE_URL the way next-auth v4's parseUrl does: a
// missing scheme means https, and an empty path or "/" means /api/auth, so
// the next-auth client given the same NEXTAUTH_URL agrees with us.
func ParseBase(raw string) (Base, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Base{}, fmt.Errorf("service URL is empty")
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return Base{}, fmt.Errorf("service URL %q is not a URL", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return Base{}, fmt.Errorf("service URL %q must use http or https", raw)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return Base{}, fmt.Errorf("service URL %q must be scheme://host[:port][/path] with no credentials, query or fragment", raw)
	}
	// The origin as new URL() (next-auth's parseUrl) and a browser write
	// it: the host in lower-case ASCII (xn--bcher-kva.example for
	// Bücher.example), the port without leading zeros and left out when it
	// is the scheme's default (or empty, "ex.com:").
	origin, err := weborigin.Origin(u)
	if err != nil {
		return Base{}, fmt.Errorf("service URL %q: %w", raw, err)
	}
	if strings.Contains(u.Path, `\`) { // new URL() reads it as "/", Go as a character
		return Base{}, fmt.Errorf("service URL %q has a backslash in its path: write / (or %%5C for the character)", raw)
	}
	path := strings.TrimRight(removeDotSegments(u.EscapedPath()), "/")
	if path == "" {
		path = "/api/auth"
	}
	return Base{
		Origin: origin,
		Path:   path,
		Secure: u.Scheme == "https",
	}, nil
}

// removeDotSegments resolves the "." and ".." segments of an escaped path
// as new URL() does (%2e counting as "."), so that the routes are the
// paths browsers and the next-auth client ask for: /a/../auth is /auth.
// A path ending in one keeps its last "/" ("/a/.." is "/").
func removeDotSegments(path string) string {
	segs := strings.Split(path, "/")[1:]
	out := []string{""}
	for i, seg := range segs {
		last := i == len(segs)-1
		switch strings.ReplaceAll(strings.ToLower(seg), "%2e", ".") {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	return strings.Join(out, "/")
}
