package tables

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/retry"
	"github.com/unified-data/gotables/tables/service"
)

func TestRetryingTables(t *testing.T) {
	busy := fakeStatus(http.StatusServiceUnavailable, "ServerBusy")
	cases := []struct {
		name     string
		answers  []error // the answers of the tries, in order; nil after the last
		retries  int
		calls    int
		busy     int
		wantKind error
	}{
		{"a busy answer then success", []error{busy, busy}, 3, 3, 2, nil},
		{"busy past the retries", []error{busy, busy, busy, busy, busy}, 3, 4, 4, abstractions.ErrUnavailable},
		{"no retries", []error{busy}, -1, 1, 1, abstractions.ErrUnavailable},
		{"500 OperationTimedOut is busy", []error{fakeStatus(http.StatusInternalServerError, "OperationTimedOut")}, 3, 2, 1, nil},
		{"502 is retried, not busy", []error{fakeStatus(http.StatusBadGateway, "")}, 3, 2, 0, nil},
		{"409 is not retried", []error{errFakeExists}, 3, 1, 0, abstractions.ErrDuplicateKey},
		{"a failed action is not retried", []error{&service.TransactionError{Index: 0, Err: busy}}, 3, 1, 0, abstractions.ErrUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.tables["items"] = map[fakeKey]service.Row{} // no Create Table between the tries
			calls := 0
			f.before = func(call string) error {
				if call != "Write" {
					return nil
				}
				calls++
				if calls <= len(tc.answers) {
					return tc.answers[calls-1]
				}
				return nil
			}
			acct := testAccount("test", f, nil, &Options{BatchParallelism: 8}, func(c *config) { c.Retry = &retry.Policy{MaxRetries: tc.retries, RetryDelay: time.Microsecond} })
			if acct.Tables() != f {
				t.Error("Tables does not return the service as given")
			}
			s, err := For[item](acct, &StoreOptions{Table: "Items"})
			if err != nil {
				t.Fatal(err)
			}
			err = s.Upsert(context.Background(), &item{Entity: abstractions.Entity{ID: "p|a"}})
			wantKind(t, err, tc.wantKind)
			if calls != tc.calls {
				t.Errorf("%d tries, want %d", calls, tc.calls)
			}
			if want := max(1, 8>>tc.busy); tc.busy <= 1 && acct.e.Pressure.Limit() != want {
				t.Errorf("window %d after %d busy answers, want %d", acct.e.Pressure.Limit(), tc.busy, want)
			}
		})
	}
}

// A wait between tries ends when the context does.
func TestRetryingTablesCancelledWhileWaiting(t *testing.T) {
	f := newFake()
	f.tables["items"] = map[fakeKey]service.Row{}
	ctx, cancel := context.WithCancel(context.Background())
	f.before = func(call string) error {
		if call == "Write" {
			cancel()
			return fakeStatus(http.StatusServiceUnavailable, "ServerBusy")
		}
		return nil
	}
	acct := testAccount("test", f, nil, nil, func(c *config) { c.Retry = &retry.Policy{RetryDelay: time.Hour} })
	s, err := For[item](acct, &StoreOptions{Table: "Items"})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Upsert(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}})
	if !errors.Is(err, context.Canceled) || f.count("Write") != 0 {
		t.Errorf("error %v after %d writes", err, f.count("Write"))
	}
}
