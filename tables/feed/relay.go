package feed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// Handler handles one record. An error, or a panic (recovered and counted), leaves the
// record pending: it is delivered again, and the partition's later records wait for it,
// until RelayOptions.MaxFailures failures move it to the dead letters.
type Handler func(ctx context.Context, r Record) error

// RelayOptions configure a relay. A nil *RelayOptions means the defaults.
type RelayOptions struct {
	// Name names the relay in the leases it holds; "" is a random name. Two relays of one
	// name share their leases: give each process its own.
	Name string
	// Lease is how long a relay holds a partition after it took or renewed the lease (0:
	// 30 seconds); it renews it after each page of records. A relay that stops answering
	// loses its partitions to another once the lease has expired.
	Lease time.Duration
	// PageSize is how many records a relay reads of a partition at once (0: 100; at most
	// 1000).
	PageSize int
	// MaxFailures is how many failed deliveries move a record to the dead letters (0: 5).
	MaxFailures int
	// Keep is how long delivered records are kept (moved to the delivered rows of their
	// partition, which Relay.Sweep deletes once older); 0 deletes each record once
	// delivered.
	Keep time.Duration
	// Parallel is how many partitions a pass works on at once (0: 4). The handler is
	// called from that many goroutines at most, one record at a time per partition.
	Parallel int
	// Poll is how long Run waits after a pass that delivered nothing (0: one second).
	Poll time.Duration
}

// Relay delivers the records of a store's feed. Several relays, in one process or many,
// share the partitions through leases. It is safe for concurrent use: passes of one relay
// running at once (Run, and a Pass of the caller's) divide the partitions between them.
type Relay struct {
	core *engine.Table
	o    RelayOptions
	// mu guards seen: the version of each lease and mark of another relay or writer as
	// this relay first saw it, and when (its own clock): a lease or mark unchanged for the
	// lease or the hold is expired, whatever the clocks of the others say.
	mu   sync.Mutex
	seen map[[2]string]sighting
	// held lists the partitions a pass of this relay works on now: a second pass running
	// at the same time (Run and a Pass of the caller's, say) skips them, since the lease
	// row names the relay, not the pass, and would let both deliver the same records.
	held map[string]bool
}

// enter marks pk as worked on by a pass of this relay, reporting false when another pass
// of it works on pk already.
func (r *Relay) enter(pk string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held[pk] {
		return false
	}
	if r.held == nil {
		r.held = map[string]bool{}
	}
	r.held[pk] = true
	return true
}

func (r *Relay) leave(pk string) {
	r.mu.Lock()
	delete(r.held, pk)
	r.mu.Unlock()
}

type sighting struct {
	etag string
	at   time.Time
}

// unchangedFor reports how long the row pk, rk has been at version etag, as far as this
// relay saw (0 the first time it sees that version).
func (r *Relay) unchangedFor(pk, rk, etag string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := [2]string{pk, rk}
	s, ok := r.seen[k]
	if !ok || s.etag != etag {
		if r.seen == nil || len(r.seen) >= 1<<16 {
			r.seen = map[[2]string]sighting{}
		}
		r.seen[k] = sighting{etag: etag, at: time.Now()}
		return 0
	}
	return time.Since(s.at)
}

func (r *Relay) forget(pk, rk string) {
	r.mu.Lock()
	delete(r.seen, [2]string{pk, rk})
	r.mu.Unlock()
}

// NewRelay returns a relay of the feed of the store s (typed or polymorphic, as Enable
// takes it), refusing a store without a feed. A relay delivers the records of every store
// of the table: they share one feed.
func NewRelay(s Store, opts *RelayOptions) (*Relay, error) {
	core, err := tableOf(s, "feed.NewRelay")
	if err != nil {
		return nil, err
	}
	return newRelay(core, opts)
}

