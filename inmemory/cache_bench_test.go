package inmemory_test

import (
	"context"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
)

// BenchmarkOne compares a point read answered by the read cache (a hit decodes a fresh copy
// of the cached row) with one that goes to the in-memory service.
func BenchmarkOne(b *testing.B) {
	for _, tc := range []struct {
		name   string
		policy inmemory.CachePolicy
	}{{"cache-hit", inmemory.Sliding(time.Hour)}, {"cache-off", inmemory.Disabled}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			s, err := inmemory.For[Doc](inmemory.NewAccount(&inmemory.Options{Cache: tc.policy}), nil)
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
