package tables

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/tables/internal/wire"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

// Insert writes a new row, or with w.IfMatch replaces the row at that version; see
// abstractions.PolyStorage.
func (s *PolyStore[B]) Insert(ctx context.Context, w abstractions.PolyWrite[B]) (_ string, err error) {
	ctx, c := s.begin(ctx, "insert", w.Key)
	defer c.Finish(&err)
	return s.writeOne(ctx, "insert", service.OpInsert, &w)
}

// Upsert writes the row whether or not one exists, or with w.IfMatch replaces the row at
// that version; see abstractions.PolyStorage.
func (s *PolyStore[B]) Upsert(ctx context.Context, w abstractions.PolyWrite[B]) (_ string, err error) {
	ctx, c := s.begin(ctx, "upsert", w.Key)
	defer c.Finish(&err)
	return s.writeOne(ctx, "upsert", service.OpUpsertReplace, &w)
}

// InsertBatch writes the rows as Insert does, in per-partition transactions; see
// abstractions.PolyStorage.
func (s *PolyStore[B]) InsertBatch(ctx context.Context, ws []abstractions.PolyWrite[B]) (err error) {
	ctx, c := s.host.Acct.Tel.BeginBatch(ctx, s.host.Name, "insert", len(ws))
	defer c.Finish(&err)
	return s.batch(ctx, "insert batch", service.OpInsert, ws)
}

// UpsertBatch writes the rows as Upsert does, in per-partition transactions; see
// abstractions.PolyStorage.
func (s *PolyStore[B]) UpsertBatch(ctx context.Context, ws []abstractions.PolyWrite[B]) (err error) {
	ctx, c := s.host.Acct.Tel.BeginBatch(ctx, s.host.Name, "upsert", len(ws))
	defer c.Finish(&err)
	return s.batch(ctx, "upsert batch", service.OpUpsertReplace, ws)
}

// writeOne sends one write alone.
func (s *PolyStore[B]) writeOne(ctx context.Context, op string, kind service.Op, w *abstractions.PolyWrite[B]) (string, error) {
	a, err := s.action(op, kind, w)
	if err != nil {
		return "", err
	}
	if s.host.Feed != nil {
		return s.writeFed(ctx, op, a)
	}
	return s.send(ctx, op, a)
}

// writeFed writes one row of a store with a change feed through the unit path, as a
// typed store with a feed writes: a write that may replace the row reads it first, and the
// record goes in the write's transaction.
func (s *PolyStore[B]) writeFed(ctx context.Context, op string, a service.Action) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", s.host.Unsent(op, a.Row.PartitionKey, a.Row.RowKey, err)
	}
	p, mode := s.unit(op, a)
	w, err := s.host.WriteLarge(ctx, op, p, mode, p.IfMatch)
	if err != nil {
		return "", s.retell(err)
	}
	return w.ETag, nil
}

// unit returns the row action a of a store with a feed as the unit path writes it: the
// entity's write (its IfMatch, a replace of that version) and the mode of its kind.
func (s *PolyStore[B]) unit(op string, a service.Action) (*engine.Write, engine.WriteMode) {
	p := &engine.Write{PK: a.Row.PartitionKey, RK: a.Row.RowKey, Row: a.Row}
	_ = s.host.PrepareIndexed(op, p) // a polymorphic store has no index: nothing to refuse
	switch {
	case a.Op == service.OpReplace:
		p.IfMatch = a.IfMatch
		return p, engine.ModeStrict
	case a.Op == service.OpInsert:
		return p, engine.ModeCreate
	}
	return p, engine.ModeUpsert
}

// send runs one row action, announcing it to the account's read cache so that stores of
// other types on the table drop what it changes.
func (s *PolyStore[B]) send(ctx context.Context, op string, a service.Action) (string, error) {
	pk, rk := a.Row.PartitionKey, a.Row.RowKey
	if err := ctx.Err(); err != nil {
		return "", s.host.Unsent(op, pk, rk, err)
	}
	keys := s.host.WriteKeys([2]string{pk, rk})
	s.host.BeginWrite(keys)
	w, err := s.host.Acct.Tables.Write(ctx, s.host.Name, a)
	s.host.EndWrite(keys, err, nil, service.Written{})
	if err != nil {
		return "", s.translate(op, pk, rk, err)
	}
	return w.ETag, nil
}

