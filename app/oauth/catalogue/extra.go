package catalogue

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// extraKind says how an extra field's value is checked before goth splices it
// into endpoint URLs.
type extraKind int

const (
	extraURL    extraKind = iota // absolute https URL, no query or fragment
	extraHost                    // bare host name, as goth prefixes "https://"
	extraTenant                  // Microsoft tenant: id, domain or common/organizations/consumers
)

type extraField struct {
	kind    extraKind
	help    string
	example string
}

// extraFields documents every field named in a Spec.Extra.
var extraFields = map[string]extraField{
	"domain":       {extraHost, "your Auth0 tenant domain", "example.eu.auth0.com"},
	"org_url":      {extraURL, "your Okta org URL (goth uses its default authorization server)", "https://dev-123456.okta.com"},
	"base_url":     {extraURL, "your Cognito user pool domain", "https://myapp.auth.eu-west-1.amazoncognito.com"},
	"uaa_url":      {extraURL, "your Cloud Foundry UAA URL", "https://login.sys.example.com"},
	"instance_url": {extraURL, "your Mastodon server (client ids are per server)", "https://mastodon.social"},
	"url":          {extraURL, "your Nextcloud server", "https://cloud.example.com"},
	"tenant":       {extraTenant, "your Microsoft Entra tenant id or domain, or common, organizations or consumers", "contoso.onmicrosoft.com"},
}

// ExtraHelp returns what an extra config field means, with an example value,
// for messages and docs; "" for an unknown field.
func ExtraHelp(field string) string {
	f, ok := extraFields[field]
	if !ok {
		return ""
	}
	return f.help + ", e.g. " + f.example
}

var tenantRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.-]*$`)

// cleanExtra validates one extra value and returns it normalised (trimmed, no
// trailing slash), so that a typo fails at start-up, not at the IdP.
func cleanExtra(field, value string) (string, error) {
	v := strings.TrimSpace(value)
	switch extraFields[field].kind {
	case extraURL:
		v = strings.TrimRight(v, "/")
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return "", fmt.Errorf("want an https URL without query, e.g. %s", extraFields[field].example)
		}
	case extraHost:
		u, err := url.Parse("https://" + v)
		if err != nil || v == "" || u.Host != v {
			return "", fmt.Errorf("want a bare host name, e.g. %s", extraFields[field].example)
		}
	case extraTenant:
		if !tenantRE.MatchString(v) {
			return "", fmt.Errorf("want a tenant id or domain, e.g. %s", extraFields[field].example)
		}
	}
	return v, nil
}
