package inmemory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/tracing"
	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
)

// recTracer records spans as text: "name {attrs} [events] error".
type recTracer struct {
	mu    sync.Mutex
	spans []*recSpan
}

type recSpan struct {
	t      *recTracer
	name   string
	parent *recSpan
	attrs  map[string]any
	events []string
	kind   string
	desc   string
	ended  bool
	span   tracing.SpanKind
}

type spanKey struct{}

// provider is a tracing provider whose spans rec records, as an OpenTelemetry provider
// reaches the library through the Azure SDK's adapter.
func (r *recTracer) provider() tracing.Provider {
	return tracing.NewProvider(func(string, string) tracing.Tracer {
		return tracing.NewTracer(func(ctx context.Context, name string, o *tracing.SpanOptions) (context.Context, tracing.Span) {
			parent, _ := ctx.Value(spanKey{}).(*recSpan)
			s := &recSpan{t: r, name: name, parent: parent, attrs: map[string]any{}}
			if o != nil {
				s.span = o.Kind
				s.setAttributes(o.Attributes...)
			}
			r.mu.Lock()
			r.spans = append(r.spans, s)
			r.mu.Unlock()
			return context.WithValue(ctx, spanKey{}, s), tracing.NewSpan(tracing.SpanImpl{
				End:           func() { s.ended = true },
				SetAttributes: s.setAttributes,
				AddEvent:      func(name string, _ ...tracing.Attribute) { s.events = append(s.events, name) },
				SetStatus:     func(_ tracing.SpanStatus, desc string) { s.desc = desc },
			})
		}, nil)
	}, nil)
}

// setAttributes records attributes; the error kind is the "error.type" attribute.
func (s *recSpan) setAttributes(attrs ...tracing.Attribute) {
	for _, a := range attrs {
		s.attrs[a.Key] = a.Value
		if a.Key == "error.type" {
			s.kind, _ = a.Value.(string)
		}
	}
}

func TestTracing(t *testing.T) {
	ctx := context.Background()
	for _, recordKeys := range []bool{false, true} {
		t.Run(fmt.Sprint("record keys ", recordKeys), func(t *testing.T) {
			rec := &recTracer{}
			s, err := tables.For[Doc](inmemory.NewAccount(&tables.Options{ClientOptions: azcore.ClientOptions{TracingProvider: rec.provider()}, RecordKeys: recordKeys}), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "P|A"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.One(ctx, "p|missing"); !errors.Is(err, abstractions.ErrNotFound) {
				t.Fatal(err)
			}
			if _, err := abstractions.Mutate(ctx, s, "p|a", func(d *Doc) error { d.N++; return nil }, nil); err != nil {
				t.Fatal(err)
			}
			for _, err := range s.Stream(ctx, abstractions.Query[Doc]{Partition: "p"}) {
				if err != nil {
					t.Fatal(err)
				}
			}
			if len(rec.spans) != 6 {
				var names []string
				for _, sp := range rec.spans {
					names = append(names, sp.name)
				}
				t.Fatalf("spans %q, want create, read, mutate (read, update), stream", names)
			}
			for _, sp := range rec.spans {
				if !sp.ended {
					t.Errorf("span %s not ended", sp.name)
				}
				if sp.attrs["db.collection.name"] != "Doc" || sp.attrs["azure.tables.partition_key"] != "p" || sp.attrs["db.system.name"] != "azure.tables" {
					t.Errorf("span %s attributes %v", sp.name, sp.attrs)
				}
				// In memory there is no server: no address, and calls are internal spans,
				// as the conventions allow for in-memory databases.
				if _, ok := sp.attrs["server.address"]; ok || sp.span != tracing.SpanKindInternal {
					t.Errorf("span %s of kind %v with attributes %v", sp.name, sp.span, sp.attrs)
				}
				_, hasRow := sp.attrs["azure.tables.row_key"]
				if hasRow != (recordKeys && !strings.HasPrefix(sp.name, "stream")) {
					t.Errorf("span %s: row key present %v with RecordKeys %v", sp.name, hasRow, recordKeys)
				}
			}
			create, missing, mutate, read, update, stream := rec.spans[0], rec.spans[1], rec.spans[2], rec.spans[3], rec.spans[4], rec.spans[5]
			if create.name != "create Doc" || create.attrs["azure.tables.row_key"] != nil && create.attrs["azure.tables.row_key"] != "a" {
				t.Errorf("create span %+v", create)
			}
			if missing.kind != "not_found" || (missing.desc == "not_found") == recordKeys {
				t.Errorf("read of a missing row: kind %q, description %q", missing.kind, missing.desc)
			}
			if mutate.name != "mutate Doc" || read.parent != mutate || update.parent != mutate || mutate.kind != "" {
				t.Errorf("mutate span %+v; read under %v, update under %v", mutate, read.parent, update.parent)
			}
			if stream.name != "stream Doc" || stream.kind != "" {
				t.Errorf("stream span %+v", stream)
			}
		})
	}
}
