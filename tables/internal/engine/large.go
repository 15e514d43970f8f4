package engine

import (
	"time"

	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/internal/indexrow"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// Large values.
//
// A split-aware type (codec.Plan.LargeValues) stores each entity as a main row and, when its
// split values need them, continuation rows (package largevalue has the layout). The store
// keeps an entity's rows consistent:
//
//   - Writes that may replace rows (Upsert, Update, Delete, UpsertBatch) read the main row
//     first (its part count and ETag) and write on condition of that version, the new rows
//     and the deletes of the stale continuation rows in one entity-group transaction. A
//     write that loses its condition to another writer reads again and retries: SplitAttempts
//     in all, pausing as SplitRetry says, then ErrConcurrencyConflict. A Strict update,
//     or a Delete with an ifMatch, that finds another version is a conflict at once.
//   - Create and CreateBatch read nothing first. A continuation key already held by a
//     leftover continuation row of the same entity (a row whose _SplitOf names it, left by
//     a writer that did not know continuation rows) is taken back in the same transaction,
//     with the entity's other leftovers deleted; a key held by any other row is refused.
//   - Reads fetch the main row, then its continuation rows, and verify every value. When a
//     value does not reassemble, the main row is read again: the same version means the
//     stored value is damaged (ErrIntegrity); another version means a writer replaced it
//     meanwhile, and the read starts again, SplitAttempts in all, then ErrConcurrencyConflict
//     saying nothing is damaged. No read combines two versions.
//   - Rows carrying _SplitOf are continuation rows: reads and queries never return them (of
//     any type) and the split-aware type does not count them.
const SplitAttempts = 5

// SplitRetry paces the retries of split-aware writes and reads: 5 to 10 ms before the second
// attempt, doubling each time (at most 150 ms in all over five attempts).
var SplitRetry = abstractions.RetryOptions{Backoff: 10_000_000}

// ContSelect is the projection of a look at continuation keys.
var ContSelect = []string{largevalue.OfColumn, largevalue.IndexColumn}

// Bounds of the projection of the read before a split-aware write: beyond them the read
// fetches the whole row, to stay within the 255 properties the service projects and the
// request-URL limit of the service and the emulator.
const (
	MaxStateColumns   = 200  // large-value columns named
	MaxStateSelectLen = 2000 // characters of the URL-encoded $select
)

// StateProjection returns the projection of the read before a split-aware write (see
// ReadState): the part count, the continuation marker and the blob reference cell of each
// large-value column and each file field, aliases included; or nil, the whole row, when
// that names more than MaxStateColumns columns or is longer than MaxStateSelectLen
// characters URL-encoded.
func StateProjection(cols []largevalue.Column, files []*codec.Field) []string {
	sel := []string{largevalue.PartsColumn, largevalue.OfColumn}
	for _, c := range cols {
		sel = append(sel, c.Name+largevalue.BlobSuffix)
	}
	for _, f := range files {
		for _, name := range FileColumns(f) {
			sel = append(sel, name+largevalue.BlobSuffix)
		}
	}
	if len(sel)-2 > MaxStateColumns || len(url.QueryEscape(strings.Join(sel, ","))) > MaxStateSelectLen {
		return nil
	}
	return sel
}

// LargeColumns returns the large-value columns of a plan as a read reassembles them: each
// large field's column, then its aliases (files are not among them: see FileFields). With
// offloaded set (the account configures blob offload), the reader fetches values held in
// blobs itself (FetchBlobs); otherwise reassembling such a value fails.
func LargeColumns(pl *codec.Plan, offloaded bool) []largevalue.Column {
	var out []largevalue.Column
	fields := pl.Fields()
	for i := range fields {
		if f := &fields[i]; f.Large && !f.File {
			out = AppendColumns(out, f)
		}
	}
	for i := range out {
		out[i].ReadsBlob = offloaded
	}
	return out
}

// PlainColumns returns the columns of a type that is not split-aware that may hold a value
// another type stored split (strings, bytes and JSON-stored values, with their aliases):
// such a reader reassembles the value when it is on the main row (largevalue.AssembleMain).
func PlainColumns(pl *codec.Plan) []largevalue.Column {
	var out []largevalue.Column
	fields := pl.Fields()
	for i := range fields {
		f := &fields[i]
		if f.Role == codec.RoleColumn && (f.JSON || f.Kind == service.KindString || f.Kind == service.KindBinary) {
			out = AppendColumns(out, f)
		}
	}
	return out
}

// AppendColumns appends the column of f and of each of its aliases.
func AppendColumns(out []largevalue.Column, f *codec.Field) []largevalue.Column {
	binary := f.Kind == service.KindBinary && !f.JSON
	out = append(out, largevalue.Column{Name: f.Name, Cell: f.Cell, Binary: binary})
	suffix := strings.TrimPrefix(f.Cell, f.Name) // "__Json" for a JSON-stored field
	for _, a := range f.Aliases {
		out = append(out, largevalue.Column{Name: a, Cell: a + suffix, Binary: binary, AliasOf: f.Name})
	}
	return out
}

// FileFields returns the file fields of a plan.
func FileFields(pl *codec.Plan) []*codec.Field {
	var out []*codec.Field
	fields := pl.Fields()
	for i := range fields {
		if fields[i].File {
			out = append(out, &fields[i])
		}
	}
	return out
}

// FileColumns returns the names a file field's reference cell may have, the field's own
// first: its column, then its aliases (the columns of rows written before a rename).
func FileColumns(f *codec.Field) []string {
	return append([]string{f.Name}, f.Aliases...)
}

// PrepareLarge checks the keys of a split-aware entity and plans its rows.
func (s *Table) PrepareLarge(op string, p *Write) error {
	if _, _, ok := largevalue.IsContinuationKey(p.RK); ok {
		return KeyError(op, s.Name, p.PK, p.RK, "row key",
			"ends with '~' and four digits, the shape of a continuation row's key, which a split-aware type reserves")
	}
	if n := service.UTF16Len(p.RK); n > largevalue.MaxSplitRowKeyLength {
		return KeyError(op, s.Name, p.PK, p.RK, "row key",
			fmt.Sprintf("is %d UTF-16 code units long; a split-aware type allows %d, to leave room for continuation keys", n, largevalue.MaxSplitRowKeyLength))
	}
	fixed, large, err := codec.EncodeLarge(p.V, &s.Acct.Codec)
	if err != nil {
		return RowError(op, s.Name, p.PK, p.RK, "the entity cannot be stored; nothing was sent", err)
	}
	if len(s.Indexes) > 0 {
		props, keys, err := s.IndexCells(p.RK, fixed)
		if err != nil {
			return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: s.Name, PartitionKey: p.PK, RowKey: p.RK,
				Message: err.Error() + "; nothing was sent"}
		}
		fixed, p.Ix = props, keys
	}
	p.Fixed = fixed
	p.Values = make([]largevalue.Value, len(large))
	p.Files = nil
	for i, lv := range large {
		if lv.File != nil {
			p.Values[i] = largevalue.Value{Column: lv.Field.Name, Cell: lv.Cell}
			p.Files = append(p.Files, FileValue{Field: lv.Field, File: lv.File, Value: i})
			continue
		}
		p.Values[i] = largevalue.Value{Column: lv.Field.Name, Cell: lv.Cell, Value: lv.Value, Encoding: lv.Field.Encoding,
			Offload: s.Offloadable(lv.Field)}
	}
	if len(p.Files) > 0 {
		// Planned once the files are hashed (ResolveFiles), which takes a context.
		return nil
	}
	return s.PlanLarge(op, p)
}

