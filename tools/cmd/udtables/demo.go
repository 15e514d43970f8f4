package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
)

// connectionEnv names the environment variable the demo reads a connection string from
// when --connection-string is not given.
const connectionEnv = "UNIFIED_TABLES_CONNECTION_STRING"

// demoTimeout bounds a whole run against a real service, so that an unreachable endpoint
// ends the demo instead of hanging it through the SDK's retries.
const demoTimeout = 2 * time.Minute

// Customer is the entity the demo stores: a struct that embeds abstractions.Entity, which
// gives it its id, its times and its version (ETag).
type Customer struct {
	abstractions.Entity
	Name   string
	Email  string
	Visits int
}

func demoCommand() *command {
	return &command{
		name:    "demo",
		args:    "[--connection-string S]",
		summary: "walk through a Storage[T]: create, read, update, conflict, batch, count, delete",
		about: `Demo runs a short walkthrough of a store of Customer entities and prints each step:
it creates a customer, reads it back, updates it with its ETag (Strict), shows that a second
update with the now stale copy fails with a concurrency conflict (the service's 412), creates
a batch of customers over two partitions, counts and lists a partition, deletes one customer
and then a whole partition.

Without a connection string it runs on the in-memory backend, with no network. With one
(the flag, or the ` + connectionEnv + ` environment variable) it runs on that
account, Azurite or Azure, in a table of its own with a random name, and deletes the table
at the end.`,
		flags: func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
			conn := fs.String("connection-string", "", "a storage account connection string (default $"+connectionEnv+", else in memory)")
			return func(ctx context.Context, args []string, stdout io.Writer) error {
				if len(args) > 0 {
					return &usageError{fmt.Sprintf("unexpected argument %q", args[0])}
				}
				cs := *conn
				if cs == "" {
					cs = os.Getenv(connectionEnv)
				}
				if cs == "" {
					return demoInMemory(ctx, stdout)
				}
				acct, err := tables.NewAccount(cs, nil)
				if err != nil {
					return fmt.Errorf("connection string: %w", err)
				}
				return demoOnAccount(ctx, stdout, acct)
			}
		},
	}
}

// demoInMemory runs the walkthrough on a fresh in-memory account.
func demoInMemory(ctx context.Context, out io.Writer) error {
	acct := inmemory.NewAccount(nil)
	store, err := tables.For[Customer](acct, nil)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "Backend: in memory (no network)")
	d := &demo{out: out, store: store}
	return d.run(ctx)
}

// demoOnAccount runs the walkthrough on a storage account, in a table named for this run,
// and deletes the table afterwards, whether the walkthrough succeeded or not.
func demoOnAccount(ctx context.Context, out io.Writer, acct *tables.Account) error {
	suffix, err := randomSuffix()
	if err != nil {
		return err
	}
	store, err := tables.For[Customer](acct, &tables.StoreOptions{Table: "udtdemo" + suffix})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Backend: the storage account of the connection string (table %s)\n", store.Table())
	d := &demo{out: out, store: store}

	ctx, cancel := context.WithTimeout(ctx, demoTimeout)
	defer cancel()
	err = d.run(ctx)
	if !d.madeTable {
		return err
	}
	// Clean up after a failure or an interrupt too, on a context of its own.
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer ccancel()
	var cerr error
	if derr := acct.Tables().DeleteTable(cctx, store.Table()); derr != nil {
		cerr = fmt.Errorf("deleting table %s: %w", store.Table(), derr)
	} else {
		fmt.Fprintf(out, "Cleaned up: deleted table %s\n", store.Table())
	}
	switch {
	case err != nil && cerr != nil:
		return fmt.Errorf("%w; the clean-up failed too: %v", err, cerr)
	case err != nil:
		return err
	default:
		return cerr
	}
}

// randomSuffix returns 8 lower-case hex digits, valid in a table name.
func randomSuffix() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random name: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// A demo is one run of the walkthrough: the store it uses, where it prints, and whether
// it has created the store's table yet.
type demo struct {
	out   io.Writer
	store abstractions.Storage[Customer]

	step      int
	madeTable bool
}

// say prints the next step's heading.
func (d *demo) say(format string, args ...any) {
	d.step++
	fmt.Fprintf(d.out, "%d. %s\n", d.step, fmt.Sprintf(format, args...))
}

// detail prints what the current step observed.
func (d *demo) detail(format string, args ...any) {
	fmt.Fprintf(d.out, "   %s\n", fmt.Sprintf(format, args...))
}

// fail names the current step in err.
func (d *demo) fail(err error) error {
	return fmt.Errorf("step %d: %w", d.step, err)
}

// want fails the current step unless got equals want.
func (d *demo) want(what string, got, want any) error {
	if got != want {
		return d.fail(fmt.Errorf("%s is %v, want %v", what, got, want))
	}
	return nil
}

