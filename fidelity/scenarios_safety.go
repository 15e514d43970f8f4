package fidelity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/service"
)

// Safety scenarios: a partition value never reaches another partition, a malformed ETag is
// refused before anything is sent, a service that fails is reported as unavailable with the
// call it failed, DeletePartition never counts a row that is still there, and the Azurite
// deviations that touch these paths.

// safetyScenarios returns the safety scenarios; StoreScenarios lists them.
func safetyScenarios() []Scenario {
	return []Scenario{
		{Name: "safety/partition-isolation", Run: partitionIsolation},
		{Name: "safety/partition-normalisation", Run: partitionNormalisation},
		{Name: "safety/malformed-etags", Run: malformedETags},
		{Name: "safety/unavailable-service", Run: unavailableService},
		{Name: "safety/deadline", Run: deadlinePassed},
		{Name: "safety/delete-partition-counts-honestly", Run: deletePartitionHonest},
		{Name: "safety/large-non-ascii-text", Deviation: "utf8-split-across-chunks", Run: largeNonASCII},
		{Name: "safety/table-name-case", NoTable: true, Deviation: "table-name-case", Run: tableNameCase},
		{Name: "safety/line-separator-keys-in-transactions", Deviation: "transaction-line-separator-keys", Run: lineSeparatorKeys},
		{Name: "safety/negative-zero", Deviation: "negative-zero", Run: negativeZero},
	}
}

// partitionIsolation: a partition that holds the id separator is refused by every API that
// takes a partition, before anything is sent, so it can never address the rows of the
// partition before its "|".
func partitionIsolation(ctx context.Context, e *Env) {
	s := storeOf[customerRow](e, nil)
	e.OK("seed acme", s.CreateBatch(ctx, []*customerRow{
		{Entity: abstractions.Entity{ID: "acme|1"}, Name: "acme's own"},
		{Entity: abstractions.Entity{ID: "acme|x|1"}, Name: "acme's, row x|1"},
	}))
	e.OK("seed Acme Corp", s.Create(ctx, &customerRow{Entity: abstractions.Entity{ID: "Acme Corp|1"}, Name: "acme corp"}))

	_, err := abstractions.CombineID("acme|x", "1")
	e.Is("CombineID", err, abstractions.ErrInvalidKey)

	c, ct := countingStoreOf[customerRow](e)
	ev, cte := countingStoreOf[eventRow](e)
	snaps, cts := countingStoreOf[snapshotRow](e)
	const tenant = "acme|x"
	refusals := []struct {
		api string
		err error
	}{
		{"List", func() error { _, err := c.List(ctx, tenant); return err }()},
		{"Count", func() error { _, err := c.Count(ctx, tenant); return err }()},
		{"DeletePartition", func() error { _, err := c.DeletePartition(ctx, tenant); return err }()},
		{"Query", func() error {
			_, err := c.Query(ctx, abstractions.Query[customerRow]{Partition: tenant})
			return err
		}()},
		{"Query with a prefix", func() error {
			_, err := c.Query(ctx, abstractions.Query[customerRow]{Partition: tenant, RowKeyPrefix: "1"})
			return err
		}()},
		{"Any", func() error { _, err := c.Any(ctx, abstractions.Query[customerRow]{Partition: tenant}); return err }()},
		{"Page", func() error { _, err := c.Page(ctx, abstractions.Query[customerRow]{Partition: tenant}); return err }()},
		{"Stream", func() error {
			for _, err := range c.Stream(ctx, abstractions.Query[customerRow]{Partition: tenant}) {
				return err
			}
			return nil
		}()},
		{"Append", abstractions.Append(ctx, ev, tenant, &eventRow{Text: "x"}, "")},
		{"Recent", func() error { _, err := abstractions.Recent(ctx, ev, tenant, 5, ""); return err }()},
		{"AppendVersion", abstractions.AppendVersion(ctx, snaps, tenant, &snapshotRow{State: "x"})},
		{"Latest", func() error { _, err := abstractions.Latest(ctx, snaps, tenant); return err }()},
		{"AtVersion", func() error { _, err := abstractions.AtVersion(ctx, snaps, tenant, 1); return err }()},
		{"AtOrBefore", func() error { _, err := abstractions.AtOrBefore(ctx, snaps, tenant, 1); return err }()},
		{"History", func() error {
			for _, err := range abstractions.History(ctx, snaps, tenant, 0) {
				return err
			}
			return nil
		}()},
	}
	for _, r := range refusals {
		e.Is(r.api, r.err, abstractions.ErrInvalidKey)
		var se *abstractions.StoreError
		e.Equal(r.api+" names the partition", errors.As(r.err, &se) && se.PartitionKey == tenant, true)
	}
	e.Equal("the refusals sent nothing", ct.n.Load()+cte.n.Load()+cts.n.Load(), int64(0))

	// What the normalisation merges is one partition: "Acme Corp" is "acme-corp".
	got, err := s.List(ctx, "Acme Corp")
	e.OK("list Acme Corp", err)
	e.Equal("Acme Corp is acme-corp", ids(got), []string{"acme-corp|1"})
	got, err = s.List(ctx, "acme")
	e.OK("list acme", err)
	e.Equal("acme keeps its rows", ids(got), []string{"acme|1", "acme|x|1"})
}

