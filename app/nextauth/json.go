package nextauth

import (
	"github.com/latchkey-auth/latchkey/app/jsonstr"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// GET /session and GET /csrf answer on every page load, so their JSON is
// written by hand into a pooled buffer instead of going through echo's
// c.JSON (reflection, an encoder and a header slice per response). The
// bytes are the ones c.JSON writes: encoding/json's escaping with HTML
// characters escaped, a trailing newline, Content-Type application/json.
// With ?pretty in the query (or echo in debug mode) c.JSON indents its
// output, so those requests still go through it.

// appendSession is c.JSON's encoding of s, newline included. A test holds
// it to encoding/json for every field of SessionObject and SessionUser.
func appendSession(b []byte, s signin.SessionObject) []byte {
	b = append(b, `{"user":{`...)
	if s.User.ID != "" { // omitempty
		b = append(b, `"id":`...)
		b = jsonstr.Append(b, s.User.ID, true)
		b = append(b, ',')
	}
	b = append(b, `"name":`...)
	b = appendNullableString(b, s.User.Name)
	b = append(b, `,"email":`...)
	b = appendNullableString(b, s.User.Email)
	b = append(b, `,"image":`...)
	b = appendNullableString(b, s.User.Image)
	b = append(b, `},"expires":`...)
	b = jsonstr.Append(b, s.Expires, true)
	if s.Error != "" { // omitempty
		b = append(b, `,"error":`...)
		b = jsonstr.Append(b, s.Error, true)
	}
	return append(b, "}\n"...)
}

// appendCSRF is c.JSON's encoding of {"csrfToken": token}, newline included.
func appendCSRF(b []byte, token string) []byte {
	b = append(b, `{"csrfToken":`...)
	b = jsonstr.Append(b, token, true)
	return append(b, "}\n"...)
}

func appendNullableString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return jsonstr.Append(b, *s, true)
}
