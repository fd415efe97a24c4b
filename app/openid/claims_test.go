package openid

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/latchkey-auth/latchkey/models"
)

// oneUser is a Store with one user; every other method is unused here.
type oneUser struct {
	Store
	u *models.User
}

func (s oneUser) UserByID(context.Context, string) (*models.User, error) { return s.u, nil }

// TestPictureIsAURL: the picture claim is a URL (OpenID Connect Core
// §5.1). An imported user's image may be a path on the app's own origin
// ("/uploads/x.png", kept for the app's pages): it goes out made absolute
// on SERVICE_URL's origin, where a relying party can fetch it; an
// absolute URL goes as it is; anything else (data:, //host) is left out.
func TestPictureIsAURL(t *testing.T) {
	for image, want := range map[string]string{
		"/uploads/x.png":               "https://ex.com/uploads/x.png",
		"/a b.png?v=1":                 "https://ex.com/a%20b.png?v=1",
		"https://cdn.example/face.png": "https://cdn.example/face.png",
		"":                             "",
		"data:image/png;base64,AAAA":   "",
		"//evil.example/x.png":         "",
		"javascript:alert(1)":          "",
	} {
		u := &models.User{ID: "u1"}
		if image != "" {
			u.Image = &image
		}
		s := &Service{store: oneUser{u: u}, set: Settings{Origin: "https://ex.com"}}
		info := new(oidc.UserInfo)
		require.NoError(t, s.fillUserinfo(context.Background(), info, "u1", []string{oidc.ScopeOpenID, oidc.ScopeProfile}))
		require.Equal(t, want, info.Picture, image)
	}
}
