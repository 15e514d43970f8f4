package tables

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// idStore returns a store whose account normalises ids, or keeps them as written.
func idStore(t *testing.T, asWritten bool) *Store[item] {
	t.Helper()
	o := &Options{}
	if asWritten {
		o.IDs = IDsAsWritten
	}
	s, _ := newStore[item](t, o)
	return s
}

func TestResolveID(t *testing.T) {
	long := strings.Repeat("a", engine.MaxKeyLength)
	emoji := strings.Repeat("😀", engine.MaxKeyLength/2) // two UTF-16 code units each
	cases := []struct {
		name   string
		id     string
		asIs   bool // the account keeps ids as written
		stored string
		pk, rk string
		refuse string // a part of the refusal; "" when the id is accepted
	}{
		{"composite", "p|r", false, "p|r", "p", "r", ""},
		{"normalised", "  Acme Corp|Row One ", false, "acme-corp|row-one", "acme-corp", "row-one", ""},
		{"as written", "Acme Corp|Row One", true, "Acme Corp|Row One", "Acme Corp", "Row One", ""},
		{"lone key addresses (key, key)", "solo", false, "solo", "solo", "solo", ""},
		{"row key holds the separator", "p|a|b", false, "p|a|b", "p", "a|b", ""},
		{"longest key", long + "|" + emoji, false, long + "|" + emoji, long, emoji, ""},
		{"empty partition", "|r", false, "", "", "r", "partition key is empty"},
		{"empty row", "p|", false, "", "p", "", "row key is empty"},
		{"empty id", "", false, "", "", "", "partition key is empty"},
		{"blank id", "   ", false, "", "", "", "partition key is empty"},
		{"blank partition", " |x", false, "", "", "x", "partition key is empty"},
		{"spaces next to the separator", "eu | alice", false, "eu-|-alice", "eu-", "-alice", ""},
		{"invalid UTF-8", "p\xff|r", false, "", "", "", "not valid UTF-8"},
		{"invalid UTF-8 as written", "p|r\xfe", true, "", "", "", "not valid UTF-8"},
		{"partition too long", long + "a|r", false, "", long + "a", "r", "513 UTF-16 code units"},
		{"row too long in UTF-16", "p|" + emoji + "😀", false, "", "p", emoji + "😀", "514 UTF-16 code units"},
		{"slash", "p/q|r", false, "", "p/q", "r", `'/'`},
		{"backslash", `p|r\s`, false, "", "p", `r\s`, `'\\'`},
		{"hash", "p|r#", false, "", "p", "r#", `'#'`},
		{"question mark", "p?|r", false, "", "p?", "r", `'?'`},
		{"control character", "p|r\x01", false, "", "p", "r\x01", "U+0001"},
		{"delete", "p|r\x7f", false, "", "p", "r\x7f", "U+007F"},
		{"C1 control", "p|r\u0085s", false, "", "p", "r\u0085s", "U+0085"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := idStore(t, tc.asIs)
			stored, pk, rk, err := s.core.ResolveID("read", tc.id)
			if tc.refuse == "" {
				if err != nil || stored != tc.stored || pk != tc.pk || rk != tc.rk {
					t.Fatalf("resolveID(%q) = %q, %q, %q, %v; want %q, %q, %q", tc.id, stored, pk, rk, err, tc.stored, tc.pk, tc.rk)
				}
				return
			}
			wantKind(t, err, abstractions.ErrInvalidKey)
			if !strings.Contains(err.Error(), tc.refuse) || !strings.Contains(err.Error(), "nothing was sent") {
				t.Errorf("refusal %q does not say %q and that nothing was sent", err, tc.refuse)
			}
			var se *abstractions.StoreError
			if errors.As(err, &se) && (se.PartitionKey != tc.pk || se.RowKey != tc.rk) {
				t.Errorf("refusal names (%q, %q), want (%q, %q)", se.PartitionKey, se.RowKey, tc.pk, tc.rk)
			}
		})
	}
}

