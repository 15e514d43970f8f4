package fidelity

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// The polymorphic scenarios store an order's events in one table: three event types that
// embed one base struct, whose pointer method makes them all satisfy polyEvent.

type polyEvent interface{ Base() *polyEventBase }

// polyEventBase is the base struct every event embeds.
type polyEventBase struct {
	Order   string
	Version int64
}

func (b *polyEventBase) Base() *polyEventBase { return b }

type polyPlaced struct {
	polyEventBase
	Customer string
	Lines    []string
}

type polyPaid struct {
	polyEventBase
	AmountCents int64
	PaidAt      time.Time
}

type polyShipped struct {
	polyEventBase
	Carrier string
}

// polyRefunded is registered only by the "older writer" of the discriminator scenario.
type polyRefunded struct {
	polyEventBase
	Reason string
}

// polyNote is a type of another family: it does not satisfy polyEvent.
type polyNote struct{ Text string }

func (*polyNote) Note() string { return "note" }

type polyNoter interface{ Note() string }

// polyTypes returns a registry of the event family (and the note type, which some
// scenarios need registered under a name of its own).
func polyTypes(e *Env) *abstractions.TypeRegistry {
	e.t.Helper()
	reg := new(abstractions.TypeRegistry)
	for _, err := range []error{
		abstractions.RegisterType[polyPlaced](reg, "order.placed"),
		abstractions.RegisterType[polyPaid](reg, "order.paid"),
		abstractions.RegisterType[polyShipped](reg, "order.shipped"),
		abstractions.RegisterType[polyNote](reg, "misc.note"),
	} {
		if err != nil {
			e.Fatalf("register: %v", err)
		}
	}
	return reg
}

// polyOf returns the polymorphic store of base B over the scenario's services, in the
// scenario's table.
func polyOf[B any](e *Env, reg *abstractions.TypeRegistry) *tables.PolyStore[B] {
	e.t.Helper()
	acct := e.NewAccount(e.Tables, e.Blobs, &tables.Options{Now: storeClock})
	s, err := tables.PolyFor[B](acct, reg, &tables.StoreOptions{Table: e.Table})
	if err != nil {
		e.Fatalf("poly store: %v", err)
	}
	return s
}

func polyKey(pk, rk string) abstractions.TableKey {
	return abstractions.TableKey{PartitionKey: pk, RowKey: rk}
}

func polyVersionKey(v int64) string { return fmt.Sprintf("%09d", v) }

// polyEvents returns the three events of an order, versions 1 to 3.
func polyEvents(order string) []polyEvent {
	paidAt := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	return []polyEvent{
		&polyPlaced{polyEventBase: polyEventBase{Order: order, Version: 1}, Customer: "Alice", Lines: []string{"tea", "mug"}},
		&polyPaid{polyEventBase: polyEventBase{Order: order, Version: 2}, AmountCents: 1650, PaidAt: paidAt},
		&polyShipped{polyEventBase: polyEventBase{Order: order, Version: 3}, Carrier: "Nova"},
	}
}

func polyWrites(order string, evs []polyEvent) []abstractions.PolyWrite[polyEvent] {
	ws := make([]abstractions.PolyWrite[polyEvent], len(evs))
	for i, ev := range evs {
		ws[i] = abstractions.PolyWrite[polyEvent]{Key: polyKey(order, polyVersionKey(ev.Base().Version)), Item: ev}
	}
	return ws
}

// polyEntry renders an entry with its concrete item type and without service-assigned
// values.
func polyEntry[B any](en *abstractions.PolyEntry[B]) string {
	if en == nil {
		return "nil"
	}
	item := "marker"
	if !en.IsMarker() {
		item = fmt.Sprintf("%T%+v", en.Item, en.Item)
	}
	return fmt.Sprintf("%q|%q type=%q item=%s columns=%v etag=%v ts=%v", en.Key.PartitionKey, en.Key.RowKey, en.TypeName, item,
		en.Columns, en.ETag != "", !en.Timestamp.IsZero())
}

