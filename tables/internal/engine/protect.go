package engine

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

// Protected fields.
//
// A field tagged protected= may change through Update and Upsert only when the account's
// Authorizer allows one of its roles for the call's context; with no Authorizer, never. To
// know whether a write changes a protected value the store reads the row once, compares the
// cells the write would store with those of the stored row (decoded and encoded again, so an
// aliased or compressed stored form compares by value; []byte by bytes), and then writes on
// condition of the version it read, so no other write can slip in between the check and the
// write. A lost race reads and checks again, up to GuardAttempts times, then fails with
// ErrConcurrencyConflict, like the split-aware writes of the seed.
//
// Decisions:
//   - A row that does not exist yet has no protected value to change: an Upsert that
//     creates it is allowed, as Create is (Create never checks). It is sent as an insert, so
//     a row that appears between the read and the write is checked on the next attempt
//     instead of being overwritten.
//   - A Strict Update whose ETag is not the stored version is sent unchecked: the service
//     refuses it with a conflict, which is the more useful answer.
//   - Batch writes and Create do not check (batch writes would need a read per row): they
//     are trusted paths. Patch refuses protected fields unless AllowProtected says the caller
//     checked.
//   - A type with no protected field pays nothing: no read, the write is sent as before.
const GuardAttempts = 5

// ProtectedFields returns the plan's protected columns.
func (s *Table) ProtectedFields() []*codec.Field {
	var out []*codec.Field
	fields := s.Plan.Fields()
	for i := range fields {
		if len(fields[i].Protected) > 0 && fields[i].Role == codec.RoleColumn {
			out = append(out, &fields[i])
		}
	}
	return out
}

// GuardRetry paces the attempts of the protected-field check: 5 to 10 ms before the second,
// doubling each time.
var GuardRetry = abstractions.RetryOptions{Backoff: 10 * time.Millisecond}

// CheckProtected compares the protected cells p would write with the stored row's and asks
// the authorizer about each one that changes.
func (s *Table) CheckProtected(ctx context.Context, op string, p *Write, stored *service.Row, prot []*codec.Field) error {
	old := reflect.New(s.Plan.Type()).Interface()
	if err := codec.DecodeInto(stored, old, &s.Acct.Codec); err != nil {
		return fmt.Errorf("%s %s (%q, %q): reading the stored row to check protected fields: %w", op, s.Name, p.PK, p.RK, err)
	}
	oldProps, err := codec.Encode(old, &s.Acct.Codec)
	if err != nil {
		return fmt.Errorf("%s %s (%q, %q): re-encoding the stored row to check protected fields: %w", op, s.Name, p.PK, p.RK, err)
	}
	for _, f := range prot {
		if SameCells(CellsOf(oldProps, f), CellsOf(p.Row.Properties, f)) {
			continue
		}
		auth := s.Acct.Cfg.Authorizer
		if auth != nil && auth.IsAllowed(ctx, f.Protected) {
			continue
		}
		why := "no Authorizer is configured, so no write through Update or Upsert may change it"
		if auth != nil {
			why = "the Authorizer does not allow the caller any of its roles"
		}
		return &abstractions.StoreError{Kind: abstractions.ErrProtectedProperty, Op: op, Table: s.Name, PartitionKey: p.PK, RowKey: p.RK,
			Message: fmt.Sprintf("the protected field %s (roles %s) would change from %s to %s; %s; nothing was written",
				f.Path, strings.Join(f.Protected, "|"), DescribeField(reflect.ValueOf(old).Elem(), f), DescribeField(reflect.ValueOf(p.V).Elem(), f), why)}
	}
	return nil
}

// CellsOf returns the cells of props a write of f stores: its cell or its compressed cell.
func CellsOf(props []service.Property, f *codec.Field) []service.Property {
	var out []service.Property
	for _, pr := range props {
		if pr.Name == f.Cell || (f.Compressed != "" && pr.Name == f.Compressed) {
			out = append(out, pr)
		}
	}
	return out
}

// SameCells reports whether two lists of cells hold the same names and values.
func SameCells(a, b []service.Property) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !a[i].Value.Equal(b[i].Value) {
			return false
		}
	}
	return true
}

// DescribeField renders the value of f in the struct v for a refusal message: short, and
// never more than a bounded prefix of a long value.
func DescribeField(v reflect.Value, f *codec.Field) string {
	fv, err := v.FieldByIndexErr(f.Index)
	if err != nil {
		return "nothing (a nil pointer on the way)"
	}
	for fv.Kind() == reflect.Pointer || fv.Kind() == reflect.Interface {
		if fv.IsNil() {
			return "nil"
		}
		fv = fv.Elem()
	}
	const maxShown = 64
	switch {
	case fv.Kind() == reflect.String:
		s := fv.String()
		if utf8.RuneCountInString(s) <= maxShown {
			return strconv.Quote(s)
		}
		return strconv.Quote(string([]rune(s)[:maxShown])) + fmt.Sprintf("… (%d characters)", utf8.RuneCountInString(s))
	case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Uint8:
		b := fv.Bytes()
		if len(b) <= maxShown/2 {
			return fmt.Sprintf("%d bytes %x", len(b), b)
		}
		return fmt.Sprintf("%d bytes %x…", len(b), b[:maxShown/2])
	case fv.Type() == reflect.TypeFor[time.Time]() && fv.CanInterface():
		return fv.Interface().(time.Time).Format(time.RFC3339Nano)
	}
	s := fmt.Sprintf("%v", fv)
	if utf8.RuneCountInString(s) > maxShown {
		s = string([]rune(s)[:maxShown]) + "…"
	}
	return s
}
