package expiry_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/expiry"
)

// A session lives 30 minutes from its last write unless it says otherwise.
type Session struct {
	abstractions.Entity
	User    string
	Expires time.Time `table:",expires=30m"`
}

// Keep a session alive while it is used, and find it gone once it expired.
func ExampleTouch() {
	ctx := context.Background()
	acct, err := tables.NewAccount("UseDevelopmentStorage=true", nil)
	if err != nil {
		log.Fatal(err)
	}
	sessions, err := tables.For[Session](acct, nil)
	if err != nil {
		log.Fatal(err)
	}
	s := &Session{Entity: abstractions.Entity{ID: "user-7|session-1"}, User: "user-7"}
	if err := sessions.Create(ctx, s); err != nil { // expires 30 minutes from now
		log.Fatal(err)
	}
	until, err := expiry.Touch(ctx, sessions, s.ID, 0) // 30 minutes from now again
	switch {
	case errors.Is(err, abstractions.ErrNotFound):
		fmt.Println("the session expired: sign in again")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("renewed until", until)
	}
}

// Delete what expired, at most 200 rows a second, from a job that runs every few minutes.
func ExampleSweep() {
	ctx := context.Background()
	acct, err := tables.NewAccount("UseDevelopmentStorage=true", nil)
	if err != nil {
		log.Fatal(err)
	}
	sessions, err := tables.For[Session](acct, nil)
	if err != nil {
		log.Fatal(err)
	}
	rep, err := expiry.Sweep(ctx, sessions, &expiry.SweepOptions{Rate: 200})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("swept %d of %d expired rows in %d partitions\n", rep.Swept, rep.Expired, rep.Partitions)
}
