package requestsize

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func entity(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEntityBytes(t *testing.T) {
	e := entity(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "Name": "жж", "N": 5,
		"Big": "12", "Big@odata.type": "Edm.Int64", "Data": "AAEC", "Data@odata.type": "Edm.Binary"})
	// 4 + keys (2+2) + Name (8+8+4+4) + N (8+2+4) + Big (8+6+8) + Data (8+8+3+4)
	want := 4 + 4 + (8 + 8 + 4 + 4) + (8 + 2 + 4) + (8 + 6 + 8) + (8 + 8 + 3 + 4)
	if got, err := EntityBytes(e); err != nil || got != want {
		t.Fatalf("EntityBytes = %d, %v; want %d", got, err, want)
	}
	if _, err := EntityBytes([]byte("[1]")); err == nil {
		t.Fatal("a JSON array was measured")
	}
}

func TestEntityWireBytes(t *testing.T) {
	e := []byte(`{"PartitionKey":"p","RowKey":"r","S":"a<b","D":5.0,"D@odata.type":"Edm.Double"}`)
	got, err := EntityWireBytes(e)
	if err != nil {
		t.Fatal(err)
	}
	// encoding/json escapes < as \u003c and writes 5.0 as 5.
	if want := len(`{"D":5,"D@odata.type":"Edm.Double","PartitionKey":"p","RowKey":"r","S":"a\u003cb"}`); got != want {
		t.Fatalf("EntityWireBytes = %d, want %d", got, want)
	}
}

func TestFitsOneTransaction(t *testing.T) {
	big := strings.Repeat("x", 30000)
	var acts []aztables.TransactionAction
	for i := 0; i < 60; i++ {
		acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
			Entity: entity(t, map[string]any{"PartitionKey": "p", "RowKey": strings.Repeat("r", i+1), "A": big})})
	}
	cases := []struct {
		name string
		acts []aztables.TransactionAction
		fits bool
	}{
		{"40 rows of 60 KB", acts[:40], true},
		{"60 rows of 60 KB: 3.6 MB stored", acts, false},
		{"a row twice", append(acts[:2:2], acts[0]), false},
		{"two partitions", append(acts[:1:1], aztables.TransactionAction{ActionType: aztables.TransactionTypeDelete,
			Entity: entity(t, map[string]any{"PartitionKey": "q", "RowKey": "r"})}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fits, reason, err := FitsOneTransaction(tc.acts)
			if err != nil || fits != tc.fits || (fits != (reason == "")) {
				t.Fatalf("fits=%v reason=%q err=%v; want fits=%v", fits, reason, err, tc.fits)
			}
		})
	}
}
