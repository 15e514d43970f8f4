package azconn

import (
	"errors"
	"strings"
	"testing"
)

// A stray copy of a secret in a connection string must not come back in the error: a key
// pasted twice reads as a setting whose name is the key (up to its base64 padding).
func TestConnectionStringErrorsDoNotEchoSecrets(t *testing.T) {
	const key = "c2VjcmV0LWtleS1mb3ItdGVzdHMtb25seS0wMTIzNDU2Nzg5MA=="
	const sig = "c2lnbmF0dXJlLXNlY3JldA%3D%3D"
	tests := []struct{ name, conn, says string }{
		{"key pasted again", "AccountName=acct;AccountKey=" + key + ";" + key, "setting 3 has an unknown name"},
		{"key pasted twice more", "AccountName=acct;" + key + ";AccountKey=" + key + ";" + key, "setting 2 has an unknown name"},
		{"key as a setting name", key + "=x;AccountName=acct", "setting 1 has an unknown name"},
		{"duplicate known setting", "AccountName=acct;AccountKey=" + key + ";accountkey=" + key, "AccountKey appears twice"},
		{"development storage with a stray key", "UseDevelopmentStorage=true;" + key, "setting 2 has an unknown name"},
		{"signature pasted again", "TableEndpoint=https://h/a;SharedAccessSignature=sv=1&sig=" + sig + ";sig=" + sig, "setting 3 has an unknown name"},
		{"signature with a control character", "TableEndpoint=https://h/a;SharedAccessSignature=sv=1&sig=" + sig + "\x01", "not a valid URL query"},
		{"signature with a bad escape", "TableEndpoint=https://h/a;SharedAccessSignature=sv=1&sig=" + sig + "%zz", "not a valid URL query"},
	}
	lower := strings.ToLower(strings.TrimRight(key, "="))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.conn)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrConnString) {
				t.Errorf("%v does not match ErrConnString", err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%q does not say %q", err, tc.says)
			}
			msg := strings.ToLower(err.Error())
			for _, secret := range []string{lower, strings.ToLower(sig), "c2lnbmF0dXJl"} {
				if strings.Contains(msg, strings.ToLower(secret)) {
					t.Errorf("%q contains a secret", err)
				}
			}
		})
	}
}
