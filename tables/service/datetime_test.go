package service

import (
	"testing"
	"time"
)

func TestParseDateTime(t *testing.T) {
	cases := []struct {
		text string
		want string // the time in FormatDateTime's form; "" when refused
	}{
		{"2024-01-02T03:04:05.1234567Z", "2024-01-02T03:04:05.1234567Z"},
		{"2024-01-02T03:04:05Z", "2024-01-02T03:04:05.0000000Z"},
		{"2024-01-02T03:04:05.5Z", "2024-01-02T03:04:05.5000000Z"},
		{"2024-01-02T05:04:05.1234567+02:00", "2024-01-02T03:04:05.1234567Z"},
		{"2024-01-01T22:34:05-04:30", "2024-01-02T03:04:05.0000000Z"},
		{"2024-01-02T03:04:05+00:00", "2024-01-02T03:04:05.0000000Z"},
		{"2024-01-02T17:04:05+14:00", "2024-01-02T03:04:05.0000000Z"},
		{"2024-02-29T00:00:00Z", "2024-02-29T00:00:00.0000000Z"},
		{"0001-01-01T00:00:00Z", "0001-01-01T00:00:00.0000000Z"},
		{"9999-12-31T23:59:59.9999999Z", "9999-12-31T23:59:59.9999999Z"},
		{"2024-01-02", ""},
		{"2024-01-02T03:04:05", ""},
		{"2024-01-02T03:04Z", ""},
		{"2024-01-02T03:04:05.12345678Z", ""},
		{"2024-01-02T03:04:05.Z", ""},
		{"2024-02-30T00:00:00Z", ""},
		{"2023-02-29T00:00:00Z", ""},
		{"2024-13-01T00:00:00Z", ""},
		{"2024-00-01T00:00:00Z", ""},
		{"2024-01-00T00:00:00Z", ""},
		{"2024-01-01T24:00:00Z", ""},
		{"2024-01-01T00:60:00Z", ""},
		{"2016-12-31T23:59:60Z", ""},
		{"2024-01-02t03:04:05Z", ""},
		{"2024-01-02T03:04:05z", ""},
		{"2024-01-02T03:04:05+15:00", ""},
		{"2024-01-02T03:04:05+01:60", ""},
		{"2024-01-02T03:04:05+0100", ""},
		{"2024-01-02T03:04:05Zjunk", ""},
		{"0000-06-01T00:00:00Z", ""},
		{"0001-01-01T00:00:00+01:00", ""}, // year 0 in UTC
		{"9999-12-31T23:00:00-01:00", ""}, // year 10000 in UTC
		{"+2024-01-02T03:04:05Z", ""},
		{"", ""},
	}
	for _, tc := range cases {
		got, err := ParseDateTime(tc.text)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseDateTime(%q) = %v, want a refusal", tc.text, got)
		case tc.want != "" && (err != nil || FormatDateTime(got) != tc.want || got.Location() != time.UTC):
			t.Errorf("ParseDateTime(%q) = %v, %v; want %s in UTC", tc.text, got, err, tc.want)
		}
	}
}

// ReadDateTime takes the service's text and, beyond it, any RFC 3339 time.
func TestReadDateTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2021-04-06T21:03:31.9231271Z", time.Date(2021, 4, 6, 21, 3, 31, 923127100, time.UTC), true},
		{"2021-04-06T21:03:31Z", time.Date(2021, 4, 6, 21, 3, 31, 0, time.UTC), true},
		{"2021-04-06T21:03:31.123456789Z", time.Date(2021, 4, 6, 21, 3, 31, 123456789, time.UTC), true},
		{"1601-01-01T00:00:00.0000000Z", time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{"9999-12-31T23:59:59.9999999Z", time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC), true},
		{"2024-02-29T00:00:00Z", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), true},
		{"2021-04-06T23:03:31+02:00", time.Date(2021, 4, 6, 21, 3, 31, 0, time.UTC), true},
		{"2023-02-29T00:00:00Z", time.Time{}, false},
		{"2021-13-06T21:03:31Z", time.Time{}, false},
		{"2021-04-06T24:03:31Z", time.Time{}, false},
		{"2021-04-06T21:03:31.Z", time.Time{}, false},
		{"2021-04-06T21:03:31.1234567890Z", time.Date(2021, 4, 6, 21, 3, 31, 123456789, time.UTC), true}, // RFC 3339 fallback
		{"2021-04-06 21:03:31Z", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, tc := range tests {
		got, err := ReadDateTime(tc.in)
		if (err == nil) != tc.ok || !got.Equal(tc.want) {
			t.Errorf("ReadDateTime(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
		if err == nil && got.Location() != time.UTC {
			t.Errorf("ReadDateTime(%q) is in %v, want UTC", tc.in, got.Location())
		}
	}
}

// FormatDateTime's text reads back as the same instant, at the service's precision.
func TestDateTimeRoundTrip(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 11, 29, 18, 30, 11, 123456700, time.UTC),
		time.Date(2026, 11, 29, 20, 30, 11, 0, time.FixedZone("", 2*3600)),
		time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC),
	} {
		text := FormatDateTime(tm)
		back, err := ParseDateTime(text)
		if err != nil || !back.Equal(tm) {
			t.Errorf("%v → %q → %v, %v", tm, text, back, err)
		}
	}
}

func BenchmarkParseDateTime(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseDateTime("2026-11-29T18:30:11.1234567Z"); err != nil {
			b.Fatal(err)
		}
	}
}
