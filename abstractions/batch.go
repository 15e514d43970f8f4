package abstractions

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// BatchError is the error of a batch write (CreateBatch, UpsertBatch, the batches of a
// polymorphic store) that sent transactions and saw at least one of them fail.
// It says, partition by partition, which rows committed and which did not, so that a caller
// retries only what failed. Reach it with errors.As; errors.Is matches what any failed
// partition's error matches (ErrDuplicateKey, ErrUnavailable, …), and errors.As also reaches
// each partition's *StoreError, the first failed partition's first.
//
// Each transaction is atomic, and the transactions of one partition are sent in order: the
// first failure in a partition stops that partition, and its later transactions are not
// sent. The other partitions go on, unless the failure says the service as a whole cannot
// be used (it is unavailable, it refuses the credential) or the call's context ended; their
// rows that were never sent are then not committed either. A call refused before anything
// was sent (an invalid key, a key named twice) returns a *StoreError, not a BatchError.
type BatchError struct {
	// Op is the store operation, such as "create batch"; Table its table.
	Op, Table string
	// Partitions holds every partition the call addressed, in the order the call's input
	// first named them.
	Partitions []BatchPartition
}

// BatchPartition is what a batch call did in one partition.
type BatchPartition struct {
	// PartitionKey is the partition, as stored.
	PartitionKey string
	// Committed are the rows whose transaction committed, in the order they were sent.
	Committed []BatchRow
	// NotCommitted are the rows that are certainly not written: those of a transaction the
	// service refused, and those of transactions never sent.
	NotCommitted []BatchRow
	// Unknown are the rows of a transaction whose answer was lost (the service was
	// unavailable after the client's retries, or the call's context ended while it was
	// out): it may or may not have committed. Read those rows to find out; an upsert can
	// simply be sent again.
	Unknown []BatchRow
	// Err is why the partition stopped: the error of its failing transaction, naming the row
	// the service blamed when it named one, or the error that stopped the call before this
	// partition's transactions were sent. It is nil when every row of the partition
	// committed.
	Err error
}

// BatchRow is one row (for a split-aware type, one entity) of a batch call.
type BatchRow struct {
	// RowKey is the row's key, as stored.
	RowKey string
	// Index is the row's position in the slice the call was given.
	Index int
}

// Error implements error. It counts the partitions and names the first failure.
func (e *BatchError) Error() string {
	failed, committed := 0, 0
	var first error
	for i := range e.Partitions {
		p := &e.Partitions[i]
		if p.Err == nil {
			committed++
			continue
		}
		failed++
		if first == nil {
			first = p.Err
		}
	}
	var b strings.Builder
	b.WriteString(e.Op + " " + e.Table + ": ")
	b.WriteString(strconv.Itoa(failed) + " of " + strconv.Itoa(len(e.Partitions)) + " partitions did not fully commit (")
	b.WriteString(strconv.Itoa(committed) + " did); BatchError lists the rows to retry")
	if first != nil {
		b.WriteString("; first failure: " + first.Error())
	}
	return b.String()
}

// Unwrap returns the error of every partition that did not fully commit, in partition
// order, so errors.Is and errors.As look into each.
func (e *BatchError) Unwrap() []error {
	var errs []error
	for i := range e.Partitions {
		if err := e.Partitions[i].Err; err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// CommittedPartitions returns the partitions every row of which committed, in order.
func (e *BatchError) CommittedPartitions() []string {
	var out []string
	for i := range e.Partitions {
		if e.Partitions[i].Err == nil {
			out = append(out, e.Partitions[i].PartitionKey)
		}
	}
	return out
}

// FailedPartitions returns the partitions with rows that did not commit or may not have,
// in order.
func (e *BatchError) FailedPartitions() []string {
	var out []string
	for i := range e.Partitions {
		if e.Partitions[i].Err != nil {
			out = append(out, e.Partitions[i].PartitionKey)
		}
	}
	return out
}

// Retry returns the positions, in the slice the call was given, of the rows to send again:
// those not committed and those whose outcome is unknown, in ascending order.
func (e *BatchError) Retry() []int {
	var out []int
	for i := range e.Partitions {
		p := &e.Partitions[i]
		for _, rows := range [][]BatchRow{p.NotCommitted, p.Unknown} {
			for _, r := range rows {
				out = append(out, r.Index)
			}
		}
	}
	slices.Sort(out)
	return out
}

// OutcomeUnknown reports whether err leaves a sent request's outcome unknown: the service
// was unavailable (after the client's retries) or the context ended while the request was
// out. A batch reports the rows of such a transaction as BatchPartition.Unknown.
func OutcomeUnknown(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
