package blobconn

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// An endpoint's text, in every form a program may print or log it, names the credential's
// kind and never its secret.
func TestEndpointHidesSecrets(t *testing.T) {
	for _, ep := range []Endpoint{
		{URL: "https://acct.blob.core.windows.net", AccountName: "acct", AccountKey: "c2VjcmV0LWtleQ=="},
		{URL: "https://acct.blob.core.windows.net", SAS: "sv=2024&sig=c2lnbmF0dXJl"},
	} {
		for _, text := range []string{ep.String(), fmt.Sprintf("%v %+v %#v %s", ep, ep, ep, ep), slog.AnyValue(ep).Resolve().String()} {
			if strings.Contains(text, "c2VjcmV0LWtleQ") || strings.Contains(text, "c2lnbmF0dXJl") || !strings.Contains(text, "acct.blob.core.windows.net") {
				t.Errorf("%q", text)
			}
		}
	}
}
