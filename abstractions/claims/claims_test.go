package claims_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/claims"
)

// TestMain fails the package when a test leaves a goroutine behind (the abstractions module
// requires nothing, so it reads the runtime's stacks instead of using goleak).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > 1 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > 1 {
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "goroutines left behind:\n%s\n", buf[:runtime.Stack(buf, true)])
			code = 1
		}
	}
	os.Exit(code)
}

// rows is a table of claim rows and owner rows in a map: the protocol's conditions, nothing
// else. A claim row's key is the value's first letter, so "apple" and "avocado" share one.
type rows struct {
	claims  map[string]claims.Claim[string]
	owners  map[string]string // owner id → the value its row holds
	version int
	// before, when set, runs before each call with the call's name.
	before func(call string)
}

func newRows() *rows {
	return &rows{claims: map[string]claims.Claim[string]{}, owners: map[string]string{}}
}

func key(value string) string { return value[:1] }

func (r *rows) hook(call string) {
	if r.before != nil {
		r.before(call)
	}
}

func (r *rows) put(value, owner string) {
	r.version++
	r.claims[key(value)] = claims.Claim[string]{Value: value, Owner: owner, Version: fmt.Sprint(r.version)}
}

func (r *rows) Create(_ context.Context, value, owner string) error {
	r.hook("create")
	if _, ok := r.claims[key(value)]; ok {
		return abstractions.ErrDuplicateKey
	}
	r.put(value, owner)
	return nil
}

func (r *rows) Read(_ context.Context, value string) (claims.Claim[string], error) {
	r.hook("read")
	c, ok := r.claims[key(value)]
	if !ok {
		return c, abstractions.ErrNotFound
	}
	return c, nil
}

func (r *rows) cond(value, version string) error {
	c, ok := r.claims[key(value)]
	switch {
	case !ok:
		return abstractions.ErrNotFound
	case c.Version != version:
		return abstractions.ErrConcurrencyConflict
	}
	return nil
}

func (r *rows) Replace(_ context.Context, value, owner string, cur claims.Claim[string]) error {
	r.hook("replace")
	if err := r.cond(value, cur.Version); err != nil {
		return err
	}
	r.put(value, owner)
	return nil
}

func (r *rows) Delete(_ context.Context, cur claims.Claim[string]) error {
	r.hook("delete")
	if err := r.cond(cur.Value, cur.Version); err != nil {
		return err
	}
	delete(r.claims, key(cur.Value))
	return nil
}

func (r *rows) Owner(_ context.Context, owner, value string) (string, bool, error) {
	r.hook("owner")
	held, ok := r.owners[owner]
	return owner, ok && held == value, nil
}

func (*rows) Same(a, b string) bool { return strings.EqualFold(a, b) }

func index(r *rows) claims.Index[string, string] {
	return claims.Index[string, string]{Rows: r, Attempts: 3}
}

func TestClaimHeldStaleAndRelease(t *testing.T) {
	ctx := context.Background()
	r := newRows()
	x := index(r)
	r.owners["u1"] = "apple"
	if err := x.Claim(ctx, "apple", "u1"); err != nil {
		t.Fatal(err)
	}
	r.owners["u2"] = "apple"
	var held *claims.Held
	if err := x.Claim(ctx, "apple", "u2"); !errors.As(err, &held) || held.Owner != "u1" {
		t.Fatalf("a live claim of another owner: got %v, want *Held naming u1", err)
	}
	// A value sharing the row of a live claim is refused too, naming the holder.
	r.owners["u3"] = "avocado"
	if err := x.Claim(ctx, "avocado", "u3"); !errors.As(err, &held) || held.Owner != "u1" {
		t.Fatalf("a live claim of another value in the row: got %v", err)
	}
	// Ours already (another spelling of the owner): confirmed.
	if err := x.Claim(ctx, "apple", "U1"); err != nil {
		t.Fatal(err)
	}
	// The owner moves on: the claim is stale, and the next claimer takes it over.
	r.owners["u1"] = "banana"
	if err := x.Claim(ctx, "apple", "u2"); err != nil {
		t.Fatal(err)
	}
	if owner, _, ok, err := x.Lookup(ctx, "apple"); err != nil || !ok || owner != "u2" {
		t.Fatalf("Lookup = %q, %v, %v", owner, ok, err)
	}
	// A release by an owner the claim does not name leaves it.
	if err := x.Release(ctx, "apple", "u1"); err != nil || r.claims["a"].Owner != "u2" {
		t.Fatalf("release by another owner: %v, claim %+v", err, r.claims["a"])
	}
	// The owner's row holds the value: its claim stays (a later write of the owner confirmed
	// it); once the row holds another value, the claim goes.
	if err := x.Release(ctx, "apple", "u2"); err != nil || r.claims["a"].Owner != "u2" {
		t.Fatalf("release by an owner whose row holds the value: %v, claim %+v", err, r.claims["a"])
	}
	r.owners["u2"] = "cherry"
	if err := x.Release(ctx, "apple", "u2"); err != nil || len(r.claims) != 0 {
		t.Fatalf("release: %v, claims %v", err, r.claims)
	}
	if _, _, ok, err := x.Lookup(ctx, "apple"); err != nil || ok {
		t.Fatalf("Lookup after release: %v, %v", ok, err)
	}
}

