package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// Message is one published event.
type Message struct {
	Tenant string
	// Seq is the event's sequence number in its tenant's outbox: a consumer that has seen it
	// has seen the event (a relay that crashed after publishing publishes it again).
	Seq int64
	// Type is the event's registered name.
	Type  string
	Event Event
}

// Publish hands a message on (to a broker, a channel, a log). An error stops the relay
// before the event is marked sent, so it is published again on the next run.
type Publish func(ctx context.Context, m Message) error

// Relay publishes the pending events of tenants, in order, at least once each.
type Relay struct {
	events  *tables.PolyStore[Event]
	publish Publish
	// pageSize is how many events one read returns.
	pageSize int
	// afterMark, when set (by tests), runs after an event is marked sent; an error stops
	// the relay there, as a crash would.
	afterMark func(seq int64) error
}

// NewRelay returns a relay of the service's events to publish.
func (s *Service) NewRelay(publish Publish) *Relay {
	return &Relay{events: s.events, publish: publish, pageSize: 50}
}

var rowKey = abstractions.Field(func(e *abstractions.PolyEntry[Event]) *string { return &e.Key.RowKey })

// Run publishes the tenant's pending events, oldest first, and returns how many it
// published. Each is published, then marked sent with a merge conditional on its row's
// ETag; when every event read is marked, the marker's _Pending moves past them,
// conditional on the marker's ETag. An event another relay marked meanwhile is not
// counted. A failure (of publish, or of the table) stops the run; what was not marked is
// published again by the next one.
func (r *Relay) Run(ctx context.Context, tenant string) (int, error) {
	_, pending, etag, err := marker(ctx, r.events, tenant)
	if err != nil || etag == "" {
		return 0, err // no marker: no event was ever written
	}
	published, done := 0, pending
	// The events from the first pending one: row keys from EventKey(pending) up to "evt.",
	// the first key past every "evt-" one (the marker and the orders sort elsewhere).
	q := abstractions.Query[abstractions.PolyEntry[Event]]{Partition: tenant, Take: r.pageSize,
		Where: abstractions.And(rowKey.Ge(EventKey(pending)), rowKey.Lt("evt."))}
	for {
		page, err := r.events.Page(ctx, q)
		if err != nil {
			return published, err
		}
		for _, e := range page.Items {
			if e.IsMarker() {
				continue
			}
			seq := e.Item.Base().Seq
			if sent, _ := e.Columns[SentColumn].(bool); !sent {
				if err := r.publish(ctx, Message{Tenant: tenant, Seq: seq, Type: e.TypeName, Event: e.Item}); err != nil {
					return published, fmt.Errorf("outbox: publishing %s of %q: %w", e.Key.RowKey, tenant, err)
				}
				_, err := r.events.MergeColumns(ctx, e.Key, map[string]any{SentColumn: true}, e.ETag)
				switch {
				case errors.Is(err, abstractions.ErrConcurrencyConflict):
					// Another relay marked it meanwhile (after publishing it too).
				case err != nil:
					return published, err
				default:
					published++
				}
				if r.afterMark != nil {
					if err := r.afterMark(seq); err != nil {
						return published, err
					}
				}
			}
			done = seq + 1
		}
		if !page.HasMore() {
			break
		}
		q.Cursor = page.Cursor
	}
	if done > pending {
		// Move _Pending past what was marked. Losing to a writer that moved _Seq meanwhile
		// only means the next run starts here again, and skips the events marked sent.
		_, err := r.events.MergeColumns(ctx, abstractions.TableKey{PartitionKey: tenant, RowKey: MarkerKey},
			map[string]any{PendingColumn: done}, etag)
		if err != nil && !errors.Is(err, abstractions.ErrConcurrencyConflict) {
			return published, err
		}
	}
	return published, nil
}