func newRelay(core *engine.Table, opts *RelayOptions) (*Relay, error) {
	o := RelayOptions{}
	if opts != nil {
		o = *opts
	}
	switch {
	case o.Lease < 0 || o.Keep < 0 || o.Poll < 0 || o.PageSize < 0 || o.MaxFailures < 0 || o.Parallel < 0:
		return nil, fmt.Errorf("%w: feed.RelayOptions: a negative value", abstractions.ErrInvalidArgument)
	case o.PageSize > 1000:
		return nil, fmt.Errorf("%w: feed.RelayOptions.PageSize is %d; a query returns at most 1000 rows", abstractions.ErrInvalidArgument, o.PageSize)
	}
	if o.Name == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.Name = "relay-" + hex.EncodeToString(b[:])
	}
	if o.Lease == 0 {
		o.Lease = 30 * time.Second
	}
	if o.PageSize == 0 {
		o.PageSize = 100
	}
	if o.MaxFailures == 0 {
		o.MaxFailures = 5
	}
	if o.Parallel == 0 {
		o.Parallel = 4
	}
	if o.Poll == 0 {
		o.Poll = time.Second
	}
	return &Relay{core: core, o: o}, nil
}

// PassStats is what one pass did.
type PassStats struct {
	Partitions   int // partitions marked in the registry when the pass began
	Visited      int // partitions whose lease the pass held
	Delivered    int // records the handler accepted
	Failed       int // deliveries that failed (errors and panics)
	Panics       int // of which panics
	DeadLettered int // records moved to the dead letters
	Cleared      int // marks cleared: partitions left without pending records
}

func (p *PassStats) add(q PassStats) {
	p.Visited += q.Visited
	p.Delivered += q.Delivered
	p.Failed += q.Failed
	p.Panics += q.Panics
	p.DeadLettered += q.DeadLettered
	p.Cleared += q.Cleared
}

// Run runs passes until ctx ends, waiting RelayOptions.Poll after a pass that delivered
// nothing, and returns ctx's error. A pass that fails is logged and followed by the next.
// With RelayOptions.Keep it also sweeps (Sweep) every half Keep.
func (r *Relay) Run(ctx context.Context, h Handler) error {
	var swept time.Time
	for {
		st, err := r.Pass(ctx, h)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			r.core.Acct.Logger().Warn("unified tables: a feed relay pass failed; the next pass retries", "table", r.core.Name, "error", err)
		}
		if r.o.Keep > 0 && time.Since(swept) >= r.o.Keep/2 {
			swept = time.Now()
			if _, err := r.Sweep(ctx); err != nil && ctx.Err() == nil {
				r.core.Acct.Logger().Warn("unified tables: a feed sweep failed; the next one retries", "table", r.core.Name, "error", err)
			}
		}
		if st.Delivered == 0 {
			t := time.NewTimer(r.o.Poll)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
	}
}

