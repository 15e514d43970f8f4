package abstractions

import "time"

// Entity is the base every stored type embeds. ID is the composite "PartitionKey|RowKey" id
// (see SplitID) and is also stored as the column "Id"; CreatedAt and UpdatedAt are kept by
// the store; ETag and Timestamp are filled from the service on every read and write and are
// never stored as columns.
//
//	type Customer struct {
//		abstractions.Entity
//		Name    string
//		Balance float64
//	}
type Entity struct {
	// ID is "PartitionKey|RowKey", or a lone key that addresses (key, key).
	ID string
	// CreatedAt is stamped with the current time by a whole-entity write (Create, Upsert,
	// Update, the batches) when it is zero; a value the caller set is written as it is. A
	// replace writes every cell, so an Update or Upsert of an entity built afresh, not
	// read, stores a new CreatedAt: to keep the stored one, write the entity as read (as
	// Mutate does) or change fields with Patch.
	CreatedAt time.Time
	// UpdatedAt is set on every write.
	UpdatedAt time.Time
	// ETag is the version of the row this value was read as or written as.
	ETag string
	// Timestamp is the service's time of the row's last write.
	Timestamp time.Time
}

// Base returns the entity base itself. Through embedding, every stored type gets this method,
// which is how generic code reaches the base of a *T.
func (e *Entity) Base() *Entity { return e }

// EntityPtr is the constraint of the generic functions that store a T: P is *T, and *T
// embeds Entity. The compiler checks it and infers P, so callers write only T:
//
//	customers, err := tables.For[Customer](acct, nil) // P is *Customer
//	c, err := abstractions.Mutate(ctx, customers, id, addVisit)
//
// A type that does not embed Entity fails to compile ("*T does not satisfy EntityPtr[T]
// (missing method Base)").
type EntityPtr[T any] interface {
	*T
	// Base returns the embedded Entity, which the store reads and stamps.
	Base() *Entity
}
