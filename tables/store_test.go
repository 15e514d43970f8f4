package tables

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/retry"
	"github.com/unified-data/gotables/tables/service"
)

// item is the plain stored type of the engine's tests.
type item struct {
	abstractions.Entity
	Name string
	N    int
}

// testNow is the clock of the test accounts.
var testNow = time.Date(2026, 2, 3, 4, 5, 6, 123456700, time.UTC)

// newStore returns a store of T in a fresh account over a fresh fake. opts may be nil; its
// Now defaults to testNow.
func newStore[T any, P abstractions.EntityPtr[T]](t testing.TB, opts *Options, mods ...func(*config)) (*Store[T], *fakeTables) {
	t.Helper()
	f := newFake()
	// The table exists, as it does for a store in use: tests count the calls a store
	// makes, and a write to a missing table makes three (the write, Create Table, the write
	// again). TestTablesAreCreatedByWrites covers that path.
	f.tables["items"] = map[fakeKey]service.Row{}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = func() time.Time { return testNow }
	}
	s, err := For[T, P](testAccount("test", f, nil, &o, mods...), &StoreOptions{Table: "Items"})
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

// wantKind fails the test unless err matches kind (nil: err is nil).
func wantKind(t *testing.T, err, kind error) {
	t.Helper()
	switch {
	case kind == nil && err != nil:
		t.Fatalf("error %v, want none", err)
	case kind != nil && !errors.Is(err, kind):
		t.Fatalf("error %v, want one matching %v", err, kind)
	}
}

// notStruct satisfies the constraint of New without being a struct.
type notStruct int

func (notStruct) Base() *abstractions.Entity { return &abstractions.Entity{} }

type badField struct {
	abstractions.Entity
	C chan int
}

type Widget struct {
	abstractions.Entity
	Name string
}

type Box[T any] struct {
	abstractions.Entity
	V T
}

func TestNewRefuses(t *testing.T) {
	acct := testAccount("test", newFake(), nil, nil)
	cases := []struct {
		name string
		new  func() error
		kind error
		says string
	}{
		{"nil account", func() error { _, err := For[item](nil, nil); return err }, abstractions.ErrInvalidArgument, "NewAccount"},
		{"account not made by NewAccount", func() error { _, err := For[item](&Account{}, nil); return err }, abstractions.ErrInvalidArgument, "NewAccount"},
		{"not a struct", func() error { _, err := For[notStruct](acct, nil); return err }, abstractions.ErrInvalidArgument, "struct"},
		{"field the codec cannot map", func() error { _, err := For[badField](acct, nil); return err }, abstractions.ErrNotSupported, "C"},
		{"bad table name", func() error { _, err := For[item](acct, &StoreOptions{Table: "a-b"}); return err }, abstractions.ErrInvalidArgument, "StoreOptions.Table"},
		{"generic type's name", func() error { _, err := For[Box[int]](acct, nil); return err }, abstractions.ErrInvalidArgument, "StoreOptions.Table"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.new()
			wantKind(t, err, tc.kind)
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not mention %q", err, tc.says)
			}
		})
	}
}

func TestNewNamesTheTable(t *testing.T) {
	f := newFake()
	acct := testAccount("acct", f, nil, nil)
	s, err := For[Widget](acct, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Table() != "Widget" || s.Account() != acct || acct.Name() != "acct" || acct.Tables() != f || acct.Blobs() != nil {
		t.Errorf("table %q, account %p (want %p)", s.Table(), s.Account(), acct)
	}
	s, err = For[Widget](acct, &StoreOptions{Table: "Gadgets"})
	if err != nil || s.Table() != "Gadgets" {
		t.Errorf("named table: %v, %v", s, err)
	}
}

func TestCheckTableName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"abc", true},
		{"A1b2C3", true},
		{strings.Repeat("a", 63), true},
		{"ab", false},
		{strings.Repeat("a", 64), false},
		{"1abc", false},
		{"ab_c", false},
		{"ab-c", false},
		{"tables", false},
		{"Tables", false},
		{"", false},
		{"abcé", false},
	}
	for _, tc := range cases {
		err := service.CheckTableName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("CheckTableName(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, abstractions.ErrInvalidArgument) {
			t.Errorf("CheckTableName(%q) = %v, want ErrInvalidArgument", tc.name, err)
		}
	}
}

