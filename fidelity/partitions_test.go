package fidelity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// The partition property test: random partition strings, rows of several tenants written
// through ids built with CombineID, and every call that takes a partition on its own, which
// must read, count and delete exactly the rows whose ids' partitions are that partition, or
// refuse it with ErrInvalidKey having sent nothing. The expected rows come from a model that
// knows only the id path (normalise the whole id, split it), never the stores' partition
// code. Azurite is slow per request, so it runs fewer cases; the cases it runs are the
// memory service's first ones, and the two logs of those must be equal.

const (
	partitionCasesMemory  = 400
	partitionCasesAzurite = 40
)

func TestPartitionRules(t *testing.T) {
	bs := harnesses(t, makers)
	logs := make([][]string, len(bs))
	t.Run("backends", func(t *testing.T) {
		for i, b := range bs {
			n := partitionCasesMemory
			if b.Name == Azurite {
				n = partitionCasesAzurite
			}
			t.Run(b.Name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				start := time.Now()
				var stats partitionStats
				for seed := range uint64(n) {
					log, err := checkPartitionCase(ctx, b, seed, &stats)
					if err != nil {
						t.Fatalf("case %d: %v\nlog so far:\n%s", seed, err, strings.Join(log, "\n"))
					}
					logs[i] = append(logs[i], log...)
				}
				t.Logf("%d cases in %v: %d refused, %d of a partition with no row, %d of one with rows; %d normalised",
					n, time.Since(start).Round(time.Millisecond), stats.refused, stats.empty, stats.found, stats.normalised)
				if stats.refused < n/10 || stats.found < n/4 || stats.normalised < n/10 {
					t.Errorf("the generator reaches too few cases of a kind: %+v", stats)
				}
			})
		}
	})
	if t.Failed() || len(bs) < 2 {
		return
	}
	// Compare the cases both backends ran (Azurite's are a prefix of the memory service's).
	common := min(len(logs[0]), len(logs[1]))
	if d := cmp.Diff(logs[0][:common], logs[1][:common]); d != "" {
		t.Errorf("%s and %s observed different things (-%s +%s):\n%s", bs[0].Name, bs[1].Name, bs[0].Name, bs[1].Name, d)
	}
}

// Pieces of the random partitions: white space of many Unicode kinds (the leading ones are
// trimmed, the others kept, and those that are control characters refused), case variants
// and look-alikes that lower-case to one text (the Kelvin sign U+212A and "k", the Ohm sign
// U+2126, "Ω" and "ω"), "|", invalid UTF-8 and characters the service forbids. U+2028 and
// U+2029 stay out: Azurite deletes keys holding them only one by one (a listed deviation).
var (
	partWhite = []string{" ", "  ", "\u00a0", "\u2007", "\u3000", "\u205f", "\u1680", "\u202f"}
	// partControl is white space that is also a control character: trimmed at the start of
	// a normalised id, refused anywhere else.
	partControl = []string{"\t", "\n", "\u0085"}
	partWords   = []string{"acme", "Acme", "ACME", "kilo", "KILO", "\u212ailo", "\u2126hm", "\u03a9hm", "\u03c9hm", "é", "É", "a-b", "a b", "😀", "x"}
	partOdd     = []string{"|", "\xff", "\xc3", "#", "/", "-", "|x"}
)

func pick(r *rand.Rand, from []string) string { return from[r.IntN(len(from))] }

// white returns a random piece of white space, now and then a control character.
func white(r *rand.Rand) string {
	if r.IntN(6) == 0 {
		return pick(r, partControl)
	}
	return pick(r, partWhite)
}

// randomPartition returns a random partition string: empty, all white space, or a word with
// white space, another word or an odd piece around it.
func randomPartition(r *rand.Rand) string {
	switch r.IntN(12) {
	case 0:
		return ""
	case 1:
		return white(r) + []string{"", white(r)}[r.IntN(2)]
	}
	var b strings.Builder
	if r.IntN(2) == 0 {
		b.WriteString(white(r))
	}
	b.WriteString(pick(r, partWords))
	if r.IntN(3) == 0 {
		if r.IntN(4) == 0 {
			b.WriteString(pick(r, partOdd))
		} else {
			b.WriteString(pick(r, []string{"", "-", white(r)}))
		}
		b.WriteString(pick(r, partWords))
	}
	if r.IntN(12) == 0 {
		b.WriteString(pick(r, partOdd))
	}
	if r.IntN(2) == 0 {
		b.WriteString(white(r))
	}
	return b.String()
}

