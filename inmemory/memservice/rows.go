package memservice

import (
	"context"
	"time"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/tables/service"
)

// A request is a validated row write: its keys, the properties it carries (without nulls:
// the caller's, or a copy when it sent some; commit copies what it stores) and its
// condition.
type request struct {
	op    service.Op
	key   rowKey
	props []service.Property
	cond  condition
}

// prepare validates a write the way the service validates a request before it touches the
// table: keys, then properties and the size of the row as the service product counts it,
// then the If-Match header.
func prepare(product service.Product, a *service.Action) (request, error) {
	if a.Op < service.OpInsert || a.Op > service.OpDelete {
		return request{}, errInvalidInput("The requested operation is not supported.")
	}
	req := request{op: a.Op, key: rowKey{a.Row.PartitionKey, a.Row.RowKey}}
	if err := checkKeys(a.Row.PartitionKey, a.Row.RowKey, a.Op == service.OpInsert); err != nil {
		return request{}, err
	}
	if a.Op != service.OpDelete {
		props, err := checkProperties(a.Row.Properties)
		if err != nil {
			return request{}, err
		}
		if err := checkRow(product, a.Row.PartitionKey, a.Row.RowKey, props); err != nil {
			return request{}, err
		}
		req.props = props
	}
	switch a.Op {
	case service.OpReplace, service.OpMerge, service.OpDelete:
		c, err := parseCondition(a.IfMatch)
		if err != nil {
			return request{}, err
		}
		req.cond = c
	}
	return req, nil
}

// A change is the effect of one successful write: the row to store under key, or, for a
// delete, none. old is the row's slot when the partition holds the row.
type change struct {
	key rowKey
	del bool
	row service.Row
	old *slot
}

// apply works out the effect of req on partition p (nil: one with no rows) without changing
// it, so that a transaction can drop every change when a later action fails. The row it
// returns has no ETag and Timestamp yet: commit stamps it. The caller holds p.mu for writing.
func (s *Service) apply(p *partition, req request) (change, error) {
	sl := p.get(req.key.rk)
	var old *service.Row
	if sl != nil {
		old = &sl.row
	}
	props := req.props
	switch req.op {
	case service.OpInsert:
		if old != nil {
			return change{}, errEntityExists()
		}
	case service.OpReplace, service.OpMerge, service.OpDelete:
		if old == nil {
			return change{}, errResourceNotFound()
		}
		if !req.cond.matches(old) {
			return change{}, errConditionNotSatisfied()
		}
	}
	switch req.op {
	case service.OpDelete:
		return change{key: req.key, del: true, old: sl}, nil
	case service.OpMerge, service.OpUpsertMerge:
		if old != nil {
			props = merge(old.Properties, props)
			// The merged row must fit the limits too, whatever the request alone measured.
			if err := checkRow(s.Product(), req.key.pk, req.key.rk, props); err != nil {
				return change{}, err
			}
		}
	}
	return change{key: req.key, old: sl, row: service.Row{
		PartitionKey: req.key.pk,
		RowKey:       req.key.rk,
		Properties:   props,
	}}, nil
}

// merge returns a new slice: old's properties with those in upd written over them (a
// property may change its type) and upd's new properties after them.
func merge(old, upd []service.Property) []service.Property {
	out := make([]service.Property, len(old), len(old)+len(upd))
	copy(out, old)
	for _, p := range upd {
		if i := indexOf(old, p.Name); i >= 0 {
			out[i] = p
		} else {
			out = append(out, p)
		}
	}
	return out
}

// indexOf returns the position of the property named name in props, or -1. Rows hold at
// most 252 properties, and most a dozen: a scan costs less than building a map.
func indexOf(props []service.Property, name string) int {
	for i := range props {
		if props[i].Name == name {
			return i
		}
	}
	return -1
}

// commit stores a change computed by apply in p, written at ts, and returns what the service
// reports for it, and whether a delete left p empty. The stored row has a copy of c.row's
// properties, and c.row becomes it. The caller holds p.mu for writing, since before apply;
// p is not nil unless the change is a delete.
func (t *table) commit(p *partition, c *change, ts time.Time) (service.Written, bool) {
	if c.del {
		return service.Written{}, t.remove(p, c.key.rk)
	}
	cells := make([]service.Property, len(c.row.Properties))
	copy(cells, c.row.Properties)
	c.row.Properties = cells
	c.row.Timestamp = ts
	c.row.ETag = formatETag(ts)
	if c.old != nil {
		c.old.row = c.row
	} else {
		t.insert(p, c.row)
	}
	return service.Written{ETag: c.row.ETag, Timestamp: ts}, false
}