// partitionNormalisation: a partition given on its own addresses exactly the rows of the ids
// that start with it: its trailing white space is kept (spaces as "-"), only its start is
// trimmed, case and look-alikes fold as in ids; and a partition that is empty, or empty once
// normalised, is refused by every call that takes one, before anything is sent.
func partitionNormalisation(ctx context.Context, e *Env) {
	s := storeOf[snapshotRow](e, nil)
	for _, id := range []string{"acme|1", "Acme |2", "acme\u00a0|3", "\u212aelvin|1", "kelvin|2", "\u2126|1", "\u03c9|2"} {
		v := &snapshotRow{VersionedEntity: abstractions.VersionedEntity{Entity: abstractions.Entity{ID: id}, Version: 1}}
		e.OK("create "+strconv.Quote(id), s.Create(ctx, v))
		e.Observe("stored as", strconv.Quote(v.ID))
	}
	for _, tc := range []struct {
		partition string
		want      []string
	}{
		{"acme", []string{"acme|1"}},
		{" \tACME", []string{"acme|1"}},
		{"acme ", []string{"acme-|2"}},
		{"acme\u00a0", []string{"acme\u00a0|3"}},
		{"KELVIN", []string{"kelvin|1", "kelvin|2"}},
		{"\u03a9", []string{"\u03c9|1", "\u03c9|2"}},
	} {
		got, err := s.List(ctx, tc.partition)
		e.OK("list "+strconv.Quote(tc.partition), err)
		e.Equal("list "+strconv.Quote(tc.partition)+" reads its own rows", ids(got), tc.want)
		n, err := s.Count(ctx, tc.partition)
		e.OK("count "+strconv.Quote(tc.partition), err)
		e.Equal("count "+strconv.Quote(tc.partition), n, len(tc.want))
		got, err = s.Query(ctx, abstractions.Query[snapshotRow]{Partition: tc.partition})
		e.OK("query "+strconv.Quote(tc.partition), err)
		e.Equal("query "+strconv.Quote(tc.partition)+" reads its own rows", ids(got), tc.want)
	}
	n, err := s.DeletePartition(ctx, "Acme ")
	e.OK("delete partition \"Acme \"", err)
	e.Equal("it deletes acme-'s row alone", n, 1)

	c, ct := countingStoreOf[snapshotRow](e)
	cs := abstractions.Storage[snapshotRow](c)
	first := func(seq func(func(*snapshotRow, error) bool)) error {
		for _, err := range seq {
			return err
		}
		return nil
	}
	for _, p := range []string{"", " ", "\u00a0\u3000\t"} {
		q := abstractions.Query[snapshotRow]{Partition: p}
		refusals := []struct {
			api string
			err error
		}{
			{"List", func() error { _, err := c.List(ctx, p); return err }()},
			{"Count", func() error { _, err := c.Count(ctx, p); return err }()},
			{"DeletePartition", func() error { _, err := c.DeletePartition(ctx, p); return err }()},
			{"Latest", func() error { _, err := abstractions.Latest(ctx, cs, p); return err }()},
			{"AtOrBefore", func() error { _, err := abstractions.AtOrBefore(ctx, cs, p, 1); return err }()},
			{"History", first(abstractions.History(ctx, cs, p, 0))},
			{"Recent", func() error { _, err := abstractions.Recent(ctx, cs, p, 5, ""); return err }()},
			{"Recent of a sub-stream", func() error { _, err := abstractions.Recent(ctx, cs, p, 5, "sub"); return err }()},
			{"Append", abstractions.Append(ctx, cs, p, &snapshotRow{}, "")},
		}
		if p != "" { // a Query without a partition reads the whole table, by contract
			refusals = append(refusals, []struct {
				api string
				err error
			}{
				{"Query", func() error { _, err := c.Query(ctx, q); return err }()},
				{"Page", func() error { _, err := c.Page(ctx, q); return err }()},
				{"Any", func() error { _, err := c.Any(ctx, q); return err }()},
				{"Stream", first(c.Stream(ctx, q))},
			}...)
		}
		for _, r := range refusals {
			e.Is(r.api+" "+strconv.Quote(p), r.err, abstractions.ErrInvalidKey)
		}
	}
	e.Equal("the refusals sent nothing", ct.n.Load(), int64(0))
}

