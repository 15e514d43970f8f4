module github.com/unified-data/gotables/identity

go 1.25.0
