package inmemory_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
)

// Counter is a row whose new value comes from its current one.
type Counter struct {
	abstractions.Entity
	Hits int
	Tags []string // stored as JSON in one column
}

// SupportTicket is a row whose status changes once.
type SupportTicket struct {
	abstractions.Entity
	Status     string
	ResolvedBy string
}

// Member is a row created on first use.
type Member struct {
	abstractions.Entity
	Role string
}

// Address is stored flattened into its owner's columns (Address_City, Address_Zip).
type Address struct {
	City, Zip string
}

// Profile is a row whose fields different writers set.
type Profile struct {
	abstractions.Entity
	Name    string
	Address Address
	Score   float64
}

// Mutate reads a row, applies a change, and writes it back on condition of the version it
// read, reading again after a lost race; the change is computed from the row it is given, so
// concurrent increments all count.
func Example_mutate() {
	ctx := context.Background()
	counters, err := tables.For[Counter](inmemory.NewAccount(nil), nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := counters.Create(ctx, &Counter{Entity: abstractions.Entity{ID: "site|home"}}); err != nil {
		log.Fatal(err)
	}
	for range 3 {
		// nil: the default retry budget (abstractions.RetryOptions).
		_, err := abstractions.Mutate(ctx, counters, "site|home", func(c *Counter) error {
			c.Hits++
			return nil
		}, nil)
		if err != nil {
			log.Fatal(err)
		}
	}
	c, err := abstractions.Mutate(ctx, counters, "site|home", func(c *Counter) error {
		c.Tags = append(c.Tags, "popular")
		return nil
	}, &abstractions.RetryOptions{Attempts: 5})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Hits, c.Tags)

	// A missing row is an error for Mutate (TryMutate reports it as OutcomeNotFound).
	_, err = abstractions.Mutate(ctx, counters, "site|nowhere", func(c *Counter) error { c.Hits++; return nil }, nil)
	fmt.Println(errors.Is(err, abstractions.ErrNotFound))
	// Output:
	// 3 [popular]
	// true
}

// TryTransition makes a change once: of the callers that race to resolve a ticket, one gets
// OutcomeUpdated and the others OutcomePreconditionFailed, with the winner's row.
func Example_tryTransition() {
	ctx := context.Background()
	tickets, err := tables.For[SupportTicket](inmemory.NewAccount(nil), nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := tickets.Create(ctx, &SupportTicket{Entity: abstractions.Entity{ID: "t|42"}, Status: "open"}); err != nil {
		log.Fatal(err)
	}
	resolve := func(user string) {
		out, err := abstractions.TryTransition(ctx, tickets, "t|42",
			func(t *SupportTicket) bool { return t.Status == "open" },
			func(t *SupportTicket) error { t.Status, t.ResolvedBy = "resolved", user; return nil },
			nil)
		if err != nil {
			log.Fatal(err)
		}
		switch out.Status {
		case abstractions.OutcomeUpdated:
			fmt.Println(user, "resolved it")
		case abstractions.OutcomePreconditionFailed:
			fmt.Println(user, "was too late:", out.Value.ResolvedBy, "resolved it")
		case abstractions.OutcomeNotFound:
			fmt.Println("no such ticket")
		case abstractions.OutcomeConflicted:
			fmt.Println("a very busy ticket: try again later")
		}
	}
	resolve("alice")
	resolve("bob")
	// Output:
	// alice resolved it
	// bob was too late: alice resolved it
}

// GetOrCreate returns the row, creating it when there is none; a caller that loses the race
// to create it gets the winner's row instead of ErrDuplicateKey.
func Example_getOrCreate() {
	ctx := context.Background()
	members, err := tables.For[Member](inmemory.NewAccount(nil), nil)
	if err != nil {
		log.Fatal(err)
	}
	newGuest := func() *Member { return &Member{Role: "guest"} }
	m, created, err := abstractions.GetOrCreate(ctx, members, "org|bob", newGuest)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.ID, m.Role, created)

	m.Role = "admin"
	if err := members.Update(ctx, m, abstractions.Strict); err != nil {
		log.Fatal(err)
	}
	m, created, err = abstractions.GetOrCreate(ctx, members, "org|bob", newGuest)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.ID, m.Role, created)
	// Output:
	// org|bob guest true
	// org|bob admin false
}

