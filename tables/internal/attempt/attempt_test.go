package attempt

import (
	"context"
	"testing"
	"time"
)

func TestAttempts(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, "v"), time.Hour)
	defer cancel()
	ctx, a := WithAttempts(parent)
	if a.Retried() || a.Count() != 0 {
		t.Fatalf("a new Attempts: %d", a.Count())
	}
	CountAttempt(ctx)
	if a.Retried() {
		t.Fatal("one try is not a retry")
	}
	CountAttempt(ctx)
	if !a.Retried() || a.Count() != 2 {
		t.Fatalf("two tries: %d", a.Count())
	}
	// The context keeps its parent's values, deadline and cancellation.
	if ctx.Value(key{}) != "v" {
		t.Error("the parent's value is lost")
	}
	if _, ok := ctx.Deadline(); !ok {
		t.Error("the parent's deadline is lost")
	}
	cancel()
	if ctx.Err() == nil {
		t.Error("the parent's cancellation is lost")
	}
	bctx, b := WithAttempts(parent)
	NoteRetry(bctx)
	if !b.Retried() || b.Count() != 0 {
		t.Fatalf("a noted resend: retried %v, count %d", b.Retried(), b.Count())
	}
	CountAttempt(context.Background()) // no Attempts: nothing to count, no panic
	NoteRetry(context.Background())
	var none *Attempts
	if none.Count() != 0 || none.Retried() {
		t.Error("a nil Attempts counts")
	}
}
