package cookies_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
)

// encodeURIComponent is the ECMAScript definition, written independently:
// every UTF-8 byte is %XX except A-Z a-z 0-9 - _ . ! ~ * ' ( ).
func encodeURIComponent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func TestEncodeMatchesEncodeURIComponent(t *testing.T) {
	// Outputs of node's encodeURIComponent.
	table := map[string]string{
		"a|b": "a%7Cb", " ": "%20", "!'()*": "!'()*", "~-_.": "~-_.", "+": "%2B", "/": "%2F",
		":": "%3A", "?": "%3F", "#": "%23", "&": "%26", "=": "%3D", ",": "%2C", ";": "%3B",
		"@": "%40", "$": "%24", "%": "%25", `"`: "%22", `\`: "%5C", "é": "%C3%A9", "€": "%E2%82%AC",
		"😀": "%F0%9F%98%80", "\x00": "%00", "\n": "%0A", "[]": "%5B%5D", "{}": "%7B%7D", "^": "%5E",
		"`": "%60", "<>": "%3C%3E", "\x7f": "%7F", "AZaz09": "AZaz09", "": "",
		"http://localhost:3000/dash?a=1&b=2": "http%3A%2F%2Flocalhost%3A3000%2Fdash%3Fa%3D1%26b%3D2",
	}
	for in, want := range table {
		require.Equal(t, want, cookies.Encode(in), "%q", in)
		require.Equal(t, want, encodeURIComponent(in), "reference implementation, %q", in)
	}
	// Every ASCII character, alone and in company.
	var all strings.Builder
	for c := 0; c < 0x80; c++ {
		s := string(rune(c))
		all.WriteString(s)
		require.Equal(t, encodeURIComponent(s), cookies.Encode(s), "%q", s)
	}
	require.Equal(t, encodeURIComponent(all.String()), cookies.Encode(all.String()))
	// Random valid UTF-8.
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var b strings.Builder
		for range r.IntN(20) {
			b.WriteRune(rune(r.IntN(0x2FFFF)))
		}
		s := strings.ToValidUTF8(b.String(), "")
		require.Equal(t, encodeURIComponent(s), cookies.Encode(s), "%q", s)
	}
}

func TestReadDecodes(t *testing.T) {
	for _, v := range []string{"plain", "a|b", "http://localhost:3000/x?y=1", "é €", "!'()*", "100%"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Cookie", "c="+cookies.Encode(v))
		got, ok := cookies.Read(r, "c")
		require.True(t, ok)
		require.Equal(t, v, got)
	}
	for _, bad := range []string{"%", "%zz", "%E0%A4%A", "a%7"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Cookie", "c="+bad)
		_, ok := cookies.Read(r, "c")
		require.False(t, ok, "%q is malformed", bad)
	}
	_, ok := cookies.Read(httptest.NewRequest(http.MethodGet, "/", nil), "c")
	require.False(t, ok, "missing")
}

func TestNames(t *testing.T) {
	n := cookies.NewNames("next-auth", false)
	require.Equal(t, cookies.Names{
		SessionToken: "next-auth.session-token", CallbackURL: "next-auth.callback-url", CSRF: "next-auth.csrf-token",
		OAuthCheck: "next-auth.oauth-check", SecondStep: "next-auth.second-step", Device: "next-auth.two-factor-device",
		PasswordDevice: "next-auth.password-device",
	}, n)
	n = cookies.NewNames("next-auth", true)
	require.Equal(t, cookies.Names{
		SessionToken: "__Secure-next-auth.session-token", CallbackURL: "__Secure-next-auth.callback-url",
		CSRF: "__Host-next-auth.csrf-token", OAuthCheck: "__Secure-next-auth.oauth-check",
		SecondStep: "__Secure-next-auth.second-step", Device: "__Secure-next-auth.two-factor-device",
		PasswordDevice: "__Secure-next-auth.password-device",
	}, n)
	n = cookies.NewNames("authjs", false)
	require.Equal(t, "authjs.session-token", n.SessionToken)
	require.Equal(t, "authjs.csrf-token", n.CSRF)
	n = cookies.NewNames("authjs", true)
	require.Equal(t, "__Secure-authjs.session-token", n.SessionToken)
	require.Equal(t, "__Host-authjs.csrf-token", n.CSRF)
	require.Equal(t, "__Secure-authjs.callback-url", n.CallbackURL)
	require.Equal(t, "__Secure-authjs.oauth-check", n.OAuthCheck)
}