// Invalid UTF-8 is refused before normalisation, which would turn every invalid byte into
// U+FFFD and so make different ids address one row; the value is not echoed back.
func TestInvalidUTF8IsRefusedBeforeNormalisation(t *testing.T) {
	s, f := newStore[item](t, nil)
	ctx := context.Background()
	for _, id := range []string{"A\xff|r", "a\xfe|r", "p|\xc0"} {
		err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: id}})
		wantKind(t, err, abstractions.ErrInvalidKey)
		if strings.Contains(err.Error(), "\ufffd") || !utf8.ValidString(err.Error()) {
			t.Errorf("the refusal of %q echoes it: %q", id, err)
		}
	}
	if len(f.calls) != 0 {
		t.Errorf("refused ids sent %v", f)
	}
}

func TestCheckPartition(t *testing.T) {
	cases := []struct {
		name      string
		partition string
		asIs      bool
		want      string
		refuse    string
	}{
		{"plain", "p", false, "p", ""},
		// A partition is normalised as the partition part of an id: its start is trimmed,
		// its end is not (the "|" follows it), spaces are "-".
		{"normalised", " Tenant A ", false, "tenant-a-", ""},
		{"leading white space of every kind", "\t\u00a0\u3000\u2007acme", false, "acme", ""},
		{"trailing no-break space kept", "acme\u00a0", false, "acme\u00a0", ""},
		{"inner no-break space kept", "ac\u00a0me", false, "ac\u00a0me", ""},
		{"Kelvin sign", "\u212aelvin", false, "kelvin", ""},
		{"Ohm sign", "\u2126", false, "\u03c9", ""},
		{"trailing tab", "acme\t", false, "", "control character U+0009"},
		{"all spaces", "   ", false, "", "empty once normalised"},
		{"all white space", "\u00a0\u3000", false, "", "empty once normalised"},
		{"as written", "Tenant A", true, "Tenant A", ""},
		{"spaces as written", " ", true, " ", ""},
		{"empty as written", "", true, "", "is empty"},
		{"separator", "acme|corp", false, "", "ends the partition"},
		{"separator as written", "acme|corp", true, "", "ends the partition"},
		{"empty", "", false, "", "is empty"},
		{"invalid UTF-8", "p\xff", false, "", "not valid UTF-8"},
		{"forbidden", "p#", false, "", `'#'`},
		{"too long", strings.Repeat("x", engine.MaxKeyLength+1), false, "", "the limit is 512"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := idStore(t, tc.asIs)
			got, err := s.core.CheckPartition("list", tc.partition)
			if tc.refuse == "" {
				if err != nil || got != tc.want {
					t.Fatalf("checkPartition(%q) = %q, %v; want %q", tc.partition, got, err, tc.want)
				}
				return
			}
			wantKind(t, err, abstractions.ErrInvalidKey)
			if !strings.Contains(err.Error(), tc.refuse) {
				t.Errorf("refusal %q does not say %q", err, tc.refuse)
			}
		})
	}
}

