package access

import (
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A 400 to a write conditioned on "*" is not a refused ETag: only an entity tag the service
// never issued is. (The store-level cases are in package tables' missing-table tests.)
func TestRefusesETag(t *testing.T) {
	bad := &abstractions.StatusError{StatusCode: http.StatusBadRequest, ErrorCode: "InvalidInput"}
	if refusesETag(bad, &service.Action{Op: service.OpReplace, IfMatch: service.ETagAny}) {
		t.Error("a 400 to a write with If-Match * was taken for a refused ETag")
	}
	if !refusesETag(bad, &service.Action{Op: service.OpReplace, IfMatch: `W/"datetime'2024-01-01T00%3A00%3A00Z'"`}) {
		t.Error("a 400 to a write with an entity tag was not taken for a refused ETag")
	}
}
