package webhooks

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// During a rotation both secrets sign: a receiver holding either one
// verifies with the reference library, one holding neither does not.
func TestSignatureVerifiesWithEverySecret(t *testing.T) {
	oldSecret, newSecretValue, other := newSecret(t), newSecret(t), newSecret(t)
	at := time.Now()
	body := []byte(`{"id":"evt_1","type":"user.created","timestamp":"x","data":{}}`)
	sig, err := Signature([]string{newSecretValue, oldSecret}, "evt_1", at, body)
	require.NoError(t, err)
	parts := strings.Split(sig, " ")
	require.Len(t, parts, 2)
	for _, p := range parts {
		require.True(t, strings.HasPrefix(p, "v1,"), p)
	}
	h := http.Header{}
	setHeaders(h, "evt_1", sig, at)
	for _, sec := range []string{oldSecret, newSecretValue} {
		wh, err := standardwebhooks.NewWebhook(sec)
		require.NoError(t, err)
		require.NoError(t, wh.Verify(body, h))
		require.Error(t, wh.Verify(append(body, ' '), h), "a changed body does not verify")
	}
	wh, err := standardwebhooks.NewWebhook(other)
	require.NoError(t, err)
	require.ErrorIs(t, wh.Verify(body, h), standardwebhooks.ErrNoMatchingSignature)
}

func TestSignatureRefusesBadSecretsWithoutQuotingThem(t *testing.T) {
	_, err := Signature([]string{"whsec_not base64!"}, "evt_1", time.Now(), nil)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "not base64!")
	_, err = Signature(nil, "evt_1", time.Now(), nil)
	require.Error(t, err)
}