// malformedETags: Update and a conditional Patch refuse an ETag that is not an entity tag
// with ErrInvalidArgument and send nothing; a well-formed stale one reaches the service.
func malformedETags(ctx context.Context, e *Env) {
	s := storeOf[customerRow](e, nil)
	c := alice()
	e.OK("create", s.Create(ctx, c))
	cs, ct := countingStoreOf[customerRow](e)
	for _, etag := range []string{
		"datetime'2026-01-01'", // unquoted
		`W/datetime'2026'`,     // weak but unquoted
		`"`,                    // one quote
		`W/`,                   // a prefix with no tag
		`" "`,                  // a space inside
		"\"a\tb\"",             // a control character
		"\"a\nb\"",
		"\"a\x00b\"",
		"\"a\x7fb\"",
		`"a"b"`, // a quote inside
		"*",     // names no version
	} {
		v := *c
		v.ETag = etag
		e.Is(fmt.Sprintf("update strict %q", etag), cs.Update(ctx, &v, abstractions.Strict), abstractions.ErrInvalidArgument)
		e.Is(fmt.Sprintf("update auto %q", etag), cs.Update(ctx, &v, abstractions.Auto), abstractions.ErrInvalidArgument)
		p := abstractions.Set(abstractions.NewPatch[customerRow](), abstractions.Field(func(c *customerRow) *string { return &c.Name }), "patched").WithETag(etag)
		_, err := cs.Patch(ctx, c.ID, p)
		e.Is(fmt.Sprintf("conditional patch %q", etag), err, abstractions.ErrInvalidArgument)
		var se *abstractions.StoreError
		e.Equal(fmt.Sprintf("patch %q names the row", etag), errors.As(err, &se) && se.PartitionKey == "eu" && se.RowKey == "alice-smith", true)
	}
	v := *c
	v.ETag = ""
	e.Is("update strict without an etag", cs.Update(ctx, &v, abstractions.Strict), abstractions.ErrInvalidArgument)
	e.Equal("the refusals sent nothing", ct.n.Load(), int64(0))

	// A well-formed ETag of another version is the service's to judge: a conflict.
	v.ETag = `W/"datetime'2020-01-01T00%3A00%3A00.0000000Z'"`
	e.Is("update with a stale etag", s.Update(ctx, &v, abstractions.Strict), abstractions.ErrConcurrencyConflict)
	_, err := s.Patch(ctx, c.ID, abstractions.Set(abstractions.NewPatch[customerRow](), abstractions.Field(func(c *customerRow) *string { return &c.Name }), "x").WithETag(v.ETag))
	e.Is("patch with a stale etag", err, abstractions.ErrConcurrencyConflict)
	got, err := s.One(ctx, c.ID)
	e.OK("one", err)
	e.Equal("the row is untouched", got.Name, "Alice")
}