func TestEnsureCreated(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	if err := s.EnsureCreated(ctx); err != nil {
		t.Fatal(err)
	}
	// Known now: no second create.
	if err := s.EnsureCreated(ctx); err != nil || f.count("CreateTable") != 1 {
		t.Fatalf("second EnsureCreated: %v, %d creates", err, f.count("CreateTable"))
	}
	// Another account finds the table made by someone else: 409 TableAlreadyExists is success.
	other, err := For[item](testAccount("test", f, nil, nil), &StoreOptions{Table: "items"})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.EnsureCreated(ctx); err != nil {
		t.Fatalf("a table that exists: %v", err)
	}
	// A failure is not remembered: the next call tries again.
	third, _ := For[item](testAccount("test", f, nil, nil), &StoreOptions{Table: "Third"})
	f.before = func(call string) error { return fakeStatus(http.StatusServiceUnavailable, "ServerBusy") }
	wantKind(t, third.EnsureCreated(ctx), abstractions.ErrUnavailable)
	f.before = nil
	if err := third.EnsureCreated(ctx); err != nil {
		t.Fatalf("after a failure: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	wantKind(t, s.EnsureCreated(cancelled), context.Canceled)
}

// A table deleted behind the account's back is created again by the next write, which is
// sent once more; a read of the missing table finds nothing and creates nothing.
func TestTableDeletedBehindTheAccount(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.DeleteTable(ctx, "Items"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.One(ctx, "p|a"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("a read of the missing table: %v, want ErrNotFound", err)
	}
	if n, err := s.Count(ctx, "p"); err != nil || n != 0 {
		t.Fatalf("a count of the missing table: %d, %v", n, err)
	}
	if ok, err := s.Exists(ctx, "p|a"); err != nil || ok {
		t.Fatalf("Exists on the missing table: %v, %v", ok, err)
	}
	if f.count("CreateTable") != 0 {
		t.Fatalf("reads sent %d Create Table", f.count("CreateTable"))
	}
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|b"}}); err != nil {
		t.Fatalf("create after the table was deleted: %v (calls %v)", err, f)
	}
	if f.count("CreateTable") != 1 || f.size("Items") != 1 {
		t.Errorf("%d creates, %d rows", f.count("CreateTable"), f.size("Items"))
	}
}

// A first write creates its table; with NeverCreateTables it fails with ErrNotFound and
// EnsureCreated only checks.
func TestTablesAreCreatedByWrites(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	s, err := For[item](testAccount("test", f, nil, &Options{Now: func() time.Time { return testNow }}), &StoreOptions{Table: "Fresh"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.One(ctx, "p|a"); !errors.Is(err, abstractions.ErrNotFound) || f.count("CreateTable") != 0 {
		t.Fatalf("read: %v, %d creates", err, f.count("CreateTable"))
	}
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil || f.count("CreateTable") != 1 || f.size("Fresh") != 1 {
		t.Fatalf("first write: %v, %d creates, %d rows", err, f.count("CreateTable"), f.size("Fresh"))
	}

	never, err := For[item](testAccount("test", f, nil, &Options{NeverCreateTables: true}), &StoreOptions{Table: "Locked"})
	if err != nil {
		t.Fatal(err)
	}
	wantKind(t, never.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}), abstractions.ErrNotFound)
	wantKind(t, never.EnsureCreated(ctx), abstractions.ErrNotFound)
	if _, err := never.UpsertBatch(ctx, items("p", 3)); !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("batch without the table: %v", err)
	}
	if f.count("CreateTable") != 1 {
		t.Fatalf("NeverCreateTables sent %d creates", f.count("CreateTable")-1)
	}
	if err := f.CreateTable(ctx, "Locked"); err != nil {
		t.Fatal(err)
	}
	if err := never.EnsureCreated(ctx); err != nil {
		t.Fatalf("EnsureCreated of an existing table: %v", err)
	}
	if err := never.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
		t.Fatal(err)
	}
}

// transportError stands for a failure below HTTP, as the SDK returns it.
type transportError struct{}

func (transportError) Error() string   { return "dial tcp: connection refused" }
func (transportError) Timeout() bool   { return false }
func (transportError) Temporary() bool { return false }

