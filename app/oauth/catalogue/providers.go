package catalogue

import (
	"github.com/markbates/goth"
	"github.com/markbates/goth/providers/amazon"
	"github.com/markbates/goth/providers/auth0"
	"github.com/markbates/goth/providers/azureadv2"
	"github.com/markbates/goth/providers/battlenet"
	"github.com/markbates/goth/providers/bitbucket"
	"github.com/markbates/goth/providers/bitly"
	"github.com/markbates/goth/providers/box"
	"github.com/markbates/goth/providers/classlink"
	"github.com/markbates/goth/providers/cloudfoundry"
	"github.com/markbates/goth/providers/cognito"
	"github.com/markbates/goth/providers/dailymotion"
	"github.com/markbates/goth/providers/deezer"
	"github.com/markbates/goth/providers/digitalocean"
	"github.com/markbates/goth/providers/discord"
	"github.com/markbates/goth/providers/dropbox"
	"github.com/markbates/goth/providers/eveonline"
	"github.com/markbates/goth/providers/facebook"
	"github.com/markbates/goth/providers/fitbit"
	"github.com/markbates/goth/providers/gitea"
	"github.com/markbates/goth/providers/github"
	"github.com/markbates/goth/providers/gitlab"
	"github.com/markbates/goth/providers/google"
	"github.com/markbates/goth/providers/heroku"
	"github.com/markbates/goth/providers/hubspot"
	"github.com/markbates/goth/providers/kakao"
	"github.com/markbates/goth/providers/line"
	"github.com/markbates/goth/providers/mastodon"
	"github.com/markbates/goth/providers/meetup"
	"github.com/markbates/goth/providers/microsoftonline"
	"github.com/markbates/goth/providers/naver"
	"github.com/markbates/goth/providers/nextcloud"
	"github.com/markbates/goth/providers/okta"
	"github.com/markbates/goth/providers/onedrive"
	"github.com/markbates/goth/providers/oura"
	"github.com/markbates/goth/providers/patreon"
	"github.com/markbates/goth/providers/paypal"
	"github.com/markbates/goth/providers/salesforce"
	"github.com/markbates/goth/providers/soundcloud"
	"github.com/markbates/goth/providers/spotify"
	"github.com/markbates/goth/providers/strava"
	"github.com/markbates/goth/providers/stripe"
	"github.com/markbates/goth/providers/twitch"
	"github.com/markbates/goth/providers/typetalk"
	"github.com/markbates/goth/providers/uber"
	"github.com/markbates/goth/providers/vk"
	"github.com/markbates/goth/providers/wepay"
	"github.com/markbates/goth/providers/yahoo"
	"github.com/markbates/goth/providers/yandex"
	"github.com/markbates/goth/providers/zoom"
)

// gitlabProfileURL replaces goth's gitlab.ProfileURL, which still points at
// API v3; GitLab removed v3 in 11.0, so goth's default profile request 404s.
// v4's /user returns the fields goth reads (id, username, name, email, avatar_url).
const gitlabProfileURL = "https://gitlab.com/api/v4/user"

// std adapts goth's common constructor shape New(key, secret, callback, scopes...).
func std[P goth.Provider](newP func(key, secret, callback string, scopes ...string) P) func(Config, []string) goth.Provider {
	return func(c Config, s []string) goth.Provider { return newP(c.ClientID, c.ClientSecret, c.CallbackURL, s...) }
}

