package app_test

import (
	"context"
	"image"
	"image/color"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/app/twofactor/oathtool"
)

// The two-factor tests' helpers: codes come from Debian's oathtool, fed
// the secret read from the setup page's QR code (decoded with gozxing, so
// the QR code is proven scannable) and checked against the secret the page
// prints.

// startTwoFactor is startPasswords (a credentials provider, an SMTP
// catcher, a settable clock, logs) with two_factor.mode optional, or as
// mutate changes it.
func startTwoFactor(t testing.TB, b backend, mutate func(*config.Config)) *env {
	t.Helper()
	return startPasswords(t, b.opts(envOpts{config: twoFactorConfig(mutate)}))
}

// twoFactorConfig turns two-factor on (optional) before mutate.
func twoFactorConfig(mutate func(*config.Config)) func(*config.Config) {
	return func(c *config.Config) {
		c.TwoFactor.Mode = config.TwoFactorOptional
		if mutate != nil {
			mutate(c)
		}
	}
}

var (
	qrModule     = regexp.MustCompile(`M(\d+) (\d+)h1v1h-1z`)
	qrSVG        = regexp.MustCompile(`<svg[^>]*viewBox="0 0 (\d+) (\d+)"[^>]*shape-rendering="crispEdges">.*?</svg>`)
	printedKey   = regexp.MustCompile(`<code class="secret">([A-Z2-7 ]+)</code>`)
	recoveryCode = regexp.MustCompile(`\b[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}\b`)
)