var _ net.Error = transportError{}

func TestTranslate(t *testing.T) {
	s, _ := newStore[item](t, nil)
	status := func(code int, name string) error { return fakeStatus(code, name) }
	already := &abstractions.StoreError{Kind: abstractions.ErrInvalidKey, Op: "x", Message: "already translated"}
	integrity := fmt.Errorf("decode: %w", abstractions.ErrIntegrity)
	cases := []struct {
		name string
		err  error
		kind error  // the sentinel the result matches; nil: none of the library's
		says string // a part of the message
		same bool   // the error is returned as it is
	}{
		{"409 EntityAlreadyExists", status(http.StatusConflict, "EntityAlreadyExists"), abstractions.ErrDuplicateKey, "already exists", false},
		{"409 of another kind", status(http.StatusConflict, "TableBeingDeleted"), nil, "refused", false},
		{"412", status(http.StatusPreconditionFailed, "UpdateConditionNotSatisfied"), abstractions.ErrConcurrencyConflict, "read it again", false},
		{"404 ResourceNotFound", status(http.StatusNotFound, "ResourceNotFound"), abstractions.ErrNotFound, "no row", false},
		{"404 TableNotFound", status(http.StatusNotFound, "TableNotFound"), abstractions.ErrNotFound, "does not exist", false},
		{"500", status(http.StatusInternalServerError, "InternalError"), abstractions.ErrUnavailable, "500", false},
		{"503", status(http.StatusServiceUnavailable, "ServerBusy"), abstractions.ErrUnavailable, "try again later", false},
		{"403", status(http.StatusForbidden, "AuthorizationFailure"), nil, "credential", false},
		{"400", status(http.StatusBadRequest, "InvalidInput"), nil, "refused", false},
		{"transport", &net.OpError{Op: "dial", Net: "tcp", Err: transportError{}}, abstractions.ErrUnavailable, "could not be reached", false},
		{"deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), abstractions.ErrUnavailable, "deadline", false},
		{"cancelled", fmt.Errorf("get: %w", context.Canceled), context.Canceled, "cancelled", false},
		{"a store error", already, abstractions.ErrInvalidKey, "already translated", true},
		{"a library error", integrity, abstractions.ErrIntegrity, "decode", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := s.core.Translate("read", "p", "r", tc.err)
			if tc.same {
				if got != tc.err {
					t.Fatalf("translate changed %v into %v", tc.err, got)
				}
				return
			}
			var se *abstractions.StoreError
			if !errors.As(got, &se) || se.Table != "Items" || se.PartitionKey != "p" || se.RowKey != "r" || se.Op != "read" {
				t.Fatalf("translate = %#v, want a StoreError naming the row", got)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("the original error is not in the chain of %v", got)
			}
			if tc.kind != nil && !errors.Is(got, tc.kind) {
				t.Errorf("%v does not match %v", got, tc.kind)
			}
			for _, other := range append([]error{abstractions.ErrIntegrity, abstractions.ErrBlobOffloadNotConfigured, abstractions.ErrNotSupported,
				abstractions.ErrInvalidArgument, abstractions.ErrInvalidKey, abstractions.ErrOversizedCell, abstractions.ErrOversizedValue}, abstractions.ErrNotFound, abstractions.ErrDuplicateKey,
				abstractions.ErrConcurrencyConflict, abstractions.ErrUnavailable, context.Canceled) {
				if other != tc.kind && errors.Is(got, other) {
					t.Errorf("%v also matches %v", got, other)
				}
			}
			if !strings.Contains(se.Message, tc.says) {
				t.Errorf("message %q does not say %q", se.Message, tc.says)
			}
		})
	}
	if s.core.Translate("read", "", "", nil) != nil {
		t.Error("translate(nil) is not nil")
	}
}

