package tables

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/telemetry"

	"github.com/unified-data/gotables/abstractions"
)

// recorder is a Tracer that keeps the spans it started.
type recorder struct {
	mu    sync.Mutex
	spans []*recorded
}

type recorded struct {
	name   string
	parent *recorded
	attrs  map[string]any
	events []string
	kind   string // SetError's kind; "" for success
	desc   string
	ended  bool
	span   telemetry.SpanKind
}

type spanKey struct{}

func (r *recorder) Start(ctx context.Context, name string, kind telemetry.SpanKind, attrs []telemetry.Attribute) (context.Context, telemetry.Span) {
	r.mu.Lock()
	defer r.mu.Unlock()
	parent, _ := ctx.Value(spanKey{}).(*recorded)
	sp := &recorded{name: name, parent: parent, attrs: map[string]any{}, span: kind}
	for _, a := range attrs {
		sp.attrs[a.Key] = a.Value
	}
	r.spans = append(r.spans, sp)
	return context.WithValue(ctx, spanKey{}, sp), sp
}

func (s *recorded) SetAttributes(attrs ...telemetry.Attribute) {
	for _, a := range attrs {
		s.attrs[a.Key] = a.Value
	}
}

func (s *recorded) AddEvent(name string, attrs ...telemetry.Attribute) {
	var parts []string
	for _, a := range attrs {
		parts = append(parts, fmt.Sprintf("%s=%v", a.Key, a.Value))
	}
	s.events = append(s.events, name+" "+strings.Join(parts, " "))
}

func (s *recorded) SetError(kind, description string) { s.kind, s.desc = kind, description }
func (s *recorded) End()                              { s.ended = true }

// names lists the spans' names in the order they started.
func (r *recorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.spans {
		out = append(out, s.name)
	}
	return out
}

// Every store call is one span named "<op> <table>", with the operation, the table and the
// partition, the row key only when the account records keys, and on failure the error's
// kind and the service's error code.
func TestTracing(t *testing.T) {
	ctx := context.Background()
	for _, record := range []bool{false, true} {
		t.Run(fmt.Sprintf("record keys %v", record), func(t *testing.T) {
			tr := &recorder{}
			s, _ := newStore[item](t, &Options{RecordKeys: record}, withTracer(tr))
			if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "a"}); err != nil {
				t.Fatal(err)
			}
			err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}})
			wantKind(t, err, abstractions.ErrDuplicateKey)
			if _, err := s.List(ctx, "p"); err != nil {
				t.Fatal(err)
			}
			if got, want := tr.names(), []string{"create Items", "create Items", "list Items"}; !slices.Equal(got, want) {
				t.Fatalf("spans %v, want %v", got, want)
			}
			first, dup, list := tr.spans[0], tr.spans[1], tr.spans[2]
			for _, sp := range tr.spans {
				if !sp.ended || sp.attrs[telemetry.AttrSystem] != "azure.tables" || sp.attrs[telemetry.AttrTable] != "Items" {
					t.Errorf("span %s: %+v", sp.name, sp)
				}
			}
			if first.attrs[telemetry.AttrOperation] != "create" || first.attrs[telemetry.AttrPartition] != "p" || first.kind != "" {
				t.Errorf("create span %+v", first)
			}
			if _, ok := first.attrs[telemetry.AttrRowKey]; ok != record {
				t.Errorf("row key recorded: %v, want %v", ok, record)
			}
			if dup.kind != "duplicate_key" || dup.attrs[telemetry.AttrStatusCode] != "409" || dup.attrs[telemetry.AttrErrorCode] != "EntityAlreadyExists" {
				t.Errorf("failed span %+v", dup)
			}
			// The error's text names keys: it is the description only when keys may be recorded.
			if record && !strings.Contains(dup.desc, `"a"`) || !record && dup.desc != "duplicate_key" {
				t.Errorf("description %q", dup.desc)
			}
			if list.attrs[telemetry.AttrPartition] != "p" {
				t.Errorf("list span %+v", list)
			}
		})
	}
}

