// Package saga is an example of state documents: an order's saga (placed, then paid, then
// shipped) kept in one blob, changed by messages that may arrive twice, late, or at the
// same time as each other.
//
// Each message is one compare-and-swap of the order's state document
// (blobdocs.StateDocuments.Mutate): it reads the state and its version, checks that the
// message applies, changes the state, and writes it back only if nobody changed it since;
// after a lost race it reads and decides again. A message delivered twice is recognised by
// its id, kept in the state, and applied once. When the order ships, the saga completes: a
// receipt is written as a plain document (last writer wins) and the state is deleted on
// condition of the version read.
//
// The test runs the same saga on the in-memory backend and, when a connection string is
// set, on Azurite.
package saga

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/blobdocs"
)

// Status is where an order's saga stands.
type Status string

// The statuses of an order, in the order the messages move it.
const (
	Placed  Status = "placed"
	Paid    Status = "paid"
	Shipped Status = "shipped"
	// Completed is reported by Orders.Status for an order whose saga has ended: its state
	// is gone and its receipt is stored.
	Completed Status = "completed"
)

// Order is the saga's state document.
type Order struct {
	ID        string
	Status    Status
	Amount    float64
	PaymentID string
	Tracking  string
	// Handled holds the ids of the messages already applied.
	Handled []string
}

// Receipt is what a completed order leaves behind: a plain document.
type Receipt struct {
	OrderID   string
	Amount    float64
	PaymentID string
	Tracking  string
}

// ErrOutOfOrder reports a message that does not apply to the order's current status, such
// as a shipment before the payment, or a second, different payment.
var ErrOutOfOrder = errors.New("saga: message does not apply to the order's status")

// errHandled ends a Mutate whose message was applied before.
var errHandled = errors.New("saga: message already handled")

// Orders runs order sagas over a blob container.
type Orders struct {
	states   *blobdocs.StateDocuments[Order]
	receipts *blobdocs.Documents[Receipt]
}

// NewOrders registers the saga's state and receipt documents in reg, both in container,
// which must exist.
func NewOrders(reg *blobdocs.Registry, container string) (*Orders, error) {
	states, err := blobdocs.RegisterState[Order](reg, blobdocs.Registration{
		Container: container,
		BlobName:  func(c blobdocs.NameContext) string { return "sagas/order/" + c.ID + ".json" },
	})
	if err != nil {
		return nil, err
	}
	receipts, err := blobdocs.Register[Receipt](reg, blobdocs.Registration{
		Container:   container,
		BlobName:    func(c blobdocs.NameContext) string { return "receipts/" + c.ID + ".json" },
		Compression: blobdocs.Gzip,
	})
	if err != nil {
		return nil, err
	}
	return &Orders{states: states, receipts: receipts}, nil
}

// Place starts the saga of a new order. Placing an order again is a redelivery and changes
// nothing.
func (o *Orders) Place(ctx context.Context, orderID string, amount float64) error {
	_, err := o.states.Create(ctx, orderID, &Order{ID: orderID, Status: Placed, Amount: amount})
	if errors.Is(err, abstractions.ErrConcurrencyConflict) {
		return nil // the saga exists: this message was delivered before
	}
	return err
}

// Pay applies the payment message msgID to a placed order. A message applied before is
// ignored; a payment of an order that is no longer placed fails with ErrOutOfOrder, one of
// an unknown order with an error matching abstractions.ErrNotFound.
func (o *Orders) Pay(ctx context.Context, orderID, msgID, paymentID string) error {
	_, _, err := o.states.Mutate(ctx, orderID, func(s *Order) error {
		if slices.Contains(s.Handled, msgID) {
			return errHandled
		}
		if s.Status != Placed {
			return fmt.Errorf("%w: payment %s for order %s, which is %s", ErrOutOfOrder, paymentID, orderID, s.Status)
		}
		s.Status, s.PaymentID = Paid, paymentID
		s.Handled = append(s.Handled, msgID)
		return nil
	}, nil)
	if errors.Is(err, errHandled) {
		return nil
	}
	return err
}

// Ship applies the shipment message msgID to a paid order and completes the saga: it
// stores the receipt, then deletes the state on condition of the version it wrote. A
// shipment redelivered after completion is ignored; one of an order that is not paid fails
// with ErrOutOfOrder.
func (o *Orders) Ship(ctx context.Context, orderID, msgID, tracking string) error {
	s, version, err := o.states.Mutate(ctx, orderID, func(s *Order) error {
		if slices.Contains(s.Handled, msgID) {
			return errHandled
		}
		if s.Status != Paid {
			return fmt.Errorf("%w: shipment %s for order %s, which is %s", ErrOutOfOrder, tracking, orderID, s.Status)
		}
		s.Status, s.Tracking = Shipped, tracking
		s.Handled = append(s.Handled, msgID)
		return nil
	}, nil)
	if errors.Is(err, errHandled) {
		// Shipped before, but the saga may not have completed (a crash between the steps
		// below, or another delivery of this message still at them): finish it from the
		// stored state.
		s, version, err = o.states.One(ctx, orderID)
	}
	if errors.Is(err, abstractions.ErrNotFound) {
		if _, rerr := o.receipts.One(ctx, orderID); rerr == nil {
			return nil // completed before: this message was delivered again
		}
	}
	if err != nil {
		return err
	}
	receipt := &Receipt{OrderID: s.ID, Amount: s.Amount, PaymentID: s.PaymentID, Tracking: s.Tracking}
	if err := o.receipts.Put(ctx, orderID, receipt); err != nil {
		return err
	}
	err = o.states.Delete(ctx, orderID, version)
	if errors.Is(err, abstractions.ErrConcurrencyConflict) {
		if _, _, gerr := o.states.One(ctx, orderID); errors.Is(gerr, abstractions.ErrNotFound) {
			return nil // another delivery of this message completed the saga first
		}
	}
	return err
}

// Status returns where the order's saga stands: its state's status, or Completed once the
// state is gone and the receipt stored. An unknown order fails with an error matching
// abstractions.ErrNotFound.
func (o *Orders) Status(ctx context.Context, orderID string) (Status, error) {
	s, _, err := o.states.One(ctx, orderID)
	if err == nil {
		return s.Status, nil
	}
	if !errors.Is(err, abstractions.ErrNotFound) {
		return "", err
	}
	if _, err := o.receipts.One(ctx, orderID); err != nil {
		return "", err
	}
	return Completed, nil
}

// Receipt returns the receipt of a completed order.
func (o *Orders) Receipt(ctx context.Context, orderID string) (*Receipt, error) {
	return o.receipts.One(ctx, orderID)
}
