package tables

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// Blob offload (tier 3 of large values) and files.
//
// A split-aware type's value whose stored bytes exceed the threshold, or that the entity's
// rows cannot hold in one transaction, and every file (*abstractions.File), is stored in a
// blob of the account's offload container; the main row holds {Column}__blob, a reference
// (package largevalue has the layout and the names). The ordering keeps every committed row
// readable:
//
//   - Write: each blob is uploaded create-only first (a blob that exists already has the
//     same name, so the same SHA-256: it counts as uploaded, and is touched so that its age
//     starts again), then the rows are written as for split values.
//   - Replace: the new blobs, then the row swap on condition of the version read, then the
//     deletion of the blobs the stored row referenced and the new one does not, when they
//     are the row's own ({table}/{pk}/{rk}/…) and older than CleanupGrace, measured back
//     from the commit on the service's clock.
//   - Delete: the rows (conditional or not, as the split rows are), then the row's own
//     blobs, subject to CleanupGrace; a delete that loses its condition deletes no blob.
//   - A failed write never deletes a blob: what it uploaded is left for the orphan sweep.
//   - Reads download each offloaded string, []byte or JSON value and verify its length and
//     SHA-256; a missing or changed blob is damage or a race, handled as for split values.
//     A file is never downloaded by a read: the entity gets a *abstractions.File bound to
//     its blob, which Open streams and verifies.

// BlobOffloadOptions configure blob offload for every store of an account. Set
// Options.BlobOffload to turn it on; the account then needs a blob service.
type BlobOffloadOptions struct {
	// Container is the offload container, created on first use; "" means
	// "unified-tables-values". The container belongs to offload alone: sweeps list all of
	// a table's prefix in it (they delete only names of the offload shape).
	Container string
	// ThresholdBytes is the most stored bytes a large value keeps in the table: a value
	// stored split whose stored (encoded) bytes exceed it goes to a blob instead. 0 means
	// 3,145,728; it may be 1 to 4,194,304.
	ThresholdBytes int
	// CleanupGrace is how old a blob a replace or delete released must be (since it was
	// last written or touched, on the service's clock) to be deleted at once; younger ones
	// are left for the orphan sweep. 0 means five minutes. A blob's LastModified has
	// one-second resolution, so a grace below a second protects nothing: a blob another
	// writer touched in the second of the commit could be deleted under it. A negative
	// grace means none beyond that resolution (tests only): a released blob is deleted once
	// the second it was last written in has passed, so one released in that same second
	// waits for the sweep. NoCleanup switches the cleanup off.
	CleanupGrace time.Duration
}

// defaultCleanupGrace is the cleanup grace unless BlobOffloadOptions say otherwise.
const defaultCleanupGrace = 5 * time.Minute

// NoCleanup as BlobOffloadOptions.CleanupGrace switches the cleanup after writes and deletes
// off: every released blob is left for the orphan sweep.
const NoCleanup time.Duration = math.MaxInt64

// Check returns an error matching abstractions.ErrInvalidArgument when the options are out
// of range: a ThresholdBytes outside 1 to 4,194,304 (0 means the default) or a container
// name the blob service refuses.
func (o *BlobOffloadOptions) check() error {
	if o == nil {
		return nil
	}
	if o.ThresholdBytes < 0 || o.ThresholdBytes > largevalue.MaxThreshold {
		return fmt.Errorf("%w: BlobOffloadOptions.ThresholdBytes is %d; it must be 1 to %d (0 for the default, %d)",
			abstractions.ErrInvalidArgument, o.ThresholdBytes, largevalue.MaxThreshold, largevalue.DefaultThreshold)
	}
	if c := o.Container; c != "" && !validContainer(c) {
		return fmt.Errorf("%w: BlobOffloadOptions.Container %q is not a container name: 3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit",
			abstractions.ErrInvalidArgument, c)
	}
	return nil
}

func validContainer(name string) bool {
	if len(name) < 3 || len(name) > 63 || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func newOffload(o *BlobOffloadOptions) *engine.OffloadConfig {
	c := &engine.OffloadConfig{Container: o.Container, Threshold: o.ThresholdBytes, Grace: o.CleanupGrace, Cleanup: true}
	if c.Container == "" {
		c.Container = largevalue.DefaultContainer
	}
	if c.Threshold == 0 {
		c.Threshold = largevalue.DefaultThreshold
	}
	switch {
	case c.Grace == NoCleanup:
		c.Cleanup = false
	case c.Grace == 0:
		c.Grace = defaultCleanupGrace
	case c.Grace < 0:
		c.Grace = 0
	}
	return c
}

// BlobOffload returns the account's blob offload settings as in force (defaults filled in),
// or nil when offload is not configured.
func (a *Account) BlobOffload() *BlobOffloadOptions {
	off := a.e.Off
	if off == nil {
		return nil
	}
	o := &BlobOffloadOptions{Container: off.Container, ThresholdBytes: off.Threshold, CleanupGrace: off.Grace}
	switch {
	case !off.Cleanup:
		o.CleanupGrace = NoCleanup
	case off.Grace == 0:
		// A negative grace was set (none beyond the second's resolution); 0 would read
		// back as the five-minute default.
		o.CleanupGrace = -1
	}
	return o
}

// bindFiles sets the file fields of a decoded entity from the reference cells of its row:
// the field's own, or else the first of its aliases' the row holds.
func (s *Store[T]) bindFiles(v *T, row *service.Row) error {
	for _, f := range s.core.Files {
		var name string
		var cell service.Value
		found := false
		for _, name = range engine.FileColumns(f) {
			if cell, found = row.Get(name + largevalue.BlobSuffix); found {
				break
			}
		}
		if !found {
			continue
		}
		ref, ok := largevalue.ParseBlobRef(cell)
		if !ok {
			return &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: "read", Table: s.core.Name, PartitionKey: row.PartitionKey, RowKey: row.RowKey,
				Message: fmt.Sprintf("the cell %s__blob does not hold a blob reference (path, sha256, length, contentType, encoding as JSON); nothing was returned", name)}
		}
		if err := codec.SetFile(v, f, s.core.BindFile(row.PartitionKey, row.RowKey, ref)); err != nil {
			return err
		}
	}
	return nil
}