// variantOf returns p changed the ways a caller's input drifts: white space added at either
// end or taken off the end, case changed, look-alikes swapped, spaces against "-", a "|".
func variantOf(r *rand.Rand, p string) string {
	for range 1 + r.IntN(2) {
		switch r.IntN(12) {
		case 0:
			p = white(r) + p
		case 1:
			p += white(r)
		case 2:
			p = strings.TrimRight(p, " \t\u00a0\u3000")
		case 3:
			p = strings.ToUpper(p)
		case 4:
			p = strings.ToLower(p)
		case 5:
			p = strings.NewReplacer("k", "\u212a", "K", "\u212a", "\u212a", "k", "\u03c9", "\u2126", "\u2126", "\u03a9").Replace(p)
		case 6:
			p = strings.ReplaceAll(p, " ", "-")
		case 7:
			p = strings.ReplaceAll(p, "-", " ")
		case 8:
			p += "|" + p
		}
	}
	return p
}

// modelPartition returns the partition a store files the ids that start with p in, by the
// id path alone (normalise the whole id, split it on its first "|"), and whether such ids
// are accepted at all. It knows nothing of how a store treats a partition given alone.
func modelPartition(asWritten bool, p string) (string, bool) {
	if !utf8.ValidString(p) || strings.Contains(p, "|") {
		return "", false
	}
	id := p + "|r"
	if !asWritten {
		id = abstractions.NormalizeID(id)
	}
	pk, _ := abstractions.SplitID(id)
	return pk, modelKeyOK(pk)
}

// modelKeyOK is the service's key rules as the stores enforce them: not empty, at most 512
// UTF-16 code units, none of / \ # ? and no control character.
func modelKeyOK(k string) bool {
	if k == "" || service.UTF16Len(k) > 512 {
		return false
	}
	for _, c := range k {
		if strings.ContainsRune(`/\#?`, c) || c < 0x20 || (c >= 0x7f && c <= 0x9f) {
			return false
		}
	}
	return true
}

// sortKeys sorts "pk|rk" strings (pk without "|") in the service's order: by partition key,
// then row key, in UTF-16 code units.
func sortKeys(keys []string) {
	slices.SortFunc(keys, func(a, b string) int {
		apk, ark := abstractions.SplitID(a)
		bpk, brk := abstractions.SplitID(b)
		if c := service.CompareUTF16(apk, bpk); c != 0 {
			return c
		}
		return service.CompareUTF16(ark, brk)
	})
}

// partitionStats counts the kinds of cases run, to show the generator reaches each.
type partitionStats struct {
	refused, empty, found, normalised int
}

