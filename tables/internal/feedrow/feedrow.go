// Package feedrow owns the layout of a store's change feed: the row keys of change records
// and dead letters, the cells a record carries, the cells an entity's main row keeps about
// its last record, the registry of partitions with pending records and the relays' leases.
// It does not read or write rows (package engine writes records in the entity's
// transaction; package tables/feed reads them).
//
// A change record lives in its entity's partition, so that it is written in the entity's
// entity-group transaction:
//
//	~fd.r.<16 hex digits: nanoseconds><8 hex digits: random>
//
// Keys sort in the order of their time part, which a writer takes from its clock, never
// below the last record of the same entity (the main row keeps that key in SeqColumn), so
// the records of one entity sort in the order of its versions whatever the writers' clocks.
// A dead letter (a record whose handler kept failing) keeps its record's key with the
// prefix ~fd.x. instead. Row keys of entities may not start with Prefix, and reads skip the
// rows that do.
//
// The registry is the partition RegistryPartition: one row per partition with pending
// records, its row key the partition key. Leases are rows of LeasePartition, one per
// partition, held by one relay at a time. Partition keys of entities may not start with
// Prefix.
package feedrow

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// Prefix starts every reserved row key and partition key of the feed; PrefixEnd is the
// smallest key above every key that starts with it.
const (
	Prefix    = "~fd."
	PrefixEnd = "~fd/"
)

// Record and dead-letter row-key prefixes, and the partitions of the registry and leases.
const (
	RecordPrefix       = Prefix + "r."
	RecordPrefixEnd    = Prefix + "r/"
	DeadPrefix         = Prefix + "x."
	DeadPrefixEnd      = Prefix + "x/"
	DeliveredPrefix    = Prefix + "d."
	DeliveredPrefixEnd = Prefix + "d/"
	RegistryPartition  = Prefix + "marks"
	LeasePartition     = Prefix + "leases"
	// KeptPartition lists the partitions holding delivered records kept for a while
	// (RelayOptions.Keep), which a sweep visits; DeadPartition those holding dead letters.
	KeptPartition = Prefix + "kept"
	DeadPartition = Prefix + "dead"
)

// Cells of a record row.
const (
	EntityColumn  = "_FdEntity"  // the entity's row key ("" for an event)
	KindColumn    = "_FdKind"    // the kind of change (Kind)
	VersionColumn = "_FdVersion" // the entity's change number
	TypeColumn    = "_FdType"    // an event's type
	DataColumn    = "_FdData"    // an event's payload
	TriesColumn   = "_FdTries"   // failed deliveries so far
	ErrorColumn   = "_FdError"   // a dead letter's last failure
)

// Cells of an entity's main row: the key of its last record and its change number.
const (
	SeqColumn = "_FdSeq"
	VerColumn = "_FdVer"
)

// OwnerColumn is a lease row's cell naming the relay that holds it.
const (
	OwnerColumn = "_FdOwner"
)

// MarkColumn is the registry row's cell, the time the writer marked (its clock).
const MarkColumn = "_FdMarked"

// Kind is the kind of change a record reports.
type Kind string

// The kinds of change.
const (
	Created  Kind = "created"
	Upserted Kind = "upserted"
	Updated  Kind = "updated"
	Patched  Kind = "patched"
	Deleted  Kind = "deleted"
	Event    Kind = "event"
)

// IsKey reports whether a row key is reserved for the feed.
func IsKey(rk string) bool { return strings.HasPrefix(rk, Prefix) }

// IsPartition reports whether a partition key is reserved for the feed.
func IsPartition(pk string) bool { return strings.HasPrefix(pk, Prefix) }

// IsRecord reports whether a row key is a record's.
func IsRecord(rk string) bool { return strings.HasPrefix(rk, RecordPrefix) }

// Clock hands out record times: never twice the same nanosecond, never below one handed out
// before, in one process.
type Clock struct {
	last int64
}

