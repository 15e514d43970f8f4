// Change records of a store with a feed (package tables/feed): the record of each write in
// the write's transaction, and the mark in the registry that a write sends before it.

package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/internal/indexrow"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// Feed is the change feed of a store: set once, before the store's first write (package
// tables/feed, Enable). A store with a feed writes through the unit path, so every write
// reads what it needs of the stored row and sends its record in its transaction.
type Feed struct {
	// Body: a record carries the cells its write stored (a delete's carries none).
	Body bool
	// Hold is how long a relay leaves a mark after it was written, at least; a writer
	// marks again when its last mark of the partition is older than half of it, so that its
	// transaction reaches the service while the mark stands.
	Hold time.Duration

	mu     sync.Mutex
	marked map[string]time.Time // partition → the local time before its last mark was sent
}

const maxMarked = 4096

// DefaultHold is Feed.Hold when it is zero.
const DefaultHold = time.Minute

func (f *Feed) hold() time.Duration {
	if f.Hold > 0 {
		return f.Hold
	}
	return DefaultHold
}

// EnableFeed gives the store the feed f: its reads before a write learn the stored row's
// last record, its queries leave records out.
func (s *Table) EnableFeed(f *Feed) {
	s.Feed = f
	switch {
	case s.Split && s.StateSel == nil: // the whole row
	case s.StateSel == nil:
		s.StateSel = []string{indexrow.Column, feedrow.SeqColumn, feedrow.VerColumn}
	default:
		s.StateSel = append(s.StateSel[:len(s.StateSel):len(s.StateSel)], feedrow.SeqColumn, feedrow.VerColumn)
	}
}

// MarkFeed marks the partition pk in the feed's registry, unless this process marked it less
// than half the hold ago. It is sent before every write of a store with a feed, so that a
// record is never without its mark; a mark without a record is harmless (a relay finds
// nothing and clears it).
func (s *Table) MarkFeed(ctx context.Context, op, pk string) error {
	return MarkFeeds(ctx, op, pk, s)
}

// MarkFeeds is MarkFeed for a write that carries records of several stores of one table (a
// shared-table transaction): one mark, sent when any of the stores has not marked pk for
// half its hold, serves them all, and each remembers it.
func MarkFeeds(ctx context.Context, op, pk string, fed ...*Table) error {
	before := time.Now()
	var sender *Table
	for _, s := range fed {
		if s != nil && s.Feed != nil && s.Feed.stale(pk, before) {
			sender = s
			break
		}
	}
	if sender == nil {
		return nil
	}
	_, err := sender.Acct.Tables.Write(ctx, sender.Name, service.Action{Op: service.OpUpsertMerge, Row: feedrow.Mark(pk, sender.Acct.Now())})
	if err != nil {
		return sender.Translate(op, pk, "", err)
	}
	for _, s := range fed {
		if s != nil && s.Feed != nil {
			s.Feed.remember(pk, before)
		}
	}
	return nil
}

// stale reports whether this process last marked pk more than half the hold before now, or
// never.
func (f *Feed) stale(pk string, now time.Time) bool {
	f.mu.Lock()
	at, ok := f.marked[pk]
	f.mu.Unlock()
	return !ok || now.Sub(at) >= f.hold()/2
}

// remember notes that a mark of pk was sent after the local time at.
func (f *Feed) remember(pk string, at time.Time) {
	f.mu.Lock()
	if f.marked == nil || len(f.marked) >= maxMarked {
		f.marked = map[string]time.Time{}
	}
	f.marked[pk] = at
	f.mu.Unlock()
}

// TxHandle carries to package tables/feed a transaction's way to take an application
// event as a record of a store's feed: tables.Transaction embeds it through an unexported
// alias, as a store embeds Handle.
type TxHandle struct {
	publish func(s *Table, typ string, data []byte)
}

// NewTxHandle returns the handle of a transaction whose publish adds an event.
func NewTxHandle(publish func(s *Table, typ string, data []byte)) TxHandle {
	return TxHandle{publish}
}

func (h TxHandle) feedPublish() func(s *Table, typ string, data []byte) { return h.publish }

// TxHolder is a value that embeds a TxHandle: a transaction.
type TxHolder interface {
	feedPublish() func(s *Table, typ string, data []byte)
}

// Publish adds the event typ, data of the store s's feed to the transaction h.
func Publish(h TxHolder, s *Table, typ string, data []byte) { h.feedPublish()(s, typ, data) }

// ForgetMark makes the next write of pk mark it again (a relay cleared it).
func (f *Feed) ForgetMark(pk string) {
	f.mu.Lock()
	delete(f.marked, pk)
	f.mu.Unlock()
}