// checkPartitionCase runs the case of one seed on a backend, in a table of its own, and
// returns what it observed (the same on every backend) or what broke the model.
func checkPartitionCase(ctx context.Context, b backend, seed uint64, stats *partitionStats) (log []string, _ error) {
	r := rand.New(rand.NewPCG(seed, 0x9a27))
	asWritten := r.IntN(4) == 0
	tenants := []string{randomPartition(r)}
	for range 2 + r.IntN(3) {
		if r.IntN(2) == 0 {
			tenants = append(tenants, variantOf(r, pick(r, tenants)))
		} else {
			tenants = append(tenants, randomPartition(r))
		}
	}
	var q string
	switch r.IntN(10) {
	case 0, 1, 2:
		q = pick(r, tenants)
	case 3, 4, 5, 6:
		q = variantOf(r, pick(r, tenants))
	default:
		q = randomPartition(r)
	}
	observe := func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) }
	observe("case %d: as written %v, tenants %q, partition %q", seed, asWritten, tenants, q)

	table := "part" + randomSuffix()
	if err := b.Tables.CreateTable(ctx, table); err != nil {
		return log, fmt.Errorf("create table: %v", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = b.Tables.DeleteTable(cctx, table)
	}()
	ct := &countingTables{Tables: b.Tables}
	opts := &tables.Options{Now: storeClock}
	if asWritten {
		opts.IDs = tables.IDsAsWritten
	}
	s, err := tables.For[snapshotRow](tables.NewAccountOver(b.Name, ct, b.Blobs, opts), &tables.StoreOptions{Table: table})
	if err != nil {
		return log, err
	}

	// The tenants' rows, written through ids built with CombineID.
	stored := map[string]bool{}
	for _, tenant := range tenants {
		for v := 1; v <= 2; v++ {
			id, err := abstractions.CombineID(tenant, abstractions.VersionKey(v))
			if err != nil {
				if !errors.Is(err, abstractions.ErrInvalidKey) || !strings.Contains(tenant, "|") {
					return log, fmt.Errorf("CombineID(%q) = %v", tenant, err)
				}
				observe("CombineID(%q) refused", tenant)
				break
			}
			row := &snapshotRow{VersionedEntity: abstractions.VersionedEntity{Entity: abstractions.Entity{ID: id}, Version: v}}
			err = s.Create(ctx, row)
			pk, ok := modelPartition(asWritten, tenant)
			want := pk + "|" + abstractions.VersionKey(v)
			switch {
			case !ok:
				if !errors.Is(err, abstractions.ErrInvalidKey) {
					return log, fmt.Errorf("Create(%q) = %v, want ErrInvalidKey", id, err)
				}
			case stored[want]:
				if !errors.Is(err, abstractions.ErrDuplicateKey) {
					return log, fmt.Errorf("Create(%q) = %v, want ErrDuplicateKey: %q is stored already", id, err, want)
				}
			case err != nil || row.ID != want:
				return log, fmt.Errorf("Create(%q) = %v, stored as %q; want %q", id, err, row.ID, want)
			default:
				stored[want] = true
			}
			observe("create %q: %s", id, describeError(err))
		}
	}
	all := make([]string, 0, len(stored))
	for k := range stored {
		all = append(all, k)
	}
	sortKeys(all)

	qpk, valid := modelPartition(asWritten, q)
	var mine, others []string // rows of q's partition, the rest
	for _, k := range all {
		if pk, _ := abstractions.SplitID(k); valid && pk == qpk {
			mine = append(mine, k)
		} else {
			others = append(others, k)
		}
	}
	observe("partition %q: valid %v, rows %q", qpk, valid, mine)
	switch {
	case !valid:
		stats.refused++
	case len(mine) == 0:
		stats.empty++
	default:
		stats.found++
	}
	if valid && q != qpk {
		stats.normalised++
	}

	type call struct {
		name string
		// whole is true for the Query-family calls, which read the whole table when the
		// partition is "": that is their contract, not a refusal.
		whole bool
		run   func() (string, error)
	}
	rowIDs := func(vs []*snapshotRow) string { return fmt.Sprintf("%q", ids(vs)) }
	versionOf := func(v *snapshotRow) string { return fmt.Sprintf("%q v%d", v.ID, v.Version) }
	pq := abstractions.Query[snapshotRow]{Partition: q}
	calls := []call{
		{"List", false, func() (string, error) { vs, err := s.List(ctx, q); return rowIDs(vs), err }},
		{"Count", false, func() (string, error) { n, err := s.Count(ctx, q); return fmt.Sprint(n), err }},
		{"Query", true, func() (string, error) { vs, err := s.Query(ctx, pq); return rowIDs(vs), err }},
		{"Page", true, func() (string, error) {
			var got []*snapshotRow
			pg := pq
			pg.Take = 2
			for {
				p, err := s.Page(ctx, pg)
				if err != nil {
					return "", err
				}
				got = append(got, p.Items...)
				if !p.HasMore() {
					return rowIDs(got), nil
				}
				pg.Cursor = p.Cursor
			}
		}},
		{"Stream", true, func() (string, error) {
			var got []*snapshotRow
			for v, err := range s.Stream(ctx, pq) {
				if err != nil {
					return "", err
				}
				got = append(got, v)
			}
			return rowIDs(got), nil
		}},
		{"Any", true, func() (string, error) { ok, err := s.Any(ctx, pq); return fmt.Sprint(ok), err }},
		{"Latest", false, func() (string, error) {
			v, err := abstractions.Latest(ctx, abstractions.Storage[snapshotRow](s), q)
			if err != nil {
				return "", err
			}
			return versionOf(v), nil
		}},
		{"AtOrBefore", false, func() (string, error) {
			v, err := abstractions.AtOrBefore(ctx, abstractions.Storage[snapshotRow](s), q, 1)
			if err != nil {
				return "", err
			}
			return versionOf(v), nil
		}},
		{"AtVersion", false, func() (string, error) {
			v, err := abstractions.AtVersion(ctx, abstractions.Storage[snapshotRow](s), q, 2)
			if err != nil {
				return "", err
			}
			return versionOf(v), nil
		}},
		{"History", false, func() (string, error) {
			var got []*snapshotRow
			for v, err := range abstractions.History(ctx, abstractions.Storage[snapshotRow](s), q, 0) {
				if err != nil {
					return "", err
				}
				got = append(got, v)
			}
			return rowIDs(got), nil
		}},
		{"Recent", false, func() (string, error) {
			vs, err := abstractions.Recent(ctx, abstractions.Storage[snapshotRow](s), q, 50, "")
			return rowIDs(vs), err
		}},
		{"Recent of a sub-stream", false, func() (string, error) {
			vs, err := abstractions.Recent(ctx, abstractions.Storage[snapshotRow](s), q, 50, "Sub")
			return rowIDs(vs), err
		}},
	}
	versionRow := func(rows []string, version int) (string, error) {
		for _, k := range rows {
			if _, rk := abstractions.SplitID(k); rk == abstractions.VersionKey(version) {
				return fmt.Sprintf("%q v%d", k, version), nil
			}
		}
		return "", abstractions.ErrNotFound
	}
	for _, c := range calls {
		before := ct.n.Load()
		got, err := c.run()
		sent := ct.n.Load() - before
		observe("%s: %s %s", c.name, got, describeError(err))
		rows := mine
		if c.whole && q == "" {
			rows = all
		}
		if !valid && !(c.whole && q == "") {
			if !errors.Is(err, abstractions.ErrInvalidKey) || sent != 0 {
				return log, fmt.Errorf("%s(%q) = %q, %v after %d requests; want ErrInvalidKey and none", c.name, q, got, err, sent)
			}
			continue
		}
		var want string
		var wantErr error
		switch c.name {
		case "Count":
			want = fmt.Sprint(len(rows))
		case "Any":
			want = fmt.Sprint(len(rows) > 0)
		case "Latest":
			if len(rows) == 0 {
				wantErr = abstractions.ErrNotFound
			} else {
				want = fmt.Sprintf("%q v%d", rows[0], 2) // version 2 sorts first, and a tenant writes 1 and 2
				if _, rk := abstractions.SplitID(rows[0]); rk != abstractions.VersionKey(2) {
					want = fmt.Sprintf("%q v%d", rows[0], 1)
				}
			}
		case "AtOrBefore":
			want, wantErr = versionRow(rows, 1)
		case "AtVersion":
			want, wantErr = versionRow(rows, 2)
		case "Recent of a sub-stream":
			want = "[]"
		default:
			want = fmt.Sprintf("%q", rows)
			if len(rows) == 0 {
				want = "[]"
			}
		}
		if wantErr != nil {
			if !errors.Is(err, wantErr) {
				return log, fmt.Errorf("%s(%q) = %q, %v; want %v", c.name, q, got, err, wantErr)
			}
			continue
		}
		if err != nil || got != want {
			return log, fmt.Errorf("%s(%q) = %s, %v; want %s", c.name, q, got, err, want)
		}
	}

	// Append files its entry in q's partition, and DeletePartition deletes exactly that
	// partition's rows, the entry included.
	before := ct.n.Load()
	ev := &snapshotRow{}
	err = abstractions.AppendAt(ctx, abstractions.Storage[snapshotRow](s), q, ev, "", storeClock())
	observe("Append: %q %s", ev.ID, describeError(err))
	if !valid {
		if !errors.Is(err, abstractions.ErrInvalidKey) || ct.n.Load() != before {
			return log, fmt.Errorf("Append(%q) = %v after %d requests; want ErrInvalidKey and none", q, err, ct.n.Load()-before)
		}
	} else if pk, _ := abstractions.SplitID(ev.ID); err != nil || pk != qpk {
		return log, fmt.Errorf("Append(%q) = %v, stored as %q; want partition %q", q, err, ev.ID, qpk)
	}
	before = ct.n.Load()
	n, err := s.DeletePartition(ctx, q)
	observe("DeletePartition: %d %s", n, describeError(err))
	if !valid {
		if !errors.Is(err, abstractions.ErrInvalidKey) || ct.n.Load() != before {
			return log, fmt.Errorf("DeletePartition(%q) = %v after %d requests; want ErrInvalidKey and none", q, err, ct.n.Load()-before)
		}
	} else if err != nil || n != len(mine)+1 {
		return log, fmt.Errorf("DeletePartition(%q) = %d, %v; want %d", q, n, err, len(mine)+1)
	}

	// What is left is every other tenant's rows, untouched.
	left, err := allRows(ctx, b.Tables, table, service.Query{})
	if err != nil {
		return log, fmt.Errorf("rows left behind: %v", err)
	}
	keys := keysOf(left)
	observe("rows left behind: %q", keys)
	if !slices.Equal(keys, others) && !(len(keys) == 0 && len(others) == 0) {
		return log, fmt.Errorf("rows left behind %q, want %q", keys, others)
	}
	return log, nil
}