// describeFailure renders what a failed store call says about itself: the operation, the
// keys, whether it matches ErrUnavailable, and the service's answer or the context's error.
func describeFailure(e *Env, err error) string {
	var se *abstractions.StoreError
	if !errors.As(err, &se) {
		return "not a StoreError: " + describeError(err)
	}
	d := fmt.Sprintf("op=%q own-table=%v pk=%q rk=%q unavailable=%v", se.Op, se.Table == e.Table, se.PartitionKey, se.RowKey,
		errors.Is(err, abstractions.ErrUnavailable))
	var st *abstractions.StatusError
	switch {
	case errors.As(err, &st):
		d += fmt.Sprintf(" status=%d code=%s", st.StatusCode, st.ErrorCode)
	case errors.Is(err, context.DeadlineExceeded):
		d += " deadline"
	}
	return d
}

// failingCalls runs one call of each kind through a store whose service fails them all, and
// records what each error says; every one must match ErrUnavailable and name its call.
func failingCalls(ctx context.Context, e *Env, s *tables.Store[customerRow], callCtx func() (context.Context, context.CancelFunc)) int {
	type call struct {
		name, want string
		run        func(ctx context.Context) error
	}
	calls := []call{
		// Reads never create the table: the read is what failed.
		{"one", `op="read" own-table=true pk="eu" rk="alice"`, func(ctx context.Context) error { _, err := s.One(ctx, "eu|alice"); return err }},
		{"exists", `op="exists" own-table=true pk="eu" rk="alice"`, func(ctx context.Context) error { _, err := s.Exists(ctx, "eu|alice"); return err }},
		{"create", `op="create" own-table=true pk="eu" rk="bob"`, func(ctx context.Context) error {
			return s.Create(ctx, &customerRow{Entity: abstractions.Entity{ID: "eu|bob"}})
		}},
		{"patch", `op="patch" own-table=true pk="eu" rk="bob"`, func(ctx context.Context) error {
			_, err := s.Patch(ctx, "eu|bob", abstractions.Set(abstractions.NewPatch[customerRow](), abstractions.Field(func(c *customerRow) *string { return &c.Name }), "b"))
			return err
		}},
		{"delete", `op="delete" own-table=true pk="eu" rk="bob"`, func(ctx context.Context) error { _, err := s.Delete(ctx, "eu|bob", ""); return err }},
		// Calls about a partition name it, with no row key.
		{"list", `op="list" own-table=true pk="eu" rk=""`, func(ctx context.Context) error { _, err := s.List(ctx, "eu"); return err }},
		{"count", `op="count" own-table=true pk="eu" rk=""`, func(ctx context.Context) error { _, err := s.Count(ctx, "eu"); return err }},
		{"query", `op="query" own-table=true pk="eu" rk=""`, func(ctx context.Context) error {
			_, err := s.Query(ctx, abstractions.Query[customerRow]{Partition: "eu"})
			return err
		}},
		{"page", `op="page" own-table=true pk="eu" rk=""`, func(ctx context.Context) error {
			_, err := s.Page(ctx, abstractions.Query[customerRow]{Partition: "eu"})
			return err
		}},
		{"delete partition", `op="delete partition" own-table=true pk="eu" rk=""`, func(ctx context.Context) error {
			_, err := s.DeletePartition(ctx, "eu")
			return err
		}},
		{"upsert batch", `op="upsert batch" own-table=true pk="eu" rk=""`, func(ctx context.Context) error {
			_, err := s.UpsertBatch(ctx, []*customerRow{{Entity: abstractions.Entity{ID: "eu|c"}}, {Entity: abstractions.Entity{ID: "eu|d"}}})
			return err
		}},
		// A call about the whole table names only the table.
		{"ensure created", `op="create table" own-table=true pk="" rk=""`, func(ctx context.Context) error { return s.EnsureCreated(ctx) }},
	}
	for _, c := range calls {
		cctx, cancel := callCtx()
		err := c.run(cctx)
		cancel()
		got := describeFailure(e, err)
		e.Observe(c.name, got)
		if !strings.HasPrefix(got, c.want+" unavailable=true") {
			e.Errorf("%s: got %s (%v), want %s unavailable=true", c.name, got, err, c.want)
		}
	}
	return len(calls)
}

