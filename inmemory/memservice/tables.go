package memservice

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/btree"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/tables/service"
)

// A table keeps its rows by partition, in (PartitionKey, RowKey) order by UTF-16 code units:
// a B-tree of its partitions by PartitionKey, and in each partition a map of its rows for
// point reads and writes and a B-tree of them by RowKey for queries. A write of a new row
// costs a map insert and O(log n) comparisons whatever the table holds; a write of an
// existing row replaces it in its slot, which both indexes share. A query of one partition
// reads that partition's tree only.
//
// Locks: the service's lock guards only which tables exist. A table's mu guards which
// partitions it has (and whether it was dropped); every row operation holds it for reading,
// so only creating or removing a partition, and dropping the table, wait for the calls in
// flight. Each partition's mu guards its rows: writes to different partitions of a table
// run side by side, as on the real service, and a transaction, which has one partition,
// holds that partition's lock. The order is always table, then partition. Stored rows are
// never changed once their slot holds them (a write stores a new Row value, with a new
// Properties slice), so a reader copies a row under the partition's read lock and clones its
// properties after releasing it (or, with WithSharedReads, hands them out).
type table struct {
	name string // as created

	mu         sync.RWMutex
	dropped    bool         // DeleteTable removed the table: calls that found it before find none
	rows       atomic.Int64 // rows in all partitions
	partitions map[string]*partition
	order      *btree.BTreeG[*partition] // the partitions by PartitionKey
	free       *btree.FreeListG[*slot]   // nodes the partitions' trees reuse (it has a lock of its own)
}

// A partition holds the rows of one PartitionKey. A partition left empty by a delete is
// removed after the delete releases its locks (dropEmpty); until then, and while a write
// that created it has yet to store its row, it is empty, and scans pass over it.
type partition struct {
	pk    string
	mu    sync.RWMutex
	rows  map[string]*slot
	order *btree.BTreeG[*slot] // the rows by RowKey
}

// A slot holds the current version of one row; the row's keys never change.
type slot struct{ row service.Row }

// treeDegree is the B-trees' degree: nodes of up to 2×16−1 entries.
const treeDegree = 16

func makeTable(name string) *table {
	return &table{
		name:       name,
		partitions: make(map[string]*partition),
		order: btree.NewG(treeDegree, func(a, b *partition) bool {
			return service.CompareUTF16(a.pk, b.pk) < 0
		}),
		free: btree.NewFreeListG[*slot](btree.DefaultFreeListSize),
	}
}

// rowLess orders a partition's rows by RowKey, as the service does.
func rowLess(a, b *slot) bool { return service.CompareUTF16(a.row.RowKey, b.row.RowKey) < 0 }

// rowKey identifies a row. Keys compare exactly: the service's keys are case-sensitive.
type rowKey struct{ pk, rk string }

// get returns the slot of the row with RowKey rk, or nil; p may be nil (no partition). The
// caller holds p.mu.
func (p *partition) get(rk string) *slot {
	if p == nil {
		return nil
	}
	return p.rows[rk]
}

// put stores r in p, whose Properties the table owns from now on, in place of any row with
// its keys. The caller holds p.mu for writing.
func (t *table) put(p *partition, r service.Row) {
	if s := p.rows[r.RowKey]; s != nil {
		s.row = r
		return
	}
	t.insert(p, r)
}

// insert stores r, a row p does not hold, in a new slot. The caller holds p.mu for writing.
func (t *table) insert(p *partition, r service.Row) {
	s := &slot{row: r}
	p.rows[r.RowKey] = s
	p.order.ReplaceOrInsert(s)
	t.rows.Add(1)
}

// remove deletes the row with RowKey rk from p, if any, and reports whether p is empty now.
// The caller holds p.mu for writing.
func (t *table) remove(p *partition, rk string) (empty bool) {
	if p == nil {
		return false
	}
	if s := p.rows[rk]; s != nil {
		delete(p.rows, rk)
		p.order.Delete(s)
		t.rows.Add(-1)
	}
	return len(p.rows) == 0
}

// readPartition returns the table's partition pk (nil when it has none) with p.mu held for
// reading, and t.mu held for reading; false when the table was dropped (nothing is held).
// The caller releases both with t.release(p, false).
func (t *table) readPartition(pk string) (*partition, bool) {
	t.mu.RLock()
	if t.dropped {
		t.mu.RUnlock()
		return nil, false
	}
	p := t.partitions[pk]
	if p != nil {
		p.mu.RLock()
	}
	return p, true
}

// writePartition is readPartition with p.mu held for writing. With create, a missing
// partition is made first (empty), so that the write has one to store its row in; without,
// p is nil when the partition has no rows.
func (t *table) writePartition(pk string, create bool) (*partition, bool) {
	for {
		t.mu.RLock()
		if t.dropped {
			t.mu.RUnlock()
			return nil, false
		}
		p := t.partitions[pk]
		if p != nil || !create {
			if p != nil {
				p.mu.Lock()
			}
			return p, true
		}
		t.mu.RUnlock()
		t.mu.Lock()
		if !t.dropped && t.partitions[pk] == nil {
			p = &partition{pk: pk, rows: make(map[string]*slot), order: btree.NewWithFreeListG(treeDegree, rowLess, t.free)}
			t.partitions[pk] = p
			t.order.ReplaceOrInsert(p)
		}
		t.mu.Unlock()
		// Again with the read lock: a delete may have removed the partition meanwhile.
	}
}

