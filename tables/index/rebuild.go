package index

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/indexrow"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// Report is what Verify found, or what Rebuild found and repaired, so far.
type Report struct {
	Partitions int // partitions looked at
	Entities   int // entities looked at
	IndexRows  int // index rows looked at
	// Missing are index rows an entity's values call for that do not exist; Stale are
	// index rows no entity's values call for (a changed value, a deleted entity); Unlisted
	// are entities whose list of index keys differs from what their values call for.
	Missing, Stale, Unlisted int
	// The claims of unique indexes: MissingClaims are values one entity holds that no
	// claim names; WrongClaims are values one entity holds whose claim names an owner that
	// does not hold them (a stale claim in the way); StaleClaims are claims no entity's
	// value calls for. Duplicates are the values more than one entity holds, which no
	// Rebuild claims for any of them.
	MissingClaims, WrongClaims, StaleClaims int
	Duplicates                              []Duplicate
	// Repaired are the entities, orphan index rows and claims a Rebuild rewrote or deleted.
	Repaired int
}

// Duplicate is a value of a unique index that more than one entity holds (written before
// the index was declared, or by a program that does not know it). Change or delete all but
// one of them, then run Rebuild again.
type Duplicate struct {
	Index string
	Value any      // as stored: a string, []byte, bool, int32, int64, float64, time.Time or abstractions.GUID
	IDs   []string // the entities that hold it, in key order; the claim's owner first when one of them has it
}

// Consistent reports whether the index rows and claims looked at agree with the entities.
func (r Report) Consistent() bool {
	return r.Missing == 0 && r.Stale == 0 && r.Unlisted == 0 &&
		r.MissingClaims == 0 && r.WrongClaims == 0 && r.StaleClaims == 0 && len(r.Duplicates) == 0
}

// Declaration names an index of a table by its column, for a program that does not have
// the entity's Go type (udtables index): the index row keys (or, with Unique, the claims)
// of a value are computed from the value as it is stored, so they are the ones the type's
// store writes when Column is the column its index= (unique=) option is on.
type Declaration struct {
	Name   string
	Column string
	Desc   bool
	Unique bool // a unique index (unique=), which takes no Desc
}

// Verify compares the index rows of the partition ("" for every partition of the table),
// and the claims of the type's unique indexes, with what the entities' values call for,
// and reports the differences; it changes nothing. progress, when not nil, receives the
// report so far after each partition, and after the claims of each unique index.
//
// The claims are checked after every partition is read: the run keeps each unique value it
// meets in memory, and reads the claim of each value, and each claim of the index (with a
// partition, each naming an entity of it) with its owner.
func Verify[T any](ctx context.Context, s *tables.Store[T], partition string, progress func(Report)) (Report, error) {
	return check(ctx, engine.Of(s), declared(engine.Of(s)), partition, false, progress)
}

// declared returns the partition and unique indexes of a store.
func declared(core *engine.Table) []indexrow.Spec {
	return append(core.Indexes[:len(core.Indexes):len(core.Indexes)], core.Uniques...)
}

// Rebuild brings the index rows of the partition ("" for every partition of the table) in
// line with the entities: it writes the missing index rows, deletes the stale ones and
// corrects each entity's list of its index keys, an entity's changes in one transaction
// conditional on the version read, so that a concurrent write is never undone (an entity
// that changes meanwhile is looked at again). Run it after adding an index to a type whose
// table has rows, or when Verify reports differences; running it again is harmless, and an
// interrupted run is resumed by running it again. progress, when not nil, receives the
// report so far after each partition, and after the claims of each unique index.
//
// For a unique index, it claims each value one entity holds and no live claim names, with
// the protocol the store's writes use (a claim is created, or a stale one taken over on
// condition of the version read, so a concurrent write's claim is never overwritten), and
// deletes the stale claims on condition of the version read. A value two entities hold is
// claimed for neither and reported in Duplicates; one a live claim gives to another entity
// (written meanwhile, or, with a partition, in another partition) is reported there too.
func Rebuild[T any](ctx context.Context, s *tables.Store[T], partition string, progress func(Report)) (Report, error) {
	return check(ctx, engine.Of(s), declared(engine.Of(s)), partition, true, progress)
}

