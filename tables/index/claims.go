package index

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/indexrow"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// uniques is what Verify and Rebuild gather of the unique indexes while they read the
// table: for each index, the entities that hold each value, by the value's claim
// partition. The claims are checked once every entity was read, since two holders of one
// value may be in two partitions.
type uniques struct {
	specs   []indexrow.Spec
	holders []map[string]*holding
}

// holding is one value of a unique index and the entities that hold it.
type holding struct {
	value  service.Value
	owners []string // ids
}

func newUniques(specs []indexrow.Spec) *uniques {
	u := &uniques{}
	for _, sp := range specs {
		if sp.Unique {
			u.specs = append(u.specs, sp)
			u.holders = append(u.holders, map[string]*holding{})
		}
	}
	return u
}

// isEntity reports whether a row of a partition the run reads is an entity's main row.
func isEntity(r *service.Row) bool {
	if indexrow.IsKey(r.RowKey) {
		return false
	}
	if _, ok := r.Get(largevalue.OfColumn); ok {
		return false // a continuation row
	}
	_, ok := r.Get(codec.TypeNameColumn) // a polymorphic row of a shared table
	return !ok
}

func countEntities(rows []service.Row) int {
	n := 0
	for i := range rows {
		if isEntity(&rows[i]) {
			n++
		}
	}
	return n
}

// add records the unique values the entities of one partition hold.
func (u *uniques) add(rows []service.Row) {
	for i := range u.specs {
		for j := range rows {
			r := &rows[j]
			if !isEntity(r) {
				continue
			}
			cpk, v, err := engine.UniqueValue(&u.specs[i], r)
			if err != nil || cpk == "" {
				continue // no value, or one no claim can hold: the store refuses to write it
			}
			h := u.holders[i][cpk]
			if h == nil {
				h = &holding{value: v}
				u.holders[i][cpk] = h
			}
			h.owners = append(h.owners, r.PartitionKey+abstractions.IDSeparator+r.RowKey)
		}
	}
}

// check compares each unique index's claims with the values gathered, and with repair
// claims the values one entity holds and deletes the stale claims. With scope (a
// partition key) only the claims that name an entity of that partition are looked for as
// stale.
func (u *uniques) check(ctx context.Context, core *engine.Table, scope string, repair bool, rep *Report, progress func(Report)) error {
	for i := range u.specs {
		sp := &u.specs[i]
		cpks := make([]string, 0, len(u.holders[i]))
		for cpk := range u.holders[i] {
			cpks = append(cpks, cpk)
		}
		slices.Sort(cpks)
		for _, cpk := range cpks {
			if err := u.value(ctx, core, sp, cpk, u.holders[i][cpk], repair, rep); err != nil {
				return err
			}
		}
		held := func(cpk string) bool { return u.holders[i][cpk] != nil }
		n, err := core.StaleClaims(ctx, sp, scope, held, repair)
		if err != nil {
			return err
		}
		if repair {
			// Counted as found only when deleted: one a writer claimed again meanwhile is
			// no longer stale.
			rep.Repaired += n
		}
		rep.StaleClaims += n
		if progress != nil {
			progress(*rep)
		}
	}
	return nil
}

// value checks (and with repair, claims) one value of the unique index sp.
func (u *uniques) value(ctx context.Context, core *engine.Table, sp *indexrow.Spec, cpk string, h *holding, repair bool, rep *Report) error {
	opk, ork, exists, live, err := core.ReadClaim(ctx, sp, cpk)
	if err != nil {
		return err
	}
	owner := opk + abstractions.IDSeparator + ork
	duplicate := func(ids []string) {
		// In key order (the entities were read in the service's order, which Cosmos DB
		// does not keep), the claim's owner first.
		ids = slices.SortedFunc(slices.Values(ids), func(a, b string) int {
			apk, ark := abstractions.SplitID(a)
			bpk, brk := abstractions.SplitID(b)
			return cmp.Or(service.CompareUTF16(apk, bpk), service.CompareUTF16(ark, brk))
		})
		if exists && live {
			ids = append([]string{owner}, slices.DeleteFunc(ids, func(id string) bool { return id == owner })...)
		}
		rep.Duplicates = append(rep.Duplicates, Duplicate{Index: sp.Name, Value: engine.GoValue(h.value), IDs: ids})
	}
	switch {
	case len(h.owners) > 1:
		duplicate(h.owners)
		return nil
	case exists && live && owner == h.owners[0]:
		return nil
	case exists && live:
		duplicate(h.owners) // held by an entity this run did not read, or wrote after it read
		return nil
	case exists:
		rep.WrongClaims++
	default:
		rep.MissingClaims++
	}
	if !repair {
		return nil
	}
	pk, rk := abstractions.SplitID(h.owners[0])
	err = core.Claim(ctx, "index rebuild", sp, cpk, h.value, pk, rk, false)
	switch {
	case err == nil:
		rep.Repaired++
	case errors.Is(err, abstractions.ErrDuplicateKey):
		// Another entity claimed it meanwhile.
		if opk, ork, _, live, err = core.ReadClaim(ctx, sp, cpk); err != nil {
			return err
		}
		exists, owner = live, opk+abstractions.IDSeparator+ork
		duplicate(h.owners)
	case errors.Is(err, abstractions.ErrConcurrencyConflict):
		// The claim kept changing: left as found, for the next run.
	default:
		return err
	}
	return nil
}
