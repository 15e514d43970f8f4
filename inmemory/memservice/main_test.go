package memservice

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// t0 is the pinned time most tests start from.
var t0 = time.Date(2026, 11, 29, 18, 30, 11, 123456700, time.UTC)

// A clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// newTable returns a service with a pinned clock and one table named "Tab1".
func newTable(t *testing.T, opts ...Option) (*Service, *clock) {
	t.Helper()
	c := &clock{t: t0}
	s := New(append([]Option{WithClock(c.now)}, opts...)...)
	if err := s.CreateTable(context.Background(), "Tab1"); err != nil {
		t.Fatal(err)
	}
	return s, c
}

// wantStatus fails the test unless err is a plain *abstractions.StatusError with the status
// and code.
func wantStatus(t *testing.T, err error, status int, code string) {
	t.Helper()
	var se *abstractions.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error = %v, want %d %s", err, status, code)
	}
	var te *service.TransactionError
	if errors.As(err, &te) {
		t.Fatalf("error = %v, want a plain status error", err)
	}
	if se.StatusCode != status || se.ErrorCode != code {
		t.Fatalf("error = %v, want %d %s", err, status, code)
	}
}

// wantTx fails the test unless err is a *service.TransactionError at index with the status
// and code.
func wantTx(t *testing.T, err error, index, status int, code string) {
	t.Helper()
	var te *service.TransactionError
	if !errors.As(err, &te) {
		t.Fatalf("error = %v, want a transaction error at %d", err, index)
	}
	if te.Index != index || !abstractions.HasStatus(te.Err, status, code) {
		t.Fatalf("error = %v, want action %d failing with %d %s", err, index, status, code)
	}
}

func row(pk, rk string, props ...service.Property) service.Row {
	return service.Row{PartitionKey: pk, RowKey: rk, Properties: props}
}

func prop(name string, v service.Value) service.Property {
	return service.Property{Name: name, Value: v}
}

func mustWrite(t *testing.T, s *Service, a service.Action) service.Written {
	t.Helper()
	w, err := s.Write(context.Background(), "Tab1", a)
	if err != nil {
		t.Fatalf("%v %s/%s: %v", a.Op, a.Row.PartitionKey, a.Row.RowKey, err)
	}
	return w
}

func insert(r service.Row) service.Action { return service.Action{Op: service.OpInsert, Row: r} }

func mustGet(t *testing.T, s *Service, pk, rk string) service.Row {
	t.Helper()
	r, err := s.GetRow(context.Background(), "Tab1", pk, rk, nil)
	if err != nil {
		t.Fatalf("GetRow %s/%s: %v", pk, rk, err)
	}
	return r
}

// props returns the row's properties as a map for comparisons that ignore order.
func propMap(r service.Row) map[string]service.Value {
	m := make(map[string]service.Value, len(r.Properties))
	for _, p := range r.Properties {
		m[p.Name] = p.Value
	}
	return m
}

func equalProps(a, b map[string]service.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

func TestContextDone(t *testing.T) {
	s, _ := newTable(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := map[string]error{
		"CreateTable":     s.CreateTable(ctx, "Other"),
		"DeleteTable":     s.DeleteTable(ctx, "Tab1"),
		"Transact":        txErr(s.Transact(ctx, "Tab1", []service.Action{insert(row("p", "r"))})),
		"CreateContainer": s.CreateContainer(ctx, "box"),
		"DeleteContainer": s.DeleteContainer(ctx, "box"),
		"DeleteBlob":      s.DeleteBlob(ctx, "box", "b", service.Conditions{}),
	}
	_, calls["TableExists"] = s.TableExists(ctx, "Tab1")
	_, calls["GetRow"] = s.GetRow(ctx, "Tab1", "p", "r", nil)
	_, calls["Write"] = s.Write(ctx, "Tab1", insert(row("p", "r")))
	_, calls["Query"] = s.Query(ctx, "Tab1", service.Query{})
	_, calls["Upload"] = s.Upload(ctx, "box", "b", nil, service.UploadOptions{})
	_, calls["UploadStream"] = s.UploadStream(ctx, "box", "b", strings.NewReader("x"), service.UploadOptions{})
	_, calls["Touch"] = s.Touch(ctx, "box", "b")
	_, calls["Download"] = s.Download(ctx, "box", "b", service.Conditions{})
	_, calls["List"] = s.List(ctx, "box", service.ListOptions{})
	_, calls["Now"] = s.Now(ctx)
	for name, err := range calls {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error = %v, want context.Canceled", name, err)
		}
	}
	if ok, _ := s.TableExists(context.Background(), "Tab1"); !ok {
		t.Error("DeleteTable with a done context deleted the table")
	}
}
