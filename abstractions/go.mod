module github.com/unified-data/gotables/abstractions

go 1.25.0
