package tables

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
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
	long := strings.Repeat("a", MaxKeyLength)
	emoji := strings.Repeat("😀", MaxKeyLength/2) // two UTF-16 code units each
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
			stored, pk, rk, err := s.resolveID("read", tc.id)
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
		{"normalised", " Tenant A ", false, "tenant-a", ""},
		{"as written", "Tenant A", true, "Tenant A", ""},
		{"separator", "acme|corp", false, "", "ends the partition"},
		{"separator as written", "acme|corp", true, "", "ends the partition"},
		{"empty", "", false, "", "is empty"},
		{"invalid UTF-8", "p\xff", false, "", "not valid UTF-8"},
		{"forbidden", "p#", false, "", `'#'`},
		{"too long", strings.Repeat("x", MaxKeyLength+1), false, "", "the limit is 512"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := idStore(t, tc.asIs)
			got, err := s.checkPartition("list", tc.partition)
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
			_, err := s.Patch(ctx, "p|", abstractions.Set(abstractions.NewPatch[item](), func(x *item) *int { return &x.N }, 1))
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
