// This second fake table service stays beside inmemory/memservice because these tests
// cannot import memservice: that would make module tables require module inmemory, which
// requires tables, a cycle the release tool refuses (tools/internal/release, dependencyOrder:
// each module is tidied and released after the modules it requires), though the packages
// alone would not cycle (memservice imports tables/service, not tables).

package tables

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// fakeTables is the table service of the engine's own tests: rows in maps, and the rules of
// the service the engine relies on, nothing more.
//
//   - Every write gives the row a new ETag of the service's shape (W/"datetime'…'") and a
//     Timestamp equal to the time inside it; the times come from a counter, 100 ns apart.
//   - Conditional writes fail as the service answers: 409 EntityAlreadyExists, 404
//     ResourceNotFound, 412 UpdateConditionNotSatisfied; a missing table is 404 TableNotFound.
//   - Transactions apply every action or none, report each action's new version, and a
//     failure names its action (*service.TransactionError), as do the refusals of the
//     service's transaction rules.
//   - Queries return rows in the service's key order (UTF-16 code units), at most Top (or
//     1000) a page, with a continuation naming the next row. The only filters understood are
//     comparisons of PartitionKey or RowKey with a string, joined by "and": the filters the
//     engine writes for lists, counts, partitions and row-key prefixes. Any other filter is
//     answered with 501, so no test can pass on a filter the fake misreads; evaluating the
//     whole filter language is the memory service's job (module inmemory, which this module
//     must not import).
//
// Stored rows are copies, so a caller's later change of a row it wrote or read changes
// nothing here.
type fakeTables struct {
	mu     sync.Mutex
	tables map[string]map[fakeKey]service.Row // by lower-case table name
	ticks  int64

	// before, when set, runs before every call with the call's name ("CreateTable",
	// "GetRow", "Write", "Transact", "Query", ...) and outside the fake's lock, so it may
	// change the fake's rows (another writer's change) or return the error the call answers.
	before func(call string) error
	// emptyPages makes every other query page empty, with a continuation, as the service
	// may answer.
	emptyPages bool
	// noTransactionETags makes transactions report no versions, as a response without
	// ETag headers would.
	noTransactionETags bool

	calls   []string   // the calls answered, in order
	gets    [][]string // the projection of each GetRow (nil: the whole row)
	queries []service.Query
	actions []service.Action // the actions of every Write and Transact, as received
	txSizes []int            // the number of actions of each Transact
	pages   int
}

type fakeKey struct{ pk, rk string }

func newFake() *fakeTables { return &fakeTables{tables: map[string]map[fakeKey]service.Row{}} }

var _ service.Tables = (*fakeTables)(nil)

var fakeEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func fakeStatus(status int, code string) *abstractions.StatusError {
	return &abstractions.StatusError{StatusCode: status, ErrorCode: code, Message: "fake: " + code}
}

var (
	errFakeTableNotFound = fakeStatus(http.StatusNotFound, "TableNotFound")
	errFakeNotFound      = fakeStatus(http.StatusNotFound, "ResourceNotFound")
	errFakeExists        = fakeStatus(http.StatusConflict, "EntityAlreadyExists")
	errFakeCondition     = fakeStatus(http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
)

// enter runs the before hook and takes the lock; it returns the hook's error, or the
// context's when it has ended, with the lock not taken.
func (f *fakeTables) enter(ctx context.Context, call string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.before != nil {
		if err := f.before(call); err != nil {
			return err
		}
	}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	return nil
}

// count returns how many calls of the name were answered.
func (f *fakeTables) count(call string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == call {
			n++
		}
	}
	return n
}

// resetCalls forgets the calls answered so far.
func (f *fakeTables) resetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.gets, f.queries, f.actions, f.txSizes = nil, nil, nil, nil, nil
}

func (f *fakeTables) CreateTable(ctx context.Context, table string) error {
	if err := f.enter(ctx, "CreateTable"); err != nil {
		return err
	}
	defer f.mu.Unlock()
	name := strings.ToLower(table)
	if _, ok := f.tables[name]; ok {
		return fakeStatus(http.StatusConflict, "TableAlreadyExists")
	}
	f.tables[name] = map[fakeKey]service.Row{}
	return nil
}

func (f *fakeTables) DeleteTable(ctx context.Context, table string) error {
	if err := f.enter(ctx, "DeleteTable"); err != nil {
		return err
	}
	defer f.mu.Unlock()
	name := strings.ToLower(table)
	if _, ok := f.tables[name]; !ok {
		return errFakeNotFound
	}
	delete(f.tables, name)
	return nil
}

func (f *fakeTables) TableExists(ctx context.Context, table string) (bool, error) {
	if err := f.enter(ctx, "TableExists"); err != nil {
		return false, err
	}
	defer f.mu.Unlock()
	_, ok := f.tables[strings.ToLower(table)]
	return ok, nil
}

func (f *fakeTables) Ping(ctx context.Context) error {
	if err := f.enter(ctx, "Ping"); err != nil {
		return err
	}
	f.mu.Unlock()
	return nil
}