// batch checks every write, then sends them as transactions of one partition each.
func (s *PolyStore[B]) batch(ctx context.Context, op string, kind service.Op, ws []abstractions.PolyWrite[B]) error {
	if len(ws) == 0 {
		return nil
	}
	p := &engine.Plan{Actions: make([]service.Action, len(ws))}
	seen := make(map[abstractions.TableKey]bool, len(ws))
	conditional := false
	for i := range ws {
		a, err := s.action(op, kind, &ws[i])
		if err != nil {
			return err
		}
		k := ws[i].Key
		if seen[k] {
			return &abstractions.StoreError{Kind: abstractions.ErrDuplicateKey, Op: op, Table: s.host.Name, PartitionKey: k.PartitionKey, RowKey: k.RowKey,
				Message: "the batch names this key more than once; a transaction writes each row once; nothing was sent"}
		}
		seen[k] = true
		conditional = conditional || a.IfMatch != ""
		p.Actions[i] = a
	}
	if s.host.Feed != nil {
		return s.batchFed(ctx, op, kind, p, conditional)
	}
	if conditional {
		p.MaxBody = s.host.Acct.MaxBody()
		if n := len(p.Chunks()); n > 1 {
			return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: s.host.Name, PartitionKey: ws[0].Key.PartitionKey,
				Message: fmt.Sprintf("the batch holds a write conditional on an ETag but needs %d transactions (one partition, at most %d rows and %d bytes each), so the condition would guard only part of it; split the batch so each conditional write travels with exactly the rows it guards; nothing was sent",
					n, service.MaxTransactionActions, p.MaxBody)}
		}
	}
	_, err := s.host.RunBatch(ctx, op, p, nil)
	return s.batchError(op, ws[0].Key.PartitionKey, err)
}

// batchFed writes the checked actions of a batch of a store with a change feed through the
// unit path, as a typed store with a feed writes a batch: each row with its record, never
// divided between two transactions. A batch with a conditional write must fit one
// transaction with its records.
func (s *PolyStore[B]) batchFed(ctx context.Context, op string, kind service.Op, p *engine.Plan, conditional bool) error {
	mode := engine.ModeUpsert
	if kind == service.OpInsert {
		mode = engine.ModeCreate
	}
	ws := make([]*engine.Write, len(p.Actions))
	order := make([]int, len(p.Actions))
	var acts []service.Action
	for i, a := range p.Actions {
		ws[i], _ = s.unit(op, a)
		order[i] = i
		if conditional {
			m := mode
			if ws[i].IfMatch != "" {
				m = engine.ModeStrict
			}
			acts = append(acts, s.host.UnitActions(ws[i], m, ws[i].IfMatch, &engine.Stored{})...)
		}
	}
	if conditional {
		budget := s.host.Acct.TxBudget()
		if reason := budget.Add(nil, acts); reason != "" {
			pk := p.Actions[0].Row.PartitionKey
			return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: s.host.Name, PartitionKey: pk,
				Message: "the batch holds a write conditional on an ETag but, with the change records of its writes, needs more than one transaction (" + reason +
					"), so the condition would guard only part of it; split the batch so each conditional write travels with exactly the rows it guards; nothing was sent"}
		}
	}
	if err := ctx.Err(); err != nil {
		return s.host.Unsent(op, p.Actions[0].Row.PartitionKey, "", err)
	}
	_, err := s.host.BatchLarge(ctx, op, mode, ws, order, nil)
	return s.batchError(op, p.Actions[0].Row.PartitionKey, err)
}

// batchError is the error of a batch whose first write is in pk: a partition's failure
// with the advice of a polymorphic store.
func (s *PolyStore[B]) batchError(op, pk string, err error) error {
	var be *abstractions.BatchError
	if errors.As(err, &be) {
		for i := range be.Partitions {
			be.Partitions[i].Err = s.retell(be.Partitions[i].Err)
		}
		return be
	}
	if err != nil {
		var se *abstractions.StoreError
		if !errors.As(err, &se) {
			return s.translate(op, pk, "", err)
		}
		return s.retell(err)
	}
	return nil
}

// action checks one write and builds its row action: kind, or a replace conditional on
// w.IfMatch.
func (s *PolyStore[B]) action(op string, kind service.Op, w *abstractions.PolyWrite[B]) (service.Action, error) {
	pk, rk := w.Key.PartitionKey, w.Key.RowKey
	if err := s.checkKeys(op, pk, rk); err != nil {
		return service.Action{}, err
	}
	cols, err := s.columns(op, pk, rk, w.Columns)
	if err != nil {
		return service.Action{}, err
	}
	a := service.Action{Op: kind, Row: service.Row{PartitionKey: pk, RowKey: rk}}
	if w.IfMatch != "" {
		if !wire.IsEntityTag(w.IfMatch) {
			return service.Action{}, s.refuse(op, pk, rk, abstractions.ErrInvalidArgument, engine.BadETag(w.IfMatch))
		}
		a.Op, a.IfMatch = service.OpReplace, w.IfMatch
	}
	if item := any(w.Item); item != nil {
		props, err := s.encodeItem(op, pk, rk, item)
		if err != nil {
			return service.Action{}, err
		}
		a.Row.Properties = append(props, cols...)
	} else {
		a.Row.Properties = cols
		if s.shared {
			// In a shared table a marker is told from a typed row by its empty
			// discriminator.
			a.Row.Properties = append([]service.Property{{Name: codec.TypeNameColumn, Value: service.String("")}}, cols...)
		}
	}
	return a, nil
}

