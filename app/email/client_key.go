package email

// ClientKey is the key one client is counted under by rate limits: the IP
// for IPv4, its /64 for IPv6 (see clientKey). Password sign-in's throttle
// (app/signin) counts clients the same way.
func ClientKey(remoteAddr string) string { return clientKey(remoteAddr) }
