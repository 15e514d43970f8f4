package largevalue

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/unified-data/gotables/tables/service"
)

// A Value is one large value to place.
type Value struct {
	// Column is the field's column name; Cell the name of its single cell (Column, or
	// Column+"__Json").
	Column, Cell string
	// Value is an Edm.String (text, JSON text) or an Edm.Binary.
	Value service.Value
	// Encoding is the split encoding: "text", "gzip" or "binary".
	Encoding string
	// Offload lets the value go to a blob (its field does not say offload=never); it has
	// effect only when the plan's Offload options are set.
	Offload bool
	// Ref, when set, is a value that is always a blob (a file): its reference, whose path
	// Plan fills in. Value, Cell and Encoding are then ignored.
	Ref *BlobRef
}

// Offload configures tier 3 for one Plan: values stored split whose stored bytes exceed
// Threshold go to blobs, and so does the largest split value while the entity's rows do not
// fit one transaction. A nil *Offload keeps every value in the table.
type Offload struct {
	// Table is the table's name, the first segment of blob names.
	Table string
	// Threshold is the most stored bytes a split value may have (1 to MaxThreshold).
	Threshold int
}

// A Blob is a value a Layout stores in a blob, which the writer uploads before the rows.
type Blob struct {
	// Column is the value's column.
	Column string
	// Ref is the reference the main row holds; Ref.Path is the blob's name.
	Ref BlobRef
	// Data is the blob's content: the value's stored bytes. It is nil for a value Plan was
	// given as a reference (a file), whose content the writer has.
	Data []byte
}

// Layout is the rows of one entity: Rows[0] is the main row, the rest its continuation rows
// in order.
type Layout struct {
	Rows []service.Row
	// Split is how many values are stored split.
	Split  int
	splits []*Split
	// Blobs are the values stored in blobs, in field order.
	Blobs []Blob
	// sizes are the rows' sizes as the planner measured them (stored bytes, and the
	// entity's body bytes on the wire), so that fitting the layout's transaction does not
	// measure its values again.
	sizes []cellSize
	// within is the empty transaction the layout was planned within: its service's bounds
	// (Budget.MaxWire, Budget.Product).
	within Budget
}

// Plan places an entity's cells: fixed are its ordinary cells, which stay on the main row;
// values its large values (in field order). Each value stays in its own cell when it fits
// one and the main row has room for it; otherwise it is stored split, its manifest on the
// main row and its chunks on the main row as far as they fit, then on continuation rows.
// When the cells that must stay on the main row exceed one entity, the largest inline values
// are moved to split form, only as many as it takes. With off set, a split value whose
// stored bytes exceed off.Threshold, and a value given as a reference, is stored in a blob
// (one reference cell on the main row), and while the rows do not fit one transaction the
// largest split value that may be offloaded is too. An entity that fits no layout within one
// transaction is refused with an *OversizedValueError. within is the empty transaction of
// the account's service (the zero Budget: Table Storage's); its Product says how rows are
// counted (service.EntitySizeOn), its MaxWire bounds the transaction's request bytes.
func Plan(pk, rk string, fixed []service.Property, values []Value, off *Offload, within Budget) (*Layout, error) {
	blobs := make([]*Blob, len(values))
	for i, v := range values {
		if v.Ref == nil {
			continue
		}
		if off == nil {
			return nil, &OversizedValueError{Column: v.Column, EncodedBytes: int(v.Ref.Length),
				Reason: "a file is always stored in a blob, and the account has no blob offload configured",
				Remedy: "configure blob offload on the account (Options.BlobOffload)"}
		}
		b := &Blob{Column: v.Column, Ref: *v.Ref}
		b.Ref.Path = BlobName(off.Table, pk, rk, v.Column, v.Ref.SHA256)
		blobs[i] = b
	}
	for {
		lay, err := place(pk, rk, fixed, values, blobs, off, within)
		if err == nil {
			for _, b := range blobs {
				if b != nil {
					if len(b.Ref.Path) > MaxBlobNameLength {
						return nil, blobNameError(b.Ref.Path)
					}
					lay.Blobs = append(lay.Blobs, *b)
				}
			}
			return lay, nil
		}
		// Rows that do not fit one transaction: offload the largest split value that may be.
		var ov *OversizedValueError
		if off == nil || lay == nil || !errors.As(err, &ov) {
			return nil, err
		}
		move := -1
		for i, sp := range lay.splits {
			if sp != nil && values[i].Offload && (move < 0 || sp.Len > lay.splits[move].Len) {
				move = i
			}
		}
		if move < 0 {
			return nil, err
		}
		blobs[move] = blobOf(pk, rk, values[move], off)
	}
}

