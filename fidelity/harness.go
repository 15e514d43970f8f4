package fidelity

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// A Scenario is one behaviour exercised on both backends. Run drives the services through
// the Env, recording what it observes and checking its own expectations; the suite then
// compares the two observation logs.
type Scenario struct {
	// Name names the scenario in test names and failures ("store/list-and-count").
	Name string
	// Deviation names an entry of Deviations when Azurite is known to answer differently
	// from the real service; the two logs are then not compared, and Run asserts each
	// backend's own answer (Env.OnAzurite tells them apart).
	Deviation string
	// NoTable skips creating the scenario's table (scenarios about tables themselves).
	NoTable bool
	// Container asks for a blob container of the scenario's own.
	Container bool
	// Run exercises the behaviour on one backend through e.
	Run func(ctx context.Context, e *Env)
}

// Env is what a scenario sees of one backend run.
type Env struct {
	t testing.TB
	// Backend is the harness's name (Azurite, Memory or Cosmos).
	Backend string
	// Product is the table service the backend behaves as: service.Cosmos on the memory
	// service's Cosmos profile, service.Storage otherwise.
	Product service.Product
	// Tables and Blobs are the backend's services.
	Tables service.Tables
	Blobs  service.Blobs
	// Table and Container are names of the scenario's own (unique per run), created before
	// Run unless the scenario asked otherwise.
	Table     string
	Container string
	// Suffix is the run's random suffix, for scenarios that make more names.
	Suffix string

	log   []Observation
	norm  normalizer
	extra []string // extra tables to dump and delete
}

// An Observation is one thing a scenario saw, rendered as text so that the two backends'
// logs compare with cmp.Diff.
type Observation struct {
	// Step names what the scenario did; What is what it saw, as text.
	Step string
	What string
}

// OnAzurite reports whether this run is on Azurite.
func (e *Env) OnAzurite() bool { return e.Backend == Azurite }

// NewAccount returns an account over tbl and blobs (the run's services, or a scenario's
// wrappers of them) that talks to the backend's kind of service: on the Cosmos profile it
// is a Cosmos DB account whatever wraps the service.
func (e *Env) NewAccount(tbl service.Tables, blobs service.Blobs, opts *tables.Options) *tables.Account {
	if e.Product == service.Cosmos {
		var o tables.Options
		if opts != nil {
			o = *opts
		}
		o.Service = service.Cosmos
		opts = &o
	}
	return tables.NewAccountOver(e.Backend, tbl, blobs, opts)
}

// Name returns a table or container name of the run's own, built from base (letters and
// digits) and the run's suffix, and registers it for the dump and the clean-up.
func (e *Env) Name(base string) string {
	n := base + e.Suffix
	e.extra = append(e.extra, n)
	return n
}

// Observe records a value under a step name.
func (e *Env) Observe(step string, v any) {
	e.log = append(e.log, Observation{Step: step, What: e.render(v)})
}

// ObserveErr records an error (or "ok") under a step name and returns it.
func (e *Env) ObserveErr(step string, err error) error {
	e.log = append(e.log, Observation{Step: step, What: describeError(err)})
	return err
}

// Fatalf reports a failure and stops the scenario on this backend. Scenarios run on a
// goroutine of their own, so it ends that goroutine rather than calling t.FailNow.
func (e *Env) Fatalf(format string, args ...any) {
	e.t.Helper()
	e.t.Errorf("[%s] "+format, append([]any{e.Backend}, args...)...)
	runtime.Goexit()
}

// Errorf reports a failed expectation on this backend.
func (e *Env) Errorf(format string, args ...any) {
	e.t.Helper()
	e.t.Errorf("[%s] "+format, append([]any{e.Backend}, args...)...)
}

// OK records err under step and fails the scenario on this backend unless err is nil.
func (e *Env) OK(step string, err error) {
	e.t.Helper()
	e.ObserveErr(step, err)
	if err != nil {
		e.Fatalf("%s: unexpected error: %v", step, err)
	}
}

