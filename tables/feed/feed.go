// Package feed is a change feed of a table's stores: each write of a store with a feed
// appends a change record to the entity's partition in the write's own entity-group
// transaction, and relays deliver the records to a handler, at least once, in each entity's
// order, visiting only the partitions that have records pending.
//
// [Enable] gives a store its feed, before the store's first use; [Publish] adds an
// application event (the outbox) to a transaction as a record of the same feed; [NewRelay]
// returns a relay, whose [Relay.Pass] delivers what is pending once and [Relay.Run] until
// its context ends; [Status] reports the backlog.
//
// What this package owns: the relay's protocol (the registry of partitions with pending
// records, leases, delivery, retention, dead letters) and the records as handlers see them.
// The record rows and the registry's layout are package tables/internal/feedrow's; writing
// a record in its entity's transaction is the engine's (tables/internal/engine, feed.go).
// See docs/change-feed.md for the guarantees, what a crash at each step leaves, and the
// costs.
//
// Refused: a feed on a store that has one already, a record body on a split-aware type
// (its values may live in other rows), a relay of a store without a feed, and a write whose
// record would not fit the service's limits with it (naming the entity; nothing is sent).
package feed

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/service"
)

// Options configure a store's feed. A nil *Options means the defaults.
type Options struct {
	// Body makes each record carry the cells its write stored (a patch's record: the cells
	// the patch set; a delete's: none). Without it a record names the entity, the kind of
	// change and the entity's change number, and the handler reads the entity if it needs it.
	Body bool
	// Hold is how long a mark in the registry stands at least once written (0: one minute).
	// A writer marks a partition before its first write and again when its last mark of the
	// partition is older than half the hold, so a write costs one extra request only that
	// often; a relay leaves younger marks in place. It must be the same for every process
	// that writes or relays the table, and longer than twice the time a request can take to
	// reach the service.
	Hold time.Duration
}

// Kind is the kind of change a record reports: a string, one of "created", "upserted",
// "updated", "patched", "deleted" and "event" (the constants below).
type Kind = feedrow.Kind

// The kinds of change: the store's verb that wrote the record (an outcome verb reports the
// verb it used), or an application event.
const (
	Created  = feedrow.Created
	Upserted = feedrow.Upserted
	Updated  = feedrow.Updated
	Patched  = feedrow.Patched
	Deleted  = feedrow.Deleted
	Event    = feedrow.Event
)

// Store is a store as the functions of this package take it: a typed store (a
// *tables.Store[T] of tables.For), a polymorphic one (a *tables.PolyStore[B] of
// tables.PolyFor), or a value that embeds one. Its methods are unexported: only the stores
// of package tables implement it.
type Store = engine.Holder