func TestWriterAttributes(t *testing.T) {
	rec := httptest.NewRecorder()
	exp := time.Date(2031, 2, 3, 4, 5, 6, 0, time.FixedZone("X", 3600))
	cookies.Writer{Secure: true}.Set(rec, "__Secure-x", "a|b c", exp, 15*time.Minute)
	cookies.Writer{}.Set(rec, "y", "v", time.Time{}, 0)
	cookies.Writer{Secure: true}.Clear(rec, "z")
	cookies.Writer{Path: "/api/auth"}.Set(rec, "p", "v", time.Time{}, 0)
	cookies.Writer{Path: "/api/auth"}.Clear(rec, "q")
	lines := rec.Header().Values("Set-Cookie")
	require.Equal(t, []string{
		"__Secure-x=a%7Cb%20c; Path=/; Expires=Mon, 03 Feb 2031 03:05:06 GMT; Max-Age=900; HttpOnly; Secure; SameSite=Lax",
		"y=v; Path=/; HttpOnly; SameSite=Lax",
		"z=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax",
		"p=v; Path=/api/auth; HttpOnly; SameSite=Lax",
		"q=; Path=/api/auth; Max-Age=0; HttpOnly; SameSite=Lax",
	}, lines)
}

// jar applies Set-Cookie lines, in order, to a name→value map, as a browser does.
func apply(jar map[string]string, h http.Header) {
	for _, line := range h.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			continue
		}
		if c.MaxAge < 0 {
			delete(jar, c.Name)
			continue
		}
		jar[c.Name] = c.Value
	}
}

// request carries the jar's cookies in a random order.
func request(jar map[string]string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	var parts []string
	for k, v := range jar {
		parts = append(parts, k+"="+v)
	}
	rand.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	if len(parts) > 0 {
		r.Header.Set("Cookie", strings.Join(parts, "; "))
	}
	return r
}

func token(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}

func TestChunkingRoundTrip(t *testing.T) {
	const name = "next-auth.session-token"
	w := cookies.Writer{}
	exp := time.Now().Add(time.Hour)
	require.Equal(t, 3933, cookies.ChunkSize)
	for _, size := range []int{1, 100, 3933, 3934, 6000, 7866, 7867, 20000} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			v := token(size)
			jar := map[string]string{}
			rec := httptest.NewRecorder()
			w.SetChunked(rec, request(jar), name, v, exp)
			apply(jar, rec.Header())
			chunks := (size + cookies.ChunkSize - 1) / cookies.ChunkSize
			if chunks == 1 {
				require.Equal(t, map[string]string{name: v}, jar)
			} else {
				require.Len(t, jar, chunks)
				require.NotContains(t, jar, name)
				for i := range chunks {
					part := jar[name+"."+strconv.Itoa(i)]
					require.LessOrEqual(t, len(part), cookies.ChunkSize)
					require.Equal(t, v[i*cookies.ChunkSize:min(len(v), (i+1)*cookies.ChunkSize)], part)
				}
			}
			for _, line := range rec.Header().Values("Set-Cookie") {
				require.Less(t, len(line), 4096, "each Set-Cookie fits a browser's 4 KiB")
				require.Contains(t, line, "Expires=")
			}
			require.Equal(t, v, cookies.ReadChunked(request(jar), name))
		})
	}
}

func TestChunkingClearsOldChunks(t *testing.T) {
	const name = "next-auth.session-token"
	w := cookies.Writer{}
	exp := time.Now().Add(time.Hour)
	sizes := []int{20000, 6000, 100, 9000, 3933, 3934, 1, 20000}
	jar := map[string]string{"other": "keep", name + "x": "keep"}
	for _, size := range sizes {
		v := token(size)
		before := map[string]bool{}
		for k := range jar {
			before[k] = true
		}
		rec := httptest.NewRecorder()
		w.SetChunked(rec, request(jar), name, v, exp)
		apply(jar, rec.Header())

		// Only the new set of session cookies remains, the rest is untouched.
		require.Equal(t, "keep", jar["other"])
		require.Equal(t, "keep", jar[name+"x"])
		var session []string
		for k := range jar {
			if k == name || strings.HasPrefix(k, name+".") {
				session = append(session, k)
			}
		}
		want := (size + cookies.ChunkSize - 1) / cookies.ChunkSize
		require.Len(t, session, want, "size %d: %v", size, session)
		require.Equal(t, v, cookies.ReadChunked(request(jar), name))

		// Every stale cookie was cleared explicitly.
		for k := range before {
			if _, still := jar[k]; !still {
				require.Contains(t, strings.Join(rec.Header().Values("Set-Cookie"), "\n"), k+"=; Path=/; Max-Age=0")
			}
		}
	}
}

