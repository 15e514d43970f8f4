package codec_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/codec"
	"github.com/unified-data/gotables/tables/service"
)

type withStringer struct {
	abstractions.Entity
	Label fmt.Stringer
}

type withDuration struct {
	abstractions.Entity
	Took time.Duration
}

type withText struct {
	abstractions.Entity
	Note string
}

// An interface with methods could be written as JSON but never read back.
func TestInterfaceWithMethodsIsRefused(t *testing.T) {
	_, err := codec.Encode(&withStringer{}, nil)
	if !errors.Is(err, abstractions.ErrNotSupported) {
		t.Fatalf("Encode: %v, want ErrNotSupported", err)
	}
}

// A stored TimeSpan beyond a Duration's range is refused, never wrapped to a negative value.
func TestTimeSpanOverflow(t *testing.T) {
	for _, text := range []string{"106751.23:59:59", "106752.00:00:00", "-106751.23:59:59"} {
		row := service.Row{PartitionKey: "p", RowKey: "r", Properties: []service.Property{{Name: "Took", Value: service.String(text)}}}
		v, err := codec.Decode[withDuration](&row, nil)
		if err == nil && (v.Took < 0) != (text[0] == '-') {
			t.Errorf("%s read as %v", text, v.Took)
		}
	}
	row := service.Row{PartitionKey: "p", RowKey: "r", Properties: []service.Property{{Name: "Took", Value: service.String("1.02:03:04.5")}}}
	v, err := codec.Decode[withDuration](&row, nil)
	if err != nil || v.Took != 26*time.Hour+3*time.Minute+4*time.Second+500*time.Millisecond {
		t.Fatalf("1.02:03:04.5 read as %v, %v", v, err)
	}
}

// Text that is not UTF-8 is refused as a caller error, since the service would change it.
func TestInvalidUTF8IsRefused(t *testing.T) {
	_, err := codec.Encode(&withText{Note: "a\xffb"}, nil)
	var ve *codec.ValueError
	if !errors.As(err, &ve) || !errors.Is(err, abstractions.ErrInvalidArgument) || ve.Column != "Note" {
		t.Fatalf("Encode: %v", err)
	}
}
