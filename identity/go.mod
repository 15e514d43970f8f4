module github.com/unified-data/gotables/identity

go 1.25.0

require github.com/unified-data/gotables/abstractions v0.1.0

require (
	github.com/Azure/azure-sdk-for-go/sdk/azcore v1.23.3 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/data/aztables v1.4.1 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/internal v1.13.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/btree v1.1.3 // indirect
	github.com/maypok86/otter/v2 v2.4.0 // indirect
	go.opentelemetry.io/otel v1.46.0 // indirect
	go.opentelemetry.io/otel/metric v1.46.0 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

// Package identity imports abstractions only; package identitytables, which builds the
// stores over an account, imports tables. The tests run the stores on the in-memory
// backend, and write the golden rows to its service directly.
require (
	github.com/unified-data/gotables/inmemory v0.1.0
	github.com/unified-data/gotables/tables v0.1.0
	go.uber.org/goleak v1.3.0
)
