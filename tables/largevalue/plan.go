package largevalue

import (
	"fmt"

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
}

// Layout is the rows of one entity: Rows[0] is the main row, the rest its continuation rows
// in order.
type Layout struct {
	Rows []service.Row
	// Split is how many values are stored split.
	Split  int
	splits []*Split
}

// Plan places an entity's cells: fixed are its ordinary cells, which stay on the main row;
// values its large values (in field order). Each value stays in its own cell when it fits
// one and the main row has room for it; otherwise it is stored split, its manifest on the
// main row and its chunks on the main row as far as they fit, then on continuation rows.
// When the cells that must stay on the main row exceed one entity, the largest inline values
// are moved to split form, only as many as it takes. An entity that fits no layout within
// one transaction is refused with an *OversizedValueError.
func Plan(pk, rk string, fixed []service.Property, values []Value) (*Layout, error) {
	splits := make([]*Split, len(values))
	for i, v := range values {
		if !fitsCell(v.Value) {
			splits[i] = SplitValue(v.Column, v.Value, v.Encoding)
		}
	}
	// The main row without chunks; move the largest inline values until it fits.
	var main []service.Property
	for {
		main = append(main[:0], fixed...)
		nsplit := 0
		for i, v := range values {
			if splits[i] == nil {
				main = append(main, service.Property{Name: v.Cell, Value: v.Value})
			} else {
				main = append(main, splits[i].Manifest()...)
				nsplit++
			}
		}
		if nsplit > 0 {
			main = append(main, service.Property{Name: PartsColumn, Value: service.Int32(MaxContinuationRows + 1)})
		}
		stored, wire := service.EntitySize(pk, rk, main), bodySize(pk, rk, main)
		if stored <= service.MaxEntityBytes && wire <= service.MaxEntityWireBytes {
			break
		}
		move := -1
		for i, v := range values {
			if splits[i] == nil && (move < 0 || v.Value.Size() > values[move].Value.Size()) {
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
		return &Layout{Rows: []service.Row{{PartitionKey: pk, RowKey: rk, Properties: main}}}, nil
	}
	// Place the chunks: the main row first, then continuation rows.
	rows := []service.Row{{PartitionKey: pk, RowKey: rk, Properties: main}}
	stored, wire := service.EntitySize(pk, rk, main), bodySize(pk, rk, main)
	cur := &rows[0]
	for _, sp := range splits {
		if sp == nil {
			continue
		}
		for i, ch := range sp.Chunks {
			p := service.Property{Name: ChunkName(sp.Column, i), Value: ch}
			ps, pw := service.PropertySize(&p), service.PropertyBodySize(&p)
			if len(cur.Properties)+1 > service.MaxEntityProperties || stored+ps > service.MaxEntityBytes ||
				wire+pw > service.MaxEntityWireBytes {
				idx := len(rows)
				ck := ContinuationKey(rk, idx)
				rows = append(rows, service.Row{PartitionKey: pk, RowKey: ck, Properties: []service.Property{
					{Name: OfColumn, Value: service.String(rk)},
					{Name: IndexColumn, Value: service.Int32(int32(idx))},
				}})
				cur = &rows[len(rows)-1]
				stored, wire = service.EntitySize(pk, ck, cur.Properties), bodySize(pk, ck, cur.Properties)
			}
			cur.Properties = append(cur.Properties, p)
			stored += ps
			wire += pw
		}
	}
	// The part count, now known.
	mp := rows[0].Properties
	for i := range mp {
		if mp[i].Name == PartsColumn {
			mp[i].Value = service.Int32(int32(len(rows)))
		}
	}
	lay := &Layout{Rows: rows, Split: nsplit, splits: splits}
	acts := make([]service.Action, len(rows))
	for i := range rows {
		acts[i] = service.Action{Op: service.OpInsert, Row: rows[i]}
	}
	if err := lay.Fit(acts); err != nil {
		return nil, err
	}
	return lay, nil
}

// Fit checks that actions, the transaction that writes the layout (its rows and the deletes
// of stale continuation rows), fits one entity-group transaction, and otherwise returns an
// *OversizedValueError naming the layout's largest split value.
func (l *Layout) Fit(actions []service.Action) error {
	reason := TransactionReason(actions)
	if reason == "" {
		return nil
	}
	sp := largestSplit(l.splits)
	col, n := "", 0
	if sp != nil {
		col, n = sp.Column, sp.Len
	}
	return &OversizedValueError{Column: col, EncodedBytes: n,
		Reason: "the entity's rows do not fit one entity-group transaction: " + reason,
		Remedy: "such a value needs blob offload, which this version of the library does not provide; store less in one entity"}
}

// TransactionReason returns why actions do not fit one entity-group transaction as the
// library plans them, or "" when they do: one partition, each row at most once, at most 100
// actions, service.MaxTransactionEntityBytes stored and service.MaxTransactionWireBytes on
// the wire.
func TransactionReason(actions []service.Action) string {
	if len(actions) == 0 {
		return "it has no action"
	}
	if len(actions) > service.MaxTransactionActions {
		return fmt.Sprintf("%d actions, more than %d", len(actions), service.MaxTransactionActions)
	}
	seen := make(map[string]bool, len(actions))
	stored := 0
	for i := range actions {
		r := &actions[i].Row
		if r.PartitionKey != actions[0].Row.PartitionKey {
			return "its actions address more than one partition"
		}
		if seen[r.RowKey] {
			return fmt.Sprintf("the row %q appears twice", r.RowKey)
		}
		seen[r.RowKey] = true
		if actions[i].Op != service.OpDelete {
			stored += service.EntitySize(r.PartitionKey, r.RowKey, r.Properties)
		}
	}
	if stored > service.MaxTransactionEntityBytes {
		return fmt.Sprintf("%d stored bytes, more than %d", stored, service.MaxTransactionEntityBytes)
	}
	if wire := service.TransactionBodySize(actions); wire > service.MaxTransactionWireBytes {
		return fmt.Sprintf("%d bytes on the wire, more than %d", wire, service.MaxTransactionWireBytes)
	}
	return ""
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
