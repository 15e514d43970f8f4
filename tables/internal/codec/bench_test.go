package codec_test

import (
	"encoding/json"
	"testing"

	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/codec/codectest"
	"github.com/unified-data/gotables/tables/service"
)

// The benchmarks convert the reference entity (20 fields, one nested struct, one slice)
// with the codec and by hand, the way aztables users write it: a map[string]any with
// explicit @odata.type annotations, marshalled with encoding/json, and on a read a map from
// json.Unmarshal converted field by field. The "cells" benchmarks compare the
// struct ⇄ cells step alone (the map is the hand-written code's cells); the "json"
// benchmarks add the hand-written request and response JSON for reference.

func TestHandConversionMatches(t *testing.T) {
	c := codectest.Reference()
	m, err := codectest.HandEncode(c, "eu", "alice")
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	got, err := codectest.HandDecode(back)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, got, c)
}

func BenchmarkEncode(b *testing.B) {
	c := codectest.Reference()
	b.Run("cells/codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := codec.EncodeRow(c, "eu", "alice", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cells/hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := codectest.HandEncode(c, "eu", "alice"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json/hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m, err := codectest.HandEncode(c, "eu", "alice")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	c := codectest.Reference()
	row, err := codec.EncodeRow(c, "eu", "alice", nil)
	if err != nil {
		b.Fatal(err)
	}
	row.ETag, row.Timestamp = `W/"datetime'2024-01-01T00%3A00%3A00.0000000Z'"`, refTime
	m, err := codectest.HandEncode(c, "eu", "alice")
	if err != nil {
		b.Fatal(err)
	}
	m["odata.etag"], m["Timestamp"] = row.ETag, service.FormatDateTime(row.Timestamp)
	body, err := json.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	var parsed map[string]any
	if err := json.Unmarshal(body, &parsed); err != nil {
		b.Fatal(err)
	}
	b.Run("cells/codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := codec.Decode[Customer](&row, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cells/hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := codectest.HandDecode(parsed); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json/hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
			if _, err := codectest.HandDecode(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
