module github.com/unified-data/gotables/inmemory

go 1.25.0

require (
	github.com/unified-data/gotables/abstractions v0.1.0
	github.com/unified-data/gotables/tables v0.1.0
)

require go.uber.org/goleak v1.3.0
