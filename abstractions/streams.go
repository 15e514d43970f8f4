package abstractions

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"
	"unicode"
	"unicode/utf8"
)

// Append logs and versioned streams are compositions over Storage: they only choose row keys
// and bounded queries, so they work the same on every backend.

// appendRetries is how often Append moves to the next tick when the key it chose is taken
// (two appends within the same 100 ns).
const appendRetries = 8

// Append appends v to the append log of a partition, keyed by the current time so that the
// newest entry sorts first; see AppendAt.
func Append[T any](ctx context.Context, s Storage[T], partition string, v *T, subStream string) error {
	return AppendAt(ctx, s, partition, v, subStream, time.Now())
}

// AppendAt appends v to the append log of a partition as of the time at. It assigns v's ID:
// the row key is InvertedTicks(at), prefixed by subStream and "|" when subStream is not empty,
// so one partition can hold several independent logs. When the key is taken (another entry
// in the same 100 ns), the entry moves to the next tick, a few times, before failing with an
// error matching ErrDuplicateKey.
//
// v must embed Entity. A sub-stream name must start with a letter and must not contain "|"
// (refused with ErrInvalidArgument): that keeps the main log's all-digit keys sorted before
// every sub-stream and each sub-stream's prefix from matching another's.
func AppendAt[T any](ctx context.Context, s Storage[T], partition string, v *T, subStream string, at time.Time) error {
	if _, err := entityOf("append", s, v); err != nil {
		return err
	}
	if err := checkSubStream("append", s, subStream); err != nil {
		return err
	}
	ticks := Ticks(at)
	for attempt := 0; ; attempt++ {
		// The key is set on a copy so that a failed attempt leaves v untouched.
		c := *v
		cb := any(&c).(EntityBase).Base()
		cb.ID = CombineID(partition, subStreamPrefix(subStream)+invertedKey(ticks+int64(attempt)))
		err := s.Create(ctx, &c)
		if err == nil {
			*v = c
			return nil
		}
		if !errors.Is(err, ErrDuplicateKey) || attempt == appendRetries {
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

func checkSubStream[T any](op string, s Storage[T], subStream string) error {
	if subStream == "" {
		return nil
	}
	r, _ := utf8.DecodeRuneInString(subStream)
	if !unicode.IsLetter(r) || containsSeparator(subStream) {
		return &StoreError{Kind: ErrInvalidArgument, Op: op, Table: s.Table(), RowKey: subStream,
			Message: "a sub-stream name must start with a letter and must not contain \"|\"; nothing was sent"}
	}
	return nil
}

func containsSeparator(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == IDSeparator[0] {
			return true
		}
	}
	return false
}

func entityOf[T any](op string, s Storage[T], v *T) (*Entity, error) {
	if v == nil {
		return nil, &StoreError{Kind: ErrInvalidArgument, Op: op, Table: s.Table(), Message: "the entity is nil"}
	}
	b, ok := any(v).(EntityBase)
	if !ok {
		return nil, &StoreError{Kind: ErrInvalidArgument, Op: op, Table: s.Table(), Message: fmt.Sprintf("%T does not embed abstractions.Entity", v)}
	}
	return b.Base(), nil
}

// Recent returns the newest n entries of a partition's append log (or of one sub-stream of
// it), newest first, with one bounded query. n must not be negative.
func Recent[T any](ctx context.Context, s Storage[T], partition string, n int, subStream string) ([]*T, error) {
	if n < 0 {
		return nil, &StoreError{Kind: ErrInvalidArgument, Op: "recent", Table: s.Table(), PartitionKey: partition, Message: "the count is negative"}
	}
	if n == 0 {
		return []*T{}, nil
	}
	if err := checkSubStream("recent", s, subStream); err != nil {
		return nil, err
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
		if _, rk := SplitID(any(r).(EntityBase).Base().ID); !containsSeparator(rk) {
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

// versioned is implemented by a pointer to every type that embeds VersionedEntity.
type versioned interface {
	EntityBase
	VersionField() *int
}

func versionedOf[T any](op string, s Storage[T], v *T) (versioned, error) {
	if v == nil {
		return nil, &StoreError{Kind: ErrInvalidArgument, Op: op, Table: s.Table(), Message: "the entity is nil"}
	}
	ve, ok := any(v).(versioned)
	if !ok {
		return nil, &StoreError{Kind: ErrInvalidArgument, Op: op, Table: s.Table(), Message: fmt.Sprintf("%T does not embed abstractions.VersionedEntity", v)}
	}
	return ve, nil
}

func checkVersion[T any](op string, s Storage[T], stream string, version int) error {
	if version < 0 || version > MaxVersion {
		return &StoreError{Kind: ErrInvalidArgument, Op: op, Table: s.Table(), PartitionKey: stream,
			Message: fmt.Sprintf("version %d is outside 0..%d; nothing was sent", version, MaxVersion)}
	}
	return nil
}

// AppendVersion stores v as version v.Version of a stream, assigning its ID. Versions are
// immutable: appending a version the stream holds fails with an error matching
// ErrDuplicateKey. A version outside 0..MaxVersion is refused with ErrInvalidArgument.
func AppendVersion[T any](ctx context.Context, s Storage[T], stream string, v *T) error {
	ve, err := versionedOf("append version", s, v)
	if err != nil {
		return err
	}
	version := *ve.VersionField()
	if err := checkVersion("append version", s, stream, version); err != nil {
		return err
	}
	c := *v
	any(&c).(EntityBase).Base().ID = CombineID(stream, VersionKey(version))
	if err := s.Create(ctx, &c); err != nil {
		return err
	}
	*v = c
	return nil
}

// Latest returns the newest version of a stream with one bounded read, or nil when the
// stream holds none.
func Latest[T any](ctx context.Context, s Storage[T], stream string) (*T, error) {
	return first(s.Query(ctx, Query[T]{Partition: stream, Take: 1}))
}

// AtVersion returns the given version of a stream, or nil when the stream does not hold it.
func AtVersion[T any](ctx context.Context, s Storage[T], stream string, version int) (*T, error) {
	if err := checkVersion("read version", s, stream, version); err != nil {
		return nil, err
	}
	return s.One(ctx, CombineID(stream, VersionKey(version)))
}

// AtOrBefore returns the highest version of a stream that is at most version (the state as of
// that version), or nil when there is none. It filters on the Version column on the
// service and reads one row.
func AtOrBefore[T any](ctx context.Context, s Storage[T], stream string, version int) (*T, error) {
	if err := checkVersion("read version", s, stream, version); err != nil {
		return nil, err
	}
	var zero T
	if _, ok := any(&zero).(versioned); !ok {
		return nil, &StoreError{Kind: ErrInvalidArgument, Op: "read version", Table: s.Table(), Message: fmt.Sprintf("%T does not embed abstractions.VersionedEntity", &zero)}
	}
	f := Field(func(t *T) *int { return any(t).(versioned).VersionField() })
	return first(s.Query(ctx, Query[T]{Partition: stream, Where: f.Le(version), Take: 1}))
}

// History yields the versions of a stream, newest first, at most take of them (0: all).
func History[T any](ctx context.Context, s Storage[T], stream string, take int) iter.Seq2[*T, error] {
	return s.Stream(ctx, Query[T]{Partition: stream, Take: take})
}

// GetLatest is Latest, failing with an error matching ErrNotFound when the stream is empty.
func GetLatest[T any](ctx context.Context, s Storage[T], stream string) (*T, error) {
	return found(s, "latest", stream, "the stream holds no version")(Latest(ctx, s, stream))
}

// GetAtVersion is AtVersion, failing with an error matching ErrNotFound when the stream does
// not hold the version.
func GetAtVersion[T any](ctx context.Context, s Storage[T], stream string, version int) (*T, error) {
	return found(s, "read version", stream, fmt.Sprintf("the stream does not hold version %d", version))(AtVersion(ctx, s, stream, version))
}

// GetAtOrBefore is AtOrBefore, failing with an error matching ErrNotFound when the stream
// holds no version at or before the given one.
func GetAtOrBefore[T any](ctx context.Context, s Storage[T], stream string, version int) (*T, error) {
	return found(s, "read version", stream, fmt.Sprintf("the stream holds no version at or before %d", version))(AtOrBefore(ctx, s, stream, version))
}

func first[T any](rows []*T, err error) (*T, error) {
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return rows[0], nil
}

func found[T any](s Storage[T], op, stream, msg string) func(*T, error) (*T, error) {
	return func(v *T, err error) (*T, error) {
		if err == nil && v == nil {
			return nil, &StoreError{Kind: ErrNotFound, Op: op, Table: s.Table(), PartitionKey: stream, Message: msg}
		}
		return v, err
	}
}
