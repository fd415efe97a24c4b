package webhooks

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Signature is the webhook-signature header for body: "v1,<sig>" by every
// secret, space-separated, as Standard Webhooks' reference library signs
// and verifies (HMAC-SHA256 over "id.timestamp.body").
func Signature(secrets []string, id string, at time.Time, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for i, sec := range secrets {
		wh, err := standardwebhooks.NewWebhook(sec)
		if err != nil {
			// Never the secret itself in the error: it is logged.
			return "", fmt.Errorf("webhook secret %d is not whsec_ and base64", i+1)
		}
		sig, err := wh.Sign(id, at, body)
		if err != nil {
			return "", fmt.Errorf("sign webhook %s: %w", id, err)
		}
		sigs = append(sigs, sig)
	}
	if len(sigs) == 0 {
		return "", fmt.Errorf("sign webhook %s: no secret", id)
	}
	return strings.Join(sigs, " "), nil
}

// setHeaders sets a delivery's headers: Standard Webhooks' three, the
// content type and who is calling.
func setHeaders(h http.Header, id, signature string, at time.Time) {
	h.Set(standardwebhooks.HeaderWebhookID, id)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, signature)
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "latchkey-webhooks")
}
