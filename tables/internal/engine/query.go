package engine

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// MaxPage is the most rows the service returns in one page.
const MaxPage = 1000

// PreparedQuery is a query checked and translated, ready to send.
type PreparedQuery struct {
	PK, Prefix string
	Filter     string
	Sel        []string
	Take       int
	// AnyOrder says the caller does not rely on the rows' order (Any), and Held that it
	// keeps every row it is handed (Query), so that sorting them, where the service
	// returns them in no key order, costs no more memory than the call takes (ordered.go).
	AnyOrder, Held bool
}

// QueryError is the refusal of a query, before anything is sent.
func (s *Table) QueryError(op string, kind error, msg string) error {
	return &abstractions.StoreError{Kind: kind, Op: op, Table: s.Name, Message: msg + "; nothing was sent"}
}

// FilterError is QueryError for a filter or projection odata refused, naming the field.
func (s *Table) FilterError(op string, e *odata.Error) error {
	msg := e.Reason
	if e.Field != "" {
		msg = "cannot filter on " + e.Field + ": " + msg
	}
	return s.QueryError(op, e.Kind, msg)
}

// Pages runs the prepared query, page by page, handing each row to fn until fn says stop,
// take rows were handed (0: no limit) or the service has no more. Each page asks for no
// more rows than are still wanted. Where the service returns rows in no key order, the
// rows are read and sorted first (ordered.go).
func (s *Table) Pages(ctx context.Context, op string, p *PreparedQuery, sel []string, take int, fn func(*service.Row) (bool, error)) error {
	sq := service.Query{Filter: s.EntityFilter(p.Filter), Select: sel}
	remaining := take
	hand := func(rows []service.Row) (bool, error) {
		for i := range rows {
			if largevalue.IsContinuation(&rows[i]) || s.Hidden(&rows[i]) {
				// A continuation row is part of another entity, never one of its own; a
				// polymorphic row of a shared table belongs to another store.
				continue
			}
			more, err := fn(&rows[i])
			if err != nil || !more {
				return false, err
			}
			if remaining > 0 {
				remaining--
				if remaining == 0 {
					return false, nil
				}
			}
		}
		return true, nil
	}
	if s.Acct.Unordered() && !p.AnyOrder {
		if err := s.CheckOrdered(op, p); err != nil {
			return err
		}
		rows, err := s.SortedRange(ctx, op, p.PK, sq, take > 0 || !p.Held)
		if err != nil {
			return err
		}
		_, err = hand(rows)
		return err
	}
	for {
		sq.Top = MaxPage
		if remaining > 0 {
			sq.Top = min(remaining, MaxPage)
		}
		page, err := s.Acct.Tables.Query(ctx, s.Name, sq)
		if err != nil {
			return s.Translate(op, p.PK, "", err)
		}
		if more, err := hand(page.Rows); err != nil || !more || page.Next == nil {
			return err
		}
		sq.Continuation = page.Next
	}
}

// Cursor is the content of a Page cursor: the service's continuation and a hash of the
// query's bounds, so that a cursor replayed with another query is recognised.
type Cursor struct {
	Bounds string `json:"b"`
	// Table is a short hash of the table's name (TableTag), so that a cursor used on
	// another table is refused as that, not as another query of the same table.
	Table string `json:"t,omitempty"`
	PK    string `json:"p"`
	RK    string `json:"r"`
}

// TableTag is what a cursor records of its table: a hash of the lower-case name, as the
// service compares table names.
func TableTag(table string) string {
	h := sha256.Sum256([]byte(strings.ToLower(table)))
	return base64.RawURLEncoding.EncodeToString(h[:6])
}

// CursorRefusal returns why a cursor c cannot continue a query of table whose bounds are
// bounds ("" when it can).
func CursorRefusal(c Cursor, table, bounds string) string {
	switch {
	case c.Bounds == bounds:
		return ""
	case c.Table != "" && c.Table != TableTag(table):
		return "the cursor belongs to a query of another table; start again without a cursor"
	}
	return "the cursor belongs to another query of this table (its partition, row-key prefix, page size or filter differ, or a store of another kind made it); start again without a cursor"
}

// Bounds hashes what a cursor is bound to: the table, partition, prefix, page size and
// filter (which carries the partition and prefix too).
func (s *Table) Bounds(p *PreparedQuery, size int) string {
	h := sha256.New()
	for _, part := range []string{strings.ToLower(s.Name), p.PK, p.Prefix, p.Filter} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(size))
	h.Write(n[:])
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// SplitProjection narrows a split-aware query's projection only when every column is an
// ordinary one: a large value is always returned whole, so naming one fetches whole rows.
// The projection also asks for _SplitOf, so that continuation rows are recognised.
func (s *Table) SplitProjection(sel []string) []string {
	fields := s.Plan.Fields()
	for i := range fields {
		if !fields[i].Large {
			continue
		}
		for _, n := range sel {
			if n == fields[i].Name || slices.Contains(fields[i].Cells, n) {
				return nil
			}
		}
	}
	return s.WithExpiry(append(sel, largevalue.OfColumn))
}

// EncodeCursor returns the text of a cursor, as Page returns it.
func EncodeCursor(c Cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Cursor limits. The service's continuation tokens encode a key of at most 1 KiB (about
// 1.4 KiB of base64 with a short prefix), so a token above MaxCursorToken, or a cursor
// above MaxCursor, was not made by Page: it is refused before it reaches a request URL.
const (
	MaxCursorToken = 4 << 10
	MaxCursor      = 3*MaxCursorToken + 256
)

// DecodeCursor returns the cursor of a text EncodeCursor made; ok is false for any other
// text (too long, not base64 JSON, control characters in a token).
func DecodeCursor(s string) (Cursor, bool) {
	var c Cursor
	if len(s) > MaxCursor {
		return Cursor{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Bounds == "" || (c.PK == "" && c.RK == "") {
		return Cursor{}, false
	}
	for _, tok := range []string{c.PK, c.RK} {
		if len(tok) > MaxCursorToken || !utf8.ValidString(tok) || strings.ContainsFunc(tok, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return Cursor{}, false
		}
	}
	return c, true
}
