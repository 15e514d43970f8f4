package memservice

import (
	"context"
	"net/http"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/tables/service"
)

// Transact performs an entity-group transaction: every action or none, and reports each
// action's new ETag and Timestamp (a delete's are zero), as the service's response does. With
// a throttling model, a transaction over its partition's or account's budget fails first with
// a plain 503 ServerBusy, as a single-row write would. It fails with a plain 413
// RequestBodyTooLarge when the estimated body exceeds 4 MiB and a plain 400 InvalidInput
// when there are no actions. Every other failure is a *service.TransactionError naming the
// action the service blames:
//   - more than 100 actions: index 0, 400 InvalidInput (the service's message starts "0:"
//     on Azurite; the real service's index is not documented);
//   - an action in another partition than the first: that action, 400
//     CommandsInBatchActOnDifferentPartitions;
//   - a row addressed twice: the second occurrence, 400 InvalidDuplicateRow;
//   - then, running the actions in order, the first one whose validation or operation fails,
//     with the error Write would return (a missing table fails at index 0).
func (s *Service) Transact(ctx context.Context, tableName string, actions []service.Action) ([]service.Written, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(actions) > 0 {
		if err := s.throttle.admit(tableName, actions[0].Row.PartitionKey, len(actions)); err != nil {
			return nil, err
		}
	}
	if service.TransactionBodySize(actions) > maxBodySize {
		return nil, errBodyTooLarge()
	}
	if err := s.cosmosTransaction(actions); err != nil {
		return nil, err
	}
	if len(actions) == 0 {
		return nil, errInvalidInput("The batch request body is empty: a change set needs at least one operation.")
	}
	if len(actions) > maxActions {
		return nil, txError(0, errInvalidInput("The batch request operation exceeds the maximum 100 changes per change set."))
	}
	pk := actions[0].Row.PartitionKey
	for i := range actions {
		if actions[i].Row.PartitionKey != pk {
			return nil, txError(i, statusError(http.StatusBadRequest, "CommandsInBatchActOnDifferentPartitions",
				"All commands in a batch must operate on same entity group."))
		}
	}
	seen := make(map[string]struct{}, len(actions))
	for i := range actions {
		rk := actions[i].Row.RowKey
		if _, dup := seen[rk]; dup {
			return nil, txError(i, statusError(http.StatusBadRequest, "InvalidDuplicateRow",
				"The batch request contains multiple changes with same row key. "+
					"An entity can appear only once in a batch request."))
		}
		seen[rk] = struct{}{}
	}

	// The actions are validated before the table is locked; their errors are reported in
	// the order the service checks them: an action's own checks, then (for the first) the
	// table, then its effect on the rows, action after action.
	reqs := make([]request, len(actions))
	errs := make([]error, len(actions))
	for i := range actions {
		reqs[i], errs[i] = prepare(s.Product(), &actions[i])
	}
	if errs[0] != nil {
		return nil, txError(0, errs[0])
	}
	t := s.lookup(tableName)
	if t == nil {
		return nil, txError(0, errTableNotFound())
	}
	create := false
	for i := range reqs {
		create = create || errs[i] == nil && mayInsert(reqs[i].op)
	}
	p, ok := t.writePartition(pk, create)
	if !ok {
		return nil, txError(0, errTableNotFound())
	}
	// Every action addresses a different row, so each one sees the rows as they were before
	// the transaction, and the changes can be committed after the last action succeeds.
	changes := make([]change, 0, len(actions))
	for i := range actions {
		if errs[i] != nil {
			t.release(p, true)
			return nil, txError(i, errs[i])
		}
		c, err := s.apply(p, reqs[i])
		if err != nil {
			t.release(p, true)
			return nil, txError(i, err)
		}
		changes = append(changes, c)
	}
	// Each row gets its own Timestamp, as on Azurite; whether the real service gives the
	// rows of one transaction a common one is not documented.
	out := make([]service.Written, len(changes))
	for i := range changes {
		out[i], _ = t.commit(p, &changes[i], s.stamp())
	}
	var seq uint64
	if s.journal != nil {
		logged := journal.Change{Kind: journal.Rows, Table: t.name, Rows: make([]journal.RowChange, len(changes))}
		for i, c := range changes {
			logged.Rows[i] = rowChange(c, out[i])
		}
		seq = s.journal.Append(&logged)
	}
	emptied := len(p.rows) == 0
	t.release(p, true)
	if emptied {
		t.dropEmpty(pk)
	}
	if err := s.synced(seq); err != nil {
		return nil, err
	}
	return out, nil
}