// fakeAccount is a connection string for an account at url. Its key is not a
// secret: the fake transports check nothing.
func fakeAccount(url string) string {
	return "DefaultEndpointsProtocol=http;AccountName=fake;AccountKey=ZmFrZS1rZXk=;TableEndpoint=" + url + "/fake"
}

// fakeTables returns the Azure adapter over a transport that plays the service, with one
// retry. (A transport rather than a server: the SDK's retry rewinds the request body while
// net/http may still be writing it to a server that answered early, a data race.)
func fakeTables(e *Env, transport policy.Transporter) service.Tables {
	opts := azcore.ClientOptions{
		Transport: transport,
		Retry:     policy.RetryOptions{MaxRetries: 1, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond},
	}
	t, err := azservice.NewFromConnectionString(fakeAccount("http://127.0.0.1:1"), &azservice.Options{ClientOptions: opts})
	if err != nil {
		e.Fatalf("fake service: %v", err)
	}
	return t
}

// busyTransport answers every request with 503 ServerBusy after reading it.
type busyTransport struct{ requests atomic.Int64 }

func (b *busyTransport) Do(req *http.Request) (*http.Response, error) {
	b.requests.Add(1)
	if req.Body != nil {
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return nil, err
		}
	}
	body := `{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"The server is busy."}}}`
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Request: req,
		Header: http.Header{"Content-Type": {"application/json;odata=minimalmetadata"}, "X-Ms-Error-Code": {"ServerBusy"}},
		Body:   io.NopCloser(strings.NewReader(body))}, nil
}

// hangingTransport never answers: each request waits for its context to end.
type hangingTransport struct{}

func (hangingTransport) Do(req *http.Request) (*http.Response, error) {
	<-req.Context().Done()
	return nil, req.Context().Err()
}

// busyTables answers every call with 503 ServerBusy, as a service under load does.
type busyTables struct{ calls atomic.Int64 }

func (b *busyTables) Ping(context.Context) error { return b.busy() }

func (b *busyTables) busy() error {
	b.calls.Add(1)
	return &abstractions.StatusError{StatusCode: http.StatusServiceUnavailable, ErrorCode: "ServerBusy", Message: "The server is busy."}
}
func (b *busyTables) CreateTable(context.Context, string) error { return b.busy() }
func (b *busyTables) DeleteTable(context.Context, string) error { return b.busy() }
func (b *busyTables) TableExists(context.Context, string) (bool, error) {
	return false, b.busy()
}
func (b *busyTables) GetRow(context.Context, string, string, string, []string) (service.Row, error) {
	return service.Row{}, b.busy()
}
func (b *busyTables) Write(context.Context, string, service.Action) (service.Written, error) {
	return service.Written{}, b.busy()
}
func (b *busyTables) Transact(context.Context, string, []service.Action) ([]service.Written, error) {
	return nil, b.busy()
}
func (b *busyTables) Query(context.Context, string, service.Query) (service.Page, error) {
	return service.Page{}, b.busy()
}

