package inmemory_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/faults"
)

// TestFaultsTablesOneRetryLayer checks the wiring of faults.Tables under an in-memory
// account that docs/production.md ("Reliability", testing your code under faults) shows: the account adds no retries over it, so a read makes the SDK's four
// tries (one and three retries) and fails on the fourth fault, as through faults.Transport
// on Azure, instead of being retried again by Options.Retry.
func TestFaultsTablesOneRetryLayer(t *testing.T) {
	for _, tc := range []struct {
		faults  int
		wantErr bool
		left    int // faults still pending after the call
	}{
		{faults: 3},
		{faults: 4, wantErr: true},
		{faults: 5, wantErr: true, left: 1},
	} {
		t.Run(fmt.Sprint(tc.faults), func(t *testing.T) {
			ctx := context.Background()
			svc := faults.NewTables(memservice.New())
			mem := inmemory.NewAccountOver(svc, nil, nil) // the default Options.Retry
			s, err := tables.For[Customer](mem, &tables.StoreOptions{Table: "Faulty1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx, &Customer{Entity: abstractions.Entity{ID: "a|1"}}); err != nil {
				t.Fatal(err)
			}
			svc.Inject(faults.InternalError, faults.Reads, tc.faults)
			_, err = s.One(ctx, "a|1")
			switch {
			case tc.wantErr && (!errors.Is(err, abstractions.ErrUnavailable) || !abstractions.HasStatus(err, 500, "InternalError")):
				t.Fatalf("One after %d faults = %v, want ErrUnavailable with status 500", tc.faults, err)
			case !tc.wantErr && err != nil:
				t.Fatalf("One after %d faults = %v, want success", tc.faults, err)
			}
			if got := svc.Pending(); got != tc.left {
				t.Errorf("faults pending after the call = %d, want %d (tries made: %d)", got, tc.left, tc.faults-got)
			}
		})
	}
}
