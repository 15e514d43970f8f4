package memservice

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/unified-data/gotables/tables/service"
)

func TestCreateTableNames(t *testing.T) {
	tests := []struct {
		name   string
		table  string
		status int
		code   string
	}{
		{"shortest", "abc", 0, ""},
		{"longest", "a" + strings.Repeat("9", 62), 0, ""},
		{"mixed case", "MyTable01", 0, ""},
		{"too short", "t1", http.StatusBadRequest, "OutOfRangeInput"},
		{"empty", "", http.StatusBadRequest, "OutOfRangeInput"},
		{"too long", "a" + strings.Repeat("b", 63), http.StatusBadRequest, "OutOfRangeInput"},
		{"leading digit", "1ab", http.StatusBadRequest, "InvalidResourceName"},
		{"hyphen", "ab-c", http.StatusBadRequest, "InvalidResourceName"},
		{"underscore", "ab_c", http.StatusBadRequest, "InvalidResourceName"},
		{"non-ASCII", "abcé", http.StatusBadRequest, "InvalidResourceName"},
		{"reserved", "tables", http.StatusBadRequest, "InvalidResourceName"},
		{"reserved any case", "TaBLes", http.StatusBadRequest, "InvalidResourceName"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			err := s.CreateTable(context.Background(), tc.table)
			if tc.status == 0 {
				if err != nil {
					t.Fatalf("CreateTable(%q) = %v", tc.table, err)
				}
				return
			}
			wantStatus(t, err, tc.status, tc.code)
		})
	}
}

func TestTableNamesIgnoreCase(t *testing.T) {
	ctx := context.Background()
	s := New()
	if err := s.CreateTable(ctx, "Tab2"); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, s.CreateTable(ctx, "TAB2"), http.StatusConflict, "TableAlreadyExists")
	for _, name := range []string{"Tab2", "tab2", "TAB2"} {
		if ok, err := s.TableExists(ctx, name); !ok || err != nil {
			t.Errorf("TableExists(%q) = %v, %v", name, ok, err)
		}
		if _, err := s.Write(ctx, name, insert(row("p", name))); err != nil {
			t.Errorf("Write to %q: %v", name, err)
		}
	}
	page, err := s.Query(ctx, "tAB2", service.Query{})
	if err != nil || len(page.Rows) != 3 {
		t.Fatalf("Query = %d rows, %v; want 3 rows", len(page.Rows), err)
	}
	// The Kelvin sign folds to "k" under Unicode rules; no table name may contain it.
	if err := s.CreateTable(ctx, "kab"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.TableExists(ctx, "\u212Aab"); ok {
		t.Error(`TableExists("\u212Aab") = true, want false`)
	}
	if err := s.DeleteTable(ctx, "tab2"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.TableExists(ctx, "Tab2"); ok {
		t.Error("table exists after DeleteTable")
	}
	wantStatus(t, s.DeleteTable(ctx, "Tab2"), http.StatusNotFound, "ResourceNotFound")
	wantStatus(t, s.DeleteTable(ctx, "x"), http.StatusNotFound, "ResourceNotFound")
	if ok, err := s.TableExists(ctx, "x"); ok || err != nil {
		t.Errorf(`TableExists("x") = %v, %v; want false, nil`, ok, err)
	}
}

func TestMissingTable(t *testing.T) {
	ctx := context.Background()
	s := New()
	_, err := s.GetRow(ctx, "Nope", "p", "r", nil)
	wantStatus(t, err, http.StatusNotFound, "TableNotFound")
	for op := service.OpInsert; op <= service.OpDelete; op++ {
		_, err := s.Write(ctx, "Nope", service.Action{Op: op, Row: row("p", "r")})
		wantStatus(t, err, http.StatusNotFound, "TableNotFound")
	}
	_, err = s.Query(ctx, "Nope", service.Query{})
	wantStatus(t, err, http.StatusNotFound, "TableNotFound")
	err = txErr(s.Transact(ctx, "Nope", []service.Action{insert(row("p", "r"))}))
	wantTx(t, err, 0, http.StatusNotFound, "TableNotFound")
}

func TestDeleteTableDropsRows(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	mustWrite(t, s, insert(row("p", "r")))
	if err := s.DeleteTable(ctx, "tab1"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx, "Tab1"); err != nil {
		t.Fatal(err)
	}
	_, err := s.GetRow(ctx, "Tab1", "p", "r", nil)
	wantStatus(t, err, http.StatusNotFound, "ResourceNotFound")
}

// TableNames lists the tables as created, by name without regard to case, and forgets a
// deleted one.
func TestTableNames(t *testing.T) {
	ctx := context.Background()
	s := New()
	for _, n := range []string{"Orders", "lines", "Customers", "Gone"} {
		if err := s.CreateTable(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteTable(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	names, err := s.TableNames(ctx)
	if got := strings.Join(names, ","); err != nil || got != "Customers,lines,Orders" {
		t.Errorf("TableNames = %s, %v", got, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.TableNames(cctx); err == nil {
		t.Error("TableNames on an ended context succeeded")
	}
}
