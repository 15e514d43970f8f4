package plan

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		filter string
		want   Class
	}{
		{"", TableScan},
		{"PartitionKey eq 'p'", PartitionScan},
		{"PartitionKey eq 'p' and (Name eq 'x')", PartitionScan},
		{"PartitionKey eq 'p' and RowKey eq 'r'", PointRead},
		{"(PartitionKey eq 'it''s') and (RowKey eq 'r') and (Age gt 3)", PointRead},
		{"PartitionKey eq 'p' and RowKey ge 'a' and RowKey lt 'b'", RowRange},
		{"PartitionKey eq 'p' and (RowKey eq 'a' or RowKey eq 'b')", RowRange},
		{"PartitionKey eq 'p' or PartitionKey eq 'q'", Partitions},
		{"PartitionKey eq 'p' or PartitionKey eq 'p'", PartitionScan},
		{"PartitionKey ge 'a' and PartitionKey lt 'b'", Partitions},
		{"'a' le PartitionKey", Partitions},
		{"PartitionKey eq 'p' or Name eq 'x'", TableScan},
		{"RowKey eq 'r'", TableScan},
		{"not (PartitionKey eq 'p')", TableScan},
		{"PartitionKey ne 'p'", TableScan},
		{"Name eq 'x' and Timestamp ge datetime'2024-01-01T00:00:00Z'", TableScan},
		{"Active", TableScan},
		{"PartitionKey eq 'p' and Active", PartitionScan},
		{"PartitionKey eq 'unterminated", TableScan},
		{"PartitionKey eq", TableScan},
	} {
		if got := Of(tc.filter); got.Class != tc.want || got.Filter != tc.filter {
			t.Errorf("Of(%q) = %v, want %v", tc.filter, got, tc.want)
		}
	}
}

func TestShape(t *testing.T) {
	for in, want := range map[string]string{
		"PartitionKey eq 'p' and (Name eq 'it''s, (x)')":                "PartitionKey eq ? and (Name eq ?)",
		"Age gt 3 and When lt datetime'2024-01-01T00:00:00Z'":           "Age gt ? and When lt ?",
		"Id eq guid'00000000-0000-0000-0000-000000000000' or Big eq 5L": "Id eq ? or Big eq ?",
		"not (Active)": "not (Active)",
	} {
		if got := Shape(in); got != want {
			t.Errorf("Shape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClassString(t *testing.T) {
	for c, want := range map[Class]string{PointRead: "point_read", RowRange: "row_range", PartitionScan: "partition_scan", Partitions: "partitions", TableScan: "table_scan"} {
		if c.String() != want {
			t.Errorf("%d: %q", c, c.String())
		}
	}
}
