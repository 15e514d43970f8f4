package eventstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// HeadKey is the row key of an aggregate's marker row.
const HeadKey = "head"

// VersionColumn is the system column of the marker row that holds the current version.
const VersionColumn = "_Version"

// MaxAppend is the most events one Append writes: with the head, they fill one entity-group
// transaction, which is what makes the append all or nothing.
const MaxAppend = 99

// ErrConflict reports an append that lost to another writer: the aggregate is no longer at
// the version the caller expected. Load again, decide again, and retry. It matches
// abstractions.ErrConcurrencyConflict too.
var ErrConflict = fmt.Errorf("eventstore: the aggregate moved on: %w", abstractions.ErrConcurrencyConflict)

// Store appends and loads the event streams of accounts.
type Store struct {
	rows abstractions.PolyStorage[Event]
}

// New returns a store over a polymorphic table of Events, such as Rows returns.
func New(rows abstractions.PolyStorage[Event]) *Store { return &Store{rows: rows} }

// EventsTable is the table the events are kept in.
const EventsTable = "Events"

// Rows returns the polymorphic store of the events in acct: the one place it is wired (the
// event names of RegisterEvents, the table), for an Azure account and an in-memory one alike
// (inmemory.NewAccount returns the same *tables.Account), so both write the same
// discriminators. table names the table; "" is EventsTable, and tests that share one
// emulator pass a table of their own.
func Rows(acct *tables.Account, table string) (*tables.PolyStore[Event], error) {
	reg := new(abstractions.TypeRegistry)
	if err := RegisterEvents(reg); err != nil {
		return nil, err
	}
	if table == "" {
		table = EventsTable
	}
	return tables.PolyFor[Event](acct, reg, &tables.StoreOptions{Table: table})
}

// VersionKey is the row key of the event at version v.
func VersionKey(v int64) string { return fmt.Sprintf("%09d", v) }

// Version returns the account's current version and the head's ETag ("" and 0 for an
// account with no events).
func (s *Store) Version(ctx context.Context, account string) (int64, string, error) {
	head, err := s.rows.One(ctx, abstractions.TableKey{PartitionKey: account, RowKey: HeadKey})
	if errors.Is(err, abstractions.ErrNotFound) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	v, ok := head.Columns[VersionColumn].(int64)
	if !ok {
		return 0, "", fmt.Errorf("eventstore: the head of %q holds no %s: %w", account, VersionColumn, abstractions.ErrIntegrity)
	}
	return v, head.ETag, nil
}

// Append writes events after version expected of the account and returns the new version.
// It fills in each event's Account and Version. When the account is not at expected, or
// another writer appends first, nothing is written and the error matches ErrConflict.
// Empty appends, and more than MaxAppend events, are refused with
// abstractions.ErrInvalidArgument.
func (s *Store) Append(ctx context.Context, account string, expected int64, events ...Event) (int64, error) {
	if len(events) == 0 || len(events) > MaxAppend {
		return 0, fmt.Errorf("eventstore: append 1 to %d events at a time, not %d: %w", MaxAppend, len(events), abstractions.ErrInvalidArgument)
	}
	current, etag, err := s.Version(ctx, account)
	if err != nil {
		return 0, err
	}
	if current != expected {
		return 0, fmt.Errorf("%w (%q is at version %d, not %d)", ErrConflict, account, current, expected)
	}
	next := expected + int64(len(events))
	// The head goes first: when another writer got there first, its condition is what
	// fails, whatever the events are.
	head := abstractions.Marker[Event](abstractions.TableKey{PartitionKey: account, RowKey: HeadKey},
		map[string]any{VersionColumn: next})
	head.IfMatch = etag // "" for a new account: the head is inserted, and a second insert fails
	writes := []abstractions.PolyWrite[Event]{head}
	for i, ev := range events {
		b := ev.Base()
		b.Account, b.Version = account, expected+int64(i)+1
		writes = append(writes, abstractions.PolyWrite[Event]{
			Key: abstractions.TableKey{PartitionKey: account, RowKey: VersionKey(b.Version)}, Item: ev})
	}
	err = s.rows.InsertBatch(ctx, writes)
	if errors.Is(err, abstractions.ErrConcurrencyConflict) || errors.Is(err, abstractions.ErrDuplicateKey) {
		return 0, fmt.Errorf("%w (%q moved past version %d): %w", ErrConflict, account, expected, err)
	}
	if err != nil {
		return 0, err
	}
	return next, nil
}

// Load returns the account's events in version order and its current version.
func (s *Store) Load(ctx context.Context, account string) ([]Event, int64, error) {
	entries, err := s.rows.List(ctx, account)
	if err != nil {
		return nil, 0, err
	}
	var events []Event
	var version int64
	for _, e := range entries {
		if e.IsMarker() {
			if e.Key.RowKey == HeadKey {
				version, _ = e.Columns[VersionColumn].(int64)
			}
			continue
		}
		events = append(events, e.Item)
	}
	if int64(len(events)) != version {
		return nil, 0, fmt.Errorf("eventstore: %q holds %d events but its head says %d: %w", account, len(events), version, abstractions.ErrIntegrity)
	}
	return events, version, nil
}