// encodeItem encodes an item with its discriminator, after checking that its type is one
// the store may write.
func (s *PolyStore[B]) encodeItem(op, pk, rk string, item any) ([]service.Property, error) {
	v := reflect.ValueOf(item)
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, s.refuse(op, pk, rk, abstractions.ErrInvalidArgument,
				fmt.Sprintf("the item is a nil %v; leave Item nil (abstractions.Marker) to write a marker row", t))
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, s.refuse(op, pk, rk, abstractions.ErrInvalidArgument,
			fmt.Sprintf("the item is a %v; items of a polymorphic store are structs (or pointers to them)", v.Type()))
	}
	if _, ok := s.types.NameOf(t); !ok {
		return nil, s.refuse(op, pk, rk, abstractions.ErrInvalidArgument,
			fmt.Sprintf("the item's type %v is not registered, so a read could not create it again; register it with abstractions.RegisterType before writing", t))
	}
	if reason := polyItemRefusal(t); reason != "" {
		return nil, s.refuse(op, pk, rk, abstractions.ErrNotSupported, reason)
	}
	props, err := codec.Encode(item, &s.codec)
	if err != nil {
		return nil, engine.RowError(op, s.host.Name, pk, rk, "the item cannot be stored; nothing was sent", err)
	}
	return props, nil
}

// polyItemRefusal says why a polymorphic store refuses to write items of struct type t, or
// returns "". Plans are cached, so this costs a scan of the fields.
func polyItemRefusal(t reflect.Type) string {
	pl, err := codec.PlanOf(t)
	if err != nil {
		return err.Error()
	}
	if pl.Split() != "" || pl.Offload() != "" {
		return fmt.Sprintf("%v declares a type-level split or offload option; polymorphic stores write no split or offloaded values, so store it with For", t)
	}
	for _, f := range pl.Fields() {
		switch {
		case len(f.Protected) > 0:
			return fmt.Sprintf("%v.%s is protected; polymorphic stores do not check protected properties, so store the type with For", t, f.Path)
		case f.Split != "" || f.Offload != "":
			return fmt.Sprintf("%v.%s has a split or offload option; polymorphic stores write no split or offloaded values, so store the type with For", t, f.Path)
		case f.Expires:
			return fmt.Sprintf("%v.%s is an expiry time (the tag option expires); polymorphic stores do not hide expired rows, so store the type with For", t, f.Path)
		}
	}
	return ""
}

// MergeColumns writes system columns into an existing row; see abstractions.PolyStorage.
func (s *PolyStore[B]) MergeColumns(ctx context.Context, key abstractions.TableKey, columns map[string]any, ifMatch string) (_ string, err error) {
	const op = "merge columns"
	ctx, c := s.begin(ctx, op, key)
	defer c.Finish(&err)
	pk, rk := key.PartitionKey, key.RowKey
	if err := s.checkKeys(op, pk, rk); err != nil {
		return "", err
	}
	if len(columns) == 0 {
		return "", s.refuse(op, pk, rk, abstractions.ErrInvalidArgument, "no columns to merge")
	}
	cols, err := s.columns(op, pk, rk, columns)
	if err != nil {
		return "", err
	}
	switch {
	case ifMatch == "":
		ifMatch = service.ETagAny
	case !wire.IsEntityTag(ifMatch):
		return "", s.refuse(op, pk, rk, abstractions.ErrInvalidArgument, engine.BadETag(ifMatch))
	}
	row := service.Row{PartitionKey: pk, RowKey: rk, Properties: cols}
	if s.host.Feed != nil {
		// A patch of a store with a feed: the record (patched) goes in the merge's
		// transaction, on condition of the version read (or of ifMatch).
		if err := ctx.Err(); err != nil {
			return "", s.host.Unsent(op, pk, rk, err)
		}
		if ifMatch == service.ETagAny {
			ifMatch = ""
		}
		w, err := s.host.PatchIndexed(ctx, op, row, ifMatch)
		if err != nil {
			return "", s.retell(err)
		}
		return w.ETag, nil
	}
	return s.send(ctx, op, service.Action{Op: service.OpMerge, Row: row, IfMatch: ifMatch})
}
