package tracing

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type Counter struct {
	abstractions.Entity
	N int
}

func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestSpans checks the documented spans on Azurite: a Create, a Mutate that loses one race,
// and a failing call.
func TestSpans(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(ctx) }()

	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	acct, err := NewAccount(conn, tp, &tables.Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	table := "trace" + strings.ToLower(rand.Text()[:10])
	s, err := tables.For[Counter](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = acct.Tables().DeleteTable(context.Background(), table) }()
	// A second, untraced account plays the other writer.
	other, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	os2, err := tables.For[Counter](other, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}

	if err := s.Create(ctx, &Counter{Entity: abstractions.Entity{ID: "tenant|c1"}}); err != nil {
		t.Fatal(err)
	}
	raced := false
	if _, err := abstractions.Mutate(ctx, s, "tenant|c1", func(c *Counter) error {
		if !raced {
			raced = true
			if _, err := abstractions.Mutate(ctx, os2, "tenant|c1", func(c *Counter) error { c.N += 10; return nil }, nil); err != nil {
				return err
			}
		}
		c.N++
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	err = s.Create(ctx, &Counter{Entity: abstractions.Entity{ID: "tenant|c1"}})
	if !errors.Is(err, abstractions.ErrDuplicateKey) {
		t.Fatalf("second create: %v", err)
	}

	spans := exp.GetSpans().Snapshots()
	var creates, mutates []sdktrace.ReadOnlySpan
	for _, sp := range spans {
		switch sp.Name() {
		case "create " + table:
			creates = append(creates, sp)
		case "mutate " + table:
			mutates = append(mutates, sp)
		}
	}
	if len(creates) != 2 || len(mutates) != 1 {
		names := make([]string, len(spans))
		for i, sp := range spans {
			names[i] = sp.Name()
		}
		t.Fatalf("spans %q: want 2 creates and 1 mutate", names)
	}

	// The first create: its attributes, no row key (not allowed by default), and the SDK's
	// HTTP span below it.
	ok := creates[0]
	for key, want := range map[string]string{"db.operation.name": "create", "db.collection.name": table, "azure.tables.partition_key": "tenant", "db.system.name": "azure.tables"} {
		if v, found := attr(ok, key); !found || v.AsString() != want {
			t.Errorf("create span: %s = %v, want %q", key, v.String(), want)
		}
	}
	if _, found := attr(ok, "azure.tables.row_key"); found {
		t.Error("the create span carries the row key, which RecordKeys did not allow")
	}
	if ok.Status().Code == codes.Error {
		t.Errorf("the successful create's span is an error: %v", ok.Status())
	}
	children := func(parent sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, sp := range spans {
			if sp.Parent().SpanID() == parent.SpanContext().SpanID() {
				out = append(out, sp)
			}
		}
		return out
	}
	if len(children(ok)) == 0 {
		t.Error("the create span has no child: the SDK's HTTP span is not below it")
	}

	// The mutate: one span, the lost attempt as an event, and its store calls below it
	// (two reads and two updates).
	m := mutates[0]
	var lost int
	for _, ev := range m.Events() {
		if ev.Name == "attempt lost" {
			lost++
		}
	}
	if lost != 1 {
		t.Errorf("mutate span has %d 'attempt lost' events, want 1", lost)
	}
	kids := map[string]int{}
	for _, c := range children(m) {
		kids[strings.Fields(c.Name())[0]]++
	}
	if kids["read"] != 2 || kids["update"] != 2 {
		t.Errorf("mutate's children %v, want 2 reads and 2 updates", kids)
	}
	if m.Status().Code == codes.Error {
		t.Errorf("the mutate that succeeded is an error span: %v", m.Status())
	}
	var failedUpdate bool
	for _, c := range children(m) {
		if v, _ := attr(c, "error.type"); v.AsString() == "concurrency_conflict" && c.Status().Code == codes.Error {
			failedUpdate = true
		}
	}
	if !failedUpdate {
		t.Error("no update below the mutate failed with error.type=concurrency_conflict")
	}

	// The failing create.
	bad := creates[1]
	if bad.Status().Code != codes.Error {
		t.Errorf("the duplicate create's span status is %v, want Error", bad.Status())
	}
	if v, _ := attr(bad, "error.type"); v.AsString() != "duplicate_key" {
		t.Errorf("the duplicate create's error.type is %q", v.AsString())
	}
	if v, _ := attr(bad, "azure.tables.error_code"); v.AsString() != "EntityAlreadyExists" {
		t.Errorf("the duplicate create's error code is %q", v.AsString())
	}
	if strings.Contains(bad.Status().Description, "c1") {
		t.Errorf("the span's status names the row key: %q", bad.Status().Description)
	}
}
