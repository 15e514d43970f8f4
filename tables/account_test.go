package tables_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
)

func TestPing(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	ctx := context.Background()
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := acct.Ping(ctx); err != nil {
		t.Fatalf("ping with the right key: %v", err)
	}

	// The same account with another (well-formed) key: the service refuses the signature.
	wrong := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("not the key ", 4)))
	parts := strings.Split(conn, ";")
	for i, p := range parts {
		if strings.HasPrefix(strings.ToLower(p), "accountkey=") {
			parts[i] = "AccountKey=" + wrong
		}
	}
	bad, err := tables.NewAccount(strings.Join(parts, ";"), &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	err = bad.Ping(ctx)
	if !abstractions.HasStatus(err, http.StatusForbidden, "") {
		t.Fatalf("ping with a wrong key: %v, want a 403 from the service", err)
	}
	var se *abstractions.StoreError
	if !errors.As(err, &se) || se.Op != "ping" || !strings.Contains(se.Message, "credential") {
		t.Errorf("the refusal %v does not say the credential was refused", err)
	}
	if strings.Contains(err.Error(), wrong) {
		t.Errorf("the error repeats the key: %v", err)
	}
}

// An endpoint that cannot be reached fails with ErrUnavailable, within the call's deadline,
// when the account is configured to fail fast.
func TestUnreachableFailsFast(t *testing.T) {
	for name, endpoint := range map[string]string{
		"refused":      "http://127.0.0.1:1/devstoreaccount1",
		"no such host": "http://nohost.invalid/devstoreaccount1",
	} {
		t.Run(name, func(t *testing.T) {
			conn := "AccountName=devstoreaccount1;AccountKey=" + base64.StdEncoding.EncodeToString([]byte("k")) + ";TableEndpoint=" + endpoint
			co := azuritetest.ClientOptions(t)
			co.Retry.TryTimeout = 2 * time.Second
			acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: co})
			if err != nil {
				t.Fatal(err)
			}
			s, err := tables.For[Customer](acct, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = s.One(ctx, "eu|alice")
			if !errors.Is(err, abstractions.ErrUnavailable) {
				t.Fatalf("read of an unreachable account: %v, want ErrUnavailable", err)
			}
			var se *abstractions.StoreError
			if !errors.As(err, &se) || se.Op != "read" || se.Table != "Customer" || se.RowKey != "alice" {
				t.Errorf("the error %v does not name the read, the table and the key", err)
			}
			if err := acct.Ping(ctx); !errors.Is(err, abstractions.ErrUnavailable) {
				t.Errorf("ping of an unreachable account: %v, want ErrUnavailable", err)
			}
		})
	}
}

// A deadline that passes while the request is out ends the call with ErrUnavailable and the
// context's error.
func TestDeadlineEndsTheCall(t *testing.T) {
	// A listener that accepts and never answers.
	ln := stallingListener(t)
	cs := "AccountName=devstoreaccount1;AccountKey=" + base64.StdEncoding.EncodeToString([]byte("k")) + ";TableEndpoint=http://" + ln + "/devstoreaccount1"
	acct, err := tables.NewAccount(cs, &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := tables.For[Customer](acct, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = s.Count(ctx, "eu")
	if !errors.Is(err, abstractions.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("count against a stalled service: %v, want ErrUnavailable and context.DeadlineExceeded", err)
	}
}