// unavailableService: a service that answers 503 to everything, after the client's retries,
// fails every store call with an error matching ErrUnavailable that names the call. On
// Azurite's side the answer goes through the Azure adapter, the SDK's retry policy and its
// error mapping (from a fake transport, not from Azurite); on the memory side a service
// answers 503 itself, and the account's own retry layer applies the same retry options.
func unavailableService(ctx context.Context, e *Env) {
	var svc service.Tables
	var requests func() int64 // HTTP requests, or service calls in memory
	const perCall = 2         // each backend's retry layer tries once more
	if e.OnAzurite() {
		bt := &busyTransport{}
		svc, requests = fakeTables(e, bt), bt.requests.Load
	} else {
		b := &busyTables{}
		svc, requests = b, b.calls.Load
	}
	acct := e.NewAccount(svc, nil, &tables.Options{Now: storeClock, ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: 1, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond},
	}})
	s, err := tables.For[customerRow](acct, &tables.StoreOptions{Table: e.Table})
	if err != nil {
		e.Fatalf("store: %v", err)
	}
	calls := failingCalls(ctx, e, s, func() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) })
	// Each call failed at its first request, after the client's retries; the four writes
	// (create, patch, delete, upsert batch), left without an answer, then read their row to
	// learn whether they were applied, which failed the same way.
	const verifyingReads = 4
	if got, want := requests(), perCall*int64(calls+verifyingReads); got != want {
		e.Errorf("%d requests reached the service, want %d", got, want)
	}
}

// hangingTables answers nothing: every call waits for its context to end.
type hangingTables struct{ busyTables }

func (*hangingTables) CreateTable(ctx context.Context, _ string) error {
	<-ctx.Done()
	return ctx.Err()
}

func (*hangingTables) GetRow(ctx context.Context, _, _, _ string, _ []string) (service.Row, error) {
	<-ctx.Done()
	return service.Row{}, ctx.Err()
}

// deadlinePassed: a call whose deadline passes before the service answers fails with an
// error matching ErrUnavailable and context.DeadlineExceeded. Only the deadline decides
// the outcome: the services never answer.
func deadlinePassed(ctx context.Context, e *Env) {
	var svc service.Tables = &hangingTables{}
	if e.OnAzurite() {
		svc = fakeTables(e, hangingTransport{})
	}
	acct := e.NewAccount(svc, nil, &tables.Options{Now: storeClock})
	s, err := tables.For[customerRow](acct, &tables.StoreOptions{Table: e.Table})
	if err != nil {
		e.Fatalf("store: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = s.One(cctx, "eu|alice")
	got := describeFailure(e, err)
	e.Equal("one after its deadline", got, `op="read" own-table=true pk="eu" rk="alice" unavailable=true deadline`)
}

// misreadDeletes answers 404 ResourceNotFound to every delete of the rows it names, inside
// a transaction or alone, while they stay stored: a service that cannot address them.
type misreadDeletes struct {
	service.Tables
	rows map[string]bool
}

func (m *misreadDeletes) misread(a service.Action) bool {
	return a.Op == service.OpDelete && m.rows[a.Row.RowKey]
}

func (m *misreadDeletes) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	if m.misread(a) {
		return service.Written{}, &abstractions.StatusError{StatusCode: http.StatusNotFound, ErrorCode: "ResourceNotFound"}
	}
	return m.Tables.Write(ctx, table, a)
}

func (m *misreadDeletes) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	for i, a := range actions {
		if m.misread(a) {
			return nil, &service.TransactionError{Index: i, Err: &abstractions.StatusError{StatusCode: http.StatusNotFound, ErrorCode: "ResourceNotFound"}}
		}
	}
	return m.Tables.Transact(ctx, table, actions)
}

