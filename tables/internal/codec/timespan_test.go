package codec_test

import (
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

func TestDurationText(t *testing.T) {
	cases := []struct {
		text string
		want time.Duration
		ok   bool
	}{
		{"00:00:00", 0, true},
		{"23:59:59.9999999", 24*time.Hour - 100, true},
		{"-00:00:00.1", -100 * time.Millisecond, true},
		{"106751.23:47:16.8547758", 106751*24*time.Hour + 23*time.Hour + 47*time.Minute + 16*time.Second + 854775800, true},
		{"106751.23:47:16.8547759", 0, false}, // beyond a Duration
		{"10675199.02:48:05.4775807", 0, false},
		{"106751.23:59:59", 0, false}, // beyond a Duration, never wrapped to a negative one
		{"106752.00:00:00", 0, false},
		{"-106751.23:59:59", 0, false},
		{"1.02:03:04.5", 26*time.Hour + 3*time.Minute + 4*time.Second + 500*time.Millisecond, true},
		{"24:00:00", 0, false},
		{"1:00:00", 0, false}, // .NET writes two-digit hours
		{"00:60:00", 0, false},
		{"00:00:00.12345678", 0, false},
		{"a.00:00:00", 0, false},
		{"00:00", 0, false},
		{"-1.5h", -90 * time.Minute, true},
		{"", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			row := service.Row{Properties: []service.Property{{Name: "D", Value: service.String(tc.text)}}}
			out, err := codec.Decode[Scalars](&row, nil)
			if !tc.ok {
				if err == nil || !strings.Contains(err.Error(), "duration") {
					t.Fatalf("read %v, err %v", out, err)
				}
				return
			}
			if err != nil || out.D != tc.want {
				t.Fatalf("read %v, err %v", out, err)
			}
		})
	}
}

func TestGzipBombIsRefused(t *testing.T) {
	row := service.Row{Properties: []service.Property{
		{Name: "S__GZip", Value: service.BinaryNoCopy(gzipOf(t, strings.Repeat("\x00", 40<<20)))},
	}}
	_, err := codec.Decode[Scalars](&row, nil)
	if err == nil || !strings.Contains(err.Error(), "inflates beyond") {
		t.Fatalf("error %v", err)
	}
}