func (f *fakeTables) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	if err := f.enter(ctx, "GetRow"); err != nil {
		return service.Row{}, err
	}
	defer f.mu.Unlock()
	f.gets = append(f.gets, sel)
	rows, ok := f.tables[strings.ToLower(table)]
	if !ok {
		return service.Row{}, errFakeTableNotFound
	}
	r, ok := rows[fakeKey{pk, rk}]
	if !ok {
		return service.Row{}, errFakeNotFound
	}
	return project(r, sel), nil
}

func (f *fakeTables) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	if err := f.enter(ctx, "Write"); err != nil {
		return service.Written{}, err
	}
	defer f.mu.Unlock()
	// A row passed to Write stays the caller's (service.Tables): the log keeps a copy.
	logged := a
	logged.Row = a.Row.Clone()
	f.actions = append(f.actions, logged)
	rows, ok := f.tables[strings.ToLower(table)]
	if !ok {
		return service.Written{}, errFakeTableNotFound
	}
	next, err := f.apply(rows, a)
	if err != nil {
		return service.Written{}, err
	}
	k := fakeKey{a.Row.PartitionKey, a.Row.RowKey}
	if next == nil {
		delete(rows, k)
		return service.Written{}, nil
	}
	rows[k] = *next
	return service.Written{ETag: next.ETag, Timestamp: next.Timestamp}, nil
}

// apply returns the row a would leave behind (nil: none) in a table whose current rows
// are those of rows, or the service's refusal.
func (f *fakeTables) apply(rows map[fakeKey]service.Row, a service.Action) (*service.Row, error) {
	k := fakeKey{a.Row.PartitionKey, a.Row.RowKey}
	old, exists := rows[k]
	switch a.Op {
	case service.OpInsert:
		if exists {
			return nil, errFakeExists
		}
	case service.OpReplace, service.OpMerge, service.OpDelete:
		if !exists {
			return nil, errFakeNotFound
		}
		if a.IfMatch != "" && a.IfMatch != service.ETagAny && a.IfMatch != old.ETag {
			return nil, errFakeCondition
		}
	case service.OpUpsertReplace, service.OpUpsertMerge:
	default:
		return nil, fakeStatus(http.StatusBadRequest, "InvalidInput")
	}
	if a.Op == service.OpDelete {
		return nil, nil
	}
	next := a.Row.Clone()
	if exists && (a.Op == service.OpMerge || a.Op == service.OpUpsertMerge) {
		next = old.Clone()
		for _, p := range a.Row.Properties {
			i := slices.IndexFunc(next.Properties, func(q service.Property) bool { return q.Name == p.Name })
			if i < 0 {
				next.Properties = append(next.Properties, p)
			} else {
				next.Properties[i] = p
			}
		}
	}
	f.ticks++
	next.Timestamp = fakeEpoch.Add(time.Duration(f.ticks) * 100 * time.Nanosecond)
	next.ETag = `W/"datetime'` + strings.ReplaceAll(service.FormatDateTime(next.Timestamp), ":", "%3A") + `'"`
	return &next, nil
}

func (f *fakeTables) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	if err := f.enter(ctx, "Transact"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	f.actions = append(f.actions, actions...)
	f.txSizes = append(f.txSizes, len(actions))
	rows, ok := f.tables[strings.ToLower(table)]
	if !ok {
		return nil, errFakeTableNotFound
	}
	if len(actions) == 0 || len(actions) > service.MaxTransactionActions {
		return nil, fakeStatus(http.StatusBadRequest, "InvalidInput")
	}
	staged := maps.Clone(rows)
	seen := map[fakeKey]bool{}
	out := make([]service.Written, len(actions))
	for i, a := range actions {
		k := fakeKey{a.Row.PartitionKey, a.Row.RowKey}
		switch {
		case k.pk != actions[0].Row.PartitionKey:
			return nil, &service.TransactionError{Index: i, Err: fakeStatus(http.StatusBadRequest, "CommandsInBatchActOnDifferentPartitions")}
		case seen[k]:
			return nil, &service.TransactionError{Index: i, Err: fakeStatus(http.StatusBadRequest, "InvalidDuplicateRow")}
		}
		seen[k] = true
		next, err := f.apply(staged, a)
		if err != nil {
			return nil, &service.TransactionError{Index: i, Err: err}
		}
		if next == nil {
			delete(staged, k)
		} else {
			staged[k] = *next
			out[i] = service.Written{ETag: next.ETag, Timestamp: next.Timestamp}
		}
	}
	f.tables[strings.ToLower(table)] = staged
	if f.noTransactionETags {
		clear(out)
	}
	return out, nil
}

