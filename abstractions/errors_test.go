package abstractions

import (
	"errors"
	"testing"
)

func TestStoreErrorText(t *testing.T) {
	cause := errors.New("dial tcp: connection refused")
	for _, tc := range []struct {
		name string
		e    StoreError
		want string
	}{
		{"row", StoreError{Op: "one", Table: "Customer", PartitionKey: "a", RowKey: "1", Message: "not found"},
			`one Customer ("a", "1"): not found`},
		{"partition", StoreError{Op: "query", Table: "Customer", PartitionKey: "a", Message: "bad filter"},
			`query Customer partition "a": bad filter`},
		{"table", StoreError{Op: "create table", Table: "Customer", Message: "refused", Err: cause},
			"create table Customer: refused: dial tcp: connection refused"},
		{"account call, no table", StoreError{Op: "ping", Message: "the service cannot be reached", Err: cause},
			"ping: the service cannot be reached: dial tcp: connection refused"},
		{"no op or table", StoreError{Message: "refused"}, "refused"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%s: Error() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
