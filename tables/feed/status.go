package feed

import (
	"context"
	"fmt"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// Backlog is the state of a table's feed as Status found it.
type Backlog struct {
	// Partitions is the number of partitions the registry marks; Pending the records
	// pending in them; Oldest the time of the oldest of those (zero when none).
	Partitions int
	Pending    int
	Oldest     time.Time
	// DeadPartitions is the number of partitions listed as holding dead letters; Dead the
	// dead letters in them.
	DeadPartitions int
	Dead           int
	// KeptPartitions is the number of partitions listed as holding delivered records kept
	// for a while (RelayOptions.Keep); Kept those records.
	KeptPartitions int
	Kept           int
}

// Status reports the backlog of the feed of the store s. It reads the registry and the
// partitions it lists (keys only): its cost grows with the partitions that have work, not
// with the table. It also records the backlog in the account's metrics. s is a store as
// Enable takes it.
func Status(ctx context.Context, s Store) (Backlog, error) {
	core, err := tableOf(s, "feed.Status")
	if err != nil {
		return Backlog{}, err
	}
	return status(ctx, core)
}

// rowOfAnyType is the type of the stores TableStatus and TableRelay make: rows of any
// columns, never decoded.
type rowOfAnyType struct{ abstractions.Entity }

// tableStore returns the engine table of a store of the table that reads and relays its
// feed whatever the type of its entities; it never writes entities.
func tableStore(acct *tables.Account, table string) (*engine.Table, error) {
	s, err := tables.For[rowOfAnyType](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		return nil, err
	}
	core := engine.Of(s)
	core.EnableFeed(&engine.Feed{})
	return core, nil
}

// TableStatus is Status for a table named by its name, whatever its stores' types.
func TableStatus(ctx context.Context, acct *tables.Account, table string) (Backlog, error) {
	core, err := tableStore(acct, table)
	if err != nil {
		return Backlog{}, err
	}
	return status(ctx, core)
}

// TableRelay is NewRelay for a table named by its name: its records' bodies are cells, as
// for any store. The feed's hold is the default unless hold is set.
func TableRelay(acct *tables.Account, table string, hold time.Duration, opts *RelayOptions) (*Relay, error) {
	core, err := tableStore(acct, table)
	if err != nil {
		return nil, err
	}
	core.Feed.Hold = hold
	return newRelay(core, opts)
}

func status(ctx context.Context, core *engine.Table) (Backlog, error) {
	var b Backlog
	count := func(listing, from, to string, n, parts *int, oldest *time.Time) error {
		var pks []string
		err := core.Scan(ctx, service.Query{Filter: odata.Partition(listing), Select: engine.KeysOnly}, func(r *service.Row) error {
			pks = append(pks, r.RowKey)
			return nil
		})
		if missingTable(err) {
			return nil
		}
		if err != nil {
			return core.Translate("feed status", listing, "", err)
		}
		*parts = len(pks)
		for _, pk := range pks {
			q := service.Query{Filter: odata.Partition(pk) + " and RowKey ge " + service.QuoteString(from) + " and RowKey lt " + service.QuoteString(to), Select: engine.KeysOnly}
			err := core.Scan(ctx, q, func(r *service.Row) error {
				*n++
				if oldest != nil && (oldest.IsZero() || r.Timestamp.Before(*oldest)) {
					*oldest = r.Timestamp
				}
				return nil
			})
			if err != nil {
				return core.Translate("feed status", pk, "", err)
			}
		}
		return nil
	}
	if err := count(feedrow.RegistryPartition, feedrow.RecordPrefix, feedrow.RecordPrefixEnd, &b.Pending, &b.Partitions, &b.Oldest); err != nil {
		return b, err
	}
	if err := count(feedrow.DeadPartition, feedrow.DeadPrefix, feedrow.DeadPrefixEnd, &b.Dead, &b.DeadPartitions, nil); err != nil {
		return b, err
	}
	if err := count(feedrow.KeptPartition, feedrow.DeliveredPrefix, feedrow.DeliveredPrefixEnd, &b.Kept, &b.KeptPartitions, nil); err != nil {
		return b, err
	}
	age := time.Duration(0)
	if !b.Oldest.IsZero() {
		age = max(time.Since(b.Oldest), 0)
	}
	core.Acct.Tel.Meters.FeedBacklog(ctx, core.Name, int64(b.Pending), int64(b.Partitions), age)
	return b, nil
}

// Sweep deletes the delivered records kept longer than RelayOptions.Keep, visiting only the
// partitions listed as holding some, and returns how many it deleted. A relay without Keep
// keeps none, and its Sweep does nothing.
func (r *Relay) Sweep(ctx context.Context) (int, error) {
	if r.o.Keep <= 0 {
		return 0, nil
	}
	var lists []service.Row
	err := r.core.Scan(ctx, service.Query{Filter: odata.Partition(feedrow.KeptPartition)}, func(row *service.Row) error {
		lists = append(lists, row.Clone())
		return nil
	})
	if missingTable(err) {
		return 0, nil
	}
	if err != nil {
		return 0, r.core.Translate("feed sweep", feedrow.KeptPartition, "", err)
	}
	cutoff := feedrow.DeliveredPrefix + fmt.Sprintf("%016x", uint64(time.Now().Add(-r.o.Keep).UnixNano()))
	n := 0
	for _, l := range lists {
		pk := l.RowKey
		var acts []service.Action
		remaining := false
		err := r.core.Scan(ctx, service.Query{Filter: odata.Partition(pk) + " and RowKey ge " + service.QuoteString(feedrow.DeliveredPrefix) +
			" and RowKey lt " + service.QuoteString(feedrow.DeliveredPrefixEnd), Select: engine.KeysOnly}, func(row *service.Row) error {
			if row.RowKey >= cutoff {
				remaining = true
				return nil
			}
			acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: row.RowKey}, IfMatch: service.ETagAny})
			return nil
		})
		if err != nil {
			return n, r.core.Translate("feed sweep", pk, "", err)
		}
		for len(acts) > 0 {
			k := min(len(acts), service.MaxTransactionActions)
			if err := r.send(ctx, acts[:k]); err != nil {
				return n, r.core.TranslateTx("feed sweep", acts[:k], err)
			}
			n += k
			acts = acts[k:]
		}
		if !remaining {
			// On condition of the version read: a relay that kept more meanwhile listed the
			// partition again.
			_, err := r.core.Acct.Tables.Write(ctx, r.core.Name, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: feedrow.KeptPartition, RowKey: pk}, IfMatch: l.ETag})
			if err != nil && !gone(err) {
				return n, r.core.Translate("feed sweep", feedrow.KeptPartition, pk, err)
			}
		}
	}
	return n, nil
}

