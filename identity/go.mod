module github.com/unified-data/gotables/identity

go 1.25.0

require github.com/unified-data/gotables/abstractions v0.0.0

replace github.com/unified-data/gotables/abstractions => ../abstractions
