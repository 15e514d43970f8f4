// Package indexrow owns the layout of partition indexes: which fields a type indexes (the
// `table:",index=name"` tag option), how an indexed value is encoded into a row key that
// sorts as the value sorts, the keys of a row's index rows, the reserved row-key prefix that
// marks them, and the key ranges that find a value or list an index in order.
//
// An index row lives in its entity's partition, so that the engine writes it in the same
// entity-group transaction as the entity (package engine, UnitActions and DeleteLarge); it
// holds one cell, OfColumn, naming its entity's row key. The entity's main row holds the
// keys of its index rows in Column, so that a later write knows which rows to delete
// without recomputing them from values another version stored.
//
// Row key of an index row:
//
//	~ix.<name>.<encoded value><end><entity row key>
//
// The encoded value is the value's order-preserving bytes (see valueBytes) in base32 with
// the extended-hex alphabet (0-9, A-V), which keeps byte order; end is "." for an ascending
// index, which sorts below every digit, so a value sorts before every longer value it is a
// prefix of. A descending index complements each digit (0↔V) and ends with "Z", above every
// digit, so the largest value comes first. Equal values are ordered by the entity's row key.
//
// This package refuses: an index name that is not 1–32 ASCII letters and digits, two
// indexes of one name (letters compared without case), an index on a field whose stored
// type has no order here (a JSON-stored value, a large value, a file), a NaN, and an index
// key longer than the service's key limit. It does not read or write rows.
package indexrow

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

// Prefix starts the row key of every index row. Row keys of entities may not start with it
// (the engine's key check refuses them for every store), and reads skip the rows that do.
const Prefix = "~ix."

// PrefixEnd is the smallest row key above every key that starts with Prefix.
const PrefixEnd = "~ix/"

// Column is the main row's cell listing the row keys of its index rows, separated by
// Separator; OfColumn is the index row's cell naming its entity's row key.
const (
	Column    = "_Ix"
	OfColumn  = "_IxOf"
	Separator = "/" // a character no key holds
)

// MaxKeyLength is the longest row key, in UTF-16 code units, an index row may have: the
// engine's limit for every key.
const MaxKeyLength = 512

const maxNameLength = 32

// Spec is one index of a type.
type Spec struct {
	Name   string // as declared
	Column string // the indexed cell
	Field  string // the Go path of the field, for messages
	// Kind is the stored type of the indexed values; 0 (an index declared by its column,
	// by a tool without the Go type) takes each value as it is stored.
	Kind service.Kind
	Desc bool
	// Unique: a unique index across the table (the tag option unique=), kept in claim
	// rows (ClaimPartition) instead of index rows of the entity's partition.
	Unique bool
}

// base is the row-key prefix of every row of the index.
func (s *Spec) base() string { return Prefix + s.Name + "." }

// Specs returns the indexes the plan declares, in field order, or an error saying which
// declaration is refused and why.
func Specs(pl *codec.Plan) ([]Spec, error) {
	var out []Spec
	seen := map[string]string{}
	fields := pl.Fields()
	for i := range fields {
		f := &fields[i]
		type decl struct {
			item   string
			unique bool
		}
		var decls []decl
		for _, item := range f.Indexes {
			decls = append(decls, decl{item, false})
		}
		for _, item := range f.Uniques {
			decls = append(decls, decl{item, true})
		}
		for _, d := range decls {
			item, unique := d.item, d.unique
			name, opt, hasOpt := strings.Cut(item, ":")
			sp := Spec{Name: name, Column: f.Cell, Field: f.Path, Kind: f.Kind, Unique: unique}
			if unique && hasOpt {
				return nil, fmt.Errorf("field %s: unique=%s: a unique index takes no option", f.Path, item)
			}
			if hasOpt {
				if opt != "desc" {
					return nil, fmt.Errorf("field %s: index=%s: %q is not an index option; the one option is :desc (largest value first)", f.Path, item, opt)
				}
				sp.Desc = true
			}
			if reason := checkName(name); reason != "" {
				return nil, fmt.Errorf("field %s: index=%s: the name %s", f.Path, item, reason)
			}
			if other, dup := seen[strings.ToLower(name)]; dup {
				return nil, fmt.Errorf("field %s: index=%s: the index name %q is already declared on %s; give each index its own name", f.Path, item, name, other)
			}
			seen[strings.ToLower(name)] = f.Path
			switch {
			case f.Role != codec.RoleColumn:
				return nil, fmt.Errorf("field %s: index=%s: only a stored column can be indexed; the keys are indexed already", f.Path, item)
			case f.Large || f.File:
				return nil, fmt.Errorf("field %s: index=%s: a large value or a file cannot be indexed: an index key holds at most a few hundred bytes of its value", f.Path, item)
			case f.JSON:
				return nil, fmt.Errorf("field %s: index=%s: the field is stored as JSON text, which has no order; index a field of a string, integer, float, bool, time or GUID type", f.Path, item)
			}
			switch f.Kind {
			case service.KindString, service.KindInt32, service.KindInt64, service.KindDouble, service.KindBool,
				service.KindDateTime, service.KindGuid, service.KindBinary:
			default:
				return nil, fmt.Errorf("field %s: index=%s: values of the stored type %v have no order-preserving key encoding", f.Path, item, f.Kind)
			}
			out = append(out, sp)
		}
	}
	return out, nil
}

