// Package domain is the business side of the example shop: orders, the repository contract
// they are stored through, and the service that places, changes, ships and cancels them.
// It depends on the abstractions module only; the host chooses the backend.
package domain

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
)

// Status is where an order is in its life.
type Status string

// The statuses of an order.
const (
	Placed    Status = "placed"
	Shipped   Status = "shipped"
	Cancelled Status = "cancelled"
)

// Order is one customer's order. Its id is "customer|order", so the orders of a customer
// share a partition and list together.
type Order struct {
	abstractions.Entity
	Lines  []Line // stored as JSON in one column
	Status Status
	// TotalCents is the sum of the lines, in cents so that sums are exact.
	TotalCents int64
}

// Line is one article of an order.
type Line struct {
	SKU        string
	Quantity   int
	PriceCents int64
}

// OrderRows is what changing one order needs of the repository: the four methods the
// outcome verbs (abstractions.Mutate, TryTransition) call, declared here in the domain's
// words (abstractions.ReadWriter[Order] names the same four). A store of either backend has
// them, and so does a short fake.
type OrderRows interface {
	Table() string
	One(ctx context.Context, id string) (*Order, error)
	Create(ctx context.Context, o *Order) error
	Update(ctx context.Context, o *Order, mode abstractions.ConcurrencyMode) error
}

// Orders is the repository contract the service needs: OrderRows, and List for a
// customer's orders. It is the part of abstractions.Storage[Order] the service uses.
type Orders interface {
	OrderRows
	List(ctx context.Context, partition string) ([]*Order, error)
}

var _ Orders = abstractions.Storage[Order](nil)

// Errors of the service. Storage failures are returned as they are, wrapped, so callers can
// still match abstractions' sentinels.
var (
	// ErrInvalidOrder reports an order the service refuses to place.
	ErrInvalidOrder = errors.New("shop: invalid order")
	// ErrNoSuchOrder reports an id that names no order.
	ErrNoSuchOrder = errors.New("shop: no such order")
	// ErrWrongStatus reports a transition the order's status does not allow.
	ErrWrongStatus = errors.New("shop: wrong status")
)

// maxAttempts bounds the read-modify-write retries of a status change that keeps losing
// races.
const maxAttempts = 5

// Service places, changes and moves orders.
type Service struct {
	orders Orders
	newID  func() string
}

// NewService returns the service over a store of orders, as tables.For returns it, or any
// other value with the methods of Orders.
func NewService(orders Orders) *Service {
	return &Service{orders: orders, newID: randomID}
}

// WithIDs makes the service name new orders with newID instead of random ids; tests use it
// for stable ids.
func (s *Service) WithIDs(newID func() string) *Service {
	s.newID = newID
	return s
}

// Place stores a new order of the customer and returns it. It refuses an empty customer id,
// no lines, and lines without a SKU, with a quantity below one or a negative price.
func (s *Service) Place(ctx context.Context, customerID string, lines []Line) (*Order, error) {
	if customerID == "" {
		return nil, fmt.Errorf("%w: the customer id is empty", ErrInvalidOrder)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%w: the order has no lines", ErrInvalidOrder)
	}
	var total int64
	for i, l := range lines {
		if err := checkLine(i+1, l); err != nil {
			return nil, err
		}
		total += int64(l.Quantity) * l.PriceCents
	}
	id, err := abstractions.CombineID(customerID, s.newID())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidOrder, err)
	}
	o := &Order{
		Entity:     abstractions.Entity{ID: id},
		Lines:      append([]Line(nil), lines...),
		Status:     Placed,
		TotalCents: total,
	}
	if err := s.orders.Create(ctx, o); err != nil {
		return nil, fmt.Errorf("placing an order of %s: %w", customerID, err)
	}
	return o, nil
}

// checkLine refuses line number n without a SKU, with a quantity below one or a negative
// price.
func checkLine(n int, l Line) error {
	if l.SKU == "" || l.Quantity < 1 || l.PriceCents < 0 {
		return fmt.Errorf("%w: line %d needs a SKU, a quantity of at least 1 and a price of at least 0", ErrInvalidOrder, n)
	}
	return nil
}

// AddLine adds a line to a placed order and returns the order as stored. It refuses the
// lines Place refuses, and an order that is no longer placed with ErrWrongStatus.
func (s *Service) AddLine(ctx context.Context, id string, l Line) (*Order, error) {
	return addLine(ctx, s.orders, id, l)
}

// addLine adds l to the order with Mutate, which reads the order, applies the change and
// writes it on condition of the version read, again after a lost race: lines added at once
// all land, and the total stays their sum.
func addLine(ctx context.Context, orders OrderRows, id string, l Line) (*Order, error) {
	if err := checkLine(1, l); err != nil {
		return nil, err
	}
	o, err := abstractions.Mutate(ctx, orders, id, func(o *Order) error {
		if o.Status != Placed {
			return fmt.Errorf("%w: order %s is %s, not %s", ErrWrongStatus, id, o.Status, Placed)
		}
		o.Lines = append(o.Lines, l)
		o.TotalCents += int64(l.Quantity) * l.PriceCents
		return nil
	}, &abstractions.RetryOptions{Attempts: maxAttempts})
	switch {
	case errors.Is(err, abstractions.ErrNotFound):
		return nil, fmt.Errorf("%w: %s", ErrNoSuchOrder, id)
	case err != nil:
		return nil, fmt.Errorf("adding a line to order %s: %w", id, err)
	}
	return o, nil
}

// Ship marks a placed order shipped.
func (s *Service) Ship(ctx context.Context, id string) (*Order, error) {
	return move(ctx, s.orders, id, Placed, Shipped)
}

// Cancel marks a placed order cancelled; a shipped order cannot be cancelled.
func (s *Service) Cancel(ctx context.Context, id string) (*Order, error) {
	return move(ctx, s.orders, id, Placed, Cancelled)
}

// move changes an order's status from one value to another, once: TryTransition reads the
// order, applies the change only while the status is still from, and writes it in Strict
// mode, reading again after a lost race.
func move(ctx context.Context, orders OrderRows, id string, from, to Status) (*Order, error) {
	out, err := abstractions.TryTransition(ctx, orders, id,
		func(o *Order) bool { return o.Status == from },
		func(o *Order) error { o.Status = to; return nil },
		&abstractions.RetryOptions{Attempts: maxAttempts})
	if err != nil {
		return nil, fmt.Errorf("marking order %s %s: %w", id, to, err)
	}
	switch out.Status {
	case abstractions.OutcomeUpdated:
		return out.Value, nil
	case abstractions.OutcomeNotFound:
		return nil, fmt.Errorf("%w: %s", ErrNoSuchOrder, id)
	case abstractions.OutcomePreconditionFailed:
		return nil, fmt.Errorf("%w: order %s is %s, not %s", ErrWrongStatus, id, out.Value.Status, from)
	default: // Conflicted: every attempt lost its race
		return nil, fmt.Errorf("marking order %s %s: %w", id, to, abstractions.ErrConcurrencyConflict)
	}
}

// OrdersOf returns the customer's orders in id order.
func (s *Service) OrdersOf(ctx context.Context, customerID string) ([]*Order, error) {
	orders, err := s.orders.List(ctx, customerID)
	if err != nil {
		return nil, fmt.Errorf("listing the orders of %s: %w", customerID, err)
	}
	return orders, nil
}

// randomID returns 16 hex digits from the system's random source.
func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
