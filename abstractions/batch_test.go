package abstractions

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestBatchError(t *testing.T) {
	dup := &StoreError{Kind: ErrDuplicateKey, Op: "create batch", Table: "T", PartitionKey: "b", RowKey: "2", Message: "exists"}
	busy := &StoreError{Kind: ErrUnavailable, Op: "create batch", Table: "T", PartitionKey: "c", Message: "busy"}
	be := &BatchError{Op: "create batch", Table: "T", Partitions: []BatchPartition{
		{PartitionKey: "a", Committed: []BatchRow{{"1", 0}, {"2", 3}}},
		{PartitionKey: "b", Committed: []BatchRow{{"1", 1}}, NotCommitted: []BatchRow{{"2", 4}, {"3", 6}}, Err: dup},
		{PartitionKey: "c", Unknown: []BatchRow{{"1", 2}}, NotCommitted: []BatchRow{{"2", 5}}, Err: busy},
	}}
	var err error = be
	cases := []struct {
		name string
		got  any
		want any
	}{
		{"committed partitions", be.CommittedPartitions(), []string{"a"}},
		{"failed partitions", be.FailedPartitions(), []string{"b", "c"}},
		{"retry", be.Retry(), []int{2, 4, 5, 6}},
		{"matches the duplicate", errors.Is(err, ErrDuplicateKey), true},
		{"matches the unavailable", errors.Is(err, ErrUnavailable), true},
		{"not found is not in it", errors.Is(err, ErrNotFound), false},
		{"the message counts and names the first failure", strings.Contains(err.Error(), "2 of 3 partitions") && strings.Contains(err.Error(), `"b", "2"`), true},
	}
	for _, tc := range cases {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	var se *StoreError
	if !errors.As(err, &se) || se != dup {
		t.Errorf("errors.As reaches %v, want the first failure", se)
	}
	var back *BatchError
	if !errors.As(error(be), &back) || back != be {
		t.Error("errors.As does not reach the BatchError")
	}
}

func TestOutcomeUnknown(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&StoreError{Kind: ErrUnavailable}, true},
		{context.Canceled, true},
		{context.DeadlineExceeded, true},
		{&StoreError{Kind: ErrDuplicateKey}, false},
		{nil, false},
	} {
		if got := OutcomeUnknown(tc.err); got != tc.want {
			t.Errorf("OutcomeUnknown(%v) = %v", tc.err, got)
		}
	}
}