func checkName(name string) string {
	if name == "" || len(name) > maxNameLength {
		return fmt.Sprintf("must be 1 to %d characters long", maxNameLength)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Sprintf("%q holds %q; an index name holds ASCII letters and digits only", name, r)
		}
	}
	return ""
}

// Find returns the spec of the index named name, or nil.
func Find(specs []Spec, name string) *Spec {
	for i := range specs {
		if specs[i].Name == name {
			return &specs[i]
		}
	}
	return nil
}

// IsKey reports whether a row key is an index row's.
func IsKey(rk string) bool { return strings.HasPrefix(rk, Prefix) }

// valueBytes returns the order-preserving bytes of v: bytes that compare (as unsigned bytes,
// shorter first when one is a prefix of the other) as the values compare. ok is false for a
// value that has none (a NaN, another kind than the index's).
func valueBytes(kind service.Kind, v service.Value) ([]byte, string) {
	if kind != 0 && v.Kind() != kind && !(isInt(kind) && isInt(v.Kind())) {
		return nil, fmt.Sprintf("is a %v value, and the index holds %v values", v.Kind(), kind)
	}
	var b [16]byte
	switch v.Kind() {
	case service.KindBool:
		if v.Bool() {
			return []byte{1}, ""
		}
		return []byte{0}, ""
	case service.KindInt32, service.KindInt64:
		binary.BigEndian.PutUint64(b[:8], uint64(v.Int64())^(1<<63))
		return b[:8], ""
	case service.KindDateTime:
		binary.BigEndian.PutUint64(b[:8], uint64(ticks(v))^(1<<63))
		return b[:8], ""
	case service.KindDouble:
		f := v.Float()
		if math.IsNaN(f) {
			return nil, "is NaN, which has no place in an order"
		}
		if f == 0 {
			f = 0 // -0 and 0 are one value
		}
		u := math.Float64bits(f)
		if u&(1<<63) != 0 {
			u = ^u
		} else {
			u |= 1 << 63
		}
		binary.BigEndian.PutUint64(b[:8], u)
		return b[:8], ""
	case service.KindGuid:
		g := v.GuidBytes()
		return g[:], ""
	case service.KindString:
		return []byte(v.Str()), ""
	case service.KindBinary:
		return v.Bytes(), ""
	}
	return nil, fmt.Sprintf("is a %v value, which has no order-preserving key encoding", v.Kind())
}

func isInt(k service.Kind) bool { return k == service.KindInt32 || k == service.KindInt64 }

// ticks returns a DateTime value's 100 ns ticks from the Unix epoch.
func ticks(v service.Value) int64 {
	t := v.Time()
	return t.Unix()*10_000_000 + int64(t.Nanosecond()/100)
}

// encode returns the key form of value bytes for an index of the direction desc: base32
// with the extended-hex alphabet, unpadded (RFC 4648, section 7), which keeps byte order;
// descending, each digit inverted.
func encode(b []byte, desc bool) string {
	out := make([]byte, 0, (len(b)*8+4)/5)
	var acc uint16 // bits not yet written, in the low n bits
	n := 0
	for _, c := range b {
		acc = acc<<8 | uint16(c)
		n += 8
		for n >= 5 {
			n -= 5
			out = append(out, digit(int(acc>>n)&31, desc))
		}
	}
	if n > 0 {
		out = append(out, digit(int(acc<<(5-n))&31, desc))
	}
	return string(out)
}

func digit(v int, desc bool) byte {
	if desc {
		v = 31 - v
	}
	return digits[v]
}

const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUV"

func (s *Spec) end() string {
	if s.Desc {
		return "Z"
	}
	return "."
}

