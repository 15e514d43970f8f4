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
		_, vs := tel.Verb(ctx, "T", "mutate", "p|r", "p", "r")
		vs.Event(driver.EventAttemptLost, "attempt", 1)
		vs.End(nil)
	}
}

// spans is a Tracer that records what it is told.
type spans struct {
	started, ended int
	attrs          map[string]any
	kind           string
}

func (s *spans) Start(ctx context.Context, name string, attrs []Attribute) (context.Context, Span) {
	s.started++
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
		if sp.kind != "concurrency_conflict" || sp.attrs[AttrStatusCode] != "UpdateConditionNotSatisfied" {
			t.Errorf("error kind %q, code %v", sp.kind, sp.attrs[AttrStatusCode])
		}
	}
}