// VerifyTable is Verify for a table named by the account and name, its indexes declared by
// their columns.
func VerifyTable(ctx context.Context, acct *tables.Account, table string, decls []Declaration, partition string, progress func(Report)) (Report, error) {
	core, specs, err := tableOf(acct, table, decls)
	if err != nil {
		return Report{}, err
	}
	return check(ctx, core, specs, partition, false, progress)
}

// RebuildTable is Rebuild for a table named by the account and name, its indexes declared
// by their columns.
func RebuildTable(ctx context.Context, acct *tables.Account, table string, decls []Declaration, partition string, progress func(Report)) (Report, error) {
	core, specs, err := tableOf(acct, table, decls)
	if err != nil {
		return Report{}, err
	}
	return check(ctx, core, specs, partition, true, progress)
}

// anyRow is the type of the store tableOf makes: rows of any columns, which it never decodes.
type anyRow struct{ abstractions.Entity }

func tableOf(acct *tables.Account, table string, decls []Declaration) (*engine.Table, []indexrow.Spec, error) {
	s, err := tables.For[anyRow](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		return nil, nil, err
	}
	if len(decls) == 0 {
		return nil, nil, fmt.Errorf("%w: no index is declared; name each as name=Column", abstractions.ErrInvalidArgument)
	}
	var specs []indexrow.Spec
	for _, d := range decls {
		item := d.Name
		if d.Desc {
			item += ":desc"
		}
		sp, err := indexrow.Declared(d.Name, d.Column, d.Desc)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: index %s on %s: %w", abstractions.ErrInvalidArgument, item, d.Column, err)
		}
		if d.Unique && d.Desc {
			return nil, nil, fmt.Errorf("%w: index %s on %s: a unique index has no order, so it takes no :desc", abstractions.ErrInvalidArgument, item, d.Column)
		}
		sp.Unique = d.Unique
		for _, other := range specs {
			if other.Name == sp.Name {
				return nil, nil, fmt.Errorf("%w: the index %q is declared twice", abstractions.ErrInvalidArgument, sp.Name)
			}
		}
		specs = append(specs, sp)
	}
	return engine.Of(s), specs, nil
}

// rebuildAttempts bounds the passes over a partition whose entities keep changing.
const rebuildAttempts = 5