// FeedKind is the kind of change a unit write of mode reports.
func FeedKind(mode WriteMode) feedrow.Kind {
	switch mode {
	case ModeCreate:
		return feedrow.Created
	case ModeUpsert:
		return feedrow.Upserted
	}
	return feedrow.Updated
}

// FeedRecord sets, on main (the action writing an entity's main row, or nil for a delete),
// the key and change number of the entity's new record, and returns the record's insert.
// st is what the write knows of the stored row; body the cells a record carries with
// Feed.Body.
func (s *Table) FeedRecord(pk, rk string, kind feedrow.Kind, st *Stored, main *service.Action) service.Action {
	f := s.Feed
	ver := int64(1)
	var after int64
	if st.Found {
		ver, after = st.FeedVer+1, st.FeedSeq
	}
	key := feedrow.Key(s.Acct.feedClock.Next(s.Acct.Clock(), after))
	var body []service.Property
	if main != nil {
		if f.Body {
			body = withoutIndexCells(main.Row.Properties)
		}
		main.Row.Properties = feedrow.MainCells(main.Row.Properties, key, ver)
	}
	return service.Action{Op: service.OpInsert, Row: feedrow.Record(pk, key, rk, kind, ver, body)}
}

func withoutIndexCells(props []service.Property) []service.Property {
	out := make([]service.Property, 0, len(props))
	for _, p := range props {
		if p.Name != indexrow.Column {
			out = append(out, p)
		}
	}
	return out
}

// EventRecord returns the insert of an application event's record in pk (an outbox event
// written in a transaction), refusing data larger than a binary cell and a long type.
func (s *Table) EventRecord(pk, typ string, data []byte) (service.Action, error) {
	if len(data) > service.MaxBinaryBytes {
		return service.Action{}, &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "transaction", Table: s.Name, PartitionKey: pk,
			Message: fmt.Sprintf("the event %q carries %d bytes; an event's data is one binary cell, at most %d bytes; nothing was sent", typ, len(data), service.MaxBinaryBytes)}
	}
	if n := service.UTF16Len(typ); n > 256 {
		return service.Action{}, &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "transaction", Table: s.Name, PartitionKey: pk,
			Message: fmt.Sprintf("the event's type is %d UTF-16 code units long; name it in at most 256; nothing was sent", n)}
	}
	key := feedrow.Key(s.Acct.feedClock.Next(s.Acct.Clock(), 0))
	row := feedrow.EventRecord(pk, key, typ, data)
	return service.Action{Op: service.OpInsert, Row: row}, nil
}

// FeedFit refuses, naming the entity, a write whose rows the record's cells make larger
// than the service's row limit.
func (s *Table) FeedFit(op, pk, rk string, acts []service.Action) error {
	if s.Feed == nil {
		return nil
	}
	for i := range acts {
		a := &acts[i]
		if a.Op == service.OpDelete {
			continue
		}
		if size := service.EntitySizeOn(s.Acct.Cfg.Product, a.Row.PartitionKey, a.Row.RowKey, a.Row.Properties); size > service.MaxEntityBytes {
			what := "the entity's main row with its feed cells"
			if feedrow.IsRecord(a.Row.RowKey) {
				what = "the entity's change record (it carries the entity: feed.Options.Body)"
			}
			return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk,
				Message: fmt.Sprintf("%s would be %d bytes, more than the service's %d for one row; store less in the entity or leave the body out of its records; nothing was sent",
					what, size, service.MaxEntityBytes)}
		}
	}
	return nil
}

// DeletePartitionFed deletes the entities of a partition of a store with a feed one by one,
// each with its rows and its record (DeleteLarge), so that the feed reports every delete.
// Pending records and dead letters stay for the relays. It returns the number deleted.
func (s *Table) DeletePartitionFed(ctx context.Context, pk string) (int, error) {
	const op = "delete partition"
	var rks []string
	err := s.Scan(ctx, service.Query{Filter: s.EntityFilter(odata.Partition(pk)), Select: s.SharedSel(OfOnly)}, func(r *service.Row) error {
		if !largevalue.IsContinuation(r) && !s.Foreign(r) {
			rks = append(rks, r.RowKey)
		}
		return nil
	})
	if err != nil {
		return 0, s.Translate(op, pk, "", err)
	}
	n := 0
	for _, rk := range rks {
		ok, err := s.DeleteLarge(ctx, pk, rk, "")
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	if s.Split {
		s.CleanupPartition(ctx, pk)
	}
	return n, nil
}