// blobOf returns the blob of value v.
func blobOf(pk, rk string, v Value, off *Offload) *Blob {
	enc, stored := Stored(v.Value, v.Encoding)
	sum := sha256.Sum256(stored)
	sha := hex.EncodeToString(sum[:])
	ct := "text/plain; charset=utf-8"
	switch {
	case v.Cell != v.Column:
		ct = "application/json"
	case v.Value.Kind() == service.KindBinary:
		ct = "application/octet-stream"
	}
	return &Blob{Column: v.Column, Data: stored, Ref: BlobRef{Path: BlobName(off.Table, pk, rk, v.Column, sha), SHA256: sha,
		Length: int64(len(stored)), ContentType: ct, Encoding: enc}}
}

// place lays out the rows with the values blobs holds stored in blobs. A layout that does
// not fit one transaction is returned with the error, for Plan to offload more.
func place(pk, rk string, fixed []service.Property, values []Value, blobs []*Blob, off *Offload, within Budget) (*Layout, error) {
	size := func(rk string, props []service.Property) cellSize {
		return cellSize{service.EntitySizeOn(within.Product, pk, rk, props), bodySize(pk, rk, props)}
	}
	splits := make([]*Split, len(values))
	for i, v := range values {
		if blobs[i] != nil || fitsCell(v.Value) {
			continue
		}
		splits[i] = SplitValue(v.Column, v.Value, v.Encoding)
		if off != nil && v.Offload && splits[i].Len > off.Threshold {
			splits[i] = nil
			blobs[i] = blobOf(pk, rk, v, off)
		}
	}
	// The main row without chunks; move the largest inline values until it fits.
	var main []service.Property
	for {
		main = append(main[:0], fixed...)
		nsplit := 0
		for i, v := range values {
			switch {
			case blobs[i] != nil:
				main = append(main, service.Property{Name: v.Column + BlobSuffix, Value: blobs[i].Ref.Value()})
			case splits[i] == nil:
				main = append(main, service.Property{Name: v.Cell, Value: v.Value})
			default:
				main = append(main, splits[i].Manifest()...)
				nsplit++
			}
		}
		if nsplit > 0 {
			main = append(main, service.Property{Name: PartsColumn, Value: service.Int32(MaxContinuationRows + 1)})
		}
		sz := size(rk, main)
		stored, wire := sz.stored, sz.wire
		if stored <= service.MaxEntityBytes && wire <= service.MaxEntityWireBytes {
			break
		}
		move := -1
		for i, v := range values {
			if splits[i] == nil && blobs[i] == nil && (move < 0 || v.Value.Size() > values[move].Value.Size()) {
				move = i
			}
		}
		if move < 0 {
			big := largest(main)
			return nil, &OversizedValueError{Column: big.Name, EncodedBytes: big.Value.Size(),
				Reason: fmt.Sprintf("the cells that must stay on the main row come to %d stored bytes (%d on the wire), more than one entity holds (%d)",
					stored, wire, service.MaxEntityBytes),
				Remedy: "mark the large fields `table:\",split=text\"` (or the whole type, with a blank marker field " +
					"tagged `table:\",split=text\"`), or store less in one entity"}
		}
		splits[move] = SplitValue(values[move].Column, values[move].Value, values[move].Encoding)
		if off != nil && values[move].Offload && splits[move].Len > off.Threshold {
			splits[move] = nil
			blobs[move] = blobOf(pk, rk, values[move], off)
		}
	}
	nsplit := 0
	for _, sp := range splits {
		if sp != nil {
			nsplit++
		}
	}
	if len(main) > service.MaxEntityProperties {
		if nsplit == 0 {
			big := largest(main)
			return nil, &OversizedValueError{Column: big.Name, EncodedBytes: big.Value.Size(),
				Reason: fmt.Sprintf("the entity has %d properties; a row holds %d", len(main), service.MaxEntityProperties),
				Remedy: "store fewer properties in one entity"}
		}
		sp := largestSplit(splits)
		others := len(main) - 4*nsplit - 1
		return nil, &OversizedValueError{Column: sp.Column, EncodedBytes: sp.Len,
			Reason: fmt.Sprintf("its split cells need %d properties on the main row (four for its manifest, one for %s), and the other %d properties and %d other split values leave %d of the %d",
				5, PartsColumn, others, nsplit-1, service.MaxEntityProperties-others-4*(nsplit-1), service.MaxEntityProperties),
			Remedy: fmt.Sprintf("store fewer properties in one entity: an entity with P other properties holds S split values while P + 4×S + 1 ≤ %d",
				service.MaxEntityProperties)}
	}
	if nsplit == 0 {
		return &Layout{Rows: []service.Row{{PartitionKey: pk, RowKey: rk, Properties: main}},
			sizes: []cellSize{size(rk, main)}, within: within}, nil
	}
	// Place the chunks: the main row first, then continuation rows. Each chunk is measured
	// once (Split.chunkSizes), and each row's size is kept for Fit.
	rows := []service.Row{{PartitionKey: pk, RowKey: rk, Properties: main}}
	sizes := []cellSize{size(rk, main)}
	cur, cursize := &rows[0], &sizes[0]
	for _, sp := range splits {
		if sp == nil {
			continue
		}
		cs := sp.chunkSizes(within.Product)
		for i, ch := range sp.Chunks {
			if len(cur.Properties)+1 > service.MaxEntityProperties || cursize.stored+cs[i].stored > service.MaxEntityBytes ||
				cursize.wire+cs[i].wire > service.MaxEntityWireBytes {
				idx := len(rows)
				ck := ContinuationKey(rk, idx)
				props := make([]service.Property, 2, 2+min(len(sp.Chunks)-i, service.MaxEntityProperties))
				props[0] = service.Property{Name: OfColumn, Value: service.String(rk)}
				props[1] = service.Property{Name: IndexColumn, Value: service.Int32(int32(idx))}
				rows = append(rows, service.Row{PartitionKey: pk, RowKey: ck, Properties: props})
				sizes = append(sizes, size(ck, props))
				cur, cursize = &rows[len(rows)-1], &sizes[len(sizes)-1]
			}
			cur.Properties = append(cur.Properties, service.Property{Name: ChunkName(sp.Column, i), Value: ch})
			cursize.stored += cs[i].stored
			cursize.wire += cs[i].wire
		}
	}
	// The part count, now known. (Its size was counted with the largest count, which
	// takes as many stored bytes and at least as many on the wire.)
	mp := rows[0].Properties
	for i := range mp {
		if mp[i].Name == PartsColumn {
			mp[i].Value = service.Int32(int32(len(rows)))
		}
	}
	lay := &Layout{Rows: rows, Split: nsplit, splits: splits, sizes: sizes, within: within}
	acts := make([]service.Action, len(rows))
	for i := range rows {
		acts[i] = service.Action{Op: service.OpInsert, Row: rows[i]}
	}
	if err := lay.Fit(acts); err != nil {
		return lay, err
	}
	return lay, nil
}

