package web

// HeaderValue is a one-value header slice that an append must copy. The
// answers on every page load (GET /session, /csrf, forward-auth) store
// such shared slices under canonical keys instead of calling Header.Set,
// which would allocate one per header per answer; nothing may write into
// one in place (net/http's Header methods never do).
func HeaderValue(v string) []string { return []string{v}[:1:1] }

// NoStoreCacheControl is next-auth's Cache-Control of GET /session and
// /csrf: private and uncacheable.
var NoStoreCacheControl = HeaderValue("private, no-cache, no-store")