// entries is the catalogue, sorted by id. It is never written after init.
//
// PKCE is true only where the provider documents S256 support (GitHub since
// July 2025, Google, GitLab, Microsoft, Okta, Auth0, Cognito, Salesforce,
// Dropbox, Fitbit, Zoom, LINE, Spotify, Gitea).
//
// Quirks kept from goth: paypal.New switches to the sandbox endpoints when the
// environment has PAYPAL_ENV=sandbox; google adds access_type=offline and
// discord prompt=none to the authorization request (see Provider.AuthParams).
var entries = []entry{
	{spec: Spec{ID: "amazon", Name: "Amazon"}, newGoth: std(amazon.New)},
	{spec: Spec{ID: "auth0", Name: "Auth0", PKCE: true, Extra: []string{"domain"}},
		newGoth: func(c Config, s []string) goth.Provider {
			return auth0.New(c.ClientID, c.ClientSecret, c.CallbackURL, c.Extra["domain"], s...)
		}},
	// azureadv2 is Microsoft's v2 identity platform with a chosen tenant;
	// microsoftonline is the same platform fixed to the "common" tenant.
	{spec: Spec{ID: "azureadv2", Name: "Microsoft Entra ID", PKCE: true, Extra: []string{"tenant"}},
		newGoth: func(c Config, s []string) goth.Provider {
			opts := azureadv2.ProviderOptions{Tenant: azureadv2.TenantType(c.Extra["tenant"])}
			for _, sc := range s {
				opts.Scopes = append(opts.Scopes, azureadv2.ScopeType(sc))
			}
			return azureadv2.New(c.ClientID, c.ClientSecret, c.CallbackURL, opts)
		},
		session: sessionKeys{access: "at", refresh: "rt", expiry: "exp"}},
	{spec: Spec{ID: "battlenet", Name: "Battle.net"}, newGoth: std(battlenet.New)},
	{spec: Spec{ID: "bitbucket", Name: "Bitbucket"}, newGoth: std(bitbucket.New)},
	{spec: Spec{ID: "bitly", Name: "Bitly"}, newGoth: std(bitly.New)},
	{spec: Spec{ID: "box", Name: "Box"}, newGoth: std(box.New)},
	{spec: Spec{ID: "classlink", Name: "ClassLink"}, newGoth: std(classlink.New)},
	{spec: Spec{ID: "cloudfoundry", Name: "Cloud Foundry", Extra: []string{"uaa_url"}},
		newGoth: func(c Config, s []string) goth.Provider {
			return cloudfoundry.New(c.Extra["uaa_url"], c.ClientID, c.ClientSecret, c.CallbackURL, s...)
		}},
	{spec: Spec{ID: "cognito", Name: "Amazon Cognito", PKCE: true, Extra: []string{"base_url"}},
		newGoth: func(c Config, s []string) goth.Provider {
			return cognito.New(c.ClientID, c.ClientSecret, c.Extra["base_url"], c.CallbackURL, s...)
		}},
	{spec: Spec{ID: "dailymotion", Name: "Dailymotion"}, newGoth: std(dailymotion.New)},
	{spec: Spec{ID: "deezer", Name: "Deezer"}, newGoth: std(deezer.New)},
	{spec: Spec{ID: "digitalocean", Name: "DigitalOcean"}, newGoth: std(digitalocean.New)},
	// goth asks only for "identify", which has no e-mail; NextAuth asks for both.
	{spec: Spec{ID: "discord", Name: "Discord"}, scopes: []string{"identify", "email"}, newGoth: std(discord.New)},
	{spec: Spec{ID: "dropbox", Name: "Dropbox", PKCE: true}, newGoth: std(dropbox.New),
		session: sessionKeys{access: "Token"}},
	{spec: Spec{ID: "eveonline", Name: "EVE Online"}, newGoth: std(eveonline.New)},
	{spec: Spec{ID: "facebook", Name: "Facebook"}, newGoth: std(facebook.New)},
	{spec: Spec{ID: "fitbit", Name: "Fitbit", PKCE: true}, newGoth: std(fitbit.New),
		session: sessionKeys{fromToken: map[string]string{"UserID": "user_id"}}},
	{spec: Spec{ID: "gitea", Name: "Gitea", PKCE: true}, newGoth: std(gitea.New)},
	// goth asks for no scope, so /user/emails is never read; NextAuth's defaults.
	{spec: Spec{ID: "github", Name: "GitHub", PKCE: true}, scopes: []string{"read:user", "user:email"}, newGoth: std(github.New)},
	{spec: Spec{ID: "gitlab", Name: "GitLab", PKCE: true}, scopes: []string{"read_user"},
		newGoth: func(c Config, s []string) goth.Provider {
			return gitlab.NewCustomisedURL(c.ClientID, c.ClientSecret, c.CallbackURL, gitlab.AuthURL, gitlab.TokenURL, gitlabProfileURL, s...)
		}},
	// goth asks only for "email", so no name or picture; NextAuth's defaults.
	{spec: Spec{ID: "google", Name: "Google", PKCE: true}, scopes: []string{"openid", "email", "profile"}, newGoth: std(google.New)},
	{spec: Spec{ID: "heroku", Name: "Heroku"}, newGoth: std(heroku.New)},
	{spec: Spec{ID: "hubspot", Name: "HubSpot"}, newGoth: std(hubspot.New)},
	{spec: Spec{ID: "kakao", Name: "Kakao"}, newGoth: std(kakao.New)},
	// goth verifies LINE's id_token (HS256 with the channel secret) for the e-mail.
	{spec: Spec{ID: "line", Name: "LINE", PKCE: true}, newGoth: std(line.New)},
	{spec: Spec{ID: "mastodon", Name: "Mastodon", Extra: []string{"instance_url"}},
		newGoth: func(c Config, s []string) goth.Provider {
			return mastodon.NewCustomisedURL(c.ClientID, c.ClientSecret, c.CallbackURL, c.Extra["instance_url"], s...)
		}},
	{spec: Spec{ID: "meetup", Name: "Meetup"}, newGoth: std(meetup.New)},
	{spec: Spec{ID: "microsoftonline", Name: "Microsoft", PKCE: true}, newGoth: std(microsoftonline.New)},
	{spec: Spec{ID: "naver", Name: "Naver"}, noScopes: true,
		newGoth: func(c Config, _ []string) goth.Provider {
			return naver.New(c.ClientID, c.ClientSecret, c.CallbackURL)
		}},
	{spec: Spec{ID: "nextcloud", Name: "Nextcloud", Extra: []string{"url"}},
		newGoth: func(c Config, s []string) goth.Provider {
			return nextcloud.NewCustomisedDNS(c.ClientID, c.ClientSecret, c.CallbackURL, c.Extra["url"], s...)
		}},
	{spec: Spec{ID: "okta", Name: "Okta", PKCE: true, Extra: []string{"org_url"}},
		newGoth: func(c Config, s []string) goth.Provider {
			return okta.New(c.ClientID, c.ClientSecret, c.Extra["org_url"], c.CallbackURL, s...)
		}},
	{spec: Spec{ID: "onedrive", Name: "OneDrive"}, newGoth: std(onedrive.New)},
	{spec: Spec{ID: "oura", Name: "Oura"}, newGoth: std(oura.New),
		session: sessionKeys{fromToken: map[string]string{"UserID": "user_id"}}},
	{spec: Spec{ID: "patreon", Name: "Patreon"}, newGoth: std(patreon.New)},
	{spec: Spec{ID: "paypal", Name: "PayPal"}, newGoth: std(paypal.New)},
	// The token response's "id" is the identity URL goth reads the user from.
	{spec: Spec{ID: "salesforce", Name: "Salesforce", PKCE: true}, newGoth: std(salesforce.New),
		session: sessionKeys{fromToken: map[string]string{"ID": "id"}}},
	{spec: Spec{ID: "soundcloud", Name: "SoundCloud"}, newGoth: std(soundcloud.New)},
	{spec: Spec{ID: "spotify", Name: "Spotify", PKCE: true}, newGoth: std(spotify.New)},
	{spec: Spec{ID: "strava", Name: "Strava"}, newGoth: std(strava.New)},
	{spec: Spec{ID: "stripe", Name: "Stripe"}, newGoth: std(stripe.New),
		session: sessionKeys{fromToken: map[string]string{"ID": "stripe_user_id"}}},
	{spec: Spec{ID: "twitch", Name: "Twitch"}, newGoth: std(twitch.New)},
	{spec: Spec{ID: "typetalk", Name: "Typetalk"}, newGoth: std(typetalk.New)},
	{spec: Spec{ID: "uber", Name: "Uber"}, newGoth: std(uber.New)},
	// VK returns the e-mail only in the token response.
	{spec: Spec{ID: "vk", Name: "VK"}, newGoth: std(vk.New), emailFromToken: "email"},
	{spec: Spec{ID: "wepay", Name: "WePay"}, newGoth: std(wepay.New)},
	{spec: Spec{ID: "yahoo", Name: "Yahoo"}, newGoth: std(yahoo.New)},
	{spec: Spec{ID: "yandex", Name: "Yandex"}, newGoth: std(yandex.New)},
	{spec: Spec{ID: "zoom", Name: "Zoom", PKCE: true}, newGoth: std(zoom.New)},
}