// Deleted returns the check of a Delete's answer, to be called with it:
// e.Deleted(step, true)(s.Delete(ctx, id, "")) records the answer under step and fails the
// scenario on this backend unless the call succeeded and said deleted as want.
func (e *Env) Deleted(step string, want bool) func(deleted bool, err error) {
	return func(deleted bool, err error) {
		e.t.Helper()
		e.OK(step, err)
		e.Equal(step+": deleted", deleted, want)
	}
}

// Status records err under step and checks that it is a *StatusError with the status and
// code (code "" accepts any code, including none).
func (e *Env) Status(step string, err error, status int, code string) {
	e.t.Helper()
	e.ObserveErr(step, err)
	if !abstractions.HasStatus(err, status, code) {
		e.Errorf("%s: got %s, want status=%d code=%s", step, describeError(err), status, code)
	}
}

// TxStatus records err under step and checks that it is a *service.TransactionError
// blaming action index with the status and code.
func (e *Env) TxStatus(step string, err error, index, status int, code string) {
	e.t.Helper()
	e.ObserveErr(step, err)
	var te *service.TransactionError
	if !errors.As(err, &te) || te.Index != index || !abstractions.HasStatus(err, status, code) {
		e.Errorf("%s: got %s, want action %d status=%d code=%s", step, describeError(err), index, status, code)
	}
}

// Equal records got under step and checks it equals want (compared as rendered text).
func (e *Env) Equal(step string, got, want any) {
	e.t.Helper()
	e.Observe(step, got)
	if g, w := e.renderRaw(got), e.renderRaw(want); g != w {
		e.Errorf("%s: got %s, want %s", step, g, w)
	}
}

// describeError renders an error the way observations compare it: "ok", or the status,
// code and (for transactions) the failing action, or the sentinel it matches.
func describeError(err error) string {
	if err == nil {
		return "ok"
	}
	var parts []string
	var te *service.TransactionError
	if errors.As(err, &te) {
		parts = append(parts, fmt.Sprintf("action=%d", te.Index))
	}
	var se *abstractions.StatusError
	if errors.As(err, &se) {
		parts = append(parts, fmt.Sprintf("status=%d code=%s", se.StatusCode, se.ErrorCode))
	}
	for _, s := range []error{abstractions.ErrNotFound, abstractions.ErrDuplicateKey, abstractions.ErrConcurrencyConflict,
		abstractions.ErrNotSupported, abstractions.ErrOversizedCell, abstractions.ErrOversizedValue, abstractions.ErrIntegrity,
		abstractions.ErrBlobOffloadNotConfigured, abstractions.ErrProtectedProperty, abstractions.ErrInvalidKey, abstractions.ErrInvalidArgument,
		abstractions.ErrUnavailable, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, s) {
			parts = append(parts, "is="+s.Error())
		}
	}
	if len(parts) == 0 {
		return "error: " + err.Error()
	}
	return strings.Join(parts, " ")
}

// normalizer renders service-assigned ETags and times by presence only. Their values are
// opaque, and backends legitimately differ in which rows share one (Azurite gives the rows of
// one transaction the same time, or not, at random), so a scenario that depends on how two
// versions relate checks it explicitly (Env.Equal on a comparison) instead.
type normalizer struct{}

func (normalizer) etag(s string) string {
	if s == "" {
		return "no-etag"
	}
	return "etag"
}

func (normalizer) time(t time.Time) string {
	if t.IsZero() {
		return "no-time"
	}
	return "time"
}

// render turns an observed value into text, normalising service-assigned ETags and times.
func (e *Env) render(v any) string {
	switch x := v.(type) {
	case service.Row:
		return e.renderRow(&x)
	case *service.Row:
		return e.renderRow(x)
	case []service.Row:
		parts := make([]string, len(x))
		for i := range x {
			parts[i] = e.renderRow(&x[i])
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case service.Written:
		return "written{" + e.norm.etag(x.ETag) + " " + e.norm.time(x.Timestamp) + "}"
	case service.BlobProperties:
		return e.renderBlobProps(x)
	case service.BlobPage:
		var b strings.Builder
		b.WriteString("blobs[")
		for i, it := range x.Blobs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(it.Name + " " + e.renderBlobProps(it.Properties))
		}
		b.WriteString("] prefixes" + fmt.Sprint(x.Prefixes))
		if x.NextMarker != "" {
			b.WriteString(" more")
		}
		return b.String()
	case error:
		return describeError(x)
	}
	return e.renderRaw(v)
}

