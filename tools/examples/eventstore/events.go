package eventstore

import (
	"errors"

	"github.com/unified-data/gotables/abstractions"
)

// Event is the base of every event type: each one embeds EventBase, whose pointer method
// makes a pointer to the event an Event.
type Event interface {
	Base() *EventBase
}

// EventBase holds what every event carries. Append fills it in.
type EventBase struct {
	// Account is the id of the aggregate the event belongs to.
	Account string
	// Version is the event's position in the aggregate's stream, from 1.
	Version int64
}

// Base returns the base itself; through embedding, every event type has it.
func (b *EventBase) Base() *EventBase { return b }

// Opened starts an account.
type Opened struct {
	EventBase
	Owner string
}

// Deposited adds money to an account.
type Deposited struct {
	EventBase
	Cents int64
}

// Withdrawn takes money from an account.
type Withdrawn struct {
	EventBase
	Cents int64
	Memo  string
}

// RegisterEvents names the event types in reg. The names are what the rows store, so they
// are part of the stored format: renaming a Go type keeps its name, and renaming the name
// needs the old one registered too (abstractions.RegisterType accepts several names per type;
// the first is the one written). The package imports abstractions only: the names live with
// the types, not with the backend.
func RegisterEvents(reg *abstractions.TypeRegistry) error {
	return errors.Join(
		abstractions.RegisterType[Opened](reg, "account.opened"),
		abstractions.RegisterType[Deposited](reg, "account.deposited"),
		abstractions.RegisterType[Withdrawn](reg, "account.withdrawn"),
	)
}
