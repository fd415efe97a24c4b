package oauth

import "context"

// SignInURLs are where a provider's sign-in redirect may send the browser,
// for the form-action of the pages whose forms start it: a catalogue
// provider's authorization endpoint, fixed when it is built.
func (g *gothClient) SignInURLs() (urls []string, final bool) {
	return []string{g.p.OAuth2.Endpoint.AuthURL}, true
}

// SignInURLs are the issuer and, once discovery has named it, the
// authorization endpoint, which some IdPs serve from another origin than
// the issuer. final is false until then: the list may still grow.
func (o *oidcClient) SignInURLs() (urls []string, final bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.conf == nil {
		return []string{o.cfg.Issuer}, false
	}
	return []string{o.cfg.Issuer, o.conf.Endpoint.AuthURL}, true
}

// Discover runs the issuer discovery now rather than at the first sign-in,
// so the authorization endpoint is known before the first sign-in page is
// shown. A failure changes nothing: the first sign-in tries again.
func (o *oidcClient) Discover(ctx context.Context) error {
	_, _, err := o.discover(ctx)
	return err
}
