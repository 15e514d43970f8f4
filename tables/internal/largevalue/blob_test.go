package largevalue

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

func TestEscapeSegment(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "%"},
		{".", "%2E"},
		{"..", "%2E%2E"},
		{"a.b", "a%2Eb"},
		{"Tenant-A_1~x", "Tenant-A_1~x"},
		{"a/b c", "a%2Fb%20c"},
		{"%", "%25"},
		{"é", "%C3%A9"},
		{"a|b", "a%7Cb"},
	}
	for _, tc := range tests {
		if got := EscapeSegment(tc.in); got != tc.want {
			t.Errorf("EscapeSegment(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back, ok := UnescapeSegment(tc.want); !ok || back != tc.in {
			t.Errorf("UnescapeSegment(%q) = %q, %v; want %q", tc.want, back, ok, tc.in)
		}
	}
	for _, bad := range []string{"", ".", "a.b", "%2e", "%41", "%2", "a%", "a b", "a%%"} {
		if _, ok := UnescapeSegment(bad); ok {
			t.Errorf("UnescapeSegment(%q) accepted a segment EscapeSegment never writes", bad)
		}
	}
}

func TestParseBlobName(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	name := BlobName("Docs", "", "a.b", "Inner_Body", sha)
	if name != "Docs/%/a%2Eb/Inner_Body/"+sha {
		t.Fatalf("BlobName = %q", name)
	}
	got, ok := ParseBlobName(name)
	if !ok || got != (ParsedBlobName{Table: "Docs", PartitionKey: "", RowKey: "a.b", Column: "Inner_Body", SHA256: sha}) {
		t.Fatalf("ParseBlobName = %+v, %v", got, ok)
	}
	for _, bad := range []string{
		"Docs/p/r/Body/" + strings.ToUpper(sha),
		"Docs/p/r/Body/" + sha[:63],
		"Docs/p/r/" + sha,
		"Docs/p/r/Body/x/" + sha,
		"Docs/p/r/notes.txt",
		"Docs/p/r.x/Body/" + sha,
	} {
		if _, ok := ParseBlobName(bad); ok {
			t.Errorf("ParseBlobName(%q) accepted a name not of the offload shape", bad)
		}
	}
}

func TestBlobRef(t *testing.T) {
	ref := BlobRef{Path: "T/p/r/Body/" + strings.Repeat("0", 64), SHA256: strings.Repeat("0", 64), Length: 7, ContentType: "text/plain", Encoding: EncText}
	v := ref.Value()
	if !strings.Contains(v.Str(), `"path":"T/p/r/Body/`) || !strings.Contains(v.Str(), `"contentType":"text/plain"`) {
		t.Errorf("reference JSON = %s", v.Str())
	}
	back, ok := ParseBlobRef(v)
	if !ok || back != ref {
		t.Errorf("ParseBlobRef = %+v, %v", back, ok)
	}
	// Member names match without regard to case, as .NET writes them.
	pascal := service.String(`{"Path":"x","Sha256":"` + strings.Repeat("A", 64) + `","Length":1,"ContentType":"a","Encoding":"gzip"}`)
	if r, ok := ParseBlobRef(pascal); !ok || r.SHA256 != strings.Repeat("a", 64) {
		t.Errorf("PascalCase reference = %+v, %v", r, ok)
	}
	for _, bad := range []service.Value{
		service.Int32(1),
		service.String("not json"),
		service.String(`{"path":"","sha256":"` + strings.Repeat("0", 64) + `","length":1,"encoding":"text"}`),
		service.String(`{"path":"x","sha256":"00","length":1,"encoding":"text"}`),
		service.String(`{"path":"x","sha256":"` + strings.Repeat("0", 64) + `","length":-1,"encoding":"text"}`),
		service.String(`{"path":"x","sha256":"` + strings.Repeat("0", 64) + `","length":1,"encoding":"zip"}`),
	} {
		if _, ok := ParseBlobRef(bad); ok {
			t.Errorf("ParseBlobRef(%v) accepted a malformed reference", bad)
		}
	}
}

