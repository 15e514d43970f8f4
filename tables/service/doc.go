// Package service defines the small interfaces the engine talks to: a table service (tables,
// rows, entity-group transactions, queries) and a blob service (containers, blobs, the
// service clock). Two implementations exist: the Azure adapter in package azservice and the
// in-memory service in the inmemory module. Both must succeed and fail the same way; the
// fidelity module measures that.
//
// The package imports no Azure SDK, so the in-memory backend links none.
//
// # Values
//
// Cells are typed EDM values (Value): Edm.String, Edm.Binary, Edm.Boolean, Edm.Int32,
// Edm.Int64, Edm.Double, Edm.DateTime and Edm.Guid. There is no null: a property that has no
// value is simply not in the row, which is also how the service stores a null.
//
// # Errors
//
// Every failure the service reports is an *abstractions.StatusError with the HTTP status and
// the service's error code. A failed transaction wraps it in a *TransactionError that names
// the failing action. Implementations validate nothing on the caller's behalf beyond what
// the real service validates: the engine above does its own checks before it sends.
package service