func (f *fakeTables) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	if err := f.enter(ctx, "Query"); err != nil {
		return service.Page{}, err
	}
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
	rows, ok := f.tables[strings.ToLower(table)]
	if !ok {
		return service.Page{}, errFakeTableNotFound
	}
	match, ok := parseFakeFilter(q.Filter)
	if !ok {
		return service.Page{}, fakeStatus(http.StatusNotImplemented, "FakeFilterNotUnderstood")
	}
	keys := slices.SortedFunc(maps.Keys(rows), func(a, b fakeKey) int {
		if c := service.CompareUTF16(a.pk, b.pk); c != 0 {
			return c
		}
		return service.CompareUTF16(a.rk, b.rk)
	})
	if c := q.Continuation; c != nil {
		at, _ := slices.BinarySearchFunc(keys, fakeKey{c.NextPartitionKey, c.NextRowKey}, func(a, b fakeKey) int {
			if c := service.CompareUTF16(a.pk, b.pk); c != 0 {
				return c
			}
			return service.CompareUTF16(a.rk, b.rk)
		})
		keys = keys[at:]
	}
	f.pages++
	if f.emptyPages && f.pages%2 == 1 && len(keys) > 0 {
		return service.Page{Next: &service.Continuation{NextPartitionKey: keys[0].pk, NextRowKey: keys[0].rk}}, nil
	}
	top := q.Top
	if top <= 0 || top > 1000 {
		top = 1000
	}
	var page service.Page
	for i, k := range keys {
		r := rows[k]
		if !match(&r) {
			continue
		}
		if len(page.Rows) == top {
			page.Next = &service.Continuation{NextPartitionKey: keys[i].pk, NextRowKey: keys[i].rk}
			break
		}
		page.Rows = append(page.Rows, project(r, q.Select))
	}
	return page, nil
}

// project returns a copy of r with only the selected properties (all when sel is nil).
func project(r service.Row, sel []string) service.Row {
	r = r.Clone()
	if sel != nil {
		r.Properties = slices.DeleteFunc(r.Properties, func(p service.Property) bool { return !slices.Contains(sel, p.Name) })
	}
	return r
}

// parseFakeFilter reads the filters the fake understands: "" or comparisons of PartitionKey
// or RowKey with a string literal, joined by " and ".
func parseFakeFilter(filter string) (func(*service.Row) bool, bool) {
	var conds []func(*service.Row) bool
	for rest := filter; rest != ""; {
		name, op, lit, tail, ok := cutComparison(rest)
		if !ok {
			return nil, false
		}
		key := func(r *service.Row) string { return r.PartitionKey }
		switch name {
		case "PartitionKey":
		case "RowKey":
			key = func(r *service.Row) string { return r.RowKey }
		default:
			return nil, false
		}
		var holds func(c int) bool
		switch op {
		case "eq":
			holds = func(c int) bool { return c == 0 }
		case "ne":
			holds = func(c int) bool { return c != 0 }
		case "lt":
			holds = func(c int) bool { return c < 0 }
		case "le":
			holds = func(c int) bool { return c <= 0 }
		case "gt":
			holds = func(c int) bool { return c > 0 }
		case "ge":
			holds = func(c int) bool { return c >= 0 }
		default:
			return nil, false
		}
		conds = append(conds, func(r *service.Row) bool { return holds(service.CompareUTF16(key(r), lit)) })
		if tail == "" {
			break
		}
		if rest, ok = strings.CutPrefix(tail, " and "); !ok || rest == "" {
			return nil, false
		}
	}
	return func(r *service.Row) bool {
		for _, c := range conds {
			if !c(r) {
				return false
			}
		}
		return true
	}, true
}

// cutComparison reads `name op 'literal'` from the start of s, the literal's doubled quotes
// undone.
func cutComparison(s string) (name, op, lit, rest string, ok bool) {
	name, s, ok1 := strings.Cut(s, " ")
	op, s, ok2 := strings.Cut(s, " ")
	if !ok1 || !ok2 || !strings.HasPrefix(s, "'") {
		return "", "", "", "", false
	}
	var b strings.Builder
	for i := 1; ; {
		j := strings.IndexByte(s[i:], '\'')
		if j < 0 {
			return "", "", "", "", false
		}
		b.WriteString(s[i : i+j])
		i += j + 1
		if i < len(s) && s[i] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return name, op, b.String(), s[i:], true
	}
}

// put stores rows as another writer would, giving each an ETag; the table is created if
// need be.
func (f *fakeTables) put(table string, rows ...service.Row) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := strings.ToLower(table)
	if f.tables[name] == nil {
		f.tables[name] = map[fakeKey]service.Row{}
	}
	for _, r := range rows {
		next, err := f.apply(f.tables[name], service.Action{Op: service.OpUpsertReplace, Row: r})
		if err != nil {
			panic(err)
		}
		f.tables[name][fakeKey{r.PartitionKey, r.RowKey}] = *next
	}
}

// row returns a copy of a stored row.
func (f *fakeTables) row(table, pk, rk string) (service.Row, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.tables[strings.ToLower(table)][fakeKey{pk, rk}]
	return r.Clone(), ok
}

// remove deletes a row as another writer would.
func (f *fakeTables) remove(table, pk, rk string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.tables[strings.ToLower(table)], fakeKey{pk, rk})
}

// size returns how many rows the table holds.
func (f *fakeTables) size(table string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.tables[strings.ToLower(table)])
}

// String lists the calls answered, for failure messages.
func (f *fakeTables) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprint(f.calls)
}
