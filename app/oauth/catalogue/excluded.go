package catalogue

// excluded lists the goth providers latchkey does not offer, with the reason.
// Build quotes the reason when one of these ids is configured.
var excluded = map[string]string{
	// Not OAuth 2.
	"twitter":   "goth implements it with OAuth 1.0a",
	"twitterv2": "goth implements it with OAuth 1.0a (only the API behind it is v2)",
	"tumblr":    "goth implements it with OAuth 1.0a",
	"xero":      "goth implements it with OAuth 1.0a and reads its settings from XERO_* environment variables",
	"steam":     "Steam sign-in is OpenID 2.0, not OAuth 2",
	"lastfm":    "Last.fm uses its own token handshake, not OAuth 2",

	// OAuth 2 with a non-standard authorization request or token exchange,
	// which latchkey's own oauth2 exchange cannot do.
	"tiktok":  "TikTok wants client_key instead of client_id and wraps the token response in a data envelope",
	"lark":    "Lark needs app_id and an app access token to exchange the code",
	"yammer":  "Yammer returns the access token as a nested JSON object",
	"wechat":  "WeChat uses appid and its own token endpoint and response",
	"wecom":   "WeCom uses a corporate token and agent id instead of the authorization code exchange",
	"shopify": "Shopify is an app-install flow per shop, verified with an HMAC keyed from SHOPIFY_SECRET",

	// The profile cannot be fetched from an access token alone.
	"apple": "Apple has no profile endpoint: the user is in the id_token, which goth verifies only inside its own code exchange; " +
		"its client secret is an ES256 JWT (team id, key id, private key) that expires within six months. Use the generic OIDC path",

	// Dead or duplicate APIs.
	"azuread":   "it reads the profile from Azure AD Graph (graph.windows.net), which Microsoft retired in 2025; use azureadv2 or microsoftonline",
	"gplus":     "it is the Google+ era duplicate of google; use google",
	"instagram": "it reads the profile from the Instagram Legacy API, which Instagram shut down in 2020",
	"slack": "goth uses the classic-app endpoints (oauth/authorize, oauth.access) and Slack no longer lets anyone create classic apps; " +
		"Sign in with Slack is OpenID Connect: use the generic OIDC path",
	"linkedin": "it uses the r_liteprofile/r_emailaddress API that LinkedIn closed to new apps in August 2023; use the generic OIDC path",

	// The profile request cannot be given latchkey's HTTP client (no timeout, no cancellation).
	"mailru":  "goth's mailru provider keeps its HTTP client in an unexported field",
	"seatalk": "goth's seatalk provider fetches the profile with http.Get",
	"reddit":  "goth's reddit provider has no replaceable HTTP client and sends no User-Agent, which Reddit's API requires",

	// Other.
	"intercom":      "goth puts the client secret in the token URL's query string, where it ends up in logs",
	"influxcloud":   "goth reads its domain from INFLUXCLOUD_OAUTH_DOMAIN; it is InfluxData's own sign-in",
	"openidConnect": "it discovers its endpoints over the network at construction; latchkey's generic OIDC path covers it",
	"faux":          "it is goth's test double",
}

// Excluded reports why a goth provider id is not in the catalogue.
func Excluded(id string) (reason string, ok bool) {
	reason, ok = excluded[id]
	return reason, ok
}
