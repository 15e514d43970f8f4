package identitytables_test

import (
	"context"
	"fmt"
	"log"

	"github.com/unified-data/gotables/identity"
	"github.com/unified-data/gotables/identity/identitytables"
	"github.com/unified-data/gotables/inmemory"
)

// The identity stores over an account, in one call. The account here is in memory; one
// from tables.NewAccount gives the same stores over Azure Table Storage, in the tables an
// ASP.NET Core host using the .NET library reads.
func ExampleFor() {
	ctx := context.Background()
	t, err := identitytables.For(inmemory.NewAccount(nil), nil)
	if err != nil {
		log.Fatal(err)
	}
	users, err := identity.NewUserStore(t, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := users.Create(ctx, &identity.User{UserName: "alice", Email: "alice@example.com"}); err != nil {
		log.Fatal(err)
	}
	u, err := users.FindByEmail(ctx, identity.NormalizeName("Alice@Example.com"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.UserName, "is in table", t.Users.Table())
	// Output: alice is in table IdentityUserModel
}