func check(ctx context.Context, core *engine.Table, specs []indexrow.Spec, partition string, repair bool, progress func(Report)) (Report, error) {
	var rep Report
	if len(specs) == 0 {
		return rep, fmt.Errorf("%w: the table %s has no index declared", abstractions.ErrInvalidArgument, core.Name)
	}
	filter, scope := "", ""
	if partition != "" {
		pk, err := core.CheckPartition("index rebuild", partition)
		if err != nil {
			return rep, err
		}
		filter, scope = "PartitionKey eq "+service.QuoteString(pk), pk
	}
	sel := []string{indexrow.Column, indexrow.OfColumn, largevalue.OfColumn, codec.TypeNameColumn}
	var partSpecs []indexrow.Spec
	uq := newUniques(specs)
	for _, sp := range specs {
		sel = append(sel, sp.Column)
		if !sp.Unique {
			partSpecs = append(partSpecs, sp)
		}
	}
	// Rows come in key order, so each partition's rows are together (on Cosmos DB, which
	// lists rows in no key order, the partitions are read one by one below).
	var rows []service.Row
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		if core.Acct.Unordered() {
			engine.SortRows(rows)
		}
		pk := rows[0].PartitionKey
		uq.add(rows)
		if len(partSpecs) == 0 {
			// Unique indexes only: the index rows are not this run's to check.
			rep.add(&partitionState{entities: countEntities(rows)}, false)
			rows = rows[:0]
			if progress != nil {
				progress(rep)
			}
			return nil
		}
		for attempt := 1; ; attempt++ {
			p := examine(partSpecs, rows)
			if !repair || p.consistent() || attempt == rebuildAttempts {
				rep.add(p, false)
				break
			}
			changed, err := p.repair(ctx, core)
			if err != nil {
				return err
			}
			if !changed {
				rep.add(p, true)
				break
			}
			// An entity changed while it was repaired: read the partition again.
			rows = rows[:0]
			if err := core.Scan(ctx, service.Query{Filter: "PartitionKey eq " + service.QuoteString(pk), Select: sel}, func(r *service.Row) error {
				if !indexrow.IsKey(r.RowKey) && core.Foreign(r) {
					return nil
				}
				rows = append(rows, r.Clone())
				return nil
			}); err != nil {
				return core.Translate("index rebuild", pk, "", err)
			}
		}
		rows = rows[:0]
		if progress != nil {
			progress(rep)
		}
		return nil
	}
	read := func(filter string) error {
		err := core.Scan(ctx, service.Query{Filter: filter, Select: sel}, func(r *service.Row) error {
			if !indexrow.IsKey(r.RowKey) && core.Foreign(r) {
				return nil // a claim, a feed's row or a polymorphic row: no entity of the store
			}
			if len(rows) > 0 && rows[0].PartitionKey != r.PartitionKey {
				if err := flush(); err != nil {
					return err
				}
			}
			rows = append(rows, r.Clone())
			return nil
		})
		if err == nil {
			err = flush()
		}
		return err
	}
	var err error
	if core.Acct.Unordered() && partition == "" {
		var pks []string
		if pks, err = partitions(ctx, core); err == nil {
			for _, pk := range pks {
				if err = read("PartitionKey eq " + service.QuoteString(pk)); err != nil {
					break
				}
			}
		}
	} else {
		err = read(filter)
	}
	if err == nil {
		err = uq.check(ctx, core, scope, repair, &rep, progress)
	}
	if err != nil {
		var se *abstractions.StoreError
		if !errors.As(err, &se) {
			err = core.Translate("index rebuild", partition, "", err)
		}
		return rep, err
	}
	return rep, nil
}

// partitionState is what examine found in one partition.
type partitionState struct {
	pk        string
	entities  int
	indexRows int
	fixes     []entityFix
	orphans   []service.Row // stale index rows of no entity of the partition
	missing   int
	stale     int
	unlisted  int
}

// entityFix is what one entity needs.
type entityFix struct {
	rk, etag string
	want     []string      // its index keys, as its values call for
	add      []string      // missing index rows
	remove   []service.Row // stale index rows that name it
	relist   bool          // its list of index keys is wrong
}

func (p *partitionState) consistent() bool { return p.missing == 0 && p.stale == 0 && p.unlisted == 0 }

func (r *Report) add(p *partitionState, repaired bool) {
	r.Partitions++
	r.Entities += p.entities
	r.IndexRows += p.indexRows
	r.Missing += p.missing
	r.Stale += p.stale
	r.Unlisted += p.unlisted
	if repaired {
		r.Repaired += len(p.fixes) + len(p.orphans)
	}
}