// Fit checks that actions, the transaction that writes the layout (its rows and the deletes
// of stale continuation rows), fits one entity-group transaction, and otherwise returns an
// *OversizedValueError naming the layout's largest split value. The layout's rows are not
// measured again.
func (l *Layout) Fit(actions []service.Action) error {
	b := Budget{MaxWire: l.within.MaxWire, Product: l.within.Product}
	reason := b.Add(l, actions)
	if reason == "" {
		return nil
	}
	reason = "the entity's rows do not fit one entity-group transaction: " + reason
	sp := largestSplit(l.splits)
	if sp == nil {
		return &OversizedValueError{Reason: reason,
			Remedy: "the rows written with it (its index rows, and the deletes of those it replaces, or its change records) are too many: declare fewer indexes on the type, or change fewer indexed values in one write"}
	}
	return &OversizedValueError{Column: sp.Column, EncodedBytes: sp.Len, Reason: reason,
		Remedy: "such a value needs blob offload: configure it on the account (Options.BlobOffload) and let the field be offloaded (no offload=never), or store less in one entity"}
}

// TransactionReason returns why actions do not fit one entity-group transaction as the
// library plans them, or "" when they do: one partition, each row at most once, at most 100
// actions, service.MaxTransactionEntityBytes stored and service.MaxTransactionWireBytes on
// the wire.
func TransactionReason(actions []service.Action) string {
	var b Budget
	return b.Add(nil, actions)
}

