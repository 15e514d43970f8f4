//go:build !udtables_nometrics

// The udtables_nometrics tag compiles the metric hooks out (a build for the metrics
// benchmark, not for use): there is nothing for this test to read in such a build.

package fidelity

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/tracing"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/identity"
	"github.com/unified-data/gotables/identity/identitytables"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/blobdocs"
)

// The names the library records calls under: OpenTelemetry's database client conventions
// (docs/production.md lists them). The duration histogram's count is the number of calls.
const (
	walkMetricDuration = "db.client.operation.duration"
	walkAttrOperation  = "db.operation.name"
)

// walkItem is the row type of the typed store the walk calls.
type walkItem struct {
	abstractions.Entity
	Name string
	N    int
}

// walkLarge is a row type with a large value, for the one call that needs one (the orphan
// blob sweep refuses a type that stores no blob before it sends anything).
type walkLarge struct {
	abstractions.Entity
	Body string `table:",split=text"`
}

// walkVersion is a versioned row type, for the versioned-stream helpers.
type walkVersion struct {
	abstractions.VersionedEntity
	State string
}

// The polymorphic store's family: two item types behind one interface.
type walkEvent interface{ Order() string }

type walkPlaced struct{ ID, Customer string }
type walkPaid struct {
	ID    string
	Cents int64
}

func (e *walkPlaced) Order() string { return e.ID }
func (e *walkPaid) Order() string   { return e.ID }

// walkDoc and walkState are the blob documents' types.
type walkDoc struct{ Title string }
type walkState struct{ Count int }

// walkCall is one call of the walk. prep, when set, makes what the call needs (a row to
// update, a token to read) and is not measured; call is measured, and must succeed. op is
// the operation the call records itself under (db.operation.name, and the name of its
// span); "" for a call that records only the store calls it makes.
type walkCall struct {
	op   string
	prep func(ctx context.Context) error
	call func(ctx context.Context) error
}