// Patch writes only the columns it sets, without reading the row: writers of different
// fields do not overwrite each other. With WithETag it writes only over the version read.
func Example_patch() {
	ctx := context.Background()
	profiles, err := tables.For[Profile](inmemory.NewAccount(nil), nil)
	if err != nil {
		log.Fatal(err)
	}
	alice := &Profile{Entity: abstractions.Entity{ID: "eu|alice"}, Name: "Alice", Address: Address{City: "Kyiv", Zip: "01001"}}
	if err := profiles.Create(ctx, alice); err != nil {
		log.Fatal(err)
	}

	// A patch names its fields as filters do (build them once, a package-level variable say).
	city := abstractions.Field(func(p *Profile) *string { return &p.Address.City })
	score := abstractions.Field(func(p *Profile) *float64 { return &p.Score })
	name := abstractions.Field(func(p *Profile) *string { return &p.Name })

	// One writer moves Alice (the column Address_City; Address_Zip stays), another scores her.
	move := abstractions.Set(abstractions.NewPatch[Profile](), city, "Lviv")
	rate := abstractions.Set(abstractions.NewPatch[Profile](), score, 4.5)
	if _, err := profiles.Patch(ctx, "eu|alice", move); err != nil {
		log.Fatal(err)
	}
	if _, err := profiles.Patch(ctx, "eu|alice", rate); err != nil {
		log.Fatal(err)
	}
	got, err := profiles.One(ctx, "eu|alice")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Name, got.Address.City, got.Address.Zip, got.Score)

	// alice still carries the ETag of her first version: a conditional patch based on it
	// loses, and writes nothing.
	rename := abstractions.Set(abstractions.NewPatch[Profile](), name, "Alicia").WithETag(alice.ETag)
	_, err = profiles.Patch(ctx, "eu|alice", rename)
	fmt.Println(errors.Is(err, abstractions.ErrConcurrencyConflict))

	// A patch never creates a row.
	_, err = profiles.Patch(ctx, "eu|nobody", rate)
	fmt.Println(errors.Is(err, abstractions.ErrNotFound))
	// Output:
	// Alice Lviv 01001 4.5
	// true
	// true
}

// DeletePartition deletes every row of one partition, in transactions of up to 100 rows,
// and returns how many it deleted; other partitions are untouched.
func Example_deletePartition() {
	ctx := context.Background()
	members, err := tables.For[Member](inmemory.NewAccount(nil), nil)
	if err != nil {
		log.Fatal(err)
	}
	var batch []*Member
	for i := range 250 {
		batch = append(batch, &Member{Entity: abstractions.Entity{ID: fmt.Sprintf("acme|user%03d", i)}})
	}
	batch = append(batch, &Member{Entity: abstractions.Entity{ID: "globex|ann"}})
	if err := members.CreateBatch(ctx, batch); err != nil {
		log.Fatal(err)
	}
	n, err := members.DeletePartition(ctx, "acme")
	if err != nil {
		log.Fatal(err)
	}
	left, err := members.CountAll(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted", n, "left", left)

	// A partition holding "|" could reach another tenant's rows: it is refused.
	_, err = members.DeletePartition(ctx, "acme|user001")
	fmt.Println(errors.Is(err, abstractions.ErrInvalidKey))
	// Output:
	// deleted 250 left 1
	// true
}

// Delete with an ETag deletes the row only at that version, in one request: what a handler
// of an HTTP DELETE with If-Match needs, with no read first. deleted says whether this call
// removed a row; a missing row is not an error.
func Example_deleteIfMatch() {
	ctx := context.Background()
	members, err := tables.For[Member](inmemory.NewAccount(nil), nil)
	if err != nil {
		log.Fatal(err)
	}
	ann := &Member{Entity: abstractions.Entity{ID: "acme|ann"}}
	if err := members.Create(ctx, ann); err != nil {
		log.Fatal(err)
	}
	seen := ann.ETag // the version a client holds
	if err := members.Update(ctx, ann, abstractions.Strict); err != nil {
		log.Fatal(err)
	}

	deleted, err := members.Delete(ctx, "acme|ann", seen) // the row moved on: 412
	fmt.Println(deleted, errors.Is(err, abstractions.ErrConcurrencyConflict))
	deleted, err = members.Delete(ctx, "acme|ann", ann.ETag) // the current version
	fmt.Println(deleted, err)
	deleted, err = members.Delete(ctx, "acme|ann", ann.ETag) // gone: 404 if you like
	fmt.Println(deleted, err)
	// Output:
	// false true
	// true <nil>
	// false <nil>
}