// A stale claim is not a match, and a lookup of a value sharing a claim's row finds nothing.
func TestLookupChecksBothRows(t *testing.T) {
	ctx := context.Background()
	r := newRows()
	x := index(r)
	r.owners["u1"] = "apple"
	if err := x.Claim(ctx, "apple", "u1"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := x.Lookup(ctx, "avocado"); ok {
		t.Fatal("a claim of another value in the row was taken for a match")
	}
	delete(r.owners, "u1")
	if _, _, ok, _ := x.Lookup(ctx, "apple"); ok {
		t.Fatal("a stale claim was taken for a match")
	}
	if stale, err := x.Stale(ctx, r.claims["a"]); err != nil || !stale {
		t.Fatalf("Stale = %v, %v", stale, err)
	}
}

// A takeover decided on an older look at the owner's row fails once the owner has confirmed
// its claim: the confirmation is a write on condition of the version, as the takeover is.
func TestReclaimDefeatsAnOlderTakeover(t *testing.T) {
	ctx := context.Background()
	r := newRows()
	x := index(r)
	r.owners["u1"] = "apple"
	if err := x.Claim(ctx, "apple", "u1"); err != nil {
		t.Fatal(err)
	}
	// u2 finds the claim stale while u1's row holds another value for a moment...
	r.owners["u1"] = "banana"
	r.owners["u2"] = "apple"
	stale := r.claims["a"]
	if ok, _ := x.Stale(ctx, stale); !ok {
		t.Fatal("the claim should look stale")
	}
	// ...u1's row holds apple again, and u1 claims it again before u2 takes it over.
	r.owners["u1"] = "apple"
	if err := x.Reclaim(ctx, "apple", "u1"); err != nil {
		t.Fatal(err)
	}
	if err := r.Replace(ctx, "apple", "u2", stale); !errors.Is(err, abstractions.ErrConcurrencyConflict) {
		t.Fatalf("a takeover on the version read before the reclaim: %v, want a conflict", err)
	}
	// Had the takeover come first, the reclaim would report the value held.
	stale = r.claims["a"]
	r.owners["u1"] = "banana"
	if err := r.Replace(ctx, "apple", "u2", stale); err != nil {
		t.Fatal(err)
	}
	r.owners["u1"] = "apple"
	var held *claims.Held
	if err := x.Reclaim(ctx, "apple", "u1"); !errors.As(err, &held) || held.Owner != "u2" {
		t.Fatalf("reclaim after a takeover: %v, want *Held naming u2", err)
	}
}

// A claim row that changes on every attempt ends in *Contended; one released between the
// refused create and the read is created again.
func TestContendedAndReleasedMeanwhile(t *testing.T) {
	ctx := context.Background()
	r := newRows()
	x := index(r)
	r.owners["u1"] = "apple"
	r.owners["u0"] = "banana" // the claim below is stale
	r.put("apple", "u0")
	r.before = func(call string) {
		if call == "replace" {
			r.put("apple", "u0") // another writer's version each time
		}
	}
	var busy *claims.Contended
	if err := x.Claim(ctx, "apple", "u1"); !errors.As(err, &busy) || busy.Attempts != 3 || !errors.Is(err, abstractions.ErrConcurrencyConflict) {
		t.Fatalf("got %v, want *Contended after 3 attempts wrapping the last conflict", err)
	}
	r.before = func(call string) {
		if call == "read" {
			delete(r.claims, "a")
			r.before = nil
		}
	}
	if err := x.Claim(ctx, "apple", "u1"); err != nil || r.claims["a"].Owner != "u1" {
		t.Fatalf("claim after a release meanwhile: %v, %+v", err, r.claims["a"])
	}
}

func TestWaitEndsTheClaim(t *testing.T) {
	stop := errors.New("stop")
	x := claims.Index[string, string]{Rows: newRows(), Attempts: 3, Wait: func(context.Context, int) error { return stop }}
	if err := x.Claim(context.Background(), "apple", "u1"); !errors.Is(err, stop) {
		t.Fatalf("got %v", err)
	}
}

// An owner whose value moves away and back, in two writes that overlap: the first write's
// release must not delete the claim the second write confirmed, or the row would hold an
// unclaimed value a third owner could claim.
func TestReleaseKeepsAClaimConfirmedAgain(t *testing.T) {
	ctx := context.Background()
	r := newRows()
	x := index(r)
	r.owners["u1"] = "apple"
	if err := x.Claim(ctx, "apple", "u1"); err != nil {
		t.Fatal(err)
	}
	// Write 1 moves u1 to banana; write 2 moves it back to apple and confirms its claim
	// while write 1's release is under way: before the release looks at the owner's row
	// (which then holds apple: the claim stays), or after it (the delete is on condition of
	// the version the release read, which the confirmation changed).
	for _, during := range []string{"owner", "delete"} {
		r.owners["u1"] = "banana"
		r.before = func(call string) {
			if call == during {
				r.before = nil
				r.owners["u1"] = "apple"
				if err := x.Reclaim(ctx, "apple", "u1"); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := x.Release(ctx, "apple", "u1"); err != nil {
			t.Fatal(err)
		}
		if r.claims["a"].Owner != "u1" {
			t.Fatalf("confirmed during the release's %s: the claim u1's row holds again was deleted: %+v", during, r.claims)
		}
	}
	r.owners["u2"] = "apple"
	var held *claims.Held
	if err := x.Claim(ctx, "apple", "u2"); !errors.As(err, &held) {
		t.Fatalf("a third owner's claim: %v, want *Held", err)
	}
}
