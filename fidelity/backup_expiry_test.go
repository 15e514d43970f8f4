package fidelity

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/backup"
	"github.com/unified-data/gotables/tables/expiry"
	"github.com/unified-data/gotables/tables/service"
)

// TestBackupExpiring backs up a table of an expiring type holding a live and an expired
// row, restores it, and checks what docs/expiry.md says: the rows come back verbatim (expiry
// times, expiry index rows and marks), the expired row is absent to reads from the moment it
// is restored, the next sweep deletes it, and a store whose type declares no expiry reads it.
func TestBackupExpiring(t *testing.T) {
	for _, mk := range makers {
		h := mk(t)
		if h == nil {
			continue
		}
		t.Run(h.Name(), func(t *testing.T) {
			ctx := context.Background()
			c := newExpClock()
			acct := tables.NewAccountOver(h.Name(), h.Tables(), h.Blobs(), &tables.Options{Now: c.now, Logger: discardLogger()})
			sfx := randomSuffix()
			src, dst := "BkExp"+sfx, "BkExpCopy"+sfx
			open := func(table string) *tables.Store[expSession] {
				s, err := tables.For[expSession](acct, &tables.StoreOptions{Table: table})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			ids := func(s *tables.Store[expSession]) []string {
				xs, err := s.ListAll(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, x := range xs {
					out = append(out, x.ID)
				}
				sort.Strings(out)
				return out
			}
			s := open(src)
			for _, x := range []*expSession{
				{Entity: abstractions.Entity{ID: "p|gone"}, User: "ann"}, // the default: 1h
				{Entity: abstractions.Entity{ID: "p|live"}, User: "ann", Expires: expT0.Add(3 * time.Hour)},
			} {
				if err := s.Create(ctx, x); err != nil {
					t.Fatal(err)
				}
			}
			c.at0(2 * time.Hour) // gone expired an hour ago, unswept
			var archive bytes.Buffer
			if _, err := backup.Write(ctx, acct, src, &archive, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := backup.Restore(ctx, acct, dst, &archive, nil); err != nil {
				t.Fatal(err)
			}
			bkCompare(t, acct, src, acct, dst) // verbatim: expiry cells, index rows and marks
			marks, err := allRows(ctx, acct.Tables(), dst, service.Query{Filter: "PartitionKey eq '~ux._expires'"})
			if err != nil {
				t.Fatal(err)
			}
			if len(marks) == 0 {
				t.Error("the restore brought no marks")
			}
			d := open(dst)
			if got := ids(d); len(got) != 1 || got[0] != "p|live" {
				t.Errorf("restored live rows %v, want [p|live]", got)
			}
			if _, err := d.One(ctx, "p|gone"); !errors.Is(err, abstractions.ErrNotFound) {
				t.Errorf("one of the restored expired row: %v, want ErrNotFound", err)
			}
			// A store whose type declares no expiry reads the expired row, to rewrite it.
			type plain struct {
				abstractions.Entity
				User    string
				Expires time.Time
			}
			ps, err := tables.For[plain](acct, &tables.StoreOptions{Table: dst})
			if err != nil {
				t.Fatal(err)
			}
			if g, err := ps.One(ctx, "p|gone"); err != nil || !g.Expires.Equal(expT0.Add(time.Hour)) {
				t.Errorf("read without expiry: %v, %v", g, err)
			}
			// The next sweep deletes the restored expired row with its rows.
			rep, err := expiry.Sweep(ctx, d, nil)
			if err != nil || rep.Swept != 1 {
				t.Errorf("sweep of the restored table: %+v, %v", rep, err)
			}
			rows, err := allRows(ctx, acct.Tables(), dst, service.Query{Filter: "PartitionKey eq 'p'"})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keysOf(rows) {
				if strings.Contains(k, "gone") {
					t.Errorf("a row of the swept entity is left: %s", k)
				}
			}
		})
	}
}
