package echo

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func status(code int, ec string) error {
	return &abstractions.StatusError{StatusCode: code, ErrorCode: ec}
}

// Only the refusals an applied earlier try causes, after a retry, may be echoes; a lost
// answer always may; the library's own refusals never.
func TestMayBe(t *testing.T) {
	etag := `W/"datetime'2024-01-01T00%3A00%3A00Z'"`
	for _, tc := range []struct {
		name    string
		err     error
		a       service.Action
		retried bool
		want    bool
	}{
		{"insert 409 after a retry", status(http.StatusConflict, "EntityAlreadyExists"), service.Action{Op: service.OpInsert}, true, true},
		{"insert 409 on the first try", status(http.StatusConflict, "EntityAlreadyExists"), service.Action{Op: service.OpInsert}, false, false},
		{"conditional replace 412", status(http.StatusPreconditionFailed, "UpdateConditionNotSatisfied"), service.Action{Op: service.OpReplace, IfMatch: etag}, true, true},
		{"replace 412 on *", status(http.StatusPreconditionFailed, "UpdateConditionNotSatisfied"), service.Action{Op: service.OpReplace, IfMatch: service.ETagAny}, true, false},
		{"delete 404", status(http.StatusNotFound, "ResourceNotFound"), service.Action{Op: service.OpDelete}, true, true},
		{"upsert 404", status(http.StatusNotFound, "ResourceNotFound"), service.Action{Op: service.OpUpsertMerge}, true, false},
		{"503 left after retries", status(http.StatusServiceUnavailable, "ServerBusy"), service.Action{Op: service.OpInsert}, false, true},
		{"no answer", errors.New("connection reset by peer"), service.Action{Op: service.OpMerge}, false, true},
		{"the library's own refusal", abstractions.ErrInvalidKey, service.Action{Op: service.OpInsert}, false, false},
	} {
		if got := MayBe(tc.err, &tc.a, tc.retried); got != tc.want {
			t.Errorf("%s: MayBe = %v, want %v", tc.name, got, tc.want)
		}
	}
	te := &service.TransactionError{Index: 1, Err: status(http.StatusConflict, "EntityAlreadyExists")}
	acts := []service.Action{{Op: service.OpUpsertReplace}, {Op: service.OpInsert}}
	if !TxMayBe(te, acts, true) || TxMayBe(te, acts, false) {
		t.Error("a transaction's blamed insert refused 409 is an echo only after a retry")
	}
	if TxMayBe(&service.TransactionError{Index: 5, Err: te.Err}, acts, true) {
		t.Error("a blamed index outside the transaction is no echo")
	}
}

// A row holds a write when it carries every sent cell (times at 100 ns) and, for a whole
// write, nothing else.
func TestHolds(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.UTC)
	stored := service.Row{Properties: []service.Property{
		{Name: "A", Value: service.String("x")},
		{Name: "T", Value: service.DateTime(at.Truncate(100 * time.Nanosecond))},
	}}
	sent := []service.Property{{Name: "A", Value: service.String("x")}, {Name: "T", Value: service.DateTime(at)}}
	if !Holds(&stored, sent, true) {
		t.Error("the row written does not hold its cells")
	}
	if !Holds(&stored, sent[:1], false) || Holds(&stored, sent[:1], true) {
		t.Error("a merge's cells are held; a whole write's are not when the row has more")
	}
	if Holds(&stored, []service.Property{{Name: "A", Value: service.String("y")}}, false) {
		t.Error("another value is held")
	}
}
