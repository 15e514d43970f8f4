package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/expiry"
)

// InboxTable is the table a consumer's inbox is kept in unless OpenInbox names another.
const InboxTable = "OrdersInbox"

// Handled is the inbox's row of one handled message: "tenant|sequence". It expires a week
// after it was written (the tag option expires), far longer than a relay takes to publish
// an event again, so the inbox holds a window of messages rather than every one ever seen.
type Handled struct {
	abstractions.Entity
	Type    string
	Expires time.Time `table:",expires=168h"`
}

// Inbox is a consumer's memory of the messages it handled, so that it handles a message the
// relay publishes again (after a crash, or a lost mark) once.
type Inbox struct {
	seen *tables.Store[Handled]
}

// OpenInbox returns the inbox in table ("" is InboxTable) of acct.
func OpenInbox(acct *tables.Account, table string) (*Inbox, error) {
	if table == "" {
		table = InboxTable
	}
	seen, err := tables.For[Handled](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		return nil, err
	}
	return &Inbox{seen: seen}, nil
}

// Handle runs h for m unless the inbox handled m within the window, then remembers m. A
// message is handled at least once; once unless two of its deliveries overlap, or one
// comes after the window (its row expired: it reads as never handled).
func (in *Inbox) Handle(ctx context.Context, m Message, h func(context.Context, Message) error) error {
	id := fmt.Sprintf("%s|%012d", m.Tenant, m.Seq)
	done, err := in.seen.Exists(ctx, id)
	if err != nil || done {
		return err
	}
	if err := h(ctx, m); err != nil {
		return err
	}
	err = in.seen.Create(ctx, &Handled{Entity: abstractions.Entity{ID: id}, Type: m.Type})
	if errors.Is(err, abstractions.ErrDuplicateKey) {
		return nil // an overlapping delivery remembered it first
	}
	return err
}

// Sweep deletes the rows of the messages whose window is over, at most rate a second (0:
// no bound), reading only the partitions where rows expired. Run it on a schedule, as
// often as the table should shed them (daily is plenty): expired rows are already absent
// to Handle.
func (in *Inbox) Sweep(ctx context.Context, rate float64) (expiry.Report, error) {
	return expiry.Sweep(ctx, in.seen, &expiry.SweepOptions{Rate: rate})
}
