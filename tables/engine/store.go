package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/codec"
)

// Store is the repository of entity type T in one table of an account. It implements
// abstractions.Storage[T] and is safe for concurrent use.
type Store[T any] struct {
	acct       *Account
	table      string
	cacheTable string // the table's name as cache keys hold it
	plan       *codec.Plan
	policy     CachePolicy
}

var _ abstractions.Storage[struct{ abstractions.Entity }] = (*Store[struct{ abstractions.Entity }])(nil)

// A StoreOption changes one store's configuration.
type StoreOption func(*storeConfig)

type storeConfig struct {
	table  string
	policy CachePolicy
}

// WithCache sets the store's read-cache policy, overriding the account's Options.Cache and
// Options.CacheFor.
func WithCache(p CachePolicy) StoreOption {
	return func(c *storeConfig) { c.policy = p }
}

// WithTable stores the entities in the named table instead of the one named after the type.
func WithTable(name string) StoreOption {
	return func(c *storeConfig) { c.table = name }
}

var tableNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)

// CheckTableName returns an error when the service would refuse name as a table name.
func CheckTableName(name string) error {
	if !tableNameRE.MatchString(name) || strings.EqualFold(name, "tables") {
		return fmt.Errorf("%w: %q is not a table name the service accepts: 3 to 63 letters and digits, starting with a letter, not \"tables\"",
			abstractions.ErrInvalidArgument, name)
	}
	return nil
}

var entityBase = reflect.TypeFor[abstractions.EntityBase]()

// New returns the store of T in the account. T must be a struct that embeds
// abstractions.Entity and that the codec can map; the table is named after the type unless
// WithTable says otherwise. The table is created on first use (or by EnsureCreated).
func New[T any](a *Account, opts ...StoreOption) (*Store[T], error) {
	if a == nil {
		return nil, fmt.Errorf("%w: the account is nil", abstractions.ErrInvalidArgument)
	}
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct || !reflect.PointerTo(t).Implements(entityBase) {
		return nil, fmt.Errorf("%w: %v cannot be stored: a stored type is a struct that embeds abstractions.Entity", abstractions.ErrInvalidArgument, t)
	}
	plan, err := codec.PlanOf(t)
	if err != nil {
		return nil, err
	}
	cfg := storeConfig{table: t.Name(), policy: a.opts.Cache}
	if p, ok := a.opts.CacheFor[t]; ok {
		cfg.policy = p
	}
	for _, o := range opts {
		o(&cfg)
	}
	if err := CheckTableName(cfg.table); err != nil {
		return nil, fmt.Errorf("store of %v: %w (name the table with WithTable)", t, err)
	}
	return &Store[T]{acct: a, table: cfg.table, cacheTable: strings.ToLower(cfg.table), plan: plan, policy: cfg.policy}, nil
}

// Table returns the name of the store's table.
func (s *Store[T]) Table() string { return s.table }

// Account returns the store's account.
func (s *Store[T]) Account() *Account { return s.acct }

// EnsureCreated creates the table if it does not exist yet.
func (s *Store[T]) EnsureCreated(ctx context.Context) error {
	return s.acct.ensureTable(ctx, s.table)
}

// do runs fn after making sure the table exists. When the service says the table is gone
// (deleted behind this process's back), it forgets it, creates it again and runs fn once
// more: a TableNotFound means fn changed nothing.
func (s *Store[T]) do(ctx context.Context, fn func() error) error {
	for attempt := 0; ; attempt++ {
		if err := s.acct.ensureTable(ctx, s.table); err != nil {
			return err
		}
		err := fn()
		if attempt == 0 && isTableNotFound(err) {
			s.acct.forgetTable(s.table)
			continue
		}
		return err
	}
}

func base[T any](v *T) *abstractions.Entity {
	return any(v).(abstractions.EntityBase).Base()
}

// translate turns a service failure about one row into a StoreError naming it.
func (s *Store[T]) translate(op, pk, rk string, err error) error {
	if err == nil {
		return nil
	}
	var se *abstractions.StatusError
	if !errors.As(err, &se) {
		return err
	}
	e := &abstractions.StoreError{Op: op, Table: s.table, PartitionKey: pk, RowKey: rk, Err: err}
	switch {
	case se.StatusCode == http.StatusConflict && se.ErrorCode == "EntityAlreadyExists":
		e.Kind = abstractions.ErrDuplicateKey
		e.Message = "a row with this key already exists; use Upsert or Update to change it"
	case se.StatusCode == http.StatusPreconditionFailed:
		e.Kind = abstractions.ErrConcurrencyConflict
		e.Message = "the row changed since the version this write was based on; read it again and retry (Mutate does that for you)"
	case se.StatusCode == http.StatusNotFound && se.ErrorCode == "ResourceNotFound":
		e.Kind = abstractions.ErrNotFound
		e.Message = "no row has this key"
	default:
		e.Message = "the table service refused the request"
	}
	return e
}