// Replay moves the dead letters back to the pending records, with their failures reset,
// and returns how many it moved: each is delivered again in its place by key. It marks each
// partition first, as a write does.
func (r *Relay) Replay(ctx context.Context) (int, error) {
	var lists []service.Row
	err := r.core.Scan(ctx, service.Query{Filter: odata.Partition(feedrow.DeadPartition)}, func(row *service.Row) error {
		lists = append(lists, row.Clone())
		return nil
	})
	if missingTable(err) {
		return 0, nil
	}
	if err != nil {
		return 0, r.core.Translate("feed replay", feedrow.DeadPartition, "", err)
	}
	n := 0
	for _, l := range lists {
		pk := l.RowKey
		var dead []service.Row
		err := r.core.Scan(ctx, service.Query{Filter: odata.Partition(pk) + " and RowKey ge " + service.QuoteString(feedrow.DeadPrefix) +
			" and RowKey lt " + service.QuoteString(feedrow.DeadPrefixEnd)}, func(row *service.Row) error {
			dead = append(dead, row.Clone())
			return nil
		})
		if err != nil {
			return n, r.core.Translate("feed replay", pk, "", err)
		}
		if len(dead) > 0 {
			if _, err := r.core.Acct.Tables.Write(ctx, r.core.Name, service.Action{Op: service.OpUpsertMerge, Row: feedrow.Mark(pk, r.core.Acct.Now())}); err != nil {
				return n, r.core.Translate("feed replay", feedrow.RegistryPartition, pk, err)
			}
		}
		for _, d := range dead {
			rec := service.Row{PartitionKey: pk, RowKey: feedrow.RecordKey(d.RowKey)}
			for _, p := range d.Properties {
				if p.Name != feedrow.TriesColumn && p.Name != feedrow.ErrorColumn {
					rec.Properties = append(rec.Properties, p)
				}
			}
			acts := []service.Action{{Op: service.OpUpsertReplace, Row: rec}, {Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: d.RowKey}, IfMatch: d.ETag}}
			if _, err := r.core.Acct.Tables.Transact(ctx, r.core.Name, acts); err != nil && !gone(err) {
				return n, r.core.TranslateTx("feed replay", acts, err)
			}
			n++
		}
		_, err = r.core.Acct.Tables.Write(ctx, r.core.Name, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: feedrow.DeadPartition, RowKey: pk}, IfMatch: l.ETag})
		if err != nil && !gone(err) {
			return n, r.core.Translate("feed replay", feedrow.DeadPartition, pk, err)
		}
	}
	return n, nil
}