// A Budget is one entity-group transaction being filled, unit by unit, under the rules
// TransactionReason checks: a batch adds each entity's actions and starts a new transaction
// when they no longer fit. The zero Budget is empty.
type Budget struct {
	// MaxWire bounds the request bytes on the wire: 0 means service.MaxTransactionWireBytes;
	// an account on Cosmos DB for Table sets a smaller bound (see WireBudget).
	MaxWire int
	// Product is the service whose count of stored bytes applies (service.EntitySizeOn):
	// 0 means Table Storage's.
	Product service.Product

	n, stored, wire int
	pk              string
	keys            map[string]bool
}

// Add adds actions (those of one entity, whose layout l is, or nil when they write no
// layout's rows) and returns "", or why the transaction would not fit with them; then the
// budget is left as it was. The rows of l are not measured again.
func (b *Budget) Add(l *Layout, actions []service.Action) string {
	if b.n+len(actions) == 0 {
		return "it has no action"
	}
	if n := b.n + len(actions); n > service.MaxTransactionActions {
		return fmt.Sprintf("%d actions, more than %d", n, service.MaxTransactionActions)
	}
	pk := b.pk
	if b.n == 0 {
		pk = actions[0].Row.PartitionKey
	}
	stored, wire := b.stored, b.wire
	if b.n == 0 {
		wire = service.TransactionEnvelopeSize
	}
	for i := range actions {
		a := &actions[i]
		if a.Row.PartitionKey != pk {
			return "its actions address more than one partition"
		}
		if b.keys[a.Row.RowKey] || slices.ContainsFunc(actions[:i], func(o service.Action) bool { return o.Row.RowKey == a.Row.RowKey }) {
			return fmt.Sprintf("the row %q appears twice", a.Row.RowKey)
		}
		wire += service.ActionFramingSize(a)
		if a.Op == service.OpDelete {
			continue
		}
		if sz, ok := l.sizeOf(&a.Row); ok {
			stored += sz.stored
			wire += sz.wire
		} else {
			stored += service.EntitySizeOn(b.Product, a.Row.PartitionKey, a.Row.RowKey, a.Row.Properties)
			wire += service.BodySize(a)
		}
	}
	if stored > service.MaxTransactionEntityBytes {
		return fmt.Sprintf("%d stored bytes, more than %d", stored, service.MaxTransactionEntityBytes)
	}
	maxWire := b.MaxWire
	if maxWire <= 0 {
		maxWire = service.MaxTransactionWireBytes
	}
	if wire > maxWire {
		return fmt.Sprintf("%d bytes on the wire, more than %d", wire, maxWire)
	}
	if b.keys == nil {
		b.keys = make(map[string]bool, len(actions))
	}
	for i := range actions {
		b.keys[actions[i].Row.RowKey] = true
	}
	b.n, b.stored, b.wire, b.pk = b.n+len(actions), stored, wire, pk
	return ""
}

// WireBudget is the bound on the request bytes of a transaction (Budget.MaxWire) for a
// service whose request body is at most maxBody bytes: maxBody less the 64 KiB the library
// keeps for the framing, as service.MaxTransactionWireBytes keeps of service.MaxBodySize.
func WireBudget(maxBody int) int {
	return maxBody - (service.MaxBodySize - service.MaxTransactionWireBytes)
}

// Len returns the number of actions added.
func (b *Budget) Len() int { return b.n }

// sizeOf returns the size the planner measured for r when r is one of the layout's rows
// (the same cells, not a copy), and false otherwise.
func (l *Layout) sizeOf(r *service.Row) (cellSize, bool) {
	if l == nil || len(r.Properties) == 0 {
		return cellSize{}, false
	}
	for i := range l.Rows {
		lr := &l.Rows[i]
		if len(lr.Properties) == len(r.Properties) && &lr.Properties[0] == &r.Properties[0] && lr.RowKey == r.RowKey && i < len(l.sizes) {
			return l.sizes[i], true
		}
	}
	return cellSize{}, false
}

// bodySize is service.BodySize of a row written with these cells.
func bodySize(pk, rk string, props []service.Property) int {
	return service.BodySize(&service.Action{Op: service.OpUpsertReplace, Row: service.Row{PartitionKey: pk, RowKey: rk, Properties: props}})
}

// largest returns the largest cell by stored size.
func largest(props []service.Property) service.Property {
	var big service.Property
	for _, p := range props {
		if !big.Value.IsValid() || p.Value.Size() > big.Value.Size() {
			big = p
		}
	}
	return big
}

// largestSplit returns the split value with the most stored bytes.
func largestSplit(splits []*Split) *Split {
	var big *Split
	for _, sp := range splits {
		if sp != nil && (big == nil || sp.Len > big.Len) {
			big = sp
		}
	}
	return big
}