func (e *Env) renderRaw(v any) string {
	switch x := v.(type) {
	case service.Value:
		return x.String()
	case []byte:
		return fmt.Sprintf("bytes(%d)%x", len(x), x)
	}
	return fmt.Sprintf("%v", v)
}

func (e *Env) renderBlobProps(p service.BlobProperties) string {
	return fmt.Sprintf("{%s %s len=%d type=%q enc=%q}", e.norm.etag(p.ETag), e.norm.time(p.LastModified),
		p.ContentLength, p.ContentType, p.ContentEncoding)
}

func (e *Env) renderRow(r *service.Row) string {
	props := append([]service.Property(nil), r.Properties...)
	sort.Slice(props, func(i, j int) bool { return props[i].Name < props[j].Name })
	var b strings.Builder
	fmt.Fprintf(&b, "row{%q|%q", r.PartitionKey, r.RowKey)
	b.WriteString(" " + e.norm.etag(r.ETag) + " " + e.norm.time(r.Timestamp))
	for _, p := range props {
		b.WriteString(" " + p.Name + "=" + p.Value.String())
	}
	b.WriteString("}")
	return b.String()
}

// dumpTable records every row of a table, following continuations.
func (e *Env) dumpTable(ctx context.Context, table string) {
	rows, err := storedRows(ctx, e.Tables, table, service.Query{})
	if err != nil {
		e.ObserveErr("left behind in "+table, err)
		return
	}
	e.Observe("rows left behind", rows)
}

// dumpContainer records every blob of a container with its content.
func (e *Env) dumpContainer(ctx context.Context, container string) {
	marker := ""
	for {
		page, err := e.Blobs.List(ctx, container, service.ListOptions{Marker: marker})
		if err != nil {
			e.ObserveErr("blobs left behind", err)
			return
		}
		for _, it := range page.Blobs {
			b, err := e.Blobs.Download(ctx, container, it.Name, service.Conditions{})
			if err != nil {
				e.ObserveErr("blob left behind "+it.Name, err)
				continue
			}
			data, err := io.ReadAll(b.Body)
			b.Body.Close()
			if err != nil {
				e.ObserveErr("blob left behind "+it.Name, err)
				continue
			}
			e.Observe("blob left behind "+it.Name, fmt.Sprintf("%s %q", e.renderBlobProps(b.Properties), data))
		}
		if page.NextMarker == "" {
			return
		}
		marker = page.NextMarker
	}
}

// allRows runs q page by page to the end and returns every row, in the order the service
// lists them.
func allRows(ctx context.Context, t service.Tables, table string, q service.Query) ([]service.Row, error) {
	var rows []service.Row
	for {
		page, err := t.Query(ctx, table, q)
		if err != nil {
			return rows, err
		}
		rows = append(rows, page.Rows...)
		if page.Next == nil {
			return rows, nil
		}
		q.Continuation = page.Next
	}
}

// storedRows is allRows in key order: what is stored, whatever order the service lists it
// in (Cosmos DB for Table lists rows in no key order). A scenario about the order itself
// reads allRows.
func storedRows(ctx context.Context, t service.Tables, table string, q service.Query) ([]service.Row, error) {
	rows, err := allRows(ctx, t, table, q)
	slices.SortStableFunc(rows, func(a, b service.Row) int {
		return cmp.Or(service.CompareUTF16(a.PartitionKey, b.PartitionKey), service.CompareUTF16(a.RowKey, b.RowKey))
	})
	return rows, err
}

func randomSuffix() string {
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// AcceptedByAzurite records err under step for a request that the real service refuses and
// Azurite 3.35 accepts (a listed deviation): on Azurite it checks that the request
// succeeded, on the memory service that it failed with the status and code Azure gives.
func (e *Env) AcceptedByAzurite(step string, err error, status int, code string) {
	e.t.Helper()
	if e.OnAzurite() {
		e.OK(step, err)
		return
	}
	e.Status(step, err, status, code)
}
