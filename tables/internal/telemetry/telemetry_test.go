package telemetry

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A nil or zero Telemetry builds nothing for a call, and its calls and verb spans may be
// used as any other.
func TestOffRecordsNothing(t *testing.T) {
	ctx := context.Background()
	for _, tel := range []*Telemetry{nil, {}} {
		got, c := tel.Begin(ctx, "T", "read")
		if got != ctx || c.Traced() {
			t.Fatal("a call without a tracer or meters changed the context or is traced")
		}
		c.Keys("p", "r")
		err := errors.New("x")
		c.Finish(&err)
		_, vs := tel.Verb(ctx, "T", "mutate", "p|r")
		vs.Event(driver.EventAttemptLost, "attempt", 1)
		vs.End(nil)
	}
}

// spans is a Tracer that records what it is told.
type spans struct {
	started, ended int
	name           string
	span           SpanKind
	attrs          map[string]any
	kind           string
}

func (s *spans) Start(ctx context.Context, name string, kind SpanKind, attrs []Attribute) (context.Context, Span) {
	s.started++
	s.name, s.span = name, kind
	s.attrs = map[string]any{}
	for _, a := range attrs {
		s.attrs[a.Key] = a.Value
	}
	return ctx, s
}
func (s *spans) SetAttributes(attrs ...Attribute) {
	for _, a := range attrs {
		s.attrs[a.Key] = a.Value
	}
}
func (s *spans) AddEvent(string, ...Attribute)     {}
func (s *spans) SetError(kind, description string) { s.kind = kind }
func (s *spans) End()                              { s.ended++ }

// A traced call names its operation and table, records the row key only when allowed, and
// ends with the kind of its error and the service's code.
func TestCallSpan(t *testing.T) {
	for _, record := range []bool{false, true} {
		sp := &spans{}
		tel := &Telemetry{Tracer: sp, RecordKeys: record}
		_, c := tel.Begin(context.Background(), "Orders", "update")
		c.Keys("p", "r")
		var err error = &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict,
			Err: &abstractions.StatusError{StatusCode: 412, ErrorCode: "UpdateConditionNotSatisfied"}}
		c.Finish(&err)
		if sp.started != 1 || sp.ended != 1 || sp.attrs[AttrOperation] != "update" || sp.attrs[AttrTable] != "Orders" || sp.attrs[AttrPartition] != "p" {
			t.Fatalf("span %+v", sp)
		}
		if _, ok := sp.attrs[AttrRowKey]; ok != record {
			t.Errorf("RecordKeys %v: row key recorded %v", record, ok)
		}
		if sp.kind != "concurrency_conflict" || sp.attrs[AttrStatusCode] != "412" || sp.attrs[AttrErrorCode] != "UpdateConditionNotSatisfied" {
			t.Errorf("error kind %q, status %v, code %v", sp.kind, sp.attrs[AttrStatusCode], sp.attrs[AttrErrorCode])
		}
	}
}

// The endpoint's attributes: the account's name from an Azure host or a path-style URL,
// the host, a port only when it is not the scheme's, Cosmos DB for Table as the
// conventions' azure.cosmosdb, and no address for an account without one.
func TestNewEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name, system string
		want         Endpoint
	}{
		{"https://acct.table.core.windows.net", "", Endpoint{System: SystemTables, Namespace: "acct", Address: "acct.table.core.windows.net"}},
		{"https://acct.table.core.windows.net:443/", "", Endpoint{System: SystemTables, Namespace: "acct", Address: "acct.table.core.windows.net"}},
		{"https://acct.table.cosmos.azure.com:443/", "", Endpoint{System: SystemCosmos, Namespace: "acct", Address: "acct.table.cosmos.azure.com"}},
		{"http://127.0.0.1:10002/devstoreaccount1", "", Endpoint{System: SystemTables, Namespace: "devstoreaccount1", Address: "127.0.0.1", Port: 10002}},
		{"https://acct.blob.core.windows.net", SystemBlob, Endpoint{System: SystemBlob, Namespace: "acct", Address: "acct.blob.core.windows.net"}},
		{"https://tables.example.com:8443", "", Endpoint{System: SystemTables, Address: "tables.example.com", Port: 8443}},
		{"memory://account-1", "", Endpoint{System: SystemTables}},
		{"test", "", Endpoint{System: SystemTables}},
		{"", SystemBlob, Endpoint{System: SystemBlob}},
	} {
		e := NewEndpoint(tc.name, tc.system)
		if e.System != tc.want.System || e.Namespace != tc.want.Namespace || e.Address != tc.want.Address || e.Port != tc.want.Port {
			t.Errorf("NewEndpoint(%q, %q) = %+v, want %+v", tc.name, tc.system, *e, tc.want)
		}
	}
}

// error.type is the sentinel's name, or the conventions' _OTHER.
func TestErrorType(t *testing.T) {
	for err, want := range map[error]string{
		nil:                                 "",
		errors.New("x"):                     "_OTHER",
		abstractions.ErrNotFound:            "not_found",
		context.DeadlineExceeded:            "deadline_exceeded",
		abstractions.ErrConcurrencyConflict: "concurrency_conflict",
	} {
		if got := ErrorType(err); got != want {
			t.Errorf("ErrorType(%v) = %q, want %q", err, got, want)
		}
	}
}

// A batch is named "BATCH <op>" with its size, a batch of one is its write, and writes that
// differ are "BATCH"; a call of the whole account is named after the account; a call of a
// remote service is a client span, a verb an internal one.
func TestBatchSpans(t *testing.T) {
	sp := &spans{}
	tel := &Telemetry{Tracer: sp, Endpoint: NewEndpoint("https://acct.table.core.windows.net", "")}
	var err error
	for _, tc := range []struct {
		op, name string
		n        int
		size     any
	}{
		{"create", "BATCH create Orders", 3, 3},
		{"create", "create Orders", 1, nil},
		{"", "BATCH Orders", 2, 2},
		{"upsert", "BATCH upsert Orders", 0, 0},
	} {
		_, c := tel.BeginBatch(context.Background(), "Orders", tc.op, tc.n)
		c.Finish(&err)
		if sp.name != tc.name || sp.attrs[AttrBatchSize] != tc.size || sp.span != KindClient || sp.attrs[AttrNamespace] != "acct" {
			t.Errorf("batch of %d %q: span %q, size %v, kind %v, attributes %v", tc.n, tc.op, sp.name, sp.attrs[AttrBatchSize], sp.span, sp.attrs)
		}
	}
	_, c := tel.Begin(context.Background(), "", "ping")
	c.Finish(&err)
	if _, ok := sp.attrs[AttrTable]; ok || sp.name != "ping acct" {
		t.Errorf("a call of the account: span %q with attributes %v", sp.name, sp.attrs)
	}
	_, vs := tel.Verb(context.Background(), "Orders", "mutate", "p|r")
	vs.End(nil)
	if sp.span != KindInternal || sp.name != "mutate Orders" {
		t.Errorf("verb span %q of kind %v", sp.name, sp.span)
	}
}
