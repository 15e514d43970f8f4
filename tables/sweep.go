package tables

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// Sweeping orphans.
//
// Lost races, crashes, failed deletes and blobs younger than the cleanup grace leave blobs no
// row references. The sweep finds them: it takes one cutoff from the blob service's clock,
// lists the blobs under a partition's prefix ({table}/{pk}/), reads the partition's rows
// once to learn which blobs they reference, and deletes each blob that no row references
// and that was last written before the cutoff, on condition of the ETag it was listed with
// (a write that reuses an old orphan touches it first, so the delete fails and the blob
// stays). Only names of the exact offload shape ({table}/{pk}/{rk}/{column}/{64 lower-case
// hexadecimal digits}) are ever deleted.

// SweepOrphanBlobs deletes the orphan blobs of the given partitions, or of every partition
// of the table that has blobs when none is given, and returns how many it deleted. A blob is
// an orphan when no row of its partition references it and it was last written more than
// olderThan ago, on the blob service's clock (one cutoff for the whole call). olderThan must
// exceed the longest write (from a blob's upload to its row's commit): a younger blob may
// belong to a write in flight.
//
// Each partition key is checked and normalised as List's is (see
// abstractions.NormalizePartition), so it names the partition the ids that start with it are
// stored in; one that is empty (once normalised too) or holds "|" is refused with
// ErrInvalidKey. Without partitions, they are listed from the blob container. A store
// without blob offload, or of a type with no large value, fails with ErrNotSupported; a
// negative olderThan with ErrInvalidArgument. Nothing is sent before these checks pass.
//
// A blob that cannot be deleted, or a partition that cannot be swept, does not stop the
// others: the error then joins every failure (errors.Join), and the count still says what
// was deleted.
func (s *Store[T]) SweepOrphanBlobs(ctx context.Context, olderThan time.Duration, partitions ...string) (n int, err error) {
	const op = "sweep orphan blobs"
	ctx, c := s.core.Begin(ctx, op)
	defer c.Finish(&err)
	if err := s.core.CheckSweep(op, olderThan); err != nil {
		return 0, err
	}
	pks := make([]string, len(partitions))
	for i, p := range partitions {
		if pks[i], err = s.core.CheckPartition(op, p); err != nil {
			return 0, err
		}
	}
	cut := engine.Cutoff(s.core.Acct.ServiceNow(ctx), olderThan)
	var fails []error
	sweep := func(pk string) bool {
		m, err := s.core.SweepPartition(ctx, pk, cut)
		n += m
		if err != nil {
			fails = append(fails, err)
		}
		if ctx.Err() != nil {
			if err == nil { // a partition cut short says so itself
				fails = append(fails, s.core.Translate(op, "", "", ctx.Err()))
			}
			return false
		}
		return true
	}
	if len(partitions) > 0 {
		for _, pk := range pks {
			if !sweep(pk) {
				break
			}
		}
		return n, errors.Join(fails...)
	}
	prefix := largevalue.TableBlobPrefix(s.core.Name)
	marker := ""
	for {
		page, err := s.core.Acct.Blobs.List(ctx, s.core.Acct.Off.Container, service.ListOptions{Prefix: prefix, Delimiter: "/", Marker: marker})
		if abstractions.HasStatus(err, http.StatusNotFound, "ContainerNotFound") {
			break
		}
		if err != nil {
			fails = append(fails, s.core.Translate(op, "", "", err))
			break
		}
		for _, p := range page.Prefixes {
			seg := strings.TrimSuffix(strings.TrimPrefix(p, prefix), "/")
			pk, ok := largevalue.UnescapeSegment(seg)
			if !ok {
				continue // not a partition of the offload shape
			}
			if !sweep(pk) {
				return n, errors.Join(fails...)
			}
		}
		if page.NextMarker == "" {
			break
		}
		marker = page.NextMarker
	}
	return n, errors.Join(fails...)
}

// An OrphanSweeper sweeps the orphan blobs of one store's table: *Store of a type with large
// values, on an account with blob offload, is one.
type OrphanSweeper interface {
	SweepOrphanBlobs(ctx context.Context, olderThan time.Duration, partitions ...string) (int, error)
	Table() string
}

// SweepOptions configure RunOrphanSweep. A nil *SweepOptions, like the zero value, means the
// defaults.
type SweepOptions struct {
	// Interval is the pause between the end of one round and the start of the next; 0
	// means one hour.
	Interval time.Duration
	// OlderThan is the age a blob must have to be swept; it must exceed the longest write.
	// 0 means one hour.
	OlderThan time.Duration
	// InitialDelay is the pause before the first round; 0 means one minute, and a negative
	// value none.
	InitialDelay time.Duration
	// Logger receives each round's failures (at Error) and counts (at Debug); nil means
	// slog.Default().
	Logger *slog.Logger
}

// RunOrphanSweep sweeps the tables of the given stores on a schedule until ctx ends: after
// InitialDelay, a table-wide sweep of each store in turn, then a pause of Interval, and so
// on. A store whose sweep fails is logged at Error and tried again next round; the others
// still run. A store that cannot sweep (no blob offload, no large value) is logged once at
// Info and skipped. It starts no goroutine and returns ctx's error when ctx ends (the round
// in progress is cancelled). Out-of-range options (a negative Interval or OlderThan) fail
// with ErrInvalidArgument before anything runs. Every process that runs it sweeps:
// concurrent sweeps are safe (each delete is conditional) but redundant.
func RunOrphanSweep(ctx context.Context, opts *SweepOptions, stores ...OrphanSweeper) error {
	o := SweepOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Interval < 0 || o.OlderThan < 0 {
		return fmt.Errorf("%w: SweepOptions.Interval and OlderThan must not be negative", abstractions.ErrInvalidArgument)
	}
	if o.Interval == 0 {
		o.Interval = time.Hour
	}
	if o.OlderThan == 0 {
		o.OlderThan = time.Hour
	}
	switch {
	case o.InitialDelay == 0:
		o.InitialDelay = time.Minute
	case o.InitialDelay < 0:
		o.InitialDelay = 0
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	if len(stores) == 0 {
		log.Info("unified tables: the orphan blob sweep has no store to sweep")
	}
	skipped := map[int]bool{}
	wait := o.InitialDelay
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		for i, st := range stores {
			if skipped[i] {
				continue
			}
			n, err := st.SweepOrphanBlobs(ctx, o.OlderThan)
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case errors.Is(err, abstractions.ErrNotSupported):
				skipped[i] = true
				log.Info("unified tables: the orphan blob sweep skips a store that stores no blobs", "table", st.Table(), "reason", err.Error())
			case err != nil:
				log.Error("unified tables: the orphan blob sweep failed; it runs again next round", "table", st.Table(), "deleted", n, "error", err.Error())
			default:
				log.Debug("unified tables: orphan blob sweep", "table", st.Table(), "deleted", n)
			}
		}
		wait = o.Interval
	}
}