// An outcome verb is one span with each lost attempt as an event, and a debug log line per
// retry; the store calls it makes are its children.
func TestVerbSpans(t *testing.T) {
	ctx := context.Background()
	tr := &recorder{}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, f := newStore[item](t, &Options{Logger: logger, RecordKeys: true}, withTracer(tr))
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|n"}}); err != nil {
		t.Fatal(err)
	}
	lost := false
	f.before = func(call string) error {
		if call == "Write" && !lost {
			lost = true
			r, _ := f.row("Items", "p", "n")
			f.put("Items", r) // another writer's version
		}
		return nil
	}
	if _, err := abstractions.Mutate(ctx, s, "p|n", func(v *item) error { v.N++; return nil }, nil); err != nil {
		t.Fatal(err)
	}
	var verb *recorded
	for _, sp := range tr.spans {
		if sp.name == "mutate Items" {
			verb = sp
		}
	}
	if verb == nil {
		t.Fatalf("no verb span among %v", tr.names())
	}
	if !verb.ended || verb.kind != "" || verb.attrs[telemetry.AttrRowKey] != "n" {
		t.Errorf("verb span %+v", verb)
	}
	if len(verb.events) != 1 || !strings.Contains(verb.events[0], "attempt lost") || !strings.Contains(verb.events[0], "concurrency_conflict") {
		t.Errorf("events %q", verb.events)
	}
	children := 0
	for _, sp := range tr.spans {
		if sp.parent == verb {
			children++
		}
	}
	if children < 4 { // two reads and two updates
		t.Errorf("%d store calls below the verb's span", children)
	}
	if !strings.Contains(logs.String(), "an attempt lost its race") || !strings.Contains(logs.String(), "id=p|n") {
		t.Errorf("debug log %q", logs.String())
	}

	// Without a tracer the verb's span only logs, and the store calls are not traced.
	logs.Reset()
	plain, f2 := newStore[item](t, &Options{Logger: logger})
	if err := plain.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|n"}}); err != nil {
		t.Fatal(err)
	}
	lost = false
	f2.before = func(call string) error {
		if call == "Write" && !lost {
			lost = true
			r, _ := f2.row("Items", "p", "n")
			f2.put("Items", r)
		}
		return nil
	}
	if _, err := abstractions.Mutate(ctx, plain, "p|n", func(v *item) error { v.N++; return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "an attempt lost its race") || strings.Contains(logs.String(), "id=") {
		t.Errorf("debug log without keys %q", logs.String())
	}
}

// Batches are named as the conventions name them: "BATCH <op>" with their size when their
// writes share an operation, "BATCH" when they differ, and a batch of one write is that
// write.
func TestBatchSpans(t *testing.T) {
	ctx := context.Background()
	tr := &recorder{}
	s, _ := newStore[item](t, nil, withTracer(tr))
	if err := s.CreateBatch(ctx, items("p", 3)); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBatch(ctx, items("q", 1)); err != nil {
		t.Fatal(err)
	}
	tx := s.Transaction("r")
	s.CreateIn(tx, &item{Entity: abstractions.Entity{ID: "r|a"}})
	s.CreateIn(tx, &item{Entity: abstractions.Entity{ID: "r|b"}})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tx = s.Transaction("r")
	s.CreateIn(tx, &item{Entity: abstractions.Entity{ID: "r|c"}})
	s.DeleteIn(tx, "r|a", "")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sp := range tr.spans {
		got = append(got, fmt.Sprintf("%s %v %v", sp.name, sp.attrs[telemetry.AttrOperation], sp.attrs[telemetry.AttrBatchSize]))
	}
	want := []string{"BATCH create Items BATCH create 3", "create Items create <nil>", "BATCH create Items BATCH create 2", "BATCH Items BATCH 2"}
	if !slices.Equal(got, want) {
		t.Errorf("spans\n %q\nwant %q", got, want)
	}
}

