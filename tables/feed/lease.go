package feed

import (
	"context"
	"net/http"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/service"
)

// A lease is a relay's hold on one partition: the row of the partition in the lease
// partition, naming its owner, at the version the relay wrote. Another relay takes it over
// when it has seen that version unchanged for RelayOptions.Lease (by its own clock), or at
// once when the owner released (deleted) it.
type lease struct {
	pk, etag string
	at       time.Time // when this relay last wrote it (its clock)
}

func (r *Relay) leaseRow(pk string) service.Row {
	return service.Row{PartitionKey: feedrow.LeasePartition, RowKey: pk,
		Properties: []service.Property{{Name: feedrow.OwnerColumn, Value: service.String(r.o.Name)}}}
}

// take takes the lease of pk, reporting false when another relay holds it.
func (r *Relay) take(ctx context.Context, pk string) (*lease, bool, error) {
	row, err := r.core.Acct.Tables.GetRow(ctx, r.core.Name, feedrow.LeasePartition, pk, nil)
	var a service.Action
	switch {
	case abstractions.HasStatus(err, http.StatusNotFound, ""):
		a = service.Action{Op: service.OpInsert, Row: r.leaseRow(pk)}
	case err != nil:
		return nil, false, r.core.Translate("feed relay", feedrow.LeasePartition, pk, err)
	default:
		owner, _ := row.Get(feedrow.OwnerColumn)
		if owner.Str() != r.o.Name && r.unchangedFor(feedrow.LeasePartition, pk, row.ETag) < r.o.Lease {
			return nil, false, nil
		}
		a = service.Action{Op: service.OpReplace, Row: r.leaseRow(pk), IfMatch: row.ETag}
	}
	w, err := r.core.Acct.Tables.Write(ctx, r.core.Name, a)
	switch {
	case abstractions.HasStatus(err, http.StatusConflict, "EntityAlreadyExists") || gone(err):
		return nil, false, nil // another relay took it first
	case err != nil:
		return nil, false, r.core.Translate("feed relay", feedrow.LeasePartition, pk, err)
	}
	r.forget(feedrow.LeasePartition, pk)
	return &lease{pk: pk, etag: w.ETag, at: time.Now()}, true, nil
}

// errLost is the error of a relay that lost its lease to another while it worked.
type errLost struct{ pk string }

func (e errLost) Error() string {
	return "feed: the relay lost the lease of partition " + e.pk + " to another relay; its records are that relay's now"
}

// renew writes the lease again on condition of the version this relay holds, unless it
// wrote it less than a third of the lease ago (no other relay can have taken it then).
func (r *Relay) renew(ctx context.Context, l *lease) error {
	if time.Since(l.at) < r.o.Lease/3 {
		return nil
	}
	started := time.Now()
	w, err := r.core.Acct.Tables.Write(ctx, r.core.Name, service.Action{Op: service.OpReplace, Row: r.leaseRow(l.pk), IfMatch: l.etag})
	if gone(err) {
		return errLost{l.pk}
	}
	if err != nil {
		return r.core.Translate("feed relay", feedrow.LeasePartition, l.pk, err)
	}
	l.etag, l.at = w.ETag, started
	return nil
}

// release deletes the lease, on condition of the version held, so another relay takes the
// partition at once; a lease lost meanwhile is left as it is.
func (r *Relay) release(ctx context.Context, l *lease) error {
	_, err := r.core.Acct.Tables.Write(context.WithoutCancel(ctx), r.core.Name, service.Action{Op: service.OpDelete,
		Row: service.Row{PartitionKey: feedrow.LeasePartition, RowKey: l.pk}, IfMatch: l.etag})
	if err != nil && !gone(err) {
		return r.core.Translate("feed relay", feedrow.LeasePartition, l.pk, err)
	}
	return nil
}
