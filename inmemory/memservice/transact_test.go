package memservice

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

func inserts(n int, pk string) []service.Action {
	actions := make([]service.Action, n)
	for i := range actions {
		actions[i] = insert(row(pk, fmt.Sprintf("r%03d", i)))
	}
	return actions
}

func TestTransactionRules(t *testing.T) {
	ctx := context.Background()
	mixed := inserts(5, "p")
	mixed[3].Row.PartitionKey = "q"
	mixed[4].Row.PartitionKey = "z"
	dup := inserts(5, "p")
	dup[4].Row.RowKey = dup[1].Row.RowKey
	dup[3].Row.RowKey = dup[2].Row.RowKey
	mixedAndDup := inserts(5, "p")
	mixedAndDup[1].Row.RowKey = mixedAndDup[0].Row.RowKey
	mixedAndDup[4].Row.PartitionKey = "q"
	tooManyMixed := inserts(101, "p")
	tooManyMixed[1].Row.PartitionKey = "q"
	// The same RowKey in two partitions is refused for the partitions, not as a duplicate.
	sameRowKey := []service.Action{insert(row("a", "bc")), insert(row("ab", "c")), insert(row("x", "bc"))}

	tests := []struct {
		name    string
		actions []service.Action
		index   int
		code    string
	}{
		{"101 actions", inserts(101, "p"), 0, "InvalidInput"},
		{"101 actions in two partitions", tooManyMixed, 0, "InvalidInput"},
		{"two partitions", mixed, 3, "CommandsInBatchActOnDifferentPartitions"},
		{"same row twice", dup, 3, "InvalidDuplicateRow"},
		{"partitions before duplicates", mixedAndDup, 4, "CommandsInBatchActOnDifferentPartitions"},
		{"same RowKey in two partitions", sameRowKey, 1, "CommandsInBatchActOnDifferentPartitions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTable(t)
			wantTx(t, txErr(s.Transact(ctx, "Tab1", tc.actions)), tc.index, http.StatusBadRequest, tc.code)
			if page, _ := s.Query(ctx, "Tab1", service.Query{}); len(page.Rows) != 0 {
				t.Fatalf("a refused transaction stored %d rows", len(page.Rows))
			}
		})
	}

	s, _ := newTable(t)
	wantStatus(t, txErr(s.Transact(ctx, "Tab1", nil)), http.StatusBadRequest, "InvalidInput")
	if err := txErr(s.Transact(ctx, "Tab1", inserts(100, "p"))); err != nil {
		t.Fatalf("100 actions: %v", err)
	}
}

func TestTransactionActionErrors(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	w := mustWrite(t, s, insert(row("p", "old", prop("v", service.Int32(1)))))
	mustWrite(t, s, insert(row("p", "exists")))
	stale := w.ETag
	w = mustWrite(t, s, service.Action{Op: service.OpReplace, Row: row("p", "old", prop("v", service.Int32(2))), IfMatch: w.ETag})

	// Each case puts a failing action after two good ones.
	good := func() []service.Action {
		return []service.Action{
			insert(row("p", "new", prop("v", service.Int32(1)))),
			{Op: service.OpMerge, Row: row("p", "old", prop("w", service.Int32(9))), IfMatch: w.ETag},
		}
	}
	tests := []struct {
		name   string
		bad    service.Action
		status int
		code   string
	}{
		{"insert existing", insert(row("p", "exists")), 409, "EntityAlreadyExists"},
		{"replace missing", service.Action{Op: service.OpReplace, Row: row("p", "missing"), IfMatch: "*"}, 404, "ResourceNotFound"},
		{"delete missing", service.Action{Op: service.OpDelete, Row: row("p", "missing")}, 404, "ResourceNotFound"},
		{"stale ETag", service.Action{Op: service.OpDelete, Row: row("p", "exists"), IfMatch: stale}, 412, "UpdateConditionNotSatisfied"},
		{"malformed ETag", service.Action{Op: service.OpMerge, Row: row("p", "exists"), IfMatch: `"x"`}, 400, "InvalidInput"},
		{"bad key in an insert", insert(row("p", "a#b")), 400, "OutOfRangeInput"},
		{"bad key in an upsert", service.Action{Op: service.OpUpsertMerge, Row: row("p", "a#b")}, 400, "InvalidInput"},
		{"bad property", insert(row("p", "x", prop("a-b", service.Int32(1)))), 400, "PropertyNameInvalid"},
		{"too many properties", insert(row("p", "x", manyProps(253, service.Int32(1))...)), 400, "TooManyProperties"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantTx(t, txErr(s.Transact(ctx, "Tab1", append(good(), tc.bad))), 2, tc.status, tc.code)
			// Nothing of the transaction is left.
			_, err := s.GetRow(ctx, "Tab1", "p", "new", nil)
			wantStatus(t, err, http.StatusNotFound, "ResourceNotFound")
			if got := mustGet(t, s, "p", "old"); got.ETag != w.ETag || len(got.Properties) != 1 {
				t.Fatalf("row changed by a failed transaction: %+v", got)
			}
			mustGet(t, s, "p", "exists")
		})
	}

	// The same actions commit once the bad one is gone.
	actions := append(good(),
		service.Action{Op: service.OpDelete, Row: row("p", "exists")},
		service.Action{Op: service.OpUpsertReplace, Row: row("p", "up", prop("u", service.Bool(true)))},
	)
	if err := txErr(s.Transact(ctx, "Tab1", actions)); err != nil {
		t.Fatal(err)
	}
	if got := propMap(mustGet(t, s, "p", "old")); !equalProps(got, map[string]service.Value{"v": service.Int32(2), "w": service.Int32(9)}) {
		t.Fatalf("merged row = %v", got)
	}
	mustGet(t, s, "p", "new")
	mustGet(t, s, "p", "up")
	_, err := s.GetRow(ctx, "Tab1", "p", "exists", nil)
	wantStatus(t, err, http.StatusNotFound, "ResourceNotFound")
}