// Next returns a record time at least now and above after (the time of the entity's last
// record, 0 for none) and every time it returned before.
func (c *Clock) Next(now time.Time, after int64) int64 {
	t := now.UnixNano()
	if t <= after {
		t = after + 1
	}
	for {
		last := loadInt64(&c.last)
		n := t
		if n <= last {
			n = last + 1
		}
		if casInt64(&c.last, last, n) {
			return n
		}
	}
}

// Key returns the row key of a record of time t.
func Key(t int64) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s%016x%08x", RecordPrefix, uint64(t), binary.BigEndian.Uint32(b[:]))
}

// TimeOf returns the time part of a record's (or dead letter's) key, 0 when it has none.
func TimeOf(key string) int64 {
	var rest string
	switch {
	case strings.HasPrefix(key, RecordPrefix):
		rest = key[len(RecordPrefix):]
	case strings.HasPrefix(key, DeadPrefix):
		rest = key[len(DeadPrefix):]
	case strings.HasPrefix(key, DeliveredPrefix):
		rest = key[len(DeliveredPrefix):]
	default:
		return 0
	}
	if len(rest) < 16 {
		return 0
	}
	n, err := strconv.ParseUint(rest[:16], 16, 64)
	if err != nil {
		return 0
	}
	return int64(n)
}

// DeadKey returns the dead letter's key of a record's key.
func DeadKey(key string) string { return DeadPrefix + strings.TrimPrefix(key, RecordPrefix) }

// DeliveredKey returns the key a delivered record is kept under.
func DeliveredKey(key string) string { return DeliveredPrefix + strings.TrimPrefix(key, RecordPrefix) }

// RecordKey returns the record's key of a dead letter's.
func RecordKey(dead string) string { return RecordPrefix + strings.TrimPrefix(dead, DeadPrefix) }

// Stored returns what the main row r says of its last record: that record's time and the
// entity's change number (zeros when the row has none).
func Stored(r *service.Row) (seq int64, ver int64) {
	if v, ok := r.Get(SeqColumn); ok {
		seq = TimeOf(v.Str())
	}
	if v, ok := r.Get(VerColumn); ok {
		ver = v.Int64()
	}
	return seq, ver
}

// MainCells returns the main row's cells with the key of its new record and its change
// number set.
func MainCells(props []service.Property, key string, ver int64) []service.Property {
	out := make([]service.Property, 0, len(props)+2)
	for _, p := range props {
		if p.Name != SeqColumn && p.Name != VerColumn {
			out = append(out, p)
		}
	}
	return append(out, service.Property{Name: SeqColumn, Value: service.String(key)},
		service.Property{Name: VerColumn, Value: service.Int64(ver)})
}

// Record returns the row of a change record of the entity rk in pk; body, when not nil, are
// the entity's cells the record carries.
func Record(pk, key, rk string, kind Kind, ver int64, body []service.Property) service.Row {
	props := make([]service.Property, 0, len(body)+3)
	for _, p := range body {
		if p.Name != SeqColumn && p.Name != VerColumn {
			props = append(props, p)
		}
	}
	props = append(props, service.Property{Name: EntityColumn, Value: service.String(rk)},
		service.Property{Name: KindColumn, Value: service.String(string(kind))},
		service.Property{Name: VersionColumn, Value: service.Int64(ver)})
	return service.Row{PartitionKey: pk, RowKey: key, Properties: props}
}

// EventRecord returns the row of an application event in pk.
func EventRecord(pk, key, typ string, data []byte) service.Row {
	return service.Row{PartitionKey: pk, RowKey: key, Properties: []service.Property{
		{Name: EntityColumn, Value: service.String("")},
		{Name: KindColumn, Value: service.String(string(Event))},
		{Name: TypeColumn, Value: service.String(typ)},
		{Name: DataColumn, Value: service.Binary(data)},
	}}
}

// Mark returns the registry row that marks pk as having pending records.
func Mark(pk string, now time.Time) service.Row {
	return service.Row{PartitionKey: RegistryPartition, RowKey: pk,
		Properties: []service.Property{{Name: MarkColumn, Value: service.DateTime(now)}}}
}

func loadInt64(p *int64) int64 { return atomic.LoadInt64(p) }

func casInt64(p *int64, old, n int64) bool { return atomic.CompareAndSwapInt64(p, old, n) }