// Ids and partitions are recorded as the store resolves them.
func TestTracedKeysAreNormalised(t *testing.T) {
	ctx := context.Background()
	tr := &recorder{}
	s, _ := newStore[item](t, &Options{RecordKeys: true}, withTracer(tr))
	_, _ = s.One(ctx, "  P|A ")
	_, _ = s.Count(ctx, " P ")
	_ = s.EnsureCreated(ctx)
	if len(tr.spans) != 3 {
		t.Fatalf("spans %v", tr.names())
	}
	read, count, ensure := tr.spans[0], tr.spans[1], tr.spans[2]
	if read.attrs[telemetry.AttrPartition] != "p" || read.attrs[telemetry.AttrRowKey] != "a" || read.kind != "not_found" {
		t.Errorf("read span %+v", read)
	}
	// The partition part of the id " P |x": its trailing space is kept, as "-".
	if count.attrs[telemetry.AttrPartition] != "p-" {
		t.Errorf("count span %+v", count)
	}
	if _, ok := ensure.attrs[telemetry.AttrPartition]; ok {
		t.Errorf("the table's span names a partition: %+v", ensure)
	}
}

func TestErrorKind(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("other"), "error"},
		{fmt.Errorf("wrapped: %w", abstractions.ErrIntegrity), "integrity"},
		{&abstractions.StoreError{Kind: abstractions.ErrUnavailable}, "unavailable"},
		{context.Canceled, "canceled"},
		{context.DeadlineExceeded, "deadline_exceeded"},
		{abstractions.ErrBlobOffloadNotConfigured, "blob_offload_not_configured"},
	} {
		if got := callerr.KindName(tc.err); got != tc.want {
			t.Errorf("callerr.KindName(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// noopTracer is a Tracer whose spans do nothing: with it, a benchmark measures what the
// engine itself spends on tracing.
type noopTracer struct{}

type noopSpan struct{}

func (noopTracer) Start(ctx context.Context, _ string, _ telemetry.SpanKind, _ []telemetry.Attribute) (context.Context, telemetry.Span) {
	return ctx, noopSpan{}
}

func (noopSpan) SetAttributes(...telemetry.Attribute)    {}
func (noopSpan) AddEvent(string, ...telemetry.Attribute) {}
func (noopSpan) SetError(string, string)                 {}
func (noopSpan) End()                                    {}

// BenchmarkTracing measures a store call without a Tracer (tracing=off) and with one whose
// spans do nothing (tracing=on), over the in-package fake service, so that the difference is
// the engine's own cost of tracing. docs/production.md ("Client options, tracing, logs and
// health") quotes it; compare the two with benchstat -col /tracing.
func BenchmarkTracing(b *testing.B) {
	ctx := context.Background()
	calls := []struct {
		name string
		run  func(s *Store[item]) error
	}{
		{"One", func(s *Store[item]) error { _, err := s.One(ctx, "p|a"); return err }},
		{"Upsert", func(s *Store[item]) error {
			return s.Upsert(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "a", N: 1})
		}},
	}
	for _, c := range calls {
		for _, mode := range []struct {
			name   string
			tracer telemetry.Tracer
		}{{"off", nil}, {"on", noopTracer{}}} {
			b.Run(c.name+"/tracing="+mode.name, func(b *testing.B) {
				s, f := newStore[item](b, &Options{}, withTracer(mode.tracer))
				if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "a"}); err != nil {
					b.Fatal(err)
				}
				benchStoreCalls(b, f, func() error { return c.run(s) })
			})
		}
	}
}

// benchStoreCalls runs call in b's loop, allocations reported, clearing the fake's record of
// calls every 4,096 calls outside the timer, so that its log stays out of the figures.
func benchStoreCalls(b *testing.B, f *fakeTables, call func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%4096 == 0 {
			b.StopTimer()
			f.resetCalls()
			b.StartTimer()
		}
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
}

// withTracer gives a test account a tracer.
func withTracer(tr telemetry.Tracer) func(*config) { return func(c *config) { c.Tracer = tr } }