func TestReadChunkedIgnoresStrangers(t *testing.T) {
	const name = "s"
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Cookie", "s.1=B; sx=no; s.x=no; s.-1=no; s.65=no; s.01=no; s.+2=no; s.0=A; s.2=C; t.0=no")
	require.Equal(t, "ABC", cookies.ReadChunked(r, name))
	r.Header.Set("Cookie", "s.10=K; s.2=C; s.1=B; s.0=A")
	require.Equal(t, "ABCK", cookies.ReadChunked(r, name), "numeric, not lexical, order")
	r.Header.Set("Cookie", "x=1")
	require.Empty(t, cookies.ReadChunked(r, name))
}

func TestClearChunked(t *testing.T) {
	const name = "next-auth.session-token"
	w := cookies.Writer{}
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Cookie", name+".0=a; "+name+".1=b; "+name+"=c; unrelated=d")
	w.ClearChunked(rec, r, name)
	jar := map[string]string{name + ".0": "a", name + ".1": "b", name: "c", "unrelated": "d"}
	apply(jar, rec.Header())
	require.Equal(t, map[string]string{"unrelated": "d"}, jar)

	// Nothing sent: the plain name is cleared anyway.
	rec = httptest.NewRecorder()
	w.ClearChunked(rec, httptest.NewRequest(http.MethodGet, "/", nil), name)
	require.Equal(t, []string{name + "=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"}, rec.Header().Values("Set-Cookie"))
}

// setCookieReference is how Writer built its lines before it wrote them
// itself: the attributes on an http.Cookie and its String method.
func setCookieReference(w cookies.Writer, name, value string, expires time.Time, maxAge time.Duration) string {
	path := w.Path
	if path == "" {
		path = "/"
	}
	c := &http.Cookie{Name: name, Value: cookies.Encode(value), Path: path, Domain: w.Domain, HttpOnly: true, Secure: w.Secure, SameSite: http.SameSiteLaxMode}
	if !expires.IsZero() {
		c.Expires = expires.UTC()
	}
	if maxAge > 0 {
		c.MaxAge = int(maxAge / time.Second)
	}
	return c.String()
}

// Writer's lines are byte for byte those of http.Cookie.String, for every
// mix of attributes, odd names, values, paths, expiries and ages.
func TestSetLineMatchesHTTPCookie(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	names := []string{"next-auth.session-token", "__Host-authjs.csrf-token", "a.0", "bad name", "", "x;y", "é"}
	values := []string{"", "v", "a|b", "http://localhost:3000/a b?c=d,e", strings.Repeat("eyJ.", 1000), "\x00\x7f\"\\;", "é😀"}
	paths := []string{"", "/", "/api/auth", "/a b", "/a;b", "/\x01", "/ä"}
	times := []time.Time{{}, time.Date(2030, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600)), time.Date(1600, 12, 31, 23, 0, 0, 0, time.UTC),
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1601, 1, 1, 0, 30, 0, 0, time.FixedZone("Y", 3600)), time.Unix(0, 0)}
	ages := []time.Duration{0, -time.Second, time.Millisecond, time.Second, 30 * 24 * time.Hour}
	domains := []string{"", "example.com", "a-b.example.co.uk"} // cookies.domain (validated host names)
	for range 3000 {
		w := cookies.Writer{Secure: rng.IntN(2) == 0, Path: paths[rng.IntN(len(paths))], Domain: domains[rng.IntN(len(domains))]}
		name, value := names[rng.IntN(len(names))], values[rng.IntN(len(values))]
		exp, age := times[rng.IntN(len(times))], ages[rng.IntN(len(ages))]
		want := setCookieReference(w, name, value, exp, age)
		rec := httptest.NewRecorder()
		w.Set(rec, name, value, exp, age)
		if want == "" {
			require.Empty(t, rec.Header()["Set-Cookie"], "%q", name)
			continue
		}
		require.Equal(t, []string{want}, rec.Header()["Set-Cookie"], "%+v %q %q %v %v", w, name, value, exp, age)
	}
	for _, secure := range []bool{false, true} {
		for _, domain := range []string{"", "example.com"} {
			w := cookies.Writer{Secure: secure, Domain: domain}
			rec := httptest.NewRecorder()
			w.Clear(rec, "next-auth.session-token")
			want := (&http.Cookie{Name: "next-auth.session-token", Path: "/", Domain: domain, MaxAge: -1, HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}).String()
			require.Equal(t, []string{want}, rec.Header()["Set-Cookie"])
		}
	}
}

