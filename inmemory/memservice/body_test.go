package memservice

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/unified-data/gotables/tables/service"
)

// bodyOf returns properties whose JSON is about n bytes, in 32,000-character strings of a
// control character JSON escapes to six bytes.
func bodyOf(n int) []service.Property {
	var props []service.Property
	chunk := service.String(strings.Repeat("\x01", 32000))
	for i := 0; n > 0; i++ {
		props = append(props, prop("p"+strconv.Itoa(i), chunk))
		n -= 6 * 32000
	}
	return props
}

func TestTransactionBodyTooLarge(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	// Each action alone is under 4 MiB; together they are over it.
	actions := []service.Action{
		insert(row("p", "a", bodyOf(2_200_000)...)),
		insert(row("p", "b", bodyOf(2_200_000)...)),
	}
	err := txErr(s.Transact(ctx, "Tab1", actions))
	wantStatus(t, err, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
	// Alone, each one is a valid write.
	mustWrite(t, s, actions[0])
	if err := txErr(s.Transact(ctx, "Tab1", actions[1:])); err != nil {
		t.Fatal(err)
	}
}
