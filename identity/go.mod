module github.com/unified-data/gotables/identity

go 1.25.0

require github.com/unified-data/gotables/abstractions v0.1.0

// Package identity imports abstractions only; package identitytables, which builds the
// stores over an account, imports tables. The tests run the stores on the in-memory
// backend, and write the golden rows to its service directly.
require (
	github.com/unified-data/gotables/inmemory v0.1.0
	github.com/unified-data/gotables/tables v0.1.0
	go.uber.org/goleak v1.3.0
)