// Pass delivers the records pending when it begins, partition by partition, visiting only
// the partitions the registry marks: it takes each partition's lease (skipping one another
// relay holds), delivers its records in key order, deletes (or, with Keep, moves) each page
// once delivered, and clears the mark once the partition is drained. It returns the first
// error that stopped a partition, after the others are done.
func (r *Relay) Pass(ctx context.Context, h Handler) (PassStats, error) {
	if h == nil {
		return PassStats{}, fmt.Errorf("%w: feed: a nil handler", abstractions.ErrInvalidArgument)
	}
	marks, err := r.marks(ctx)
	if err != nil {
		return PassStats{}, err
	}
	st := PassStats{Partitions: len(marks)}
	var mu sync.Mutex
	var first error
	var oldest time.Time
	pending := 0
	work := make(chan service.Row)
	var wg sync.WaitGroup
	for range min(r.o.Parallel, max(len(marks), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range work {
				ps, seen, at, err := r.partition(ctx, h, m)
				mu.Lock()
				st.add(ps)
				pending += seen
				if !at.IsZero() && (oldest.IsZero() || at.Before(oldest)) {
					oldest = at
				}
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, m := range marks {
		if ctx.Err() != nil {
			break
		}
		work <- m
	}
	close(work)
	wg.Wait()
	age := time.Duration(0)
	if !oldest.IsZero() {
		age = max(time.Since(oldest), 0)
	}
	r.core.Acct.Tel.Meters.FeedBacklog(ctx, r.core.Name, int64(pending), int64(len(marks)), age)
	if first == nil && ctx.Err() != nil {
		first = r.core.Translate("feed relay", "", "", ctx.Err())
	}
	return st, first
}

// marks lists the registry.
func (r *Relay) marks(ctx context.Context) ([]service.Row, error) {
	var out []service.Row
	err := r.core.Scan(ctx, service.Query{Filter: odata.Partition(feedrow.RegistryPartition)}, func(row *service.Row) error {
		out = append(out, row.Clone())
		return nil
	})
	if missingTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, r.core.Translate("feed relay", feedrow.RegistryPartition, "", err)
	}
	return out, nil
}

func missingTable(err error) bool {
	return abstractions.HasStatus(err, http.StatusNotFound, "TableNotFound")
}

// partition delivers the records of the partition the mark m names. It returns what it did,
// how many records it found pending and the time of the oldest.
func (r *Relay) partition(ctx context.Context, h Handler, m service.Row) (st PassStats, seen int, oldest time.Time, err error) {
	pk := m.RowKey
	if !r.enter(pk) {
		return st, 0, time.Time{}, nil
	}
	defer r.leave(pk)
	l, ok, err := r.take(ctx, pk)
	if err != nil || !ok {
		return st, 0, time.Time{}, err
	}
	st.Visited = 1
	defer func() {
		if rerr := r.release(ctx, l); err == nil && rerr != nil {
			err = rerr
		}
	}()
	for {
		recs, err := r.pending(ctx, pk, r.o.PageSize)
		if err != nil {
			return st, seen, oldest, err
		}
		seen += len(recs)
		if len(recs) > 0 && (oldest.IsZero() || recs[0].Timestamp.Before(oldest)) {
			oldest = recs[0].Timestamp
		}
		var done []service.Row
		stopped := false
		for i := range recs {
			if ctx.Err() != nil {
				stopped = true
				break
			}
			rec := &recs[i]
			herr, panicked := deliver(ctx, h, record(rec))
			if herr == nil {
				done = append(done, *rec)
				st.Delivered++
				r.core.Acct.Tel.Meters.FeedDelivered(ctx, r.core.Name, record(rec).Failures > 0)
				continue
			}
			st.Failed++
			if panicked {
				st.Panics++
				r.core.Acct.Logger().Warn("unified tables: a feed handler panicked; the record stays pending", "table", r.core.Name, "error", herr)
			}
			dead, ferr := r.failed(ctx, rec, herr)
			r.core.Acct.Tel.Meters.FeedFailed(ctx, r.core.Name, dead)
			if ferr != nil {
				stopped = true
				err = ferr
				break
			}
			if !dead {
				stopped = true // the partition's later records wait for this one
				break
			}
			st.DeadLettered++
		}
		if len(done) > 0 {
			if rerr := r.renew(ctx, l); rerr != nil {
				if _, lost := rerr.(errLost); lost {
					return st, seen, oldest, nil // delivered, not checkpointed: the new holder delivers them again
				}
				return st, seen, oldest, rerr
			}
			if cerr := r.checkpoint(ctx, pk, done); cerr != nil {
				return st, seen, oldest, cerr
			}
		}
		if err != nil || stopped || ctx.Err() != nil {
			return st, seen, oldest, err
		}
		if len(recs) < r.o.PageSize {
			break
		}
	}
	cleared, err := r.clear(ctx, m)
	if cleared {
		st.Cleared = 1
	}
	return st, seen, oldest, err
}

// deliver calls h, recovering a panic as a failure.
func deliver(ctx context.Context, h Handler, rec Record) (err error, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			err, panicked = fmt.Errorf("feed: the handler panicked: %v", p), true
		}
	}()
	return h(ctx, rec), false
}

// pending reads the first n pending records of pk, in key order.
func (r *Relay) pending(ctx context.Context, pk string, n int) ([]service.Row, error) {
	q := service.Query{Filter: odata.Partition(pk) + " and RowKey ge " + service.QuoteString(feedrow.RecordPrefix) +
		" and RowKey lt " + service.QuoteString(feedrow.RecordPrefixEnd), Top: n}
	var out []service.Row
	if r.core.Acct.Unordered() {
		// The service returns rows in no key order: the first records are those of the
		// whole range, sorted.
		rows, err := r.core.SortedRange(ctx, "feed relay", pk, q, true)
		if missingTable(err) {
			return nil, nil
		}
		return rows[:min(n, len(rows))], err
	}
	for {
		page, err := r.core.Acct.Tables.Query(ctx, r.core.Name, q)
		if missingTable(err) {
			return nil, nil
		}
		if err != nil {
			return nil, r.core.Translate("feed relay", pk, "", err)
		}
		for i := range page.Rows {
			if len(out) < n {
				out = append(out, page.Rows[i].Clone())
			}
		}
		if len(out) >= n || page.Next == nil {
			return out, nil
		}
		q.Continuation = page.Next
	}
}