// Only a write left without an answer is said to be maybe applied: a read changes nothing.
func TestTranslateSaysMaybeAppliedOnlyForWrites(t *testing.T) {
	s, _ := newStore[item](t, nil)
	for _, cause := range []error{
		fakeStatus(http.StatusServiceUnavailable, "ServerBusy"),
		&net.OpError{Op: "dial", Net: "tcp", Err: transportError{}},
		fmt.Errorf("get: %w", context.DeadlineExceeded),
		fmt.Errorf("get: %w", context.Canceled),
	} {
		for _, op := range []string{"read", "exists", "list", "count", "query", "stream", "any", "page", "ping", "open file", "read file",
			"create", "upsert", "update", "patch", "delete", "create batch", "upsert batch", "delete partition", "create table", "sweep orphan blobs"} {
			write := callerr.RequestOf(op) == callerr.Write
			err := s.core.Translate(op, "p", "r", cause)
			if got := strings.Contains(err.Error(), "may or may not have been applied"); got != write {
				t.Errorf("%s after %v: %q says the request may have been applied: %v, want %v", op, cause, err, got, write)
			}
		}
	}
	for _, op := range []string{"create", "update", "delete partition", "create table"} {
		if callerr.RequestOf(op) != callerr.Write {
			t.Errorf("%s counts as a read", op)
		}
	}
	for _, op := range []string{"read", "query", "count", "open file"} {
		if callerr.RequestOf(op) != callerr.Read {
			t.Errorf("%s counts as a write", op)
		}
	}
}

// Every call turns a service failure into the same kinds; a few paths end to end.
func TestServiceFailuresReachTheCaller(t *testing.T) {
	ctx := context.Background()
	busy := fakeStatus(http.StatusServiceUnavailable, "ServerBusy")
	for _, tc := range []struct {
		name string
		call func(s *Store[item]) error
	}{
		{"create", func(s *Store[item]) error { return s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|r"}}) }},
		{"one", func(s *Store[item]) error { _, err := s.One(ctx, "p|r"); return err }},
		{"exists", func(s *Store[item]) error { _, err := s.Exists(ctx, "p|r"); return err }},
		{"delete", func(s *Store[item]) error { _, err := s.Delete(ctx, "p|r", ""); return err }},
		{"list", func(s *Store[item]) error { _, err := s.List(ctx, "p"); return err }},
		{"count", func(s *Store[item]) error { _, err := s.CountAll(ctx); return err }},
		{"upsert batch", func(s *Store[item]) error {
			_, err := s.UpsertBatch(ctx, []*item{{Entity: abstractions.Entity{ID: "p|r"}}})
			return err
		}},
		{"delete partition", func(s *Store[item]) error { _, err := s.DeletePartition(ctx, "p"); return err }},
		{"query", func(s *Store[item]) error {
			_, err := s.Query(ctx, abstractions.Query[item]{Partition: "p"})
			return err
		}},
		{"page", func(s *Store[item]) error {
			_, err := s.Page(ctx, abstractions.Query[item]{Partition: "p"})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, f := newStore[item](t, nil)
			if err := s.EnsureCreated(ctx); err != nil {
				t.Fatal(err)
			}
			f.before = func(string) error { return busy }
			err := tc.call(s)
			var se *abstractions.StoreError
			if !errors.Is(err, abstractions.ErrUnavailable) || !errors.As(err, &se) || se.Table != "Items" || !errors.Is(err, busy) {
				t.Fatalf("%v, want a StoreError of Items matching ErrUnavailable with the service's error", err)
			}
		})
	}
}

// testAccount is an account over a test service that adds no retries of its own (unlike
// NewAccountOver, which retries as the Azure SDK does), so that a test sees every answer of
// its service. mods set what Options cannot give a test service (a tracer, a retry policy).
func testAccount(name string, tbl service.Tables, blobs service.Blobs, opts *Options, mods ...func(*config)) *Account {
	cfg := opts.config(nil)
	for _, m := range mods {
		m(&cfg)
	}
	return newAccount(name, tbl, blobs, cfg, retry.NewPressure(cfg.Options.batchParallelism()))
}

// The policies of Options.Oversized are the codec's, value for value.
func TestOversizedPoliciesAreTheCodecs(t *testing.T) {
	for p, c := range map[OversizedPolicy]codec.OversizedPolicy{
		OversizedRefuse: codec.OversizedRefuse, OversizedCompress: codec.OversizedCompress,
		OversizedTrim: codec.OversizedTrim, OversizedTrimWithMarker: codec.OversizedTrimWithMarker,
	} {
		if codec.OversizedPolicy(p) != c {
			t.Errorf("policy %d is the codec's %d", p, c)
		}
	}
}
