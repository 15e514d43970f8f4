package azservice

import (
	"testing"
	"time"
)

func TestETagTime(t *testing.T) {
	tests := []struct {
		name  string
		etag  string
		want  time.Time
		valid bool
	}{
		{"service shape", `W/"datetime'2021-04-06T21%3A03%3A31.9231271Z'"`, time.Date(2021, 4, 6, 21, 3, 31, 923127100, time.UTC), true},
		{"unescaped colons", `W/"datetime'2021-04-06T21:03:31.9231271Z'"`, time.Date(2021, 4, 6, 21, 3, 31, 923127100, time.UTC), true},
		{"no fraction", `W/"datetime'2026-11-29T18%3A30%3A11Z'"`, time.Date(2026, 11, 29, 18, 30, 11, 0, time.UTC), true},
		{"three digits", `W/"datetime'2026-11-29T18%3A30%3A11.5Z'"`, time.Date(2026, 11, 29, 18, 30, 11, 500000000, time.UTC), true},
		{"blob etag", `"0x8DC1234567890AB"`, time.Time{}, false},
		{"empty", ``, time.Time{}, false},
		{"unterminated", `W/"datetime'2021-04-06T21%3A03%3A31.9231271Z`, time.Time{}, false},
		{"bad escape", `W/"datetime'2021-04-06T21%3G03%3A31Z'"`, time.Time{}, false},
		{"not a time", `W/"datetime'yesterday'"`, time.Time{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := etagTime(tc.etag)
			if ok != tc.valid || !got.Equal(tc.want) {
				t.Fatalf("etagTime(%q) = %v, %v; want %v, %v", tc.etag, got, ok, tc.want, tc.valid)
			}
			if ok && got.Location() != time.UTC {
				t.Fatalf("etagTime(%q) is in %v, want UTC", tc.etag, got.Location())
			}
		})
	}
}
