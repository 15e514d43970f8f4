package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// Order is the typed row of an order.
type Order struct {
	abstractions.Entity
	Status string
	Cents  int64
}

// Event is the base of every event type: each embeds EventBase, whose pointer method makes
// a pointer to the event an Event.
type Event interface{ Base() *EventBase }

// EventBase holds what every event carries; the change that writes the event fills it in.
type EventBase struct {
	// Order is the id of the order the event is about.
	Order string
	// Seq is the event's position in its tenant's outbox, from 1.
	Seq int64
}

// Base returns the base itself; through embedding, every event type has it.
func (b *EventBase) Base() *EventBase { return b }

// Placed records a new order.
type Placed struct {
	EventBase
	Cents int64
}

// Paid records an order's payment.
type Paid struct{ EventBase }

// Shipped records an order's dispatch.
type Shipped struct {
	EventBase
	Carrier string
}

// RegisterEvents names the event types in reg; the names are what the rows store.
func RegisterEvents(reg *abstractions.TypeRegistry) error {
	return errors.Join(
		abstractions.RegisterType[Placed](reg, "order.placed"),
		abstractions.RegisterType[Paid](reg, "order.paid"),
		abstractions.RegisterType[Shipped](reg, "order.shipped"),
	)
}

// Table is the table orders and their events share.
const Table = "Orders"

// Columns of the outbox's rows.
const (
	// MarkerKey is the row key of a tenant's outbox marker.
	MarkerKey = "outbox"
	// SeqColumn holds the tenant's last sequence number, on the marker.
	SeqColumn = "_Seq"
	// PendingColumn holds the first sequence number not yet published, on the marker.
	PendingColumn = "_Pending"
	// SentColumn marks an event row published.
	SentColumn = "_Sent"
)

// EventKey is the row key of the tenant's event at sequence seq.
func EventKey(seq int64) string { return fmt.Sprintf("evt-%012d", seq) }

// ErrConflict reports a change that lost to another writer (the order or the outbox moved
// on since they were read): nothing was written. Read the order again and retry. It
// matches abstractions.ErrConcurrencyConflict too.
var ErrConflict = fmt.Errorf("outbox: another writer changed the order or its outbox: %w", abstractions.ErrConcurrencyConflict)

// Service changes orders, each change with its event.
type Service struct {
	orders *tables.Store[Order]
	events *tables.PolyStore[Event]
}

// Open wires the service to acct: both stores share table ("" is Table).
func Open(acct *tables.Account, table string) (*Service, error) {
	if table == "" {
		table = Table
	}
	orders, err := tables.For[Order](acct, &tables.StoreOptions{Table: table, SharedTable: true})
	if err != nil {
		return nil, err
	}
	reg := new(abstractions.TypeRegistry)
	if err := RegisterEvents(reg); err != nil {
		return nil, err
	}
	events, err := tables.PolyFor[Event](acct, reg, &tables.StoreOptions{Table: table, SharedTable: true})
	if err != nil {
		return nil, err
	}
	return &Service{orders: orders, events: events}, nil
}

// Orders returns the store of the orders.
func (s *Service) Orders() abstractions.Storage[Order] { return s.orders }

// Events returns the store of the events (and of the outbox markers).
func (s *Service) Events() abstractions.PolyStorage[Event] { return s.events }

// marker reads the tenant's outbox marker: its last sequence number, the first pending
// one, and its ETag ("" when the tenant has none yet).
func marker(ctx context.Context, events abstractions.PolyStorage[Event], tenant string) (seq, pending int64, etag string, err error) {
	m, err := events.One(ctx, abstractions.TableKey{PartitionKey: tenant, RowKey: MarkerKey})
	if errors.Is(err, abstractions.ErrNotFound) {
		return 0, 1, "", nil
	}
	if err != nil {
		return 0, 0, "", err
	}
	seq, ok1 := m.Columns[SeqColumn].(int64)
	pending, ok2 := m.Columns[PendingColumn].(int64)
	if !ok1 || !ok2 {
		return 0, 0, "", fmt.Errorf("outbox: the marker of %q holds no %s or %s: %w", tenant, SeqColumn, PendingColumn, abstractions.ErrIntegrity)
	}
	return seq, pending, m.ETag, nil
}

// Place writes a new order and its Placed event.
func (s *Service) Place(ctx context.Context, tenant, id string, cents int64) (*Order, error) {
	o := &Order{Entity: abstractions.Entity{ID: tenant + "|" + id}, Status: "placed", Cents: cents}
	err := s.change(ctx, tenant, &Placed{Cents: cents}, o, func(tx *tables.Transaction) { s.orders.CreateIn(tx, o) })
	if err != nil {
		return nil, err
	}
	return o, nil
}

// Pay marks the order paid, as it was read (its ETag), and writes its Paid event.
func (s *Service) Pay(ctx context.Context, o *Order) error {
	return s.move(ctx, o, "placed", "paid", &Paid{})
}

// Ship marks the paid order shipped and writes its Shipped event.
func (s *Service) Ship(ctx context.Context, o *Order, carrier string) error {
	return s.move(ctx, o, "paid", "shipped", &Shipped{Carrier: carrier})
}

func (s *Service) move(ctx context.Context, o *Order, from, to string, ev Event) error {
	if o.Status != from {
		return fmt.Errorf("outbox: order %s is %s, not %s: %w", o.ID, o.Status, from, abstractions.ErrInvalidArgument)
	}
	tenant, _ := abstractions.SplitID(o.ID)
	next := *o
	next.Status = to
	err := s.change(ctx, tenant, ev, &next, func(tx *tables.Transaction) {
		s.orders.UpdateIn(tx, &next, abstractions.Strict)
	})
	if err != nil {
		return err
	}
	*o = next
	return nil
}

// change writes the order (with write) and ev as the tenant's next event, moving the
// outbox marker on, in one transaction.
func (s *Service) change(ctx context.Context, tenant string, ev Event, o *Order, write func(*tables.Transaction)) error {
	seq, pending, etag, err := marker(ctx, s.events, tenant)
	if err != nil {
		return err
	}
	seq++
	_, id := abstractions.SplitID(o.ID)
	b := ev.Base()
	b.Order, b.Seq = id, seq
	m := abstractions.Marker[Event](abstractions.TableKey{RowKey: MarkerKey}, map[string]any{SeqColumn: seq, PendingColumn: pending})
	m.IfMatch = etag // "" for a new tenant: the marker is inserted, and a second insert fails
	tx := s.events.Transaction(tenant)
	write(tx)
	s.events.InsertIn(tx, abstractions.PolyWrite[Event]{Key: abstractions.TableKey{RowKey: EventKey(seq)},
		Item: ev, Columns: map[string]any{SentColumn: false}})
	s.events.InsertIn(tx, m)
	err = tx.Commit(ctx)
	if errors.Is(err, abstractions.ErrConcurrencyConflict) || errors.Is(err, abstractions.ErrDuplicateKey) {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}