// scanQR reads the setup page's QR code as a phone would: the SVG's
// modules drawn into an image, decoded by a QR reader.
func (e *env) scanQR(page string) string {
	e.t.Helper()
	box := qrSVG.FindStringSubmatch(page)
	require.NotNil(e.t, box, "no QR code on the page")
	page = box[0]
	n, _ := strconv.Atoi(box[1])
	const scale = 6
	img := image.NewGray(image.Rect(0, 0, n*scale, n*scale))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for _, m := range qrModule.FindAllStringSubmatch(page, -1) {
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		for dy := range scale {
			for dx := range scale {
				img.SetGray(x*scale+dx, y*scale+dy, color.Gray{})
			}
		}
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(e.t, err)
	// The SVG is a perfect rendering: read as a pure barcode (what a
	// scanner reads once it has found the code in its camera image), every
	// module and the Reed-Solomon check words count.
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	require.NoError(e.t, err, "the QR code does not scan")
	return res.GetText()
}

// enrol turns two-factor on for c's signed-in user through the setup page
// and returns the secret (from the scanned QR code) and the recovery codes.
func (e *env) enrol(c *http.Client) (secret string, codes []string) {
	e.t.Helper()
	res := e.get(c, "/account/two-factor")
	require.Equal(e.t, http.StatusOK, res.StatusCode, res.body)
	secret = e.secretOf(res.body)
	res = e.form(c, "/account/two-factor/enable", "code", e.code(secret))
	require.Equal(e.t, http.StatusOK, res.StatusCode, res.body)
	codes = recoveryCode.FindAllString(res.body, -1)
	require.Len(e.t, codes, 10, res.body)
	e.nextStep()
	return secret, codes
}

// secretOf scans the setup page's QR code and checks the otpauth URI and
// that the printed key is the same secret.
func (e *env) secretOf(page string) string {
	e.t.Helper()
	uri, err := url.Parse(e.scanQR(page))
	require.NoError(e.t, err)
	require.Equal(e.t, "otpauth", uri.Scheme)
	require.Equal(e.t, "totp", uri.Host)
	q := uri.Query()
	require.Equal(e.t, "SHA1", q.Get("algorithm"))
	require.Equal(e.t, "6", q.Get("digits"))
	require.Equal(e.t, "30", q.Get("period"))
	label := strings.Split(strings.TrimPrefix(uri.Path, "/"), ":")
	require.Len(e.t, label, 2, "the label is issuer:account, one colon (Key URI Format): %s", uri.Path)
	require.Equal(e.t, q.Get("issuer"), label[0])
	secret := q.Get("secret")
	printed := printedKey.FindStringSubmatch(page)
	require.NotNil(e.t, printed, "the key is printed for typing in")
	require.Equal(e.t, secret, strings.ReplaceAll(printed[1], " ", ""))
	return secret
}

// code is oathtool's current code for secret on the app's clock.
func (e *env) code(secret string) string {
	e.t.Helper()
	return oathtool.Code(e.t, secret, e.now())
}

// nextStep moves the app's clock to the next 30-second step (each step's
// code is accepted once).
func (e *env) nextStep() {
	if e.clock != nil {
		e.clock.Add(30 * time.Second)
		return
	}
	time.Sleep(time.Until(time.Unix((time.Now().Unix()/30+1)*30, 0)))
}

// postCode posts a code to the two-factor provider's callback as the v4
// client's signIn("two-factor", {code, redirect: false}) does.
func (e *env) postCode(c *http.Client, code string, extra ...string) resp {
	e.t.Helper()
	form := url.Values{"code": {code}, "csrfToken": {e.csrf(c)}, "json": {"true"}, "callbackUrl": {e.origin + "/home"}}
	for i := 0; i+1 < len(extra); i += 2 {
		form.Set(extra[i], extra[i+1])
	}
	return e.post(c, "/callback/two-factor", form)
}

// requireHeld asserts a JSON-mode answer that holds the sign-in for its
// second step (code: TwoFactorRequired or TwoFactorSetupRequired), and
// that no session came of it.
func (e *env) requireHeld(c *http.Client, res resp, code string) {
	e.t.Helper()
	require.Equal(e.t, http.StatusUnauthorized, res.StatusCode, res.body)
	to, err := url.Parse(res.json(e.t)["url"].(string))
	require.NoError(e.t, err)
	require.Equal(e.t, code, to.Query().Get("error"))
	require.Empty(e.t, e.session(c), "no session before the second step")
	_, ok := e.jarCookie(c, "next-auth.second-step")
	require.True(e.t, ok, "the pending second step is in its cookie")
}

// requireCodeRefused asserts a JSON-mode refusal with code.
func (e *env) requireCodeRefused(res resp, status int, code string) {
	e.t.Helper()
	require.Equal(e.t, status, res.StatusCode, res.body)
	to, err := url.Parse(res.json(e.t)["url"].(string))
	require.NoError(e.t, err)
	require.Equal(e.t, code, to.Query().Get("error"), res.body)
}

// amr is how c's session signed in, as forward-auth tells an app.
func (e *env) amr(c *http.Client) string {
	e.t.Helper()
	u, _ := url.Parse(e.srv.URL)
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/authz/auth-request", nil)
	for _, ck := range c.Jar.Cookies(u) {
		req.AddCookie(ck)
	}
	res := e.do(&http.Client{CheckRedirect: stopAtRedirect}, req)
	if res.StatusCode != http.StatusOK {
		return ""
	}
	return res.Header.Get("Remote-Amr")
}

// mailAt is the n-th e-mail (1-based), parsed.
func (e *env) mailAt(n int) *smtptest.Parsed {
	e.t.Helper()
	_, p := e.mail(n)
	return p
}

// userID is the id of the user with addr.
func (e *env) userID(addr string) string {
	e.t.Helper()
	u, err := e.app.Store().UserByEmail(context.Background(), addr)
	require.NoError(e.t, err)
	return u.ID
}

// rememberedBrowser is a browser remembered for addr's second factor
// (addr's password is goodPassword; two-factor is turned on there),
// signed out, and the secret: a password sign-in there skips the code.
func (e *env) rememberedBrowser(addr string) (*http.Client, string) {
	e.t.Helper()
	c := e.browser()
	e.passwordSignIn(c, addr, goodPassword)
	secret, _ := e.enrol(c)
	e.form(c, "/signout")
	e.requireHeld(c, e.passwordSignIn(c, addr, goodPassword), "TwoFactorRequired")
	require.Equal(e.t, http.StatusOK, e.postCode(c, e.code(secret), "remember", "on").StatusCode)
	e.form(c, "/signout")
	require.Equal(e.t, http.StatusOK, e.passwordSignIn(c, addr, goodPassword).StatusCode, "remembered")
	e.form(c, "/signout")
	return c, secret
}
