package memservice

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/unified-data/gotables/tables/service"
)

// A table holds its rows twice: in a map for point reads and writes, and in a slice kept in
// (PartitionKey, RowKey) order for queries, which is also its index by partition: a
// partition's rows are contiguous, found by binary search (see partition). Keeping the slice sorted costs a memmove per
// insert or delete, which stays far below the cost of sorting at every query for the table
// sizes an in-memory service holds; the benchmarks measure both paths.
type table struct {
	name   string // as created
	rows   map[rowKey]*service.Row
	sorted []*service.Row
}

// rowKey identifies a row. Keys compare exactly: the service's keys are case-sensitive.
type rowKey struct{ pk, rk string }

func keyOf(r *service.Row) rowKey { return rowKey{r.PartitionKey, r.RowKey} }

// compareKeys orders rows as the service returns them: by PartitionKey, then RowKey, both
// by UTF-16 code units.
func compareKeys(a, b rowKey) int {
	if c := service.CompareUTF16(a.pk, b.pk); c != 0 {
		return c
	}
	return service.CompareUTF16(a.rk, b.rk)
}

// search returns the position of k in t.sorted, or where it would be inserted.
func (t *table) search(k rowKey) (int, bool) {
	return slices.BinarySearchFunc(t.sorted, k, func(r *service.Row, k rowKey) int {
		return compareKeys(keyOf(r), k)
	})
}

// partition returns the range of t.sorted that holds the rows of partition pk.
func (t *table) partition(pk string) (lo, hi int) {
	lo, _ = t.search(rowKey{pk: pk})
	hi = lo + sort.Search(len(t.sorted)-lo, func(i int) bool {
		return t.sorted[lo+i].PartitionKey != pk
	})
	return lo, hi
}

// put stores r, which the table owns from now on, in place of any row with its keys.
func (t *table) put(r *service.Row) {
	k := keyOf(r)
	i, found := t.search(k)
	if found {
		t.sorted[i] = r
	} else {
		t.sorted = slices.Insert(t.sorted, i, r)
	}
	t.rows[k] = r
}

// remove deletes the row with key k, if any.
func (t *table) remove(k rowKey) {
	if i, found := t.search(k); found {
		t.sorted = slices.Delete(t.sorted, i, i+1)
	}
	delete(t.rows, k)
}

// checkTableName applies the service's table-name rules for CreateTable.
func checkTableName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return errBadNameLength()
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		digit := '0' <= c && c <= '9'
		if !letter && (i == 0 || !digit) {
			return errBadNameChars()
		}
	}
	if strings.EqualFold(name, "tables") {
		return errBadNameChars()
	}
	return nil
}

// tableKey returns the map key of a table name, and false for a name no table can have.
// Checking first keeps strings.ToLower from folding a non-ASCII letter (such as the Kelvin
// sign) onto a valid name.
func tableKey(name string) (string, bool) {
	if checkTableName(name) != nil {
		return "", false
	}
	return strings.ToLower(name), true
}

// lookup returns the named table or nil. The caller holds s.mu.
func (s *Service) lookup(name string) *table {
	k, ok := tableKey(name)
	if !ok {
		return nil
	}
	return s.tables[k]
}

// CreateTable creates a table. A name that breaks the service's rules fails with 400
// OutOfRangeInput (length) or 400 InvalidResourceName (characters, or the reserved name
// "tables"); a name already taken in any case fails with 409 TableAlreadyExists.
func (s *Service) CreateTable(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.throttle.admit("", "", 1); err != nil {
		return err
	}
	if err := checkTableName(name); err != nil {
		return err
	}
	k := strings.ToLower(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tables[k] != nil {
		return errTableExists()
	}
	s.tables[k] = &table{name: name, rows: make(map[rowKey]*service.Row)}
	return nil
}

// DeleteTable deletes a table and its rows. A missing table, including one whose name no
// table can have, fails with 404 ResourceNotFound. Unlike the real service, the name can be
// reused at once (the service answers 409 TableBeingDeleted for a while).
func (s *Service) DeleteTable(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.throttle.admit("", "", 1); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.lookup(name)
	if t == nil {
		return errResourceNotFound()
	}
	delete(s.tables, strings.ToLower(t.name))
	return nil
}

// TableExists reports whether the table exists; a name no table can have reports false.
func (s *Service) TableExists(ctx context.Context, name string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := s.throttle.admit("", "", 1); err != nil {
		return false, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lookup(name) != nil, nil
}

// Ping answers like the real service's cheapest authenticated request: the memory service
// has no credential to refuse, so it fails only when ctx has ended, or when throttled.
func (s *Service) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.throttle.admit("", "", 1)
}