// Key returns the row key of the index row of an entity (row key rk) whose indexed value
// is v, or why there is none that can be written.
func (s *Spec) Key(v service.Value, rk string) (string, error) {
	b, reason := valueBytes(s.Kind, v)
	if reason != "" {
		return "", fmt.Errorf("the value of %s for the index %q %s", s.Field, s.Name, reason)
	}
	k := s.base() + encode(b, s.Desc) + s.end() + rk
	if n := service.UTF16Len(k); n > MaxKeyLength {
		return "", fmt.Errorf("the index %q cannot hold the value of %s: its index row key would be %d UTF-16 code units long, and the limit is %d "+
			"(a string or binary value takes 8 key characters for each 5 bytes, plus the entity's row key); index a shorter value", s.Name, s.Field, n, MaxKeyLength)
	}
	return k, nil
}

// Keys returns the row keys of the index rows of the row r (an entity's main row, its cells
// as written): one per index whose cell r holds with a value (a nil value has no index
// row).
func Keys(specs []Spec, r *service.Row) ([]string, error) {
	var out []string
	for i := range specs {
		if specs[i].Unique {
			continue
		}
		v, ok := r.Get(specs[i].Column)
		if !ok || !v.IsValid() {
			continue
		}
		k, err := specs[i].Key(v, r.RowKey)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// Join and Split convert between a list of index row keys and Column's value.
func Join(keys []string) string { return strings.Join(keys, Separator) }

// Split is the inverse of Join.
func Split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, Separator)
}

// Stored returns the index row keys the stored main row r lists.
func Stored(r *service.Row) []string {
	v, ok := r.Get(Column)
	if !ok || v.Kind() != service.KindString {
		return nil
	}
	var out []string
	for _, k := range Split(v.Str()) {
		if IsKey(k) { // a list another program wrote is trusted only for index keys
			out = append(out, k)
		}
	}
	return out
}

// Row returns the index row with key k in partition pk, of the entity with row key rk.
func Row(pk, k, rk string) service.Row {
	return service.Row{PartitionKey: pk, RowKey: k, Properties: []service.Property{{Name: OfColumn, Value: service.String(rk)}}}
}

// Of returns the row key of the entity an index row names, and whether it names one.
func Of(r *service.Row) (string, bool) {
	v, ok := r.Get(OfColumn)
	if !ok || v.Kind() != service.KindString {
		return "", false
	}
	return v.Str(), true
}

// Range is a range of an index's row keys: From inclusive, To exclusive.
type Range struct{ From, To string }

// All returns the range of every row of the index.
func (s *Spec) All() Range {
	b := s.base()
	return Range{From: b, To: Prefix + s.Name + "/"}
}

// Equal returns the range of the rows of the value v.
func (s *Spec) Equal(v service.Value) (Range, error) {
	b, reason := valueBytes(s.Kind, v)
	if reason != "" {
		return Range{}, fmt.Errorf("the value for the index %q %s", s.Name, reason)
	}
	p := s.base() + encode(b, s.Desc) + s.end()
	return Range{From: p, To: p[:len(p)-1] + string(p[len(p)-1]+1)}, nil
}

// Between returns the range of the rows whose value v is in [from, to) in the index's
// order: from ≤ v < to ascending, from ≥ v > to descending. An invalid (zero) from or to
// leaves that side open.
func (s *Spec) Between(from, to service.Value) (Range, error) {
	r := s.All()
	if from.IsValid() {
		b, reason := valueBytes(s.Kind, from)
		if reason != "" {
			return Range{}, fmt.Errorf("the start of the range for the index %q %s", s.Name, reason)
		}
		r.From = s.bound(b)
	}
	if to.IsValid() {
		b, reason := valueBytes(s.Kind, to)
		if reason != "" {
			return Range{}, fmt.Errorf("the end of the range for the index %q %s", s.Name, reason)
		}
		r.To = s.bound(b)
	}
	return r, nil
}

