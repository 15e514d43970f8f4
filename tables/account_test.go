package tables_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// azuriteConn returns the test connection string, skipping (or failing, when the emulator is
// required) without one.
func azuriteConn(t *testing.T) string {
	t.Helper()
	conn := os.Getenv("UNIFIED_TABLES_TEST_CONNECTION_STRING")
	if conn == "" {
		if os.Getenv("UNIFIED_TABLES_REQUIRE_AZURITE") == "1" {
			t.Fatal("UNIFIED_TABLES_REQUIRE_AZURITE=1 but UNIFIED_TABLES_TEST_CONNECTION_STRING is not set")
		}
		t.Skip("UNIFIED_TABLES_TEST_CONNECTION_STRING is not set")
	}
	return conn
}

// ownTransport returns client options on a transport of the test's own, whose idle
// connections are closed when the test ends (the leak check runs after).
func ownTransport(t *testing.T) azcore.ClientOptions {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return azcore.ClientOptions{Transport: &http.Client{Transport: tr}, Retry: policy.RetryOptions{MaxRetries: -1}}
}

func TestPing(t *testing.T) {
	conn := azuriteConn(t)
	ctx := context.Background()
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: ownTransport(t)})
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
	bad, err := tables.NewAccount(strings.Join(parts, ";"), &tables.Options{ClientOptions: ownTransport(t)})
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
			co := ownTransport(t)
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
	acct, err := tables.NewAccount(cs, &tables.Options{ClientOptions: ownTransport(t)})
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