// Offloadable reports whether a large field may go to a blob: its own offload= option wins
// over the type-level one, and only offload=never forbids it.
func (s *Table) Offloadable(f *codec.Field) bool {
	if f.Offload != "" {
		return f.Offload != codec.OffloadNever
	}
	return s.Plan.Offload() != codec.OffloadNever
}

// Stored is what a split-aware write knows of the rows at an entity's keys.
type Stored struct {
	Found bool
	ETag  string
	// Parts is how many rows the stored main row declares (1: none but itself).
	Parts int
	// Leftovers are continuation rows of the entity that the stored main row does not
	// declare, found at keys the write needs: key → ETag.
	Leftovers map[string]string
	// Gone are declared continuation rows another writer already removed.
	Gone map[string]bool
	// Refs are the blob references the stored main row holds (see StateProjection), which
	// the cleanup after a committed write or delete may delete.
	Refs []largevalue.BlobRef
	// Blobs are, on an account without blob offload, the large-value and file columns
	// (aliases included) whose value the stored row holds in a blob, which the write
	// replaces: they are logged (ReleasedBlobs), as nothing here deletes their blobs.
	Blobs []string
	// Ix are the row keys of the index rows the stored main row lists (package indexrow).
	Ix []string
	// Expired reports a stored row whose expiry time has come (expiry.go): a write treats
	// it as missing, and one that creates the entity replaces it on condition of its ETag.
	Expired   bool
	ExpiresAt time.Time // the stored expiry time, zero when none
	// FeedSeq and FeedVer are the time of the entity's last change record and its change
	// number, as the main row of a store with a feed keeps them (package feedrow).
	FeedSeq, FeedVer int64
}