// Prefix returns the range of the rows whose value starts with the bytes p (a string's
// UTF-8 bytes, as strings.HasPrefix compares them, or a binary value's bytes); an empty p is
// the whole index. Those values are p ≤ v < next, where next is the smallest byte string
// above every one that starts with p (none when p is all 0xFF bytes). Ascending, that is
// [bound(p), bound(next)). Descending, the keys of a value and of every value that starts
// with it begin with its digits followed by a digit or the end "Z", so the smallest key
// above them is its digits followed by "[" (above "Z"): the range is from that key of next
// (or the index's start) to that key of p.
func (s *Spec) Prefix(p []byte) (Range, error) {
	switch s.Kind {
	case 0, service.KindString, service.KindBinary:
	default:
		return Range{}, fmt.Errorf("the index %q holds %v values; only an index of strings or bytes has prefixes", s.Name, s.Kind)
	}
	r := s.All()
	if len(p) == 0 {
		return r, nil
	}
	next := bytes.Clone(p)
	for len(next) > 0 && next[len(next)-1] == 0xFF {
		next = next[:len(next)-1]
	}
	if len(next) > 0 {
		next[len(next)-1]++
	}
	if s.Desc {
		r.To = s.base() + encode(p, true) + "["
		if len(next) > 0 {
			r.From = s.base() + encode(next, true) + "["
		}
		return r, nil
	}
	r.From = s.bound(p)
	if len(next) > 0 {
		r.To = s.bound(next)
	}
	return r, nil
}

// Intersect returns the rows of both ranges (an empty range when they do not meet).
func (r Range) Intersect(o Range) Range {
	return Range{From: max(r.From, o.From), To: min(r.To, o.To)}
}

// bound is the row key that separates the values below b in the index's order from b and
// the values after it. Ascending, it is b's digits: a value b is a prefix of sorts after
// them (more digits), and one that is a prefix of b before (its end "." is below every
// digit). Descending, the digits are followed by the end "Z": a value b is a prefix of is
// larger, so comes first, and its next digit is below "Z".
func (s *Spec) bound(b []byte) string {
	k := s.base() + encode(b, s.Desc)
	if s.Desc {
		k += "Z"
	}
	return k
}

// Declared returns the spec of an index declared by its column, for a program without the
// entity's Go type (see Spec.Kind).
func Declared(name, column string, desc bool) (Spec, error) {
	if reason := checkName(name); reason != "" {
		return Spec{}, fmt.Errorf("the name %s", reason)
	}
	if column == "" || strings.HasPrefix(column, "_") {
		return Spec{}, fmt.Errorf("the column %q is not one an entity's field is stored in", column)
	}
	return Spec{Name: name, Column: column, Field: column, Desc: desc}, nil
}

// Claim rows: the rows of unique indexes. The claim of a value is the one row of the
// partition ClaimPartition returns, row key ClaimRowKey, naming its owner's keys in
// ClaimPKColumn and ClaimRKColumn. Partition keys of entities may not start with
// ClaimPrefix, and reads skip the rows whose do.
const (
	ClaimPrefix   = "~ux."
	ClaimRowKey   = "claim"
	ClaimPKColumn = "_UxPK"
	ClaimRKColumn = "_UxRK"
)

// IsClaimPartition reports whether a partition key is a claim row's.
func IsClaimPartition(pk string) bool { return strings.HasPrefix(pk, ClaimPrefix) }

// ClaimPartition returns the partition of the claim row of the value v of a unique index.
func (s *Spec) ClaimPartition(v service.Value) (string, error) {
	b, reason := valueBytes(s.Kind, v)
	if reason != "" {
		return "", fmt.Errorf("the value of %s for the unique index %q %s", s.Field, s.Name, reason)
	}
	k := ClaimPrefix + s.Name + "." + encode(b, false)
	if n := service.UTF16Len(k); n > MaxKeyLength {
		return "", fmt.Errorf("the unique index %q cannot hold the value of %s: its claim's partition key would be %d UTF-16 code units long, and the limit is %d "+
			"(a string or binary value takes 8 key characters for each 5 bytes); index a shorter value", s.Name, s.Field, n, MaxKeyLength)
	}
	return k, nil
}

// ClaimRow returns the claim row of partition cpk for the owner at pk, rk.
func ClaimRow(cpk, pk, rk string) service.Row {
	return service.Row{PartitionKey: cpk, RowKey: ClaimRowKey, Properties: []service.Property{
		{Name: ClaimPKColumn, Value: service.String(pk)}, {Name: ClaimRKColumn, Value: service.String(rk)}}}
}

// ClaimOwner returns the owner keys a claim row names.
func ClaimOwner(r *service.Row) (pk, rk string, ok bool) {
	p, ok1 := r.Get(ClaimPKColumn)
	k, ok2 := r.Get(ClaimRKColumn)
	if !ok1 || !ok2 || p.Kind() != service.KindString || k.Kind() != service.KindString {
		return "", "", false
	}
	return p.Str(), k.Str(), true
}
