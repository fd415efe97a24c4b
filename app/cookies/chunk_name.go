package cookies

// IsChunked reports whether cookie is the session cookie name itself or one
// of the chunks ReadChunked joins (name.0 … name.64): the cookies a backend
// forwards to GET /session (package client), and nothing else.
func IsChunked(cookie, name string) bool {
	_, ok := chunkIndex(cookie, name)
	return ok
}