// Every call that takes an id or a partition refuses a bad one before sending anything.
func TestKeyRefusalsSendNothing(t *testing.T) {
	ctx := context.Background()
	calls := []struct {
		name string
		call func(s *Store[item]) error
	}{
		{"create", func(s *Store[item]) error { return s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|"}}) }},
		{"upsert", func(s *Store[item]) error { return s.Upsert(ctx, &item{Entity: abstractions.Entity{ID: "p#|r"}}) }},
		{"update", func(s *Store[item]) error {
			return s.Update(ctx, &item{Entity: abstractions.Entity{ID: "|r"}}, abstractions.LastWriterWins)
		}},
		{"delete", func(s *Store[item]) error { _, err := s.Delete(ctx, "p?|r", ""); return err }},
		{"one", func(s *Store[item]) error { _, err := s.One(ctx, "p|\x00"); return err }},
		{"exists", func(s *Store[item]) error { _, err := s.Exists(ctx, "\xff"); return err }},
		{"patch", func(s *Store[item]) error {
			_, err := s.Patch(ctx, "p|", abstractions.Set(abstractions.NewPatch[item](), abstractions.Field(func(x *item) *int { return &x.N }), 1))
			return err
		}},
		{"list", func(s *Store[item]) error { _, err := s.List(ctx, "a|b"); return err }},
		{"count", func(s *Store[item]) error { _, err := s.Count(ctx, ""); return err }},
		{"delete partition", func(s *Store[item]) error { _, err := s.DeletePartition(ctx, "a/b"); return err }},
		{"batch", func(s *Store[item]) error {
			return s.CreateBatch(ctx, []*item{{Entity: abstractions.Entity{ID: "p|a"}}, {Entity: abstractions.Entity{ID: "p|b/c"}}})
		}},
		{"query partition", func(s *Store[item]) error {
			_, err := s.Query(ctx, abstractions.Query[item]{Partition: "a|b"})
			return err
		}},
		{"list of white space", func(s *Store[item]) error { _, err := s.List(ctx, " \u00a0\u3000"); return err }},
		{"count of a space", func(s *Store[item]) error { _, err := s.Count(ctx, " "); return err }},
		{"delete partition of a tab", func(s *Store[item]) error { _, err := s.DeletePartition(ctx, "\t"); return err }},
		{"page of white space", func(s *Store[item]) error {
			_, err := s.Page(ctx, abstractions.Query[item]{Partition: "\u2007"})
			return err
		}},
		{"any of white space", func(s *Store[item]) error {
			_, err := s.Any(ctx, abstractions.Query[item]{Partition: "  "})
			return err
		}},
		{"stream of white space", func(s *Store[item]) error {
			for _, err := range s.Stream(ctx, abstractions.Query[item]{Partition: "\u00a0", RowKeyPrefix: "a"}) {
				return err
			}
			return nil
		}},
		{"query prefix", func(s *Store[item]) error {
			_, err := s.Query(ctx, abstractions.Query[item]{Partition: "p", RowKeyPrefix: "a#"})
			return err
		}},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			s, f := newStore[item](t, nil)
			wantKind(t, tc.call(s), abstractions.ErrInvalidKey)
			if len(f.calls) != 0 {
				t.Errorf("a refused key sent %v", f)
			}
		})
	}
}

// A row-key prefix is normalised as the row-key part of an id: every id whose row key goes
// on from the prefix is stored under a row key that starts with the normalised prefix.
func TestRowKeyPrefixIsNormalisedAsRowKeys(t *testing.T) {
	s := idStore(t, false)
	prefixes := []string{"a", "A B", " a", "a ", "\u00a0A", "A\u00a0", "\u212a", "\u2126 ", "\t", "Chat|", "x  y"}
	rests := []string{"x", " X", "\u00a0y", "|z", "-"}
	for _, prefix := range prefixes {
		for _, rest := range rests {
			_, rk := abstractions.SplitID(abstractions.NormalizeID("p|" + prefix + rest))
			if got := s.core.NormalRowKeyPrefix(prefix); !strings.HasPrefix(rk, got) {
				t.Errorf("the id %q is stored under row key %q, which does not start with the prefix %q normalised as %q",
					"p|"+prefix+rest, rk, prefix, got)
			}
		}
	}
	if got := idStore(t, true).core.NormalRowKeyPrefix("A b"); got != "A b" {
		t.Errorf("as written, the prefix %q became %q", "A b", got)
	}
}

