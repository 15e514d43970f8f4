package abstractions

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Append logs and versioned streams are compositions over the part of Storage they call
// (Creator to append, Log to read): they only choose row keys and bounded queries, so they
// work the same on every backend.

// appendRetries is how often Append moves to the next tick when the key it chose is taken
// (two appends within the same 100 ns).
const appendRetries = 8

// Append appends v to the append log of a partition, keyed by the current time so that the
// newest entry sorts first; see AppendAt.
func Append[T any, P EntityPtr[T]](ctx context.Context, s Creator[T], partition string, v *T, subStream string) error {
	return AppendAt[T, P](ctx, s, partition, v, subStream, time.Now())
}

// AppendAt appends v to the append log of a partition as of the time at. It assigns v's ID:
// the row key is InvertedTicks(at), prefixed by subStream and "|" when subStream is not empty,
// so one partition can hold several independent logs. When the key is taken (another entry
// in the same 100 ns), the entry moves to the next tick, a few times, before failing with an
// error matching ErrDuplicateKey.
//
// A nil v is refused with ErrInvalidArgument, an empty partition or one containing "|" with
// ErrInvalidKey (see the isolation rule at SplitID). A sub-stream name must start with a
// letter and must not contain "|" (refused with ErrInvalidArgument): that keeps the main
// log's all-digit keys sorted before every sub-stream and each sub-stream's prefix from
// matching another's.
func AppendAt[T any, P EntityPtr[T]](ctx context.Context, s Creator[T], partition string, v *T, subStream string, at time.Time) error {
	if v == nil {
		return &StoreError{Kind: ErrInvalidArgument, Op: "append", Table: s.Table(), Message: "the entity is nil"}
	}
	if err := checkPartition("append", s, partition); err != nil {
		return err
	}
	if err := checkSubStream("append", s, subStream); err != nil {
		return err
	}
	ticks := Ticks(at)
	for attempt := 0; ; attempt++ {
		// The key is set on a copy so that a failed attempt leaves v untouched.
		c := *v
		P(&c).Base().ID = partition + IDSeparator + subStreamPrefix(subStream) + invertedKey(ticks+int64(attempt))
		err := s.Create(ctx, &c)
		if err == nil {
			*v = c
			return nil
		}
		if !keyTaken(err) || attempt == appendRetries {
			return err
		}
	}
}

func subStreamPrefix(subStream string) string {
	if subStream == "" {
		return ""
	}
	return subStream + IDSeparator
}

func checkSubStream[T any](op string, s Creator[T], subStream string) error {
	if subStream == "" {
		return nil
	}
	r, _ := utf8.DecodeRuneInString(subStream)
	if !unicode.IsLetter(r) || strings.Contains(subStream, IDSeparator) {
		return &StoreError{Kind: ErrInvalidArgument, Op: op, Table: s.Table(), RowKey: subStream,
			Message: "a sub-stream name must start with a letter and must not contain \"|\"; nothing was sent"}
	}
	return nil
}

// checkPartition refuses a partition that is empty or that an id cannot carry (see the
// isolation rule at SplitID). An empty partition matters most: in a Query it means the whole
// table, so a helper given "" would read every tenant's rows. Stores normalise the
// partition and check the rest of the key rules themselves (an all-whitespace partition
// normalises to "" and is refused there).
func checkPartition[T any](op string, s Creator[T], partition string) error {
	if partition == "" {
		return &StoreError{Kind: ErrInvalidKey, Op: op, Table: s.Table(),
			Message: "the partition key is empty; a log or a stream lives in one partition, so name it; nothing was sent"}
	}
	if _, err := CombineID(partition, ""); err != nil {
		return &StoreError{Kind: ErrInvalidKey, Op: op, Table: s.Table(), PartitionKey: partition,
			Message: "a partition key must not contain \"|\", which ends the partition in an id; nothing was sent"}
	}
	return nil
}

// Recent returns the newest n entries of a partition's append log (or of one sub-stream of
// it), newest first, with one bounded query. A negative n is refused with
// ErrInvalidArgument, an empty partition or one containing "|" with ErrInvalidKey, before
// anything is sent.
func Recent[T any, P EntityPtr[T]](ctx context.Context, s Log[T], partition string, n int, subStream string) ([]*T, error) {
	if n < 0 {
		return nil, &StoreError{Kind: ErrInvalidArgument, Op: "recent", Table: s.Table(), PartitionKey: partition, Message: "the count is negative"}
	}
	if err := checkPartition("recent", s, partition); err != nil {
		return nil, err
	}
	if err := checkSubStream("recent", s, subStream); err != nil {
		return nil, err
	}
	if n == 0 {
		return []*T{}, nil
	}
	if subStream != "" {
		return s.Query(ctx, Query[T]{Partition: partition, RowKeyPrefix: subStreamPrefix(subStream), Take: n})
	}
	// The main log's keys are digits, which sort before every sub-stream's (they start with
	// a letter): the first n rows hold the newest n entries of the main log, followed by
	// sub-stream rows only when the main log is shorter.
	rows, err := s.Query(ctx, Query[T]{Partition: partition, Take: n})
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	for _, r := range rows {
		if _, rk := SplitID(P(r).Base().ID); !strings.Contains(rk, IDSeparator) {
			out = append(out, r)
		}
	}
	return out, nil
}