// mayInsert reports whether op can create a row, and so needs a partition to put it in.
func mayInsert(op service.Op) bool {
	return op == service.OpInsert || op == service.OpUpsertReplace || op == service.OpUpsertMerge
}

// clipped returns props with no capacity beyond its length, so that a reader's append
// copies it instead of writing into the stored row's array.
func clipped(props []service.Property) []service.Property { return props[:len(props):len(props)] }

// project returns r with only the selected custom properties when sel is not nil, and
// otherwise r with a copy of its properties, or, when share is set (WithSharedReads), with
// the stored ones, clipped so that an append copies them.
func project(r *service.Row, sel []string, share bool) service.Row {
	switch {
	case sel == nil && share:
		out := *r
		out.Properties = clipped(r.Properties)
		return out
	case sel == nil:
		return r.Clone()
	}
	out := *r
	out.Properties = nil
	for _, p := range r.Properties {
		for _, name := range sel {
			if p.Name == name {
				out.Properties = append(out.Properties, p)
				break
			}
		}
	}
	return out
}

// GetRow reads one row, with only the custom properties named in sel when sel is not nil
// (names compare with case). A bad key fails with 400 InvalidInput or 400
// PropertyValueTooLarge, a missing table with 404 TableNotFound, a missing row with 404
// ResourceNotFound.
func (s *Service) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	if err := ctx.Err(); err != nil {
		return service.Row{}, err
	}
	if err := s.throttle.admit(table, pk, 1); err != nil {
		return service.Row{}, err
	}
	if err := checkKeys(pk, rk, false); err != nil {
		return service.Row{}, err
	}
	if err := s.cosmosKeys(pk, rk); err != nil {
		return service.Row{}, err
	}
	t := s.lookup(table)
	if t == nil {
		return service.Row{}, errTableNotFound()
	}
	p, ok := t.readPartition(pk)
	if !ok {
		return service.Row{}, errTableNotFound()
	}
	var r service.Row
	sl := p.get(rk)
	if sl != nil {
		r = sl.row
	}
	t.release(p, false)
	if sl == nil {
		return service.Row{}, errResourceNotFound()
	}
	// A stored row's properties never change: they are copied outside the lock.
	return project(&r, sel, s.shareReads), nil
}

// Write performs one row write and returns the row's new ETag and Timestamp (the zero
// Written for a delete). It fails with 413 RequestBodyTooLarge for a body over 4 MiB, with
// the 400 errors of the package documentation for a bad key, property or row, with 404
// TableNotFound for a missing table, and then as the operation's rules say: 409
// EntityAlreadyExists, 404 ResourceNotFound, 412 UpdateConditionNotSatisfied. A failed write
// changes nothing.
func (s *Service) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	if err := ctx.Err(); err != nil {
		return service.Written{}, err
	}
	if err := s.throttle.admit(table, a.Row.PartitionKey, 1); err != nil {
		return service.Written{}, err
	}
	if bodyBound(&a) > maxBodySize && service.BodySize(&a) > maxBodySize {
		return service.Written{}, errBodyTooLarge()
	}
	if err := s.cosmosAction(&a); err != nil {
		return service.Written{}, err
	}
	req, err := prepare(s.Product(), &a)
	if err != nil {
		return service.Written{}, err
	}
	t := s.lookup(table)
	if t == nil {
		return service.Written{}, errTableNotFound()
	}
	p, ok := t.writePartition(req.key.pk, mayInsert(req.op))
	if !ok {
		return service.Written{}, errTableNotFound()
	}
	c, err := s.apply(p, req)
	if err != nil {
		t.release(p, true)
		return service.Written{}, err
	}
	w, emptied := t.commit(p, &c, s.stamp())
	var seq uint64
	if s.journal != nil {
		seq = s.journal.Append(&journal.Change{Kind: journal.Rows, Table: t.name, Rows: []journal.RowChange{rowChange(c, w)}})
	}
	t.release(p, true)
	if emptied {
		t.dropEmpty(req.key.pk)
	}
	if err := s.synced(seq); err != nil {
		return service.Written{}, err
	}
	return w, nil
}