// Every call of every store kind — typed, polymorphic, transactions, blob documents,
// identity, and the outcome verbs — is timed (and so counted) in
// db.client.operation.duration, and traced. The exported methods of each store type that take a
// context are listed with reflect: one without a call here fails the test, so a method
// cannot be added unmeasured.
func TestEveryCallIsMeasured(t *testing.T) {
	ctx := context.Background()
	m := newWalkMeters(t)
	tr := &walkTracer{}
	acct := inmemory.NewAccount(&tables.Options{
		MeterProvider: m.provider,
		ClientOptions: azcore.ClientOptions{TracingProvider: tr.provider()},
		BlobOffload:   &tables.BlobOffloadOptions{Container: "walk-offload"},
	})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// Typed store.
	items, err := tables.For[walkItem](acct, &tables.StoreOptions{Table: "WalkItems"})
	must(err)
	large, err := tables.For[walkLarge](acct, &tables.StoreOptions{Table: "WalkLarge"})
	must(err)
	item := func(id string) *walkItem { return &walkItem{Entity: abstractions.Entity{ID: id}, Name: id} }
	put := func(ids ...string) func(context.Context) error {
		return func(ctx context.Context) error {
			for _, id := range ids {
				if err := items.Upsert(ctx, item(id)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	name := abstractions.Field(func(v *walkItem) *string { return &v.Name })
	q := abstractions.Query[walkItem]{Partition: "p"}
	var read *walkItem // the row Update's prep read, with its ETag
	storeCalls := map[string]walkCall{
		"Any":   {op: "any", prep: put("p|a"), call: func(ctx context.Context) error { _, err := items.Any(ctx, q); return err }},
		"Count": {op: "count", prep: put("p|a"), call: func(ctx context.Context) error { _, err := items.Count(ctx, "p"); return err }},
		"CountAll": {op: "count", prep: put("p|a"), call: func(ctx context.Context) error {
			_, err := items.CountAll(ctx)
			return err
		}},
		"Create": {op: "create", call: func(ctx context.Context) error { return items.Create(ctx, item("p|created")) }},
		"CreateBatch": {op: "BATCH create", call: func(ctx context.Context) error {
			return items.CreateBatch(ctx, []*walkItem{item("b|1"), item("b|2"), item("c|1")})
		}},
		"Delete": {op: "delete", prep: put("p|doomed"), call: func(ctx context.Context) error {
			deleted, err := items.Delete(ctx, "p|doomed", "")
			return wantTrue(deleted, err, "deleted")
		}},
		"DeletePartition": {op: "delete partition", prep: put("gone|1", "gone|2"), call: func(ctx context.Context) error {
			_, err := items.DeletePartition(ctx, "gone")
			return err
		}},
		"DeleteWhere": {op: "delete where", prep: put("gone|3"), call: func(ctx context.Context) error {
			_, err := items.DeleteWhere(ctx, abstractions.Query[walkItem]{Partition: "gone"}, nil)
			return err
		}},
		"EnsureCreated": {op: "create table", call: items.EnsureCreated},
		"Exists": {op: "exists", prep: put("p|a"), call: func(ctx context.Context) error {
			ok, err := items.Exists(ctx, "p|a")
			return wantTrue(ok, err, "exists")
		}},
		"List":    {op: "list", prep: put("p|a"), call: func(ctx context.Context) error { _, err := items.List(ctx, "p"); return err }},
		"ListAll": {op: "list", prep: put("p|a"), call: func(ctx context.Context) error { _, err := items.ListAll(ctx); return err }},
		"One":     {op: "read", prep: put("p|a"), call: func(ctx context.Context) error { _, err := items.One(ctx, "p|a"); return err }},
		"Page":    {op: "page", prep: put("p|a"), call: func(ctx context.Context) error { _, err := items.Page(ctx, q); return err }},
		"Patch": {op: "patch", prep: put("p|a"), call: func(ctx context.Context) error {
			p := abstractions.NewPatch[walkItem]()
			abstractions.Set(p, name, "patched")
			_, err := items.Patch(ctx, "p|a", p)
			return err
		}},
		"Query": {op: "query", prep: put("p|a"), call: func(ctx context.Context) error { _, err := items.Query(ctx, q); return err }},
		"Stream": {op: "stream", prep: put("p|a"), call: func(ctx context.Context) error {
			for _, err := range items.Stream(ctx, q) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
		// The sweep needs a type that stores blobs (walkLarge); the method is the same on
		// every Store[T].
		"SweepOrphanBlobs": {op: "sweep orphan blobs", call: func(ctx context.Context) error {
			_, err := large.SweepOrphanBlobs(ctx, time.Hour)
			return err
		}},
		"Update": {op: "update", prep: func(ctx context.Context) (err error) {
			if err = put("p|a")(ctx); err == nil {
				read, err = items.One(ctx, "p|a")
			}
			return err
		}, call: func(ctx context.Context) error {
			read.N++
			return items.Update(ctx, read, abstractions.Strict)
		}},
		"Upsert": {op: "upsert", call: func(ctx context.Context) error { return items.Upsert(ctx, item("p|upserted")) }},
		"UpsertBatch": {op: "BATCH upsert", call: func(ctx context.Context) error {
			_, err := items.UpsertBatch(ctx, []*walkItem{item("b|1"), item("b|3"), item("d|1")})
			return err
		}},
	}
	// Polymorphic store.
	var types abstractions.TypeRegistry
	must(errors.Join(abstractions.RegisterType[walkPlaced](&types, "walk.placed"), abstractions.RegisterType[walkPaid](&types, "walk.paid")))
	events, err := tables.PolyFor[walkEvent](acct, &types, &tables.StoreOptions{Table: "WalkEvents"})
	must(err)
	key := func(pk, rk string) abstractions.TableKey { return abstractions.TableKey{PartitionKey: pk, RowKey: rk} }
	placed := func(pk, rk string) abstractions.PolyWrite[walkEvent] {
		return abstractions.PolyWrite[walkEvent]{Key: key(pk, rk), Item: &walkPlaced{ID: rk, Customer: "c"}}
	}
	putEvent := func(pk, rk string) func(context.Context) error {
		return func(ctx context.Context) error { _, err := events.Upsert(ctx, placed(pk, rk)); return err }
	}
	polyCalls := map[string]walkCall{
		"Delete": {op: "delete", prep: putEvent("o1", "doomed"), call: func(ctx context.Context) error {
			deleted, err := events.Delete(ctx, key("o1", "doomed"), "")
			return wantTrue(deleted, err, "deleted")
		}},
		// EnsureCreated is the host store's (the table's creation, as Store.EnsureCreated).
		"EnsureCreated": {op: "create table", call: events.EnsureCreated},
		"Insert": {op: "insert", call: func(ctx context.Context) error {
			_, err := events.Insert(ctx, abstractions.PolyWrite[walkEvent]{Key: key("o1", "paid"), Item: &walkPaid{ID: "o1", Cents: 100}})
			return err
		}},
		"InsertBatch": {op: "BATCH insert", call: func(ctx context.Context) error {
			return events.InsertBatch(ctx, []abstractions.PolyWrite[walkEvent]{placed("o2", "a"), placed("o2", "b"), placed("o3", "a")})
		}},
		"List": {op: "list", prep: putEvent("o1", "a"), call: func(ctx context.Context) error { _, err := events.List(ctx, "o1"); return err }},
		"MergeColumns": {op: "merge columns", prep: putEvent("o1", "a"), call: func(ctx context.Context) error {
			_, err := events.MergeColumns(ctx, key("o1", "a"), map[string]any{"_Seen": true}, "")
			return err
		}},
		"One": {op: "read", prep: putEvent("o1", "a"), call: func(ctx context.Context) error { _, err := events.One(ctx, key("o1", "a")); return err }},
		"Page": {op: "page", prep: putEvent("o1", "a"), call: func(ctx context.Context) error {
			_, err := events.Page(ctx, abstractions.Query[abstractions.PolyEntry[walkEvent]]{Partition: "o1"})
			return err
		}},
		"Upsert": {op: "upsert", call: putEvent("o1", "up")},
		"UpsertBatch": {op: "BATCH upsert", call: func(ctx context.Context) error {
			return events.UpsertBatch(ctx, []abstractions.PolyWrite[walkEvent]{placed("o2", "a"), placed("o4", "a")})
		}},
	}

	// Transaction: two typed writes of one partition. Adding them (CreateIn, UpsertIn) sends
	// nothing; Commit is the call, a batch of writes that differ ("BATCH").
	var tx *tables.Transaction
	txCalls := map[string]walkCall{
		"Commit": {op: "BATCH", prep: func(context.Context) error {
			tx = items.Transaction("tx")
			items.CreateIn(tx, item("tx|1"))
			items.UpsertIn(tx, item("tx|2"))
			return nil
		}, call: func(ctx context.Context) error { return tx.Commit(ctx) }},
	}

	// Blob documents, in a container made for them (blob documents never create one).
	must(acct.Blobs().CreateContainer(ctx, "walk-docs"))
	reg, err := blobdocs.New(acct.Blobs(), nil)
	must(err)
	blobName := func(c blobdocs.NameContext) string { return c.Type.Name() + "/" + c.ID + ".json" }
	docs, err := blobdocs.Register[walkDoc](reg, blobdocs.Registration{Container: "walk-docs", BlobName: blobName})
	must(err)
	states, err := blobdocs.RegisterState[walkState](reg, blobdocs.Registration{Container: "walk-docs", BlobName: blobName})
	must(err)
	putDoc := func(id string) func(context.Context) error {
		return func(ctx context.Context) error { return docs.Put(ctx, id, &walkDoc{Title: id}) }
	}
	docCalls := map[string]walkCall{
		"Delete": {op: "delete", prep: putDoc("doomed"), call: func(ctx context.Context) error { return docs.Delete(ctx, "doomed") }},
		"One":    {op: "get", prep: putDoc("a"), call: func(ctx context.Context) error { _, err := docs.One(ctx, "a"); return err }},
		"Put":    {op: "put", call: putDoc("b")},
	}
	var version string // the state document's version prep read
	putState := func(id string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, _, err := states.MutateOrCreate(ctx, id, func() *walkState { return &walkState{} },
				func(s *walkState) error { s.Count++; return nil }, nil)
			if err == nil {
				_, version, err = states.One(ctx, id)
			}
			return err
		}
	}
	bump := func(s *walkState) error { s.Count++; return nil }
	stateCalls := map[string]walkCall{
		"Create": {op: "create", call: func(ctx context.Context) error { _, err := states.Create(ctx, "created", &walkState{}); return err }},
		"Delete": {op: "delete", prep: putState("doomed"), call: func(ctx context.Context) error { return states.Delete(ctx, "doomed", version) }},
		"Mutate": {op: "mutate", prep: putState("a"), call: func(ctx context.Context) error {
			_, _, err := states.Mutate(ctx, "a", bump, nil)
			return err
		}},
		"MutateOrCreate": {op: "mutate or create", call: func(ctx context.Context) error {
			_, _, err := states.MutateOrCreate(ctx, "moc", func() *walkState { return &walkState{} }, bump, nil)
			return err
		}},
		"One": {op: "get", prep: putState("a"), call: func(ctx context.Context) error { _, _, err := states.One(ctx, "a"); return err }},
		"Update": {op: "update", prep: putState("a"), call: func(ctx context.Context) error {
			_, err := states.Update(ctx, "a", &walkState{Count: 100}, version)
			return err
		}},
	}

	// Identity: stores over abstractions.Storage[T], whose every method shows up as the
	// store calls it makes.
	idt, err := identitytables.For(acct, nil)
	must(err)
	users, err := identity.NewUserStore(idt, nil)
	must(err)
	roles, err := identity.NewRoleStore(idt, nil)
	must(err)
	const uid, rid = "walk-user", "walk-role"
	role := identity.NormalizeName("walkers")
	must(users.Create(ctx, &identity.User{UserId: uid, UserName: "walker", Email: "walker@example.org"}))
	must(roles.Create(ctx, &identity.Role{RoleId: rid, Name: "walkers"}))
	login := identity.UserLoginInfo{LoginProvider: "Walk", ProviderKey: "k1", ProviderDisplayName: "Walk"}
	claim := identity.Claim{Type: "walk", Value: "1"}
	addLogin := func(ctx context.Context) error { return users.AddLogin(ctx, uid, login) }
	addClaim := func(ctx context.Context) error { return users.AddClaims(ctx, uid, claim) }
	addToRole := func(ctx context.Context) error { return users.AddToRole(ctx, uid, role) }
	setToken := func(ctx context.Context) error { return users.SetToken(ctx, uid, "Walk", "t", "v") }
	noErr := func(_ any, err error) error { return err }
	userCalls := map[string]walkCall{
		"AddClaims": {call: addClaim},
		"AddLogin":  {call: addLogin},
		"AddToRole": {call: addToRole},
		"AuthenticatorKey": {prep: func(ctx context.Context) error { return users.SetAuthenticatorKey(ctx, uid, "key") },
			call: func(ctx context.Context) error { return noErr(users.AuthenticatorKey(ctx, uid)) }},
		"Claims":             {prep: addClaim, call: func(ctx context.Context) error { return noErr(users.Claims(ctx, uid)) }},
		"CountRecoveryCodes": {call: func(ctx context.Context) error { return noErr(users.CountRecoveryCodes(ctx, uid)) }},
		"Create": {call: func(ctx context.Context) error {
			return users.Create(ctx, &identity.User{UserId: "walk-new", UserName: "newcomer", Email: "new@example.org"})
		}},
		"Delete": {prep: func(ctx context.Context) error {
			return users.Create(ctx, &identity.User{UserId: "walk-doomed", UserName: "doomed", Email: "doomed@example.org"})
		}, call: func(ctx context.Context) error { return users.Delete(ctx, "walk-doomed") }},
		"FindByEmail": {call: func(ctx context.Context) error {
			return noErr(users.FindByEmail(ctx, identity.NormalizeName("walker@example.org")))
		}},
		"FindByID": {call: func(ctx context.Context) error { return noErr(users.FindByID(ctx, uid)) }},
		"FindByLogin": {prep: addLogin, call: func(ctx context.Context) error {
			return noErr(users.FindByLogin(ctx, login.LoginProvider, login.ProviderKey))
		}},
		"FindByName": {call: func(ctx context.Context) error { return noErr(users.FindByName(ctx, identity.NormalizeName("walker"))) }},
		"IncrementAccessFailedCount": {call: func(ctx context.Context) error {
			return noErr(users.IncrementAccessFailedCount(ctx, uid))
		}},
		"IsInRole": {prep: addToRole, call: func(ctx context.Context) error {
			ok, err := users.IsInRole(ctx, uid, role)
			return wantTrue(ok, err, "in role")
		}},
		"Logins": {prep: addLogin, call: func(ctx context.Context) error { return noErr(users.Logins(ctx, uid)) }},
		"Modify": {call: func(ctx context.Context) error {
			return noErr(users.Modify(ctx, uid, func(u *identity.User) error { u.PhoneNumber = "+100"; return nil }))
		}},
		"RedeemRecoveryCode": {prep: func(ctx context.Context) error { return users.ReplaceRecoveryCodes(ctx, uid, []string{"c1", "c2"}) },
			call: func(ctx context.Context) error {
				ok, err := users.RedeemRecoveryCode(ctx, uid, "c1")
				return wantTrue(ok, err, "redeemed")
			}},
		"RemoveClaims":   {prep: addClaim, call: func(ctx context.Context) error { return users.RemoveClaims(ctx, uid, claim) }},
		"RemoveFromRole": {prep: addToRole, call: func(ctx context.Context) error { return users.RemoveFromRole(ctx, uid, role) }},
		"RemoveLogin": {prep: addLogin, call: func(ctx context.Context) error {
			return users.RemoveLogin(ctx, uid, login.LoginProvider, login.ProviderKey)
		}},
		"RemoveToken": {prep: setToken, call: func(ctx context.Context) error { return users.RemoveToken(ctx, uid, "Walk", "t") }},
		"ReplaceClaim": {prep: addClaim, call: func(ctx context.Context) error {
			return users.ReplaceClaim(ctx, uid, claim, identity.Claim{Type: "walk", Value: "2"})
		}},
		"ReplaceRecoveryCodes": {call: func(ctx context.Context) error {
			return users.ReplaceRecoveryCodes(ctx, uid, []string{"c3", "c4"})
		}},
		"ResetAccessFailedCount": {call: func(ctx context.Context) error { return noErr(users.ResetAccessFailedCount(ctx, uid)) }},
		"Roles":                  {prep: addToRole, call: func(ctx context.Context) error { return noErr(users.Roles(ctx, uid)) }},
		"SetAuthenticatorKey":    {call: func(ctx context.Context) error { return users.SetAuthenticatorKey(ctx, uid, "key2") }},
		"SetEmailConfirmed":      {call: func(ctx context.Context) error { return noErr(users.SetEmailConfirmed(ctx, uid, true)) }},
		"SetLockoutEnabled":      {call: func(ctx context.Context) error { return noErr(users.SetLockoutEnabled(ctx, uid, true)) }},
		"SetLockoutEnd": {call: func(ctx context.Context) error {
			return noErr(users.SetLockoutEnd(ctx, uid, time.Now().Add(-time.Minute)))
		}},
		"SetPasswordHash":         {call: func(ctx context.Context) error { return noErr(users.SetPasswordHash(ctx, uid, "")) }},
		"SetPhoneNumber":          {call: func(ctx context.Context) error { return noErr(users.SetPhoneNumber(ctx, uid, "+200")) }},
		"SetPhoneNumberConfirmed": {call: func(ctx context.Context) error { return noErr(users.SetPhoneNumberConfirmed(ctx, uid, true)) }},
		"SetToken":                {call: setToken},
		"SetTwoFactorEnabled":     {call: func(ctx context.Context) error { return noErr(users.SetTwoFactorEnabled(ctx, uid, false)) }},
		"Token":                   {prep: setToken, call: func(ctx context.Context) error { return noErr(users.Token(ctx, uid, "Walk", "t")) }},
		"Update": {call: func(ctx context.Context) error {
			u, err := users.FindByID(ctx, uid)
			if err != nil {
				return err
			}
			u.PhoneNumber = "+300"
			return users.Update(ctx, u)
		}},
		"UpdateSecurityStamp": {call: func(ctx context.Context) error { return noErr(users.UpdateSecurityStamp(ctx, uid)) }},
		"UsersForClaim": {prep: addClaim, call: func(ctx context.Context) error {
			us, err := users.UsersForClaim(ctx, claim)
			return wantTrue(len(us) == 1, err, "one user with the claim")
		}},
		"UsersInRole": {prep: addToRole, call: func(ctx context.Context) error {
			us, err := users.UsersInRole(ctx, role)
			return wantTrue(len(us) == 1, err, "one member")
		}},
	}
	roleClaim := identity.Claim{Type: "walk-role", Value: "1"}
	roleCalls := map[string]walkCall{
		"AddClaim": {call: func(ctx context.Context) error { return roles.AddClaim(ctx, rid, roleClaim) }},
		"Claims":   {call: func(ctx context.Context) error { return noErr(roles.Claims(ctx, rid)) }},
		"Create": {call: func(ctx context.Context) error {
			return roles.Create(ctx, &identity.Role{RoleId: "walk-new-role", Name: "newcomers"})
		}},
		"Delete": {prep: func(ctx context.Context) error {
			return roles.Create(ctx, &identity.Role{RoleId: "walk-doomed-role", Name: "doomed"})
		}, call: func(ctx context.Context) error { return roles.Delete(ctx, "walk-doomed-role") }},
		"FindByID":   {call: func(ctx context.Context) error { return noErr(roles.FindByID(ctx, rid)) }},
		"FindByName": {call: func(ctx context.Context) error { return noErr(roles.FindByName(ctx, role)) }},
		"RemoveClaim": {prep: func(ctx context.Context) error { return roles.AddClaim(ctx, rid, roleClaim) },
			call: func(ctx context.Context) error { return roles.RemoveClaim(ctx, rid, roleClaim) }},
		"Update": {call: func(ctx context.Context) error {
			r, err := roles.FindByID(ctx, rid)
			if err != nil {
				return err
			}
			return roles.Update(ctx, r) // the same name, a new stamp
		}},
	}

	w := &walker{t: t, m: m, tr: tr}
	w.methods(reflect.TypeOf(items), storeCalls, nil)
	w.methods(reflect.TypeOf(events), polyCalls, nil)
	w.methods(reflect.TypeOf(tx), txCalls, nil)
	w.methods(reflect.TypeOf(docs), docCalls, nil)
	w.methods(reflect.TypeOf(states), stateCalls, nil)
	w.methods(reflect.TypeOf(users), userCalls, nil)
	w.methods(reflect.TypeOf(roles), roleCalls, nil)

	// The outcome verbs are functions, not methods: they are listed by name. Each records a
	// call of its own (and its span, the parent of the store calls it makes).
	incr := func(v *walkItem) error { v.N++; return nil }
	newItem := func() *walkItem { return &walkItem{Name: "new"} }
	w.group("abstractions verb", map[string]walkCall{
		"Mutate": {op: "mutate", prep: put("v|a"), call: func(ctx context.Context) error {
			return noErr(abstractions.Mutate(ctx, items, "v|a", incr, nil))
		}},
		"TryMutate": {op: "try mutate", prep: put("v|a"), call: func(ctx context.Context) error {
			o, err := abstractions.TryMutate(ctx, items, "v|a", incr, nil)
			return wantTrue(o.Status == abstractions.OutcomeUpdated, err, "updated")
		}},
		"TryTransition": {op: "try transition", prep: put("v|a"), call: func(ctx context.Context) error {
			o, err := abstractions.TryTransition(ctx, items, "v|a", func(*walkItem) bool { return true }, incr, nil)
			return wantTrue(o.Status == abstractions.OutcomeUpdated, err, "updated")
		}},
		"MutateOrCreate": {op: "mutate or create", call: func(ctx context.Context) error {
			return noErr(abstractions.MutateOrCreate(ctx, items, "v|moc", newItem, incr, nil))
		}},
		"GetOrCreate": {op: "get or create", call: func(ctx context.Context) error {
			_, _, err := abstractions.GetOrCreate(ctx, items, "v|goc", newItem)
			return err
		}},
	})

	// The append-log and versioned-stream helpers make plain store calls, which record
	// themselves; they have no span of their own.
	versions, err := tables.For[walkVersion](acct, &tables.StoreOptions{Table: "WalkVersions"})
	must(err)
	appendVersion := func(n int) func(context.Context) error {
		return func(ctx context.Context) error {
			return abstractions.AppendVersion(ctx, versions, "s", &walkVersion{VersionedEntity: abstractions.VersionedEntity{Version: n}})
		}
	}
	appendItem := func(ctx context.Context) error {
		return abstractions.Append(ctx, items, "log", &walkItem{Name: "entry"}, "")
	}
	w.group("abstractions helper", map[string]walkCall{
		"Append": {op: "create", call: appendItem},
		"AppendAt": {op: "create", call: func(ctx context.Context) error {
			return abstractions.AppendAt(ctx, items, "log", &walkItem{Name: "entry"}, "sub", time.Now())
		}},
		"AppendVersion": {op: "create", call: appendVersion(1)},
		"AtOrBefore": {op: "query", prep: appendVersion(2), call: func(ctx context.Context) error {
			return noErr(abstractions.AtOrBefore(ctx, versions, "s", 5))
		}},
		"AtVersion": {op: "query", prep: appendVersion(3), call: func(ctx context.Context) error {
			return noErr(abstractions.AtVersion(ctx, versions, "s", 3))
		}},
		"History": {prep: appendVersion(4), call: func(ctx context.Context) error {
			for _, err := range abstractions.History(ctx, versions, "s", 10) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
		"Latest": {prep: appendVersion(5), call: func(ctx context.Context) error {
			return noErr(abstractions.Latest(ctx, versions, "s"))
		}},
		"Recent": {prep: appendItem, call: func(ctx context.Context) error {
			return noErr(abstractions.Recent(ctx, items, "log", 5, ""))
		}},
	})
}

// wantTrue returns err, or an error saying what did not hold when ok is false.
func wantTrue(ok bool, err error, what string) error {
	if err == nil && !ok {
		return fmt.Errorf("not %s", what)
	}
	return err
}

// walker runs the calls of the walk and checks what each recorded.
type walker struct {
	t  *testing.T
	m  *walkMeters
	tr *walkTracer
}

// methods runs calls[name] for every exported method of typ whose first parameter is a
// context.Context. A method with no call fails, unless exempt says why it is not a call of
// the service; so does a call or an exemption that names no such method.
func (w *walker) methods(typ reflect.Type, calls map[string]walkCall, exempt map[string]string) {
	t := w.t
	t.Helper()
	ctxType := reflect.TypeFor[context.Context]()
	kind := typ.String()
	seen := map[string]bool{}
	for i := range typ.NumMethod() {
		meth := typ.Method(i)
		mt := meth.Type // the receiver is In(0)
		if mt.NumIn() < 2 || mt.In(1) != ctxType {
			continue // not a call: Table, Account, WithTenant, BlobName, CreateIn, …
		}
		seen[meth.Name] = true
		if _, ok := exempt[meth.Name]; ok {
			continue
		}
		c, ok := calls[meth.Name]
		if !ok {
			t.Errorf("%s.%s takes a context but the walk has no call of it: add one (or an exemption saying why it records nothing)", kind, meth.Name)
			continue
		}
		w.check(kind+"."+meth.Name, c)
	}
	for name := range calls {
		if !seen[name] {
			t.Errorf("the walk calls %s.%s, which is no method of it taking a context", kind, name)
		}
	}
	for name := range exempt {
		if !seen[name] {
			t.Errorf("the walk exempts %s.%s, which is no method of it taking a context", kind, name)
		}
	}
}

// group runs a listed group of calls, in the order of their names.
func (w *walker) group(kind string, calls map[string]walkCall) {
	w.t.Helper()
	for _, name := range slices.Sorted(maps.Keys(calls)) {
		w.check(kind+" "+name, calls[name])
	}
}

// check runs one call and fails when it recorded no duration in
// db.client.operation.duration or no ended span; when c.op is set, when no duration names
// c.op as its operation, or when the call's first span is not of c.op.
func (w *walker) check(what string, c walkCall) {
	t := w.t
	t.Helper()
	ctx := context.Background()
	if c.prep != nil {
		if err := c.prep(ctx); err != nil {
			t.Errorf("%s: prepare: %v", what, err)
			return
		}
	}
	before := w.m.collect(t)
	mark := w.tr.mark()
	if err := c.call(ctx); err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	after := w.m.collect(t)
	spans := w.tr.since(mark)

	durations := after.delta(before)
	t.Logf("%s: durations %v, %d spans", what, durations, len(spans))
	if sum(durations) == 0 {
		t.Errorf("%s recorded no duration in %s", what, walkMetricDuration)
	}
	ended := 0
	for _, s := range spans {
		if s.ended {
			ended++
		}
	}
	if ended == 0 {
		t.Errorf("%s ended no span (%d started)", what, len(spans))
	}
	if c.op == "" {
		return
	}
	if durations[c.op] == 0 {
		t.Errorf("%s recorded no duration of operation %q in %s: %v", what, c.op, walkMetricDuration, durations)
	}
	if len(spans) > 0 {
		first := spans[0]
		if first.parent != nil || first.attrs[walkAttrOperation] != c.op || !strings.HasPrefix(first.name, c.op+" ") {
			t.Errorf("%s: first span %q (%s=%v, child: %v), want a root span of operation %q",
				what, first.name, walkAttrOperation, first.attrs[walkAttrOperation], first.parent != nil, c.op)
		}
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// walkMeters is a meter provider whose instruments the test reads.
type walkMeters struct {
	provider *sdkmetric.MeterProvider
	reader   *sdkmetric.ManualReader
}

func newWalkMeters(t *testing.T) *walkMeters {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() {
		if err := mp.Shutdown(context.Background()); err != nil {
			t.Errorf("meter provider shutdown: %v", err)
		}
	})
	return &walkMeters{provider: mp, reader: r}
}

// walkReading is what the duration histogram holds, by operation (its counts, summed over
// the other attributes).
type walkReading struct {
	durations map[string]int64
}

func (m *walkMeters) collect(t *testing.T) walkReading {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	r := walkReading{durations: map[string]int64{}}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			switch mt.Name {
			case walkMetricDuration:
				d, ok := mt.Data.(metricdata.Histogram[float64])
				if !ok {
					t.Fatalf("%s: data %T, want a histogram of float64", mt.Name, mt.Data)
				}
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value(walkAttrOperation)
					r.durations[v.AsString()] += int64(p.Count)
				}
			}
		}
	}
	return r
}

// delta returns what r holds beyond before, by operation (operations that gained nothing
// left out).
func (r walkReading) delta(before walkReading) map[string]int64 {
	diff := func(now, then map[string]int64) map[string]int64 {
		out := map[string]int64{}
		for op, n := range now {
			if d := n - then[op]; d != 0 {
				out[op] = d
			}
		}
		return out
	}
	return diff(r.durations, before.durations)
}

// walkTracer is an Azure SDK tracing provider's tracer that keeps the spans it started, as
// an OpenTelemetry tracer reaches the library through the SDK's adapter.
type walkTracer struct {
	mu    sync.Mutex
	spans []*walkSpan
}

type walkSpan struct {
	t      *walkTracer
	name   string
	parent *walkSpan
	attrs  map[string]any
	ended  bool
}

type walkSpanKey struct{}

func (r *walkTracer) provider() tracing.Provider {
	return tracing.NewProvider(func(string, string) tracing.Tracer {
		return tracing.NewTracer(func(ctx context.Context, name string, o *tracing.SpanOptions) (context.Context, tracing.Span) {
			parent, _ := ctx.Value(walkSpanKey{}).(*walkSpan)
			s := &walkSpan{t: r, name: name, parent: parent, attrs: map[string]any{}}
			if o != nil {
				s.setAttributes(o.Attributes...)
			}
			r.mu.Lock()
			r.spans = append(r.spans, s)
			r.mu.Unlock()
			return context.WithValue(ctx, walkSpanKey{}, s), tracing.NewSpan(tracing.SpanImpl{
				End:           func() { r.mu.Lock(); s.ended = true; r.mu.Unlock() },
				SetAttributes: s.setAttributes,
			})
		}, nil)
	}, nil)
}

func (s *walkSpan) setAttributes(attrs ...tracing.Attribute) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	for _, a := range attrs {
		s.attrs[a.Key] = a.Value
	}
}

// mark returns how many spans were started so far.
func (r *walkTracer) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.spans)
}

// since returns copies of the spans started after mark, in the order they started.
func (r *walkTracer) since(mark int) []walkSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]walkSpan, 0, len(r.spans)-mark)
	for _, s := range r.spans[mark:] {
		c := *s
		c.attrs = maps.Clone(s.attrs)
		out = append(out, c)
	}
	return out
}