func TestDecodeBlob(t *testing.T) {
	col := Column{Name: "Body", Cell: "Body"}
	enc, stored := Stored(service.String("hello hello hello"), EncGzip)
	sp := SplitValue("Body", service.String("hello hello hello"), EncGzip)
	ref := BlobRef{Path: "p", SHA256: sp.SHA256, Length: int64(len(stored)), Encoding: enc}
	prop, err := DecodeBlob(col, ref, stored)
	if err != nil || prop.Value.Str() != "hello hello hello" {
		t.Fatalf("DecodeBlob = %v, %v", prop, err)
	}
	damaged := bytes.Clone(stored)
	damaged[len(damaged)-1] ^= 1
	if _, err := DecodeBlob(col, ref, damaged); !errors.Is(err, abstractions.ErrIntegrity) {
		t.Errorf("damaged blob = %v, want ErrIntegrity", err)
	}
	if _, err := DecodeBlob(col, ref, stored[:3]); !errors.Is(err, abstractions.ErrIntegrity) {
		t.Errorf("short blob = %v, want ErrIntegrity", err)
	}
}

func TestPlanOffload(t *testing.T) {
	off := &Offload{Table: "Docs", Threshold: 100_000}
	bin := func(n int) service.Value { return service.Binary(bytes.Repeat([]byte{7}, n)) }
	tests := []struct {
		name      string
		value     Value
		off       *Offload
		wantBlobs int
		wantErr   error
	}{
		{"fits a cell", Value{Column: "Data", Cell: "Data", Value: bin(60_000), Encoding: EncBinary, Offload: true}, off, 0, nil},
		{"at the threshold", Value{Column: "Data", Cell: "Data", Value: bin(100_000), Encoding: EncBinary, Offload: true}, off, 0, nil},
		{"above the threshold", Value{Column: "Data", Cell: "Data", Value: bin(100_001), Encoding: EncBinary, Offload: true}, off, 1, nil},
		{"offload forbidden", Value{Column: "Data", Cell: "Data", Value: bin(100_001), Encoding: EncBinary}, off, 0, nil},
		{"beyond a transaction, forbidden", Value{Column: "Data", Cell: "Data", Value: bin(3_000_000), Encoding: EncBinary}, off, 0, abstractions.ErrOversizedValue},
		{"beyond a transaction, no offload", Value{Column: "Data", Cell: "Data", Value: bin(3_000_000), Encoding: EncBinary, Offload: true}, nil, 0, abstractions.ErrOversizedValue},
		{"beyond a transaction under a high threshold", Value{Column: "Data", Cell: "Data", Value: bin(3_000_000), Encoding: EncBinary, Offload: true},
			&Offload{Table: "Docs", Threshold: MaxThreshold}, 1, nil},
		{"a file", Value{Column: "File", Ref: &BlobRef{SHA256: strings.Repeat("0", 64), Length: 3, Encoding: EncFile}}, off, 1, nil},
		{"a file without offload", Value{Column: "File", Ref: &BlobRef{SHA256: strings.Repeat("0", 64), Length: 3, Encoding: EncFile}}, nil, 0, abstractions.ErrOversizedValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lay, err := Plan("p", "r", nil, []Value{tc.value}, tc.off, Budget{})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(lay.Blobs) != tc.wantBlobs {
				t.Fatalf("%d blobs, want %d", len(lay.Blobs), tc.wantBlobs)
			}
			for _, b := range lay.Blobs {
				if _, ok := lay.Rows[0].Get(b.Column + BlobSuffix); !ok {
					t.Errorf("the main row holds no reference for %s", b.Column)
				}
				if p, ok := ParseBlobName(b.Ref.Path); !ok || p.Table != "Docs" || p.Column != b.Column {
					t.Errorf("blob name %q", b.Ref.Path)
				}
			}
		})
	}
	long := strings.Repeat("k", 600)
	_, err := Plan(long, long, nil, []Value{{Column: "File", Ref: &BlobRef{SHA256: strings.Repeat("0", 64), Encoding: EncFile}}}, off, Budget{})
	if !errors.Is(err, abstractions.ErrInvalidKey) {
		t.Errorf("a blob name over 1,024 characters = %v, want ErrInvalidKey", err)
	}
}
