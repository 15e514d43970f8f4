package index_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/backup"
	"github.com/unified-data/gotables/tables/index"
)

// plainItem is item without its indexes: the type as it was before the tags were added,
// or a writer that does not know them.
type plainItem struct {
	abstractions.Entity
	Rank  int32
	Label *string
	At    time.Time
}

func TestVerifyAndRebuild(t *testing.T) {
	ctx := context.Background()
	conn := azuritetest.ConnectionString(t)
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("ixrb%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = acct.Tables().DeleteTable(context.Background(), name) })
	plain, err := tables.For[plainItem](acct, &tables.StoreOptions{Table: name})
	if err != nil {
		t.Fatal(err)
	}
	indexed, err := tables.For[item](acct, &tables.StoreOptions{Table: name})
	if err != nil {
		t.Fatal(err)
	}
	// Rows written before the index existed.
	for i := range 12 {
		if err := plain.Create(ctx, &plainItem{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|r%02d", i%2, i)}, Rank: int32(i % 3), At: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what string, r index.Report, consistent bool) {
		t.Helper()
		if r.Consistent() != consistent || r.Entities != 12 {
			t.Fatalf("%s: %+v, want consistent=%v over 12 entities", what, r, consistent)
		}
	}
	rep, err := index.Verify(ctx, indexed, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	expect("before the rebuild", rep, false)
	if rep.Missing != 12*3 || rep.Unlisted != 12 || rep.Partitions != 2 {
		t.Fatalf("before the rebuild: %+v", rep)
	}
	var progress []index.Report
	rep, err = index.Rebuild(ctx, indexed, "", func(r index.Report) { progress = append(progress, r) })
	if err != nil || rep.Repaired != 12 || len(progress) != 2 {
		t.Fatalf("rebuild: %+v, %v, progress %d", rep, err, len(progress))
	}
	rep, _ = index.Verify(ctx, indexed, "", nil)
	expect("after the rebuild", rep, true)
	rank, _ := index.On(indexed, "rank")
	if n, err := rank.Count(ctx, "p0", 0); err != nil || n != 2 {
		t.Fatalf("Count(rank 0) = %d, %v", n, err)
	}

	// A writer that does not know the index changes one row and deletes another: stale
	// and unlisted rows, and orphans; the table-level verify sees them as the store's does.
	if err := plain.Update(ctx, &plainItem{Entity: abstractions.Entity{ID: "p0|r00"}, Rank: 9}, abstractions.LastWriterWins); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Delete(ctx, "p1|r01", ""); err != nil {
		t.Fatal(err)
	}
	decls := []index.Declaration{{Name: "rank", Column: "Rank"}, {Name: "rankDesc", Column: "Rank", Desc: true},
		{Name: "label", Column: "Label"}, {Name: "at", Column: "At"}}
	tv, err := index.VerifyTable(ctx, acct, name, decls, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	sv, _ := index.Verify(ctx, indexed, "", nil)
	if !reflect.DeepEqual(tv, sv) || tv.Consistent() || tv.Stale == 0 || tv.Unlisted != 1 {
		t.Fatalf("VerifyTable %+v, Verify %+v", tv, sv)
	}
	if _, err := index.RebuildTable(ctx, acct, name, decls, "p0", nil); err != nil {
		t.Fatal(err)
	}
	if rep, _ := index.Verify(ctx, indexed, "p0", nil); !rep.Consistent() {
		t.Fatalf("p0 after its rebuild: %+v", rep)
	}
	if rep, _ := index.Verify(ctx, indexed, "p1", nil); rep.Consistent() || rep.Stale != 3 {
		t.Fatalf("p1 before its rebuild: %+v", rep)
	}

	// A rebuild racing indexed writers leaves a consistent index.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				id := fmt.Sprintf("p1|r%02d", (g+i)%12)
				_ = indexed.Upsert(ctx, &item{Entity: abstractions.Entity{ID: id}, Rank: int32(g), At: time.Unix(int64(i), 0)})
			}
		}()
	}
	if _, err := index.Rebuild(ctx, indexed, "p1", nil); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if rep, _ := index.Verify(ctx, indexed, "", nil); !rep.Consistent() {
		t.Fatalf("after a rebuild racing writers: %+v", rep)
	}
	if _, err := index.VerifyTable(ctx, acct, name, []index.Declaration{{Name: "bad-name", Column: "Rank"}}, "", nil); err == nil {
		t.Fatal("a bad index name was accepted")
	}
}

// TestBackupKeepsIndexRows: a backup archives index rows as it archives every row, and a
// copy (a backup restored into another table) has a consistent index.
func TestBackupKeepsIndexRows(t *testing.T) {
	ctx := context.Background()
	conn := azuritetest.ConnectionString(t)
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("ixbk%d", time.Now().UnixNano())
	dst := src + "c"
	t.Cleanup(func() {
		_ = acct.Tables().DeleteTable(context.Background(), src)
		_ = acct.Tables().DeleteTable(context.Background(), dst)
	})
	s, err := tables.For[item](acct, &tables.StoreOptions{Table: src})
	if err != nil {
		t.Fatal(err)
	}
	label := "l"
	for i := range 6 {
		if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|r%d", i%2, i)}, Rank: int32(i), Label: &label}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := backup.Copy(ctx, acct, src, acct, dst, nil); err != nil {
		t.Fatal(err)
	}
	c, err := tables.For[item](acct, &tables.StoreOptions{Table: dst})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := index.Verify(ctx, c, "", nil)
	if err != nil || !rep.Consistent() || rep.Entities != 6 || rep.IndexRows != 6*3 {
		t.Fatalf("the copy's index: %+v, %v", rep, err)
	}
	rank, _ := index.On(c, "rank")
	if found, err := rank.Find(ctx, "p1", 3); err != nil || len(found) != 1 {
		t.Fatalf("Find in the copy: %d, %v", len(found), err)
	}
}

// uniqueUser and plainUser are one table's rows, with and without the unique index.
type uniqueUser struct {
	abstractions.Entity
	Email string `table:",unique=email"`
}

type plainUser struct {
	abstractions.Entity
	Email string
}

// TestRebuildUniqueRacingWriters: a Rebuild of a unique index added to a table with rows,
// while writers that know the index move values and create entities with values the old
// rows hold, leaves a truthful index: after a second run, every value one entity holds is
// claimed for it, every duplicate reported is held by each entity it names, and no claim is
// missing, in the way or stale.
func TestRebuildUniqueRacingWriters(t *testing.T) {
	ctx := context.Background()
	conn := azuritetest.ConnectionString(t)
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("ixrbu%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = acct.Tables().DeleteTable(context.Background(), name) })
	plain, err := tables.For[plainUser](acct, &tables.StoreOptions{Table: name})
	if err != nil {
		t.Fatal(err)
	}
	s, err := tables.For[uniqueUser](acct, &tables.StoreOptions{Table: name})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := plain.Create(ctx, &plainUser{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|u%02d", i%3, i)}, Email: fmt.Sprintf("e%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				n := g*5 + i
				if i%2 == 0 {
					_ = s.Upsert(ctx, &uniqueUser{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|u%02d", n%3, n)}, Email: fmt.Sprintf("moved%d-%d", g, i)})
				} else {
					_ = s.Create(ctx, &uniqueUser{Entity: abstractions.Entity{ID: fmt.Sprintf("q|n%02d", n)}, Email: fmt.Sprintf("e%02d", (n+7)%20)})
				}
			}
		}()
	}
	if _, err := index.Rebuild(ctx, s, "", nil); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if _, err := index.Rebuild(ctx, s, "", nil); err != nil {
		t.Fatal(err)
	}
	rep, err := index.Verify(ctx, s, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.MissingClaims != 0 || rep.WrongClaims != 0 || rep.StaleClaims != 0 {
		t.Fatalf("after the second rebuild: %+v", rep)
	}
	duplicated := map[string]bool{}
	for _, d := range rep.Duplicates {
		duplicated[d.Value.(string)] = true
		for _, id := range d.IDs {
			if u, err := s.One(ctx, id); err != nil || u.Email != d.Value {
				t.Errorf("duplicate %v names %s, which does not hold it (%v)", d.Value, id, err)
			}
		}
	}
	all, err := s.ListAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	email, _ := index.On(s, "email")
	for _, u := range all {
		if duplicated[u.Email] {
			continue
		}
		got, err := email.Get(ctx, u.Email)
		if err != nil || got.ID != u.ID {
			t.Errorf("Get(%s): %v, want %s", u.Email, err, u.ID)
		}
	}
}

// TestBackupKeepsClaims: a copy of the whole table keeps the claims of a unique index (its
// partitions are the table's), so the copy's index is consistent; a copy limited to some
// partitions has none, and a Rebuild of the copy claims its values.
func TestBackupKeepsClaims(t *testing.T) {
	ctx := context.Background()
	conn := azuritetest.ConnectionString(t)
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("ixbku%d", time.Now().UnixNano())
	whole, part := src+"w", src+"p"
	t.Cleanup(func() {
		for _, n := range []string{src, whole, part} {
			_ = acct.Tables().DeleteTable(context.Background(), n)
		}
	})
	s, err := tables.For[uniqueUser](acct, &tables.StoreOptions{Table: src})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := s.Create(ctx, &uniqueUser{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|u%d", i%2, i)}, Email: fmt.Sprintf("e%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := backup.Copy(ctx, acct, src, acct, whole, nil); err != nil {
		t.Fatal(err)
	}
	w, _ := tables.For[uniqueUser](acct, &tables.StoreOptions{Table: whole})
	if rep, err := index.Verify(ctx, w, "", nil); err != nil || !rep.Consistent() || rep.Entities != 4 {
		t.Fatalf("the whole copy: %+v, %v", rep, err)
	}
	if _, err := backup.Copy(ctx, acct, src, acct, part, &backup.Options{Partitions: []string{"p0"}}); err != nil {
		t.Fatal(err)
	}
	p, _ := tables.For[uniqueUser](acct, &tables.StoreOptions{Table: part})
	if rep, err := index.Verify(ctx, p, "", nil); err != nil || rep.MissingClaims != 2 || rep.Entities != 2 {
		t.Fatalf("the copy of p0, before its rebuild: %+v, %v", rep, err)
	}
	if _, err := index.Rebuild(ctx, p, "", nil); err != nil {
		t.Fatal(err)
	}
	email, _ := index.On(p, "email")
	if u, err := email.Get(ctx, "e2"); err != nil || u.ID != "p0|u2" {
		t.Fatalf("Get(e2) in the rebuilt copy: %v", err)
	}
}
