package inmemory_test

import (
	"context"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
)

// BenchmarkOne compares a point read answered by the read cache (a hit decodes a fresh copy
// of the cached row) with one that goes to the in-memory service.
func BenchmarkOne(b *testing.B) {
	for _, tc := range []struct {
		name   string
		policy tables.CachePolicy
	}{{"cache-hit", tables.Sliding(time.Hour)}, {"cache-off", tables.Disabled}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			s, err := tables.For[Doc](inmemory.NewAccount(&tables.Options{Cache: tc.policy}), nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "p|a"}, N: 1, Tags: []string{"a", "b"}}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.One(ctx, "p|a"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