// run performs the walkthrough's steps, printing each. It stops at the first step that
// does not behave as the library documents.
func (d *demo) run(ctx context.Context) error {
	s := d.store

	d.say("Ensure table %s exists (stores also create it on first use)", s.Table())
	if err := s.EnsureCreated(ctx); err != nil {
		return d.fail(err)
	}
	d.madeTable = true
	d.detail("ready")

	ada := &Customer{Entity: abstractions.Entity{ID: "EU|Ada Lovelace"}, Name: "Ada Lovelace", Email: "ada@example.com", Visits: 1}
	d.say("Create customer %q", ada.ID)
	if err := s.Create(ctx, ada); err != nil {
		return d.fail(err)
	}
	d.detail("stored as %s (ids are trimmed, spaces become -, lower-cased)", ada.ID)
	d.detail("ETag %s, CreatedAt %s", ada.ETag, ada.CreatedAt.Format(time.RFC3339))

	d.say("Read %s back", ada.ID)
	got, err := s.One(ctx, ada.ID) // a missing row is an error matching abstractions.ErrNotFound
	if err != nil {
		return d.fail(err)
	}
	d.detail("%s", formatCustomer(got))
	d.detail("ETag %s", got.ETag)
	stale := *got

	got.Visits++
	d.say("Update it with Visits=%d, Strict: only over the version its ETag names", got.Visits)
	if err := s.Update(ctx, got, abstractions.Strict); err != nil {
		return d.fail(err)
	}
	d.detail("updated; new ETag %s", got.ETag)

	stale.Email = "countess@example.com"
	d.say("Update the copy read in step 3 again: its ETag is stale now, so this must fail")
	err = s.Update(ctx, &stale, abstractions.Strict)
	if err == nil {
		return d.fail(errors.New("the update with a stale ETag succeeded; it must fail with a concurrency conflict"))
	}
	if !errors.Is(err, abstractions.ErrConcurrencyConflict) {
		return d.fail(err)
	}
	d.detail("refused: errors.Is(err, abstractions.ErrConcurrencyConflict) is true")
	var se *abstractions.StatusError
	if !errors.As(err, &se) {
		return d.fail(fmt.Errorf("no *abstractions.StatusError in the chain: %w", err))
	}
	d.detail("the service said %d %s", se.StatusCode, se.ErrorCode)
	d.detail("(read the row again, apply the change, and retry)")

	batch := []*Customer{
		{Entity: abstractions.Entity{ID: "eu|grace"}, Name: "Grace Hopper", Email: "grace@example.com", Visits: 4},
		{Entity: abstractions.Entity{ID: "eu|linus"}, Name: "Linus Torvalds", Email: "linus@example.com", Visits: 3},
		{Entity: abstractions.Entity{ID: "us|alan"}, Name: "Alan Turing", Email: "alan@example.com", Visits: 2},
		{Entity: abstractions.Entity{ID: "us|barbara"}, Name: "Barbara Liskov", Email: "barbara@example.com", Visits: 5},
	}
	d.say("CreateBatch of %d customers in partitions eu and us (one transaction per partition)", len(batch))
	if err := s.CreateBatch(ctx, batch); err != nil {
		return d.fail(err)
	}
	d.detail("created %s", joinIDs(batch))

	counts := map[string]int{}
	d.say("Count per partition (reads keys only)")
	for _, p := range []string{"eu", "us"} {
		n, err := s.Count(ctx, p)
		if err != nil {
			return d.fail(err)
		}
		counts[p] = n
		d.detail("%s: %d", p, n)
	}
	if err := d.want("the count of eu", counts["eu"], 3); err != nil {
		return err
	}
	if err := d.want("the count of us", counts["us"], 2); err != nil {
		return err
	}

	d.say("List partition eu (in row-key order)")
	eu, err := s.List(ctx, "eu")
	if err != nil {
		return d.fail(err)
	}
	for _, c := range eu {
		d.detail("%s", formatCustomer(c))
	}
	if err := d.want("the number of customers listed", len(eu), 3); err != nil {
		return err
	}

	linus := eu[len(eu)-1]
	d.say("Delete eu|linus at the version just listed (If-Match: its ETag, in one request)")
	deleted, err := s.Delete(ctx, linus.ID, linus.ETag)
	if err != nil {
		return d.fail(err)
	}
	d.detail("deleted: %v", deleted)
	if err := d.want("deleted", deleted, true); err != nil {
		return err
	}
	ok, err := s.Exists(ctx, "eu|linus")
	if err != nil {
		return d.fail(err)
	}
	d.detail("exists afterwards: %v", ok)
	if err := d.want("eu|linus existing", ok, false); err != nil {
		return err
	}
	deleted, err = s.Delete(ctx, "eu|linus", "")
	if err != nil {
		return d.fail(err)
	}
	d.detail("deleting it again is not an error: deleted=%v", deleted)

	d.say("DeletePartition us")
	n, err := s.DeletePartition(ctx, "us")
	if err != nil {
		return d.fail(err)
	}
	d.detail("deleted %d customers", n)
	if err := d.want("the number deleted", n, 2); err != nil {
		return err
	}
	left, err := s.CountAll(ctx)
	if err != nil {
		return d.fail(err)
	}
	d.detail("%d customers left in the table", left)
	if err := d.want("the customers left", left, 2); err != nil {
		return err
	}

	fmt.Fprintln(d.out, "Done.")
	return nil
}

// formatCustomer renders a customer's id and fields.
func formatCustomer(c *Customer) string {
	return fmt.Sprintf("%s Name=%q Email=%q Visits=%d", c.ID, c.Name, c.Email, c.Visits)
}

// joinIDs lists the customers' ids.
func joinIDs(cs []*Customer) string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return strings.Join(ids, ", ")
}