func TestTransactionValidationBeforeTable(t *testing.T) {
	ctx := context.Background()
	s := New()
	// The first action's own errors come before the missing table.
	err := txErr(s.Transact(ctx, "Nope", []service.Action{insert(row("p", "a/b")), insert(row("p", "r"))}))
	wantTx(t, err, 0, http.StatusBadRequest, "OutOfRangeInput")
	err = txErr(s.Transact(ctx, "Nope", []service.Action{insert(row("p", "r")), insert(row("p", "a/b"))}))
	wantTx(t, err, 0, http.StatusNotFound, "TableNotFound")
}

func TestTransactionTimestamps(t *testing.T) {
	s, _ := newTable(t)
	before := mustWrite(t, s, insert(row("p", "before")))
	// A failed transaction stamps nothing.
	wantTx(t, txErr(s.Transact(context.Background(), "Tab1", append(inserts(2, "p"), insert(row("p", "before"))))), 2, 409, "EntityAlreadyExists")
	if err := txErr(s.Transact(context.Background(), "Tab1", inserts(3, "p"))); err != nil {
		t.Fatal(err)
	}
	last := before.Timestamp
	for _, k := range []string{"r000", "r001", "r002"} {
		r := mustGet(t, s, "p", k)
		if want := last.Add(100 * time.Nanosecond); !r.Timestamp.Equal(want) || r.ETag != formatETag(want) {
			t.Fatalf("row %s written at %v (%s), want %v", k, r.Timestamp, r.ETag, want)
		}
		last = r.Timestamp
	}
}

// txErr is the error of a Transact call, for the tests that look at nothing else.
func txErr(_ []service.Written, err error) error { return err }

// A transaction reports each row's new version, in the order of its actions, as a read then
// returns it; a delete reports none.
func TestTransactionReportsVersions(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	old := mustWrite(t, s, insert(row("p", "old", prop("v", service.Int32(1)))))
	mustWrite(t, s, insert(row("p", "gone")))
	acts := []service.Action{
		insert(row("p", "new")),
		{Op: service.OpReplace, Row: row("p", "old", prop("v", service.Int32(2))), IfMatch: old.ETag},
		{Op: service.OpDelete, Row: row("p", "gone")},
		{Op: service.OpUpsertMerge, Row: row("p", "merged")},
	}
	written, err := s.Transact(ctx, "Tab1", acts)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != len(acts) {
		t.Fatalf("%d versions for %d actions", len(written), len(acts))
	}
	for i, a := range acts {
		if a.Op == service.OpDelete {
			if written[i] != (service.Written{}) {
				t.Errorf("the delete reported %+v", written[i])
			}
			continue
		}
		r, err := s.GetRow(ctx, "Tab1", "p", a.Row.RowKey, nil)
		if err != nil {
			t.Fatal(err)
		}
		if written[i].ETag != r.ETag || !written[i].Timestamp.Equal(r.Timestamp) {
			t.Errorf("action %d reported %+v; the row is at %s, %v", i, written[i], r.ETag, r.Timestamp)
		}
	}
	if written[1].ETag == old.ETag {
		t.Error("the replace reported the version it replaced")
	}
}