func polyEntries[B any](ens []*abstractions.PolyEntry[B]) []string {
	out := make([]string, len(ens))
	for i, en := range ens {
		out[i] = polyEntry(en)
	}
	return out
}

// polyErrNames records err and checks it matches sentinel and mentions every name.
func (e *Env) polyErrNames(step string, err, sentinel error, names ...string) {
	e.t.Helper()
	e.Is(step, err, sentinel)
	for _, n := range names {
		if err == nil || !strings.Contains(err.Error(), n) {
			e.Errorf("%s: the error %v does not name %q", step, err, n)
		}
	}
}

// polyAppend is the conditional append of the event-store pattern: the head marker moves
// from the version its ETag names to the new one in the same transaction as the events.
func polyAppend(ctx context.Context, s *tables.PolyStore[polyEvent], order, headETag string, evs []polyEvent) error {
	last := evs[len(evs)-1].Base().Version
	head := abstractions.Marker[polyEvent](polyKey(order, "head"), map[string]any{"_Version": last})
	head.IfMatch = headETag
	return s.InsertBatch(ctx, append([]abstractions.PolyWrite[polyEvent]{head}, polyWrites(order, evs)...))
}

func polyScenarios() []Scenario {
	return []Scenario{
		{
			Name: "poly/event-stream-three-types",
			Run: func(ctx context.Context, e *Env) {
				s := polyOf[polyEvent](e, polyTypes(e))
				e.OK("insert batch", s.InsertBatch(ctx, polyWrites("Order-7F", polyEvents("Order-7F"))))
				got, err := s.List(ctx, "Order-7F")
				e.OK("list", err)
				e.Observe("stream", polyEntries(got))
				types := make([]string, len(got))
				for i, en := range got {
					types[i] = reflect.TypeOf(en.Item).String()
				}
				e.Equal("concrete types in version order", types, []string{"*fidelity.polyPlaced", "*fidelity.polyPaid", "*fidelity.polyShipped"})
				one, err := s.One(ctx, polyKey("Order-7F", "000000002"))
				e.OK("one", err)
				paid, ok := one.Item.(*polyPaid)
				e.Equal("one is the paid event", ok && paid.AmountCents == 1650 && paid.Order == "Order-7F" && paid.Version == 2, true)
				_, err = s.One(ctx, polyKey("order-7f", "000000002"))
				e.Is("keys are verbatim: another case is another row", err, abstractions.ErrNotFound)
				none, err := s.List(ctx, "order-7f")
				e.OK("list another case", err)
				e.Equal("list another case", len(none), 0)
			},
		},
		{
			Name: "poly/marker-in-transaction-then-merge",
			Run: func(ctx context.Context, e *Env) {
				s := polyOf[polyEvent](e, polyTypes(e))
				tx := "tx-0042"
				ws := polyWrites(tx, polyEvents(tx)[:2])
				ws = append(ws, abstractions.Marker[polyEvent](polyKey(tx, "FlagEntity"), map[string]any{"_IsCommitted": false, "_Events": int64(2)}))
				e.OK("events and marker in one batch", s.InsertBatch(ctx, ws))
				flag, err := s.One(ctx, polyKey(tx, "FlagEntity"))
				e.OK("read marker", err)
				e.Observe("marker", polyEntry(flag))
				e.Equal("marker has no item", flag.IsMarker() && flag.Item == nil, true)
				etag, err := s.MergeColumns(ctx, polyKey(tx, "FlagEntity"), map[string]any{"_IsCommitted": true}, flag.ETag)
				e.OK("merge flips the flag", err)
				e.Equal("merge returns a new version", etag != "" && etag != flag.ETag, true)
				after, err := s.One(ctx, polyKey(tx, "FlagEntity"))
				e.OK("read marker again", err)
				e.Observe("marker after merge", polyEntry(after))
				e.Equal("flag flipped, other column kept", after.Columns["_IsCommitted"] == true && after.Columns["_Events"] == int64(2), true)
				_, err = s.MergeColumns(ctx, polyKey(tx, "FlagEntity"), map[string]any{"_IsCommitted": false}, flag.ETag)
				e.Is("merge on a stale version", err, abstractions.ErrConcurrencyConflict)
				e.Equal("the 412 is kept", abstractions.HasStatus(err, 412, "UpdateConditionNotSatisfied"), true)
				_, err = s.MergeColumns(ctx, polyKey(tx, "missing"), map[string]any{"_IsCommitted": true}, "")
				e.Is("merge into a missing row", err, abstractions.ErrNotFound)
				_, err = s.MergeColumns(ctx, polyKey(tx, "000000001"), map[string]any{"_Audited": "yes"}, "")
				e.OK("merge into an item row", err)
				got, err := s.List(ctx, tx)
				e.OK("list", err)
				e.Observe("partition", polyEntries(got))
			},
		},
		{
			Name: "poly/conditional-append-loses",
			Run: func(ctx context.Context, e *Env) {
				s := polyOf[polyEvent](e, polyTypes(e))
				order := "o-1"
				first := polyEvents(order)[:1]
				e.OK("first append creates the head", s.InsertBatch(ctx, append(
					[]abstractions.PolyWrite[polyEvent]{abstractions.Marker[polyEvent](polyKey(order, "head"), map[string]any{"_Version": int64(1)})},
					polyWrites(order, first)...)))
				// Both writers read version 1, then both append version 2 on it.
				headA, err := s.One(ctx, polyKey(order, "head"))
				e.OK("writer A reads the head", err)
				headB, err := s.One(ctx, polyKey(order, "head"))
				e.OK("writer B reads the head", err)
				a := []polyEvent{&polyPaid{polyEventBase: polyEventBase{Order: order, Version: 2}, AmountCents: 100}}
				b := []polyEvent{&polyShipped{polyEventBase: polyEventBase{Order: order, Version: 2}, Carrier: "B"},
					&polyShipped{polyEventBase: polyEventBase{Order: order, Version: 3}, Carrier: "B again"}}
				e.OK("writer A appends", polyAppend(ctx, s, order, headA.ETag, a))
				err = polyAppend(ctx, s, order, headB.ETag, b)
				e.Is("writer B loses", err, abstractions.ErrConcurrencyConflict)
				e.Equal("the loser's error names the head", err != nil && strings.Contains(err.Error(), `"head"`) && strings.Contains(err.Error(), e.Table), true)
				got, err := s.List(ctx, order)
				e.OK("list", err)
				e.Observe("stream", polyEntries(got))
				e.Equal("versions 1 and 2 (A's) and the head at 2", len(got) == 3 && got[2].Columns["_Version"] == int64(2) && reflect.TypeOf(got[1].Item) == reflect.TypeOf(&polyPaid{}), true)
				_, err = s.One(ctx, polyKey(order, polyVersionKey(3)))
				e.Is("none of the loser's events was written", err, abstractions.ErrNotFound)
			},
		},
		{
			Name: "poly/concurrent-appends-one-wins",
			Run: func(ctx context.Context, e *Env) {
				s := polyOf[polyEvent](e, polyTypes(e))
				order := "o-2"
				e.OK("create the head", func() error {
					_, err := s.Insert(ctx, abstractions.Marker[polyEvent](polyKey(order, "head"), map[string]any{"_Version": int64(0)}))
					return err
				}())
				head, err := s.One(ctx, polyKey(order, "head"))
				e.OK("read the head", err)
				// Two writers append on the same version at once; each writes a different
				// number of events, so the rows left say who won.
				counts := []int{1, 2}
				errs := make([]error, len(counts))
				var wg sync.WaitGroup
				for w, n := range counts {
					evs := make([]polyEvent, n)
					for i := range evs {
						evs[i] = &polyShipped{polyEventBase: polyEventBase{Order: order, Version: int64(i + 1)}, Carrier: fmt.Sprintf("writer %d", w)}
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						errs[w] = polyAppend(ctx, s, order, head.ETag, evs)
					}()
				}
				wg.Wait()
				winner, losers := -1, 0
				for w, err := range errs {
					switch {
					case err == nil:
						winner = w
					case errors.Is(err, abstractions.ErrConcurrencyConflict):
						losers++
					default:
						e.Errorf("writer %d: %v", w, err)
					}
				}
				e.Equal("exactly one writer wins, the other loses on the head", winner >= 0 && losers == 1, true)
				got, err := s.List(ctx, order)
				e.OK("list", err)
				only := winner >= 0 && len(got) == counts[winner]+1
				for _, en := range got {
					if sh, ok := en.Item.(*polyShipped); ok && sh.Carrier != fmt.Sprintf("writer %d", winner) {
						only = false
					}
				}
				e.Equal("the partition holds the winner's events only", only, true)
				// Who won differs from run to run; leave no rows to compare.
				var cleanup error
				for _, en := range got {
					_, err := s.Delete(ctx, en.Key, "")
					cleanup = errors.Join(cleanup, err)
				}
				e.OK("clean up", cleanup)
			},
		},
		{
			Name: "poly/unregistered-discriminator",
			Run: func(ctx context.Context, e *Env) {
				older := polyTypes(e)
				if err := abstractions.RegisterType[polyRefunded](older, "legacy.Refunded"); err != nil {
					e.Fatalf("register: %v", err)
				}
				writer := polyOf[polyEvent](e, older)
				_, err := writer.Insert(ctx, abstractions.PolyWrite[polyEvent]{Key: polyKey("o-3", "000000001"),
					Item: &polyRefunded{polyEventBase: polyEventBase{Order: "o-3", Version: 1}, Reason: "damaged"}})
				e.OK("an older writer stores a type this reader does not know", err)
				readerTypes := polyTypes(e)
				reader := polyOf[polyEvent](e, readerTypes)
				_, err = reader.One(ctx, polyKey("o-3", "000000001"))
				e.polyErrNames("one refuses the unregistered name", err, abstractions.ErrIntegrity, "legacy.Refunded", e.Table)
				_, err = reader.List(ctx, "o-3")
				e.polyErrNames("list refuses it too", err, abstractions.ErrIntegrity, "legacy.Refunded")
				readerTypes.SetFallback(func(name string) (reflect.Type, bool) {
					if name == "legacy.Refunded" {
						return reflect.TypeFor[polyNote](), true
					}
					return nil, false
				})
				_, err = reader.One(ctx, polyKey("o-3", "000000001"))
				e.polyErrNames("a fallback to a type outside the base is refused", err, abstractions.ErrIntegrity, "polyNote")
				readerTypes.SetFallback(func(name string) (reflect.Type, bool) {
					if name == "legacy.Refunded" {
						return reflect.TypeFor[polyRefunded](), true
					}
					return nil, false
				})
				got, err := reader.One(ctx, polyKey("o-3", "000000001"))
				e.OK("the explicit fallback maps the legacy name", err)
				e.Observe("read through the fallback", polyEntry(got))
			},
		},
		{
			Name: "poly/discriminator-outside-the-base",
			Run: func(ctx context.Context, e *Env) {
				reg := polyTypes(e)
				notes := polyOf[polyNoter](e, reg)
				_, err := notes.Insert(ctx, abstractions.PolyWrite[polyNoter]{Key: polyKey("shared", "n1"), Item: &polyNote{Text: "hello"}})
				e.OK("a store of another base writes into the table", err)
				events := polyOf[polyEvent](e, reg)
				_, err = events.One(ctx, polyKey("shared", "n1"))
				e.polyErrNames("a registered type that does not satisfy the base is refused", err, abstractions.ErrIntegrity, "misc.note", "polyNote", "polyEvent")
				_, err = events.List(ctx, "shared")
				e.Is("list is refused too", err, abstractions.ErrIntegrity)
				got, err := notes.One(ctx, polyKey("shared", "n1"))
				e.OK("the store of its own base reads it", err)
				e.Observe("note", polyEntry(got))
			},
		},
		{
			Name: "poly/duplicate-key-in-batch",
			Run: func(ctx context.Context, e *Env) {
				s := polyOf[polyEvent](e, polyTypes(e))
				ws := polyWrites("o-4", polyEvents("o-4"))
				ws = append(ws, abstractions.Marker[polyEvent](ws[1].Key, nil))
				e.polyErrNames("insert batch", s.InsertBatch(ctx, ws), abstractions.ErrDuplicateKey, e.Table, "000000002")
				e.polyErrNames("upsert batch", s.UpsertBatch(ctx, ws), abstractions.ErrDuplicateKey, e.Table)
				got, err := s.List(ctx, "o-4")
				e.OK("list", err)
				e.Equal("nothing was written", len(got), 0)
				e.OK("the batch without the repeat", s.InsertBatch(ctx, ws[:3]))
				err = s.InsertBatch(ctx, ws[2:3])
				e.polyErrNames("inserting a stored key again", err, abstractions.ErrDuplicateKey, e.Table, "000000003")
				e.Equal("the 409 is kept", abstractions.HasStatus(err, 409, "EntityAlreadyExists"), true)
			},
		},
		{
			Name: "poly/single-writes-and-delete",
			Run: func(ctx context.Context, e *Env) {
				s := polyOf[polyEvent](e, polyTypes(e))
				k := polyKey("Tenant A", "Case|Kept")
				etag, err := s.Insert(ctx, abstractions.PolyWrite[polyEvent]{Key: k, Item: &polyShipped{Carrier: "first"}})
				e.OK("insert", err)
				_, err = s.Insert(ctx, abstractions.PolyWrite[polyEvent]{Key: k, Item: &polyShipped{Carrier: "again"}})
				e.Is("insert again", err, abstractions.ErrDuplicateKey)
				etag2, err := s.Insert(ctx, abstractions.PolyWrite[polyEvent]{Key: k, Item: &polyPaid{AmountCents: 5}, IfMatch: etag})
				e.OK("insert with IfMatch replaces that version", err)
				_, err = s.Upsert(ctx, abstractions.PolyWrite[polyEvent]{Key: k, Item: &polyShipped{Carrier: "stale"}, IfMatch: etag})
				e.Is("upsert with a stale IfMatch", err, abstractions.ErrConcurrencyConflict)
				_, err = s.Upsert(ctx, abstractions.PolyWrite[polyEvent]{Key: k, Item: &polyShipped{Carrier: "current"}, IfMatch: etag2,
					Columns: map[string]any{"_Checked": true}})
				e.OK("upsert with the current IfMatch", err)
				_, err = s.Upsert(ctx, abstractions.PolyWrite[polyEvent]{Key: polyKey("Tenant A", "case|kept"), Item: &polyPlaced{Customer: "lower"}})
				e.OK("upsert creates a row at the lower-case key", err)
				got, err := s.List(ctx, "Tenant A")
				e.OK("list", err)
				e.Observe("rows", polyEntries(got))
				_, err = s.Insert(ctx, abstractions.PolyWrite[polyEvent]{Key: polyKey("Tenant A", "gone"), Item: &polyPaid{}, IfMatch: etag})
				e.Is("IfMatch on a missing row", err, abstractions.ErrNotFound)
				e.Deleted("delete", true)(s.Delete(ctx, polyKey("Tenant A", "case|kept"), ""))
				e.Deleted("delete is idempotent", false)(s.Delete(ctx, polyKey("Tenant A", "case|kept"), ""))
				deleted, err := s.Delete(ctx, k, etag2)
				e.Is("delete at a stale version", err, abstractions.ErrConcurrencyConflict)
				e.Equal("a stale delete deletes nothing", deleted, false)
				kept, err := s.One(ctx, k)
				e.OK("the row stays", err)
				e.Deleted("delete at the current version", true)(s.Delete(ctx, k, kept.ETag))
				e.Deleted("a conditional delete of a missing row", false)(s.Delete(ctx, k, kept.ETag))
				_, err = s.Delete(ctx, k, "*")
				e.Is("* is not a version", err, abstractions.ErrInvalidArgument)
				_, err = s.One(ctx, polyKey("Tenant A", "case|kept"))
				e.Is("one after delete", err, abstractions.ErrNotFound)
			},
		},
		{
			Name: "poly/refusals-send-nothing",
			Run: func(ctx context.Context, e *Env) {
				reg := polyTypes(e)
				s := polyOf[polyEvent](e, reg)
				k := polyKey("o-5", "000000001")
				refused := []struct {
					step string
					w    abstractions.PolyWrite[polyEvent]
					kind error
				}{
					{"a data column on a marker", abstractions.Marker[polyEvent](k, map[string]any{"Version": 1}), abstractions.ErrInvalidArgument},
					{"a forged discriminator", abstractions.Marker[polyEvent](k, map[string]any{"_TypeName": "order.placed"}), abstractions.ErrInvalidArgument},
					{"a column value without a cell", abstractions.Marker[polyEvent](k, map[string]any{"_At": struct{}{}}), abstractions.ErrInvalidArgument},
					{"an unregistered item type", abstractions.PolyWrite[polyEvent]{Key: k, Item: &polyRefunded{}}, abstractions.ErrInvalidArgument},
					{"a nil item pointer", abstractions.PolyWrite[polyEvent]{Key: k, Item: (*polyPaid)(nil)}, abstractions.ErrInvalidArgument},
					{"an IfMatch that is no ETag", abstractions.PolyWrite[polyEvent]{Key: k, Item: &polyPaid{}, IfMatch: "*"}, abstractions.ErrInvalidArgument},
					{"a key the service forbids", abstractions.PolyWrite[polyEvent]{Key: polyKey("o/5", "1"), Item: &polyPaid{}}, abstractions.ErrInvalidKey},
					{"an empty row key", abstractions.PolyWrite[polyEvent]{Key: polyKey("o-5", ""), Item: &polyPaid{}}, abstractions.ErrInvalidKey},
				}
				for _, r := range refused {
					_, err := s.Insert(ctx, r.w)
					e.Is(r.step, err, r.kind)
				}
				headETag := `W/"datetime'2026-01-01T00%3A00%3A00.0000000Z'"`
				twoParts := append(polyWrites("o-5", polyEvents("o-5")[:1]), polyWrites("o-6", polyEvents("o-6")[:1])...)
				twoParts[0].IfMatch = headETag
				e.Is("a conditional batch that needs two transactions", s.InsertBatch(ctx, twoParts), abstractions.ErrInvalidArgument)
				quoted := polyWrites("o'5", polyEvents("o'5")[:1])
				e.OK("a batched insert of a key with a quote", s.InsertBatch(ctx, quoted))
				e.OK("a batched upsert of that key", s.UpsertBatch(ctx, quoted))
				_, err := s.MergeColumns(ctx, k, nil, "")
				e.Is("a merge of nothing", err, abstractions.ErrInvalidArgument)
				_, err = s.MergeColumns(ctx, k, map[string]any{"Customer": "x"}, "")
				e.Is("a merge of a data column", err, abstractions.ErrInvalidArgument)
			},
		},
	}
}