// Enable gives the store s a change feed. s is a typed store (a *tables.Store[T] of
// tables.For) or a polymorphic one (a *tables.PolyStore[B] of tables.PolyFor), or a value
// that embeds one; the functions of this package that take a store take either. From now
// on each write of s appends a record in the write's transaction: for a typed store Create,
// Upsert, Update, Patch, Delete, the outcome verbs, CreateBatch, UpsertBatch,
// DeletePartition, DeleteWhere and the writes it joins to a Transaction; for a polymorphic
// store Insert, Upsert, InsertBatch, UpsertBatch, MergeColumns (a patch), Delete, and
// InsertIn and UpsertIn. Call it once, before the store's first use, for every store of the
// table in every process: a store without the feed writes no records. A store with a feed
// writes through the path indexed stores use: a write that may replace a row reads it
// first.
func Enable(s Store, opts *Options) error {
	core, err := coreOf(s, "feed.Enable")
	if err != nil {
		return err
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	switch {
	case core.Feed != nil:
		return fmt.Errorf("%w: the store of table %s has a feed already; enable it once", abstractions.ErrInvalidArgument, core.Name)
	case o.Body && core.Split:
		return fmt.Errorf("%w: %v is split-aware (a split or offload option): its values may live in continuation rows or blobs, which a record cannot carry; enable the feed without Body",
			abstractions.ErrNotSupported, core.Plan.Type())
	case o.Hold < 0:
		return fmt.Errorf("%w: feed.Options.Hold is negative", abstractions.ErrInvalidArgument)
	}
	core.EnableFeed(&engine.Feed{Body: o.Body, Hold: o.Hold})
	return nil
}

// Publish adds the application event typ with its payload data to tx as a record of the
// feed of the store s (an outbox event): it is written with the transaction's other writes
// or not at all, and relays deliver it with the partition's other records (Kind Event, Type
// and Data set). A store without a feed, and an event larger than a row, are refused by
// Commit. s is a store as Enable takes it.
func Publish(tx *tables.Transaction, s Store, typ string, data []byte) {
	core, err := coreOf(s, "feed.Publish")
	if tx == nil || err != nil {
		return
	}
	engine.Publish(tx, core, typ, data)
}

// Record is one change record as a handler receives it.
type Record struct {
	// ID is the record's stable id, the same at every delivery: the partition and the
	// record's row key as an id ("partition|~fd.r.…"). A consumer deduplicates by it.
	ID string
	// Partition is the partition of the record and of its entity.
	Partition string
	// Entity is the id of the entity the write changed; "" for an event.
	Entity string
	// Kind is what the write did.
	Kind Kind
	// Version is the entity's change number: 1 for its first write (and the first after
	// a delete), then one more for each write. 0 for an event.
	Version int64
	// At is when the record was written, by the service's clock.
	At time.Time
	// Type and Data are an event's (Publish).
	Type string
	Data []byte
	// Body holds the cells the write stored when the feed carries bodies (Options.Body):
	// column name to value (string, []byte, bool, int32, int64, float64, time.Time, or a GUID as
	// abstractions.GUID).
	Body map[string]any
	// Failures counts the failed deliveries of this record so far (0 at the first).
	Failures int
}

// record returns the Record of a record row.
func record(r *service.Row) Record {
	rec := Record{ID: r.PartitionKey + abstractions.IDSeparator + r.RowKey, Partition: r.PartitionKey, At: r.Timestamp}
	for _, p := range r.Properties {
		switch p.Name {
		case feedrow.EntityColumn:
			if s := p.Value.Str(); s != "" {
				rec.Entity = r.PartitionKey + abstractions.IDSeparator + s
			}
		case feedrow.KindColumn:
			rec.Kind = Kind(p.Value.Str())
		case feedrow.VersionColumn:
			rec.Version = p.Value.Int64()
		case feedrow.TypeColumn:
			rec.Type = p.Value.Str()
		case feedrow.DataColumn:
			rec.Data = p.Value.Bytes()
		case feedrow.TriesColumn:
			rec.Failures = int(p.Value.Int64())
		case feedrow.ErrorColumn:
		default:
			if strings.HasPrefix(p.Name, "_Fd") {
				continue
			}
			if rec.Body == nil {
				rec.Body = map[string]any{}
			}
			rec.Body[p.Name] = engine.GoValue(p.Value)
		}
	}
	return rec
}

// coreOf returns the engine table of the store s, refusing a nil one.
func coreOf(s engine.Holder, what string) (*engine.Table, error) {
	if s != nil {
		if v := reflect.ValueOf(s); v.Kind() != reflect.Pointer || !v.IsNil() {
			if core := engine.Of(s); core != nil {
				return core, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %s of a nil store (make stores with tables.For or tables.PolyFor)", abstractions.ErrInvalidArgument, what)
}

// tableOf returns the engine table of the store s, refusing a nil one and one without a
// feed.
func tableOf(s engine.Holder, what string) (*engine.Table, error) {
	core, err := coreOf(s, what)
	if err != nil {
		return nil, err
	}
	if core.Feed == nil {
		return nil, fmt.Errorf("%w: %s: the store of table %s has no change feed; call feed.Enable on it first", abstractions.ErrInvalidArgument, what, core.Name)
	}
	return core, nil
}