// A read by id takes an empty partition or row key, which Azure stores and other programs
// write; every write refuses it, saying that it can be read and why it is not written. An
// id that is empty as a whole is refused by reads too.
func TestResolveReadID(t *testing.T) {
	cases := []struct {
		id, stored, pk, rk string
		refuse             string
	}{
		{"|r", "|r", "", "r", ""},
		{"P|", "p|", "p", "", ""},
		{"|", "|", "", "", ""},
		{" |X", "|x", "", "x", ""},
		{"", "", "", "", "the id is empty"},
		{"   ", "", "", "", "the id is empty"},
		{"|r#", "", "", "r#", `'#'`},
		{"\xff|r", "", "", "", "not valid UTF-8"},
	}
	for _, tc := range cases {
		s := idStore(t, false)
		stored, pk, rk, err := s.core.ResolveReadID("read", tc.id)
		if tc.refuse == "" {
			if err != nil || stored != tc.stored || pk != tc.pk || rk != tc.rk {
				t.Errorf("resolveReadID(%q) = %q, %q, %q, %v; want %q, %q, %q", tc.id, stored, pk, rk, err, tc.stored, tc.pk, tc.rk)
			}
			continue
		}
		wantKind(t, err, abstractions.ErrInvalidKey)
		if !strings.Contains(err.Error(), tc.refuse) {
			t.Errorf("resolveReadID(%q): refusal %q does not say %q", tc.id, err, tc.refuse)
		}
	}
}

func TestEmptyKeysAreReadNotWritten(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	f.put("items",
		service.Row{PartitionKey: "", RowKey: "r", Properties: []service.Property{{Name: "Id", Value: service.String("|r")}, {Name: "Name", Value: service.String("no partition")}}},
		service.Row{PartitionKey: "p", RowKey: "", Properties: []service.Property{{Name: "Id", Value: service.String("p|")}, {Name: "Name", Value: service.String("no row")}}})
	for id, name := range map[string]string{"|r": "no partition", "p|": "no row"} {
		got, err := s.One(ctx, id)
		if err != nil || got.ID != id || got.Name != name {
			t.Errorf("One(%q) = %+v, %v; want the row named %q", id, got, err, name)
		}
		if ok, err := s.Exists(ctx, id); !ok || err != nil {
			t.Errorf("Exists(%q) = %v, %v", id, ok, err)
		}
	}
	if _, err := s.One(ctx, "|missing"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Errorf("One of a missing row with an empty partition key: %v, want ErrNotFound", err)
	}
	f.resetCalls()
	writes := map[string]func(id string) error{
		"create": func(id string) error { return s.Create(ctx, &item{Entity: abstractions.Entity{ID: id}}) },
		"upsert": func(id string) error { return s.Upsert(ctx, &item{Entity: abstractions.Entity{ID: id}}) },
		"update": func(id string) error {
			return s.Update(ctx, &item{Entity: abstractions.Entity{ID: id}}, abstractions.LastWriterWins)
		},
		"patch": func(id string) error {
			_, err := s.Patch(ctx, id, abstractions.Set(abstractions.NewPatch[item](), abstractions.Field(func(x *item) *int { return &x.N }), 1))
			return err
		},
		"delete": func(id string) error { _, err := s.Delete(ctx, id, ""); return err },
	}
	for name, write := range writes {
		for id, which := range map[string]string{"|r": "partition key", "p|": "row key"} {
			err := write(id)
			wantKind(t, err, abstractions.ErrInvalidKey)
			if err != nil && (!strings.Contains(err.Error(), "the "+which+" is empty") || !strings.Contains(err.Error(), "can be read (One, Exists), not written")) {
				t.Errorf("%s %q: the refusal %q does not say which key is empty and that it can be read", name, id, err)
			}
		}
	}
	if len(f.calls) != 0 {
		t.Errorf("refused writes sent %v", f)
	}
	// A refused id gets no turn; Mutate's read takes the id, and its write refuses it.
	_, err := abstractions.Mutate(ctx, s, "|r", func(x *item) error { x.N++; return nil }, nil)
	wantKind(t, err, abstractions.ErrInvalidKey)
	if n := f.count("Write") + f.count("Transact"); n != 0 {
		t.Errorf("Mutate of an id with an empty key wrote: %v", f)
	}
}