// With cookies.domain, clearing also expires the host-only cookies of the
// same names (left by sign-ins before the domain was set), after the
// domain lines, so a later Set in the same response replaces its own line.
func TestClearChunkedWithDomainClearsHostOnlyToo(t *testing.T) {
	w := cookies.Writer{Domain: "example.com"}
	const name = "next-auth.session-token"
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Cookie", name+"=a; "+name+".0=b")
	rec := httptest.NewRecorder()
	w.ClearChunked(rec, r, name)
	require.Equal(t, []string{
		name + "=; Path=/; Domain=example.com; Max-Age=0; HttpOnly; SameSite=Lax",
		name + ".0=; Path=/; Domain=example.com; Max-Age=0; HttpOnly; SameSite=Lax",
		name + "=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax",
		name + ".0=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax",
	}, rec.Header().Values("Set-Cookie"))

	w.Set(rec, name, "new", time.Time{}, 0)
	lines := rec.Header().Values("Set-Cookie")
	require.Equal(t, name+"=new; Path=/; Domain=example.com; HttpOnly; SameSite=Lax", lines[0])
	require.Equal(t, name+"=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax", lines[2])

	rec = httptest.NewRecorder()
	cookies.Writer{}.ClearChunked(rec, r, name)
	require.Len(t, rec.Header().Values("Set-Cookie"), 2, "host-only: one line per name")
}

// With cookies.domain, writing the session cookie also expires the
// host-only cookies of the names the request carried (after the domain
// lines): the browser would send them first beside the new domain cookie.
// Under Track, on a response with enough lines for the index, a clear
// followed by a write in the same response (a sign-in replacing a session)
// still replaces the domain line and keeps the host-only clear.
func TestSetChunkedWithDomainClearsHostOnly(t *testing.T) {
	w := cookies.Writer{Domain: "example.com"}
	const name = "next-auth.session-token"
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Cookie", name+"=old")
	rec := httptest.NewRecorder()
	w.SetChunked(rec, r, name, "new", time.Time{})
	require.Equal(t, []string{
		name + "=new; Path=/; Domain=example.com; HttpOnly; SameSite=Lax",
		name + "=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax",
	}, rec.Header().Values("Set-Cookie"))

	rec = httptest.NewRecorder()
	w.SetChunked(rec, httptest.NewRequest(http.MethodGet, "/", nil), name, "new", time.Time{})
	require.Len(t, rec.Header().Values("Set-Cookie"), 1, "no session cookie sent: nothing to clear")
	rec = httptest.NewRecorder()
	cookies.Writer{}.SetChunked(rec, r, name, "new", time.Time{})
	require.Len(t, rec.Header().Values("Set-Cookie"), 1, "no domain: one line")

	lines := serve(t, func(rw http.ResponseWriter) {
		for i := range 8 {
			cookies.Writer{}.Set(rw, "other"+strconv.Itoa(i), "v", time.Time{}, 0)
		}
		w.ClearChunked(rw, r, name)
		w.SetChunked(rw, r, name, "new", time.Time{})
	})
	var mine []string
	for _, l := range lines {
		if strings.HasPrefix(l, name+"=") {
			mine = append(mine, l)
		}
	}
	require.Equal(t, []string{
		name + "=new; Path=/; Domain=example.com; HttpOnly; SameSite=Lax",
		name + "=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax",
	}, mine)
}
