package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// CheckSweep refuses a sweep the store cannot run (no blobs, no offload, a negative age).
func (s *Table) CheckSweep(op string, olderThan time.Duration) error {
	switch {
	case s.Acct.Off == nil:
		return &abstractions.StoreError{Kind: abstractions.ErrNotSupported, Op: op, Table: s.Name,
			Message: "the account has no blob offload configured, so the store has no blobs to sweep"}
	case !s.Split:
		return &abstractions.StoreError{Kind: abstractions.ErrNotSupported, Op: op, Table: s.Name,
			Message: "the store's type has no large value, so it stores no blob"}
	case olderThan < 0:
		return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: s.Name,
			Message: fmt.Sprintf("olderThan is %v; it must not be negative, and must exceed the longest write", olderThan)}
	}
	return nil
}

// SweepPartition deletes the orphans of one partition last modified at or before cut.
func (s *Table) SweepPartition(ctx context.Context, pk string, cut time.Time) (int, error) {
	const op = "sweep orphan blobs"
	prefix := largevalue.PartitionBlobPrefix(s.Name, pk)
	var old []service.BlobItem
	marker := ""
	for {
		page, err := s.Acct.Blobs.List(ctx, s.Acct.Off.Container, service.ListOptions{Prefix: prefix, Marker: marker})
		if abstractions.HasStatus(err, http.StatusNotFound, "ContainerNotFound") {
			return 0, nil
		}
		if err != nil {
			return 0, s.Translate(op, pk, "", err)
		}
		for _, it := range page.Blobs {
			name, ok := largevalue.ParseBlobName(it.Name)
			if !ok || name.Table != s.Name || name.PartitionKey != pk {
				continue
			}
			if !it.Properties.LastModified.After(cut) {
				old = append(old, it)
			}
		}
		if page.NextMarker == "" {
			break
		}
		marker = page.NextMarker
	}
	if len(old) == 0 {
		return 0, nil
	}
	// Which blobs do the partition's rows reference now?
	referenced := map[string]bool{}
	err := s.Scan(ctx, service.Query{Filter: odata.Partition(pk)}, func(r *service.Row) error {
		for _, ref := range BlobRefs(r) {
			referenced[ref.Path] = true
		}
		return nil
	})
	if err != nil {
		return 0, s.Translate(op, pk, "", err)
	}
	deleted := 0
	var fails []error
	for _, it := range old {
		if referenced[it.Name] {
			continue
		}
		err := s.Acct.Blobs.DeleteBlob(ctx, s.Acct.Off.Container, it.Name, service.Conditions{IfMatch: it.Properties.ETag})
		switch {
		case err == nil:
			deleted++
		case abstractions.HasStatus(err, http.StatusNotFound, "") || abstractions.HasStatus(err, http.StatusPreconditionFailed, ""):
			// Gone already, or touched by a write since it was listed: not an orphan to delete.
		default:
			fails = append(fails, fmt.Errorf("blob %q: %w", it.Name, s.Translate(op, pk, "", err)))
		}
		if ctx.Err() != nil {
			fails = append(fails, s.Translate(op, pk, "", ctx.Err()))
			break
		}
	}
	return deleted, errors.Join(fails...)
}