func examine(specs []indexrow.Spec, rows []service.Row) *partitionState {
	p := &partitionState{pk: rows[0].PartitionKey}
	ixRows := map[string]service.Row{}
	type entity struct {
		etag       string
		want, list []string
	}
	ents := map[string]*entity{}
	var order []string
	// The expiry index rows an entity lists (package tables/expiry) are taken as wanted
	// unless the index is declared: a declaration by columns does not name it.
	expPrefix := indexrow.Prefix + engine.ExpiryIndex + "."
	if slices.ContainsFunc(specs, func(sp indexrow.Spec) bool { return sp.Name == engine.ExpiryIndex }) {
		expPrefix = ""
	}
	undeclared := func(k string) bool { return expPrefix != "" && strings.HasPrefix(k, expPrefix) }
	for i := range rows {
		r := &rows[i]
		if indexrow.IsKey(r.RowKey) {
			ixRows[r.RowKey] = *r
			p.indexRows++
			continue
		}
		if _, ok := r.Get(largevalue.OfColumn); ok {
			continue // a continuation row
		}
		if _, ok := r.Get(codec.TypeNameColumn); ok {
			continue // a polymorphic row of a shared table
		}
		want, err := indexrow.Keys(specs, r)
		if err != nil {
			want = nil // a value no index row can hold: the store refuses to write it
		}
		list := indexrow.Stored(r)
		for _, k := range list {
			if undeclared(k) {
				want = append(want, k)
			}
		}
		ents[r.RowKey] = &entity{etag: r.ETag, want: want, list: list}
		order = append(order, r.RowKey)
		p.entities++
	}
	wanted := map[string]string{} // index key → entity
	for _, rk := range order {
		for _, k := range ents[rk].want {
			wanted[k] = rk
		}
	}
	removeOf := map[string][]service.Row{}
	for k, r := range ixRows {
		if _, ok := wanted[k]; ok {
			continue
		}
		p.stale++
		if of, ok := indexrow.Of(&r); ok && ents[of] != nil {
			removeOf[of] = append(removeOf[of], r)
		} else {
			p.orphans = append(p.orphans, r)
		}
	}
	slices.SortFunc(p.orphans, func(a, b service.Row) int { return strings.Compare(a.RowKey, b.RowKey) })
	for _, rk := range order {
		e := ents[rk]
		fix := entityFix{rk: rk, etag: e.etag, want: e.want, remove: removeOf[rk]}
		for _, k := range e.want {
			if _, ok := ixRows[k]; !ok {
				fix.add = append(fix.add, k)
				p.missing++
			}
		}
		if !sameSet(e.want, e.list) {
			fix.relist = true
			p.unlisted++
		}
		if len(fix.add) > 0 || len(fix.remove) > 0 || fix.relist {
			p.fixes = append(p.fixes, fix)
		}
	}
	return p
}

// repair applies the fixes, each entity's in one transaction on condition of its version
// read; it reports whether an entity or orphan changed meanwhile (its fix was not applied).
func (p *partitionState) repair(ctx context.Context, core *engine.Table) (changed bool, err error) {
	send := func(rk string, acts []service.Action) error {
		tracked := core.WriteKeys([2]string{p.pk, rk})
		core.BeginWrite(tracked)
		err := core.Send(ctx, acts)
		core.EndWrite(tracked, err, nil, service.Written{})
		switch {
		case err == nil:
			return nil
		case abstractions.HasStatus(err, http.StatusPreconditionFailed, "") || abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound"):
			changed = true
			return nil
		}
		return core.TranslateTx("index rebuild", acts, err)
	}
	for _, f := range p.fixes {
		main := service.Row{PartitionKey: p.pk, RowKey: f.rk, Properties: []service.Property{{Name: indexrow.Column, Value: service.String(indexrow.Join(f.want))}}}
		acts := []service.Action{{Op: service.OpMerge, Row: main, IfMatch: f.etag}}
		for _, k := range f.add {
			acts = append(acts, service.Action{Op: service.OpUpsertReplace, Row: indexrow.Row(p.pk, k, f.rk)})
		}
		for _, r := range f.remove {
			acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: p.pk, RowKey: r.RowKey}, IfMatch: r.ETag})
		}
		if len(acts) > service.MaxTransactionActions {
			return changed, fmt.Errorf("%w: the entity %s|%s needs %d index changes, more than one transaction holds", abstractions.ErrNotSupported, p.pk, f.rk, len(acts))
		}
		if err := send(f.rk, acts); err != nil {
			return changed, err
		}
	}
	for _, r := range p.orphans {
		if err := send(r.RowKey, []service.Action{{Op: service.OpDelete, Row: service.Row{PartitionKey: p.pk, RowKey: r.RowKey}, IfMatch: r.ETag}}); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x := slices.Clone(a)
	y := slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// partitions returns the partition keys of the table in key order, reading keys only: on a
// service that lists rows in no key order (Cosmos DB for Table), a partition's rows are
// together only when it is read alone.
func partitions(ctx context.Context, core *engine.Table) ([]string, error) {
	seen := map[string]bool{}
	var pks []string
	err := core.Scan(ctx, service.Query{Select: engine.KeysOnly}, func(r *service.Row) error {
		if !seen[r.PartitionKey] {
			seen[r.PartitionKey] = true
			pks = append(pks, r.PartitionKey)
		}
		return nil
	})
	slices.SortFunc(pks, service.CompareUTF16)
	return pks, err
}
