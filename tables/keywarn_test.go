package tables_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/unified-data/gotables/tables"
)

// A shared key over plain HTTP warns, through the account's logger, unless the host is a
// loopback one (the emulator).
func TestSharedKeyOverHTTPWarns(t *testing.T) {
	const key = "c2VjcmV0LWtleS1mb3ItdGVzdHMtb25seS0wMTIzNDU2Nzg5"
	for _, tc := range []struct {
		endpoint string
		warns    bool
	}{
		{"http://storage.example.com/acct", true},
		{"https://storage.example.com/acct", false},
		{"http://127.0.0.1:10002/acct", false},
		{"http://localhost:10002/acct", false},
	} {
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, nil))
		_, err := tables.NewAccount("AccountName=acct;AccountKey="+key+";TableEndpoint="+tc.endpoint, &tables.Options{Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(buf.String(), "plain HTTP"); got != tc.warns {
			t.Errorf("%s: warned %v, want %v (log %q)", tc.endpoint, got, tc.warns, buf.String())
		}
		if strings.Contains(buf.String(), key) {
			t.Errorf("%s: the log holds the key", tc.endpoint)
		}
	}
}
