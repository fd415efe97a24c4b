package catalogue

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"

	"github.com/markbates/goth"
	"golang.org/x/oauth2"
)

// oauth2ConfigOf copies the endpoints and scopes out of the *oauth2.Config
// goth keeps in an unexported field. The field is found by type, not name, and
// only read (reflect allows reading unexported strings and ints). Client id,
// secret and redirect URL are the caller's to set.
func oauth2ConfigOf(gp goth.Provider) (*oauth2.Config, error) {
	v := reflect.ValueOf(gp)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("goth provider %T is not a pointer to a struct", gp)
	}
	want := reflect.TypeFor[*oauth2.Config]()
	var found []reflect.Value
	for i := range v.Elem().NumField() {
		if f := v.Elem().Field(i); f.Type() == want && !f.IsNil() {
			found = append(found, f.Elem())
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("goth provider %T: want one *oauth2.Config field, found %d", gp, len(found))
	}
	src := found[0]
	ep := src.FieldByName("Endpoint")
	oc := &oauth2.Config{Endpoint: oauth2.Endpoint{
		AuthURL:   ep.FieldByName("AuthURL").String(),
		TokenURL:  ep.FieldByName("TokenURL").String(),
		AuthStyle: oauth2.AuthStyle(ep.FieldByName("AuthStyle").Int()),
	}}
	scopes := src.FieldByName("Scopes")
	for i := range scopes.Len() {
		oc.Scopes = append(oc.Scopes, scopes.Index(i).String())
	}
	for _, u := range []string{oc.Endpoint.AuthURL, oc.Endpoint.TokenURL} {
		if p, err := url.Parse(u); err != nil || p.Scheme != "https" || p.Host == "" {
			return nil, fmt.Errorf("goth provider %T: endpoint %q is not an absolute https URL", gp, u)
		}
	}
	return oc, nil
}

const probeState = "latchkey-probe-state"

// standardParams are the authorization request parameters latchkey sets itself.
var standardParams = []string{"client_id", "redirect_uri", "response_type", "scope", "state"}

// authParams asks goth for its authorization URL and returns the parameters it
// adds beyond oc's own. It also proves the request is the standard one oc
// would build (same endpoint, client_id, redirect_uri, state, response_type),
// so latchkey can build it with oc alone.
func authParams(gp goth.Provider, oc *oauth2.Config) (url.Values, error) {
	sess, err := gp.BeginAuth(probeState)
	if err != nil {
		return nil, fmt.Errorf("goth BeginAuth: %w", err)
	}
	raw, err := sess.GetAuthURL()
	if err != nil {
		return nil, fmt.Errorf("goth BeginAuth: %w", err)
	}
	got, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("goth authorization URL: %w", err)
	}
	base, err := url.Parse(oc.Endpoint.AuthURL)
	if err != nil {
		return nil, fmt.Errorf("authorization endpoint: %w", err)
	}
	q := got.Query()
	switch {
	case got.Scheme != base.Scheme || got.Host != base.Host || got.Path != base.Path:
		err = fmt.Errorf("goth's authorization URL does not start at its endpoint %q", oc.Endpoint.AuthURL)
	case q.Get("client_id") != oc.ClientID, q.Get("redirect_uri") != oc.RedirectURL,
		q.Get("state") != probeState, q.Get("response_type") != "code":
		err = errors.New("goth's authorization request is not standard OAuth 2 (client_id, redirect_uri, state, response_type=code)")
	}
	if err != nil {
		return nil, err
	}
	for _, k := range standardParams {
		q.Del(k)
	}
	for k := range base.Query() {
		q.Del(k) // already part of the endpoint URL (wepay's scope)
	}
	return q, nil
}

// setHTTPClient sets goth's exported HTTPClient field, which every catalogue
// provider reads through goth.HTTPClientWithFallBack. It reports false when the
// provider has no such field.
func setHTTPClient(gp goth.Provider, hc *http.Client) bool {
	v := reflect.ValueOf(gp)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return false
	}
	f := v.Elem().FieldByName("HTTPClient")
	if !f.IsValid() || !f.CanSet() || f.Type() != reflect.TypeOf(hc) {
		return false
	}
	f.Set(reflect.ValueOf(hc))
	return true
}