// release gives back what readPartition or writePartition took.
func (t *table) release(p *partition, write bool) {
	if p != nil {
		if write {
			p.mu.Unlock()
		} else {
			p.mu.RUnlock()
		}
	}
	t.mu.RUnlock()
}

// dropEmpty removes partition pk if it has no rows: a delete that emptied it calls it after
// releasing its locks. An empty partition a write has just made may go too; that write then
// makes it again.
func (t *table) dropEmpty(pk string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// No partition lock is needed: every holder of one also holds t.mu for reading.
	if p := t.partitions[pk]; p != nil && len(p.rows) == 0 {
		delete(t.partitions, pk)
		t.order.Delete(p)
	}
}

// scan calls visit with the rows from key start on, in key order, until visit returns false;
// with only, the rows of partition pk only. The caller holds t.mu for reading; scan holds
// each partition's lock for reading while it visits its rows.
func (t *table) scan(start rowKey, only bool, pk string, visit func(*service.Row) bool) {
	from := func(p *partition) bool {
		more := true
		each := func(s *slot) bool {
			more = visit(&s.row)
			return more
		}
		p.mu.RLock()
		defer p.mu.RUnlock()
		if p.pk == start.pk {
			p.order.AscendGreaterOrEqual(&slot{row: service.Row{RowKey: start.rk}}, each)
		} else {
			p.order.Ascend(each)
		}
		return more
	}
	if only {
		if p := t.partitions[pk]; p != nil && service.CompareUTF16(pk, start.pk) >= 0 {
			from(p)
		}
		return
	}
	t.order.AscendGreaterOrEqual(&partition{pk: start.pk}, from)
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

// lookup returns the named table or nil. A name no table can have finds none; checking it
// first keeps a non-ASCII letter (such as the Kelvin sign) from folding onto a valid name.
func (s *Service) lookup(name string) *table {
	if checkTableName(name) != nil {
		return nil
	}
	if s.cosmos {
		t, _ := s.tables.Load(name)
		tb, _ := t.(*table)
		return tb
	}
	// The map is keyed by the lower-case name; a valid name is ASCII and at most 63 bytes.
	var lower [63]byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	t, _ := s.tables.Load(string(lower[:len(name)]))
	tb, _ := t.(*table)
	return tb
}

// readTable returns the named table with its lock held for reading, or nil when there is no
// such table. The caller releases t.mu.
func (s *Service) readTable(name string) *table {
	t := s.lookup(name)
	if t == nil {
		return nil
	}
	t.mu.RLock()
	if t.dropped {
		t.mu.RUnlock()
		return nil
	}
	return t
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
	s.mu.Lock()
	// Only CreateTable and DeleteTable change the map, both under s.mu. The change is
	// logged before the table can be seen, so that no write to it is logged before it.
	if s.lookup(name) != nil {
		s.mu.Unlock()
		return errTableExists()
	}
	seq := s.logged(&journal.Change{Kind: journal.CreateTable, Table: name})
	s.tables.Store(s.tableKey(name), makeTable(name))
	s.mu.Unlock()
	return s.synced(seq)
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
	t := s.lookup(name)
	if t == nil {
		s.mu.Unlock()
		return errResourceNotFound()
	}
	s.tables.Delete(s.tableKey(t.name))
	// A call that found the table before it left the map waits for the lock and then finds
	// no table, as one that looks it up now does. Every write to the table is logged before
	// the table's deletion is.
	t.mu.Lock()
	t.dropped = true
	t.mu.Unlock()
	seq := s.logged(&journal.Change{Kind: journal.DeleteTable, Table: t.name})
	s.mu.Unlock()
	return s.synced(seq)
}

// TableExists reports whether the table exists; a name no table can have reports false.
func (s *Service) TableExists(ctx context.Context, name string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := s.throttle.admit("", "", 1); err != nil {
		return false, err
	}
	return s.lookup(name) != nil, nil
}

// TableNames returns the names of the service's tables, as they were created, in the order
// the service lists tables: by name, compared without regard to case (with Cosmos, with
// case). A listing of tables over the REST protocol pages through it.
func (s *Service) TableNames(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type entry struct{ key, name string }
	var all []entry
	s.tables.Range(func(k, v any) bool {
		all = append(all, entry{k.(string), v.(*table).name})
		return true
	})
	slices.SortFunc(all, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	names := make([]string, len(all))
	for i, e := range all {
		names[i] = e.name
	}
	return names, nil
}

// Ping answers like the real service's cheapest authenticated request: the memory service
// has no credential to refuse, so it fails only when ctx has ended, or when throttled.
func (s *Service) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.throttle.admit("", "", 1)
}