// VersionedEntity is the base of types stored as versioned streams: an Entity with the
// version it holds. Embed it instead of Entity:
//
//	type OrderSnapshot struct {
//		abstractions.VersionedEntity
//		State string
//	}
//
// The stream id is the partition and the row key is VersionKey(Version), so the newest
// version sorts first. Version is also stored as a column, which AtOrBefore filters on.
type VersionedEntity struct {
	Entity
	// Version is the snapshot's version, 0 to MaxVersion.
	Version int
}

// VersionField returns the address of the version, for the versioned-stream functions.
func (v *VersionedEntity) VersionField() *int { return &v.Version }

// VersionedPtr is the constraint of the versioned-stream functions: P is *T, and *T embeds
// VersionedEntity. As with EntityPtr, the compiler checks it and infers P.
type VersionedPtr[T any] interface {
	*T
	// Base returns the embedded Entity, which the store reads and stamps.
	Base() *Entity
	// VersionField returns the address of the embedded VersionedEntity's Version.
	VersionField() *int
}

func checkVersion[T any](op string, s Creator[T], stream string, version int) error {
	if version < 0 || version > MaxVersion {
		return &StoreError{Kind: ErrInvalidArgument, Op: op, Table: s.Table(), PartitionKey: stream,
			Message: fmt.Sprintf("version %d is outside 0..%d; nothing was sent", version, MaxVersion)}
	}
	return checkPartition(op, s, stream)
}

// AppendVersion stores v as version v.Version of a stream, assigning its ID. Versions are
// immutable: appending a version the stream holds fails with an error matching
// ErrDuplicateKey. A nil v or a version outside 0..MaxVersion is refused with
// ErrInvalidArgument, an empty stream id or one containing "|" with ErrInvalidKey.
func AppendVersion[T any, P VersionedPtr[T]](ctx context.Context, s Creator[T], stream string, v *T) error {
	if v == nil {
		return &StoreError{Kind: ErrInvalidArgument, Op: "append version", Table: s.Table(), Message: "the entity is nil"}
	}
	version := *P(v).VersionField()
	if err := checkVersion("append version", s, stream, version); err != nil {
		return err
	}
	c := *v
	P(&c).Base().ID = stream + IDSeparator + VersionKey(version)
	if err := s.Create(ctx, &c); err != nil {
		return err
	}
	*v = c
	return nil
}

// Latest returns the newest version of a stream with one bounded read. A stream that holds no
// version fails with an error matching ErrNotFound; an empty stream id, or one containing
// "|", is refused with ErrInvalidKey before anything is sent.
func Latest[T any, P VersionedPtr[T]](ctx context.Context, s Log[T], stream string) (*T, error) {
	if err := checkPartition("latest", s, stream); err != nil {
		return nil, err
	}
	return first(s, "latest", stream, "the stream holds no version")(s.Query(ctx, Query[T]{Partition: stream, Take: 1}))
}

// AtVersion returns the given version of a stream with a one-row query of the stream's
// partition for exactly that row key (the version keys all have one length). A version the
// stream does not hold fails with an error matching ErrNotFound; the stream id is refused as
// Latest refuses it, by the store's own partition rule (so " " is refused where ids are
// normalised, as every partition that normalises to empty is).
func AtVersion[T any, P VersionedPtr[T]](ctx context.Context, s Log[T], stream string, version int) (*T, error) {
	if err := checkVersion("read version", s, stream, version); err != nil {
		return nil, err
	}
	return first(s, "read version", stream, fmt.Sprintf("the stream holds no version %d", version))(
		s.Query(ctx, Query[T]{Partition: stream, RowKeyPrefix: VersionKey(version), Take: 1}))
}

// AtOrBefore returns the highest version of a stream that is at most version (the state as of
// that version). It filters on the Version column on the service and reads one row. When the
// stream holds no such version it fails with an error matching ErrNotFound; the stream id is
// refused as Latest refuses it.
func AtOrBefore[T any, P VersionedPtr[T]](ctx context.Context, s Log[T], stream string, version int) (*T, error) {
	if err := checkVersion("read version", s, stream, version); err != nil {
		return nil, err
	}
	f := Field(func(t *T) *int { return P(t).VersionField() })
	return first(s, "read version", stream, fmt.Sprintf("the stream holds no version at or before %d", version))(
		s.Query(ctx, Query[T]{Partition: stream, Where: f.Le(version), Take: 1}))
}

// History yields the versions of a stream, newest first, at most take of them (0: all). An
// empty stream id, or one containing "|", yields one error matching ErrInvalidKey, and
// nothing is sent.
func History[T any, P VersionedPtr[T]](ctx context.Context, s Log[T], stream string, take int) iter.Seq2[*T, error] {
	if err := checkPartition("history", s, stream); err != nil {
		return func(yield func(*T, error) bool) { yield(nil, err) }
	}
	return s.Stream(ctx, Query[T]{Partition: stream, Take: take})
}

// first returns the first row of a query's result, or the not-found error msg describes.
func first[T any](s Creator[T], op, stream, msg string) func([]*T, error) (*T, error) {
	return func(rows []*T, err error) (*T, error) {
		if err != nil {
			return nil, err
		}
		if len(rows) == 0 {
			return nil, &StoreError{Kind: ErrNotFound, Op: op, Table: s.Table(), PartitionKey: stream, Message: msg}
		}
		return rows[0], nil
	}
}
