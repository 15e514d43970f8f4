package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/service"
)

func TestBenchAndInspectHelp(t *testing.T) {
	for _, name := range []string{"bench", "inspect"} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{name, "--help"}, &out, &errb); code != 0 {
			t.Fatalf("%s --help: exit %d, stderr %q", name, code, errb.String())
		}
		if !strings.Contains(out.String(), "Usage: udtables "+name) || !strings.Contains(out.String(), "-azurite") {
			t.Errorf("%s --help:\n%s", name, out.String())
		}
	}
}

// TestBenchAndInspectFailures checks that mistakes end with status 1 and one line.
func TestBenchAndInspectFailures(t *testing.T) {
	defer func(d time.Duration) { connectTimeout = d }(connectTimeout)
	connectTimeout = 2 * time.Second
	closed := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" +
		"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
		"TableEndpoint=http://127.0.0.1:1/devstoreaccount1;"
	for _, args := range [][]string{
		{"bench", "--connection-string", "not a connection string"},
		{"bench", "--connection-string", closed},
		{"bench", "--ops", "0"},
		{"bench", "--azurite", "--connection-string", closed},
		{"inspect", "--connection-string", "not a connection string", "--table", "abc"},
		{"inspect", "--connection-string", closed, "--table", "abc"},
		{"inspect", "--azurite"},
		{"inspect", "--azurite", "--table", "no_such"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		msg := errb.String()
		if code != 1 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "udtables "+args[0]+": ") || strings.Contains(msg, "goroutine") {
			t.Errorf("%q: exit %d, stderr %q; want 1 and one line", args, code, msg)
		}
	}
}

func TestInspectOnAzurite(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	svc, err := azservice.NewFromConnectionString(conn, &azservice.Options{
		ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	table := "udtinspect" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	if err := svc.CreateTable(ctx, table); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := svc.DeleteTable(context.WithoutCancel(ctx), table); err != nil {
			t.Error(err)
		}
	}()
	at := time.Date(2026, 11, 29, 18, 30, 0, 0, time.UTC)
	for i, pk := range []string{"p1", "p1", "p2"} {
		row := service.Row{PartitionKey: pk, RowKey: "r" + string(rune('0'+i)), Properties: []service.Property{
			{Name: "Name", Value: service.String("Ada Lovelace")},
			{Name: "Visits", Value: service.Int64(42)},
			{Name: "Small", Value: service.Int32(7)},
			{Name: "Score", Value: service.Double(1.5)},
			{Name: "Paid", Value: service.Bool(true)},
			{Name: "Seen", Value: service.DateTime(at)},
			{Name: "Blob", Value: service.Binary([]byte{1, 2, 3})},
			{Name: "Trace", Value: service.Guid([16]byte{0x6f, 0x96, 0x19, 0xff})},
		}}
		if _, err := svc.Write(ctx, table, service.Action{Op: service.OpInsert, Row: row}); err != nil {
			t.Fatal(err)
		}
	}

	var out, errb bytes.Buffer
	if code := run(ctx, []string{"inspect", "--connection-string", conn, "--table", table, "--partition", "p1"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{
		`row 1: PartitionKey "p1", RowKey "r0"`,
		`row 2: PartitionKey "p1", RowKey "r1"`,
		"ETag       W/",
		"Timestamp  20",
		`Name    Edm.String          24  "Ada Lovelace"`,
		"Visits  Edm.Int64            8  42",
		"Small   Edm.Int32            4  7",
		"Score   Edm.Double           8  1.5",
		"Paid    Edm.Boolean          1  true",
		"Seen    Edm.DateTime         8  2026-11-29T18:30:00.0000000Z",
		"Blob    Edm.Binary           3  010203",
		"Trace   Edm.Guid            16  6f9619ff-0000-0000-0000-000000000000",
		"8 columns, 72 bytes of values",
		`partition "p1": 2 rows`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, `"p2"`) {
		t.Errorf("the partition filter let p2 through:\n%s", s)
	}

	out.Reset()
	if code := run(ctx, []string{"inspect", "--connection-string", conn, "--table", table, "--top", "1"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.Count(out.String(), "row ") != 1 || !strings.Contains(out.String(), "the first 1 rows (--top)") {
		t.Errorf("--top 1 printed:\n%s", out.String())
	}
}