// deletePartitionHonest: DeletePartition counts the rows it deleted, skips rows another
// writer deleted meanwhile, and fails, rather than report success, when a row it listed
// cannot be deleted.
func deletePartitionHonest(ctx context.Context, e *Env) {
	s := storeOf[customerRow](e, nil)
	var batch []*customerRow
	for i := 0; i < 5; i++ {
		batch = append(batch, &customerRow{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%d", i)}})
	}
	e.OK("seed", s.CreateBatch(ctx, batch))
	stuck := &misreadDeletes{Tables: e.Tables, rows: map[string]bool{"3": true}}
	acct := e.NewAccount(stuck, nil, &tables.Options{Now: storeClock})
	sp, err := tables.For[customerRow](acct, &tables.StoreOptions{Table: e.Table})
	if err != nil {
		e.Fatalf("store: %v", err)
	}
	n, err := sp.DeletePartition(ctx, "p")
	e.Equal("a row that cannot be deleted fails the call", err != nil && !errors.Is(err, abstractions.ErrNotFound), true)
	var se *abstractions.StoreError
	e.Equal("the error names the row", errors.As(err, &se) && se.PartitionKey == "p" && se.RowKey == "3", true)
	e.Equal("the other rows are deleted and counted", n, 4)
	got, err := s.List(ctx, "p")
	e.OK("list", err)
	e.Equal("left", ids(got), []string{"p|3"})
	n, err = s.DeletePartition(ctx, "p")
	e.OK("delete the rest", err)
	e.Equal("deleted", n, 1)
}

// largeNonASCII: single-entity writes of large non-ASCII text store it exactly. Raw
// multi-byte UTF-8 in bodies this size is corrupted by Azurite now and then; the Azure
// adapter sends it as ASCII escapes to the emulator, so both backends store the same text.
func largeNonASCII(ctx context.Context, e *Env) {
	s := storeOf[customerRow](e, nil)
	text := strings.Repeat("é中😀x", 4000) // 40 KB of UTF-8 per value
	check := func(step string, want *customerRow) {
		e.t.Helper()
		got, err := s.One(ctx, want.ID)
		e.OK(step, err)
		exact := got.Name == want.Name && got.Email == want.Email && got.Address.City == want.Address.City
		e.Equal(step+": stored exactly", exact, true)
	}
	c := &customerRow{Entity: abstractions.Entity{ID: "p|1"}, Name: text, Email: "ü" + text, Address: address{City: text + "ß"}}
	e.OK("create", s.Create(ctx, c))
	check("after create", c)
	c.Name = "😀" + text
	e.OK("update", s.Update(ctx, c, abstractions.Strict))
	check("after update", c)
	c.Email = text + "ё"
	e.OK("upsert", s.Upsert(ctx, c))
	check("after upsert", c)
	c.Address.City = "日本" + text
	_, err := s.Patch(ctx, c.ID, abstractions.Set(abstractions.NewPatch[customerRow](), abstractions.Field(func(c *customerRow) *string { return &c.Address.City }), c.Address.City))
	e.OK("patch", err)
	check("after patch", c)
	for i := 0; i < 10; i++ {
		_, err := e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpUpsertReplace,
			Row: row("raw", "1", "A", service.String(text), "B", service.String(text), "C", service.String(text))})
		e.OK("raw upsert", err)
		r, err := e.Tables.GetRow(ctx, e.Table, "raw", "1", nil)
		e.OK("raw read", err)
		exact := len(r.Properties) == 3
		for _, p := range r.Properties {
			exact = exact && p.Value.Str() == text
		}
		if !exact {
			e.Errorf("raw upsert %d: the text came back changed", i)
			break
		}
	}
}