// StoredState is what the stored main row r tells a write.
func (s *Table) StoredState(r *service.Row) (Stored, error) {
	st := Stored{Found: true, ETag: r.ETag, Refs: BlobRefs(r), Ix: indexrow.Stored(r)}
	st.ExpiresAt, _ = s.ExpiresAt(r)
	st.Expired = s.Expired(r)
	st.FeedSeq, st.FeedVer = feedrow.Stored(r)
	if s.Acct.Off == nil {
		for _, c := range s.Large {
			if _, ok := r.Get(c.Name + largevalue.BlobSuffix); ok {
				st.Blobs = append(st.Blobs, c.Name)
			}
		}
		for _, f := range s.Files {
			for _, name := range FileColumns(f) {
				if _, ok := r.Get(name + largevalue.BlobSuffix); ok {
					st.Blobs = append(st.Blobs, name)
				}
			}
		}
	}
	parts, err := largevalue.Parts(r)
	if err != nil {
		return st, err
	}
	st.Parts = parts
	return st, nil
}

// ReadState reads the main row's part count and version.
func (s *Table) ReadState(ctx context.Context, pk, rk string) (Stored, error) {
	row, err := s.Acct.Tables.GetRow(ctx, s.Name, pk, rk, s.StateSel)
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return Stored{}, nil
	}
	if err != nil {
		return Stored{}, err
	}
	return s.StoredState(&row)
}

// ContinuationRows returns the rows at rk's continuation keys that are its continuation
// rows (their _SplitOf names rk), with the given projection (nil: whole rows). last bounds
// the indices looked at (0: every possible one).
func (s *Table) ContinuationRows(ctx context.Context, pk, rk string, last int, sel []string) ([]service.Row, []service.Row, error) {
	hi := largevalue.ContinuationKey(rk, 9999)
	if last > 0 {
		hi = largevalue.ContinuationKey(rk, last)
	}
	filter := odata.Partition(pk) + " and RowKey ge " + service.QuoteString(largevalue.ContinuationKey(rk, 1)) +
		" and RowKey le " + service.QuoteString(hi)
	var own, foreign []service.Row
	err := s.Scan(ctx, service.Query{Filter: filter, Select: sel}, func(r *service.Row) error {
		if _, _, ok := largevalue.IsContinuationKey(r.RowKey); !ok {
			return nil
		}
		if _, ok := largevalue.BelongsTo(r, rk); ok {
			own = append(own, r.Clone())
		} else if main, _, _ := largevalue.IsContinuationKey(r.RowKey); main == rk {
			foreign = append(foreign, r.Clone())
		}
		return nil
	})
	return own, foreign, err
}
