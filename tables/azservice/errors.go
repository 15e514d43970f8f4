package azservice

import (
	"context"
	"fmt"
	"net/http"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/azconn"
)

// errEmptyPartitionKey refuses what the SDK refuses: it cannot address a row whose
// PartitionKey is empty (the generated request builders reject an empty key), although the
// service allows one.
var errEmptyPartitionKey = fmt.Errorf("azservice: the Azure SDK cannot address a row with an empty PartitionKey by URL (replace, merge, upsert, delete): %w",
	abstractions.ErrNotSupported)

// mapError turns an SDK failure into the contract's errors (see azconn.MapError).
func mapError(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	return azconn.MapError(ctx, "azservice: "+op, err)
}

// notFound is the error of a point read that found no row, shaped like the one GetEntity
// reports (the projected read goes through a query, which answers 200 with no rows).
func notFound() *abstractions.StatusError {
	return &abstractions.StatusError{
		StatusCode: http.StatusNotFound,
		ErrorCode:  "ResourceNotFound",
		Message:    "The specified resource does not exist.",
	}
}