// tableNameCase: the real service resolves table names without regard to case for every
// call; Azurite finds a table created with upper-case letters only under its exact name.
func tableNameCase(ctx context.Context, e *Env) {
	name := e.Name("MixedCase")
	creator := storeIn[customerRow](e, name)
	e.OK("create through the mixed-case name", creator.Create(ctx, alice()))
	other := storeIn[customerRow](e, strings.ToLower(name))
	_, err := other.One(ctx, "eu|alice-smith")
	if e.OnAzurite() {
		// Azurite answers TableNotFound, which a read reports as a missing row.
		e.Is("read through the lower-case name", err, abstractions.ErrNotFound)
	} else {
		e.OK("read through the lower-case name", err)
	}
	e.Status("create table in upper case", e.Tables.CreateTable(ctx, strings.ToUpper(name)), http.StatusConflict, "TableAlreadyExists")
	_, err = e.Tables.GetRow(ctx, strings.ToUpper(name), "eu", "alice-smith", nil)
	if e.OnAzurite() {
		e.Status("raw read in upper case", err, http.StatusNotFound, "TableNotFound")
	} else {
		e.OK("raw read in upper case", err)
	}
	_, err = creator.One(ctx, "eu|alice-smith")
	e.OK("read through the name as created", err)
}

// lineSeparatorKeys: Azurite misreads U+2028 and U+2029 in the key of a delete inside a
// transaction and answers 404 with the row still there; DeletePartition then deletes such
// rows alone, so it counts and deletes every row on both backends.
func lineSeparatorKeys(ctx context.Context, e *Env) {
	_, err := e.Tables.Write(ctx, e.Table, insert(row("raw", "a\u2028b")))
	e.OK("insert", err)
	err = txErr(e.Tables.Transact(ctx, e.Table, []service.Action{{Op: service.OpDelete, Row: row("raw", "a\u2028b"), IfMatch: service.ETagAny}}))
	_, rerr := e.Tables.GetRow(ctx, e.Table, "raw", "a\u2028b", nil)
	if e.OnAzurite() {
		e.TxStatus("delete in a transaction", err, 0, http.StatusNotFound, "ResourceNotFound")
		e.OK("the row is still there", rerr)
		_, err = e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpDelete, Row: row("raw", "a\u2028b"), IfMatch: service.ETagAny})
		e.OK("a delete alone", err)
	} else {
		e.OK("delete in a transaction", err)
		e.Status("the row is gone", rerr, http.StatusNotFound, "ResourceNotFound")
	}

	s := storeOf[customerRow](e, nil)
	e.OK("seed", s.CreateBatch(ctx, []*customerRow{
		{Entity: abstractions.Entity{ID: "p|a\u2028b"}},
		{Entity: abstractions.Entity{ID: "p|c\u2029d"}},
		{Entity: abstractions.Entity{ID: "p|plain"}},
		{Entity: abstractions.Entity{ID: "p|e\u2028\u2029f"}},
	}))
	n, err := s.DeletePartition(ctx, "p")
	e.OK("delete partition", err)
	e.Equal("deleted", n, 4)
	left, err := s.Count(ctx, "p")
	e.OK("count", err)
	e.Equal("left", left, 0)
}

// negativeZero: the real service keeps the sign of a zero double; Azurite stores -0 as 0.
func negativeZero(ctx context.Context, e *Env) {
	negZero := math.Copysign(0, -1)
	_, err := e.Tables.Write(ctx, e.Table, insert(row("raw", "1", "D", service.Double(negZero))))
	e.OK("insert -0", err)
	r, err := e.Tables.GetRow(ctx, e.Table, "raw", "1", nil)
	e.OK("read", err)
	v, _ := r.Get("D")
	e.Equal("a double", v.Kind(), service.KindDouble)
	e.Equal("the sign is kept", math.Signbit(v.Float()), !e.OnAzurite())

	s := storeOf[customerRow](e, nil)
	e.OK("create", s.Create(ctx, &customerRow{Entity: abstractions.Entity{ID: "p|1"}, Balance: negZero}))
	got, err := s.One(ctx, "p|1")
	e.OK("one", err)
	e.Equal("zero", got.Balance == 0, true)
	e.Equal("the sign is kept through the store", math.Signbit(got.Balance), !e.OnAzurite())
}
