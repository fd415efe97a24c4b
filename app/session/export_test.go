package session

// DecodeCacheLen is how many tokens the jwt strategy's decode cache holds,
// for tests.
func (j *JWT) DecodeCacheLen() int {
	if j.decoded == nil {
		return 0
	}
	return j.decoded.tokens.Len()
}
