package blobdocs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/service"
)

// The fault cases against the real services, on both backends, are the fidelity module's
// TestBlobDocumentFaultMatrix. These tests pin what this package decides after a lost
// response, over the scripted service behind faults.Blobs, which resends as the SDK does.

type echoFixture struct {
	s      *script
	faulty *faults.Blobs
	states *StateDocuments[invoice]
	docs   *Documents[invoice]
}

func newEchoFixture(t *testing.T) *echoFixture {
	t.Helper()
	s := newScript()
	fb := faults.NewBlobs(s)
	registry := func() *Registry {
		r, err := New(fb, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	states, err := RegisterState[invoice](registry(), Registration{Container: "sagas", BlobName: byID})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Register[invoice](registry(), Registration{Container: "docs", BlobName: byID})
	if err != nil {
		t.Fatal(err)
	}
	return &echoFixture{s: s, faulty: fb, states: states, docs: docs}
}

// total returns the Total stored as the document id in container, or -1 when there is no
// blob.
func (f *echoFixture) total(t *testing.T, container, id string) float64 {
	t.Helper()
	f.s.mu.Lock()
	b, ok := f.s.blobs[container+"//"+id+".json"]
	f.s.mu.Unlock()
	if !ok {
		return -1
	}
	var v invoice
	if err := json.Unmarshal(b.data, &v); err != nil {
		t.Fatal(err)
	}
	return v.Total
}

// otherWriter makes the next upload meet a document another writer stored just before it.
func (f *echoFixture) otherWriter(id string) {
	f.s.upload = func(service.UploadOptions) error {
		f.s.upload = nil
		f.s.seq++
		f.s.blobs["sagas//"+id+".json"] = stored{[]byte(`{"Number":"theirs","Total":10}`), service.BlobProperties{ETag: fmt.Sprintf(`"v%d"`, f.s.seq)}, nil}
		return nil
	}
}

func isUnknown(err error) bool {
	return errors.Is(err, abstractions.ErrUnavailable) && strings.Contains(fmt.Sprint(err), "cannot be known")
}

func TestCreateAfterALostResponse(t *testing.T) {
	ctx := context.Background()
	t.Run("its own create", func(t *testing.T) {
		f := newEchoFixture(t)
		f.faulty.Inject(faults.LoseResponse, faults.Writes, 1)
		version, err := f.states.Create(ctx, "a", &invoice{Total: 1})
		if err != nil || version != f.s.raw("sagas", "/a.json").props.ETag || f.total(t, "sagas", "a") != 1 {
			t.Fatalf("create whose response was lost: %q, %v; want success with the stored version", version, err)
		}
	})
	t.Run("no answer to any try", func(t *testing.T) {
		f := newEchoFixture(t)
		f.faulty.Inject(faults.LoseResponse, faults.Writes, 4)
		if _, err := f.states.Create(ctx, "a", &invoice{Total: 1}); err != nil {
			t.Fatalf("create stored by its first try: %v", err)
		}
	})
	t.Run("not applied, no answer", func(t *testing.T) {
		f := newEchoFixture(t)
		f.faulty.Inject(faults.InternalError, faults.Writes, 4)
		if _, err := f.states.Create(ctx, "a", &invoice{Total: 1}); !errors.Is(err, abstractions.ErrUnavailable) || f.total(t, "sagas", "a") != -1 {
			t.Fatalf("create never applied: %v", err)
		}
	})
	t.Run("another writer's document", func(t *testing.T) {
		f := newEchoFixture(t)
		f.otherWriter("a")
		f.faulty.Inject(faults.LoseResponse, faults.Writes, 1)
		_, err := f.states.Create(ctx, "a", &invoice{Total: 1})
		if !isUnknown(err) || errors.Is(err, abstractions.ErrConcurrencyConflict) || !abstractions.HasStatus(err, 409, "BlobAlreadyExists") {
			t.Fatalf("a resent create refused over another writer's document: %v; want ErrUnavailable saying the outcome cannot be known", err)
		}
	})
	t.Run("a refusal without a resend", func(t *testing.T) {
		f := newEchoFixture(t)
		f.otherWriter("a")
		before := f.s.callCount()
		if _, err := f.states.Create(ctx, "a", &invoice{Total: 1}); !errors.Is(err, abstractions.ErrConcurrencyConflict) || f.s.callCount() != before+1 {
			t.Fatalf("a lost race: %v after %d calls; want ErrConcurrencyConflict and no read", err, f.s.callCount()-before)
		}
	})
}

func TestUpdateAfterALostResponse(t *testing.T) {
	ctx := context.Background()
	seed := func(t *testing.T) (*echoFixture, string) {
		f := newEchoFixture(t)
		v1, err := f.states.Create(ctx, "a", &invoice{})
		if err != nil {
			t.Fatal(err)
		}
		return f, v1
	}
	t.Run("its own update", func(t *testing.T) {
		f, v1 := seed(t)
		f.faulty.Inject(faults.LoseResponse, faults.Writes, 1)
		version, err := f.states.Update(ctx, "a", &invoice{Total: 1}, v1)
		if err != nil || version == v1 || version != f.s.raw("sagas", "/a.json").props.ETag || f.total(t, "sagas", "a") != 1 {
			t.Fatalf("update whose response was lost: %q, %v", version, err)
		}
	})
	t.Run("reset mid-body", func(t *testing.T) {
		f, v1 := seed(t)
		f.faulty.Inject(faults.ResetMidBody, faults.Writes, 1)
		if _, err := f.states.Update(ctx, "a", &invoice{Total: 1}, v1); err != nil {
			t.Fatalf("update reset mid-response: %v", err)
		}
	})
	t.Run("another writer replaced it", func(t *testing.T) {
		f, v1 := seed(t)
		f.otherWriter("a")
		f.faulty.Inject(faults.LoseResponse, faults.Writes, 1)
		if _, err := f.states.Update(ctx, "a", &invoice{Total: 1}, v1); !isUnknown(err) || !abstractions.HasStatus(err, 412, "") {
			t.Fatalf("a resent update refused over another writer's document: %v", err)
		}
	})
	t.Run("the read that would tell fails", func(t *testing.T) {
		f, v1 := seed(t)
		f.faulty.Inject(faults.LoseResponse, faults.Writes, 1)
		f.faulty.Inject(faults.InternalError, faults.Reads, 4)
		if _, err := f.states.Update(ctx, "a", &invoice{Total: 1}, v1); !isUnknown(err) || !strings.Contains(err.Error(), "read that would tell") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("the context ends before the answer", func(t *testing.T) {
		f, v1 := seed(t)
		f.faulty.Inject(faults.StallAfterSend, faults.Writes, 1)
		cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		before := f.s.callCount()
		if _, err := f.states.Update(cctx, "a", &invoice{Total: 1}, v1); !errors.Is(err, abstractions.ErrUnavailable) || f.s.callCount() != before+1 {
			t.Fatalf("a stalled update: %v after %d calls; want ErrUnavailable and no read past the deadline", err, f.s.callCount()-before)
		}
	})
}

func TestDeleteAfterALostResponse(t *testing.T) {
	ctx := context.Background()
	t.Run("conditional: the outcome cannot be known", func(t *testing.T) {
		f := newEchoFixture(t)
		v1, _ := f.states.Create(ctx, "a", &invoice{})
		f.faulty.Inject(faults.LoseResponse, faults.Writes, 1)
		err := f.states.Delete(ctx, "a", v1)
		if !isUnknown(err) || errors.Is(err, abstractions.ErrConcurrencyConflict) || f.total(t, "sagas", "a") != -1 {
			t.Fatalf("a conditional delete whose resend met 404: %v", err)
		}
	})
	t.Run("conditional: a lost race without a resend", func(t *testing.T) {
		f := newEchoFixture(t)
		f.states.Create(ctx, "a", &invoice{})
		if err := f.states.Delete(ctx, "a", `"v0"`); !errors.Is(err, abstractions.ErrConcurrencyConflict) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("unconditional, no answer, gone", func(t *testing.T) {
		f := newEchoFixture(t)
		f.docs.Put(ctx, "a", &invoice{})
		f.faulty.Inject(faults.LoseResponse, faults.Writes, 4)
		if err := f.docs.Delete(ctx, "a"); err != nil || f.total(t, "docs", "a") != -1 {
			t.Fatalf("a delete its first try applied: %v", err)
		}
	})
	t.Run("unconditional, no answer, still there", func(t *testing.T) {
		f := newEchoFixture(t)
		f.docs.Put(ctx, "a", &invoice{})
		f.faulty.Inject(faults.InternalError, faults.Writes, 4)
		if err := f.docs.Delete(ctx, "a"); !errors.Is(err, abstractions.ErrUnavailable) || f.total(t, "docs", "a") == -1 {
			t.Fatalf("a delete never applied: %v", err)
		}
	})
}

func TestPutAfterALostResponse(t *testing.T) {
	ctx := context.Background()
	f := newEchoFixture(t)
	f.faulty.Inject(faults.LoseResponse, faults.Writes, 4)
	if err := f.docs.Put(ctx, "a", &invoice{Total: 1}); err != nil || f.total(t, "docs", "a") != 1 {
		t.Fatalf("a put its first try stored: %v", err)
	}
	f.faulty.Inject(faults.InternalError, faults.Writes, 4)
	if err := f.docs.Put(ctx, "a", &invoice{Total: 2}); !errors.Is(err, abstractions.ErrUnavailable) || f.total(t, "docs", "a") != 1 {
		t.Fatalf("a put never applied: %v", err)
	}
	if f.s.raw("docs", "/a.json").md[tokenKey] == "" {
		t.Fatal("the stored blob carries no write token")
	}
}

// A mutation is applied once: Mutate whose write's response was lost does not apply its
// change again on top of its own write, and stops when it cannot tell.
func TestMutateAfterALostResponse(t *testing.T) {
	ctx := context.Background()
	for _, fault := range []faults.Fault{faults.LoseResponse, faults.ResetMidBody, faults.ResetMidRequest} {
		t.Run(fault.String(), func(t *testing.T) {
			f := newEchoFixture(t)
			f.states.Create(ctx, "a", &invoice{Total: 1})
			calls := 0
			f.faulty.Inject(fault, faults.Writes, 1)
			got, version, err := f.states.Mutate(ctx, "a", func(v *invoice) error { calls++; v.Total++; return nil }, nil)
			if err != nil || got.Total != 2 || calls != 1 || f.total(t, "sagas", "a") != 2 || version != f.s.raw("sagas", "/a.json").props.ETag {
				t.Fatalf("mutate: %+v %v after %d applications, stored total %v; want 2, applied once", got, err, calls, f.total(t, "sagas", "a"))
			}
		})
	}
	t.Run("create", func(t *testing.T) {
		f := newEchoFixture(t)
		f.faulty.Inject(faults.LoseResponse, faults.Writes, 1)
		calls := 0
		got, _, err := f.states.MutateOrCreate(ctx, "a", func() *invoice { return &invoice{} }, func(v *invoice) error { calls++; v.Total++; return nil }, nil)
		if err != nil || got.Total != 1 || calls != 1 || f.total(t, "sagas", "a") != 1 {
			t.Fatalf("mutate or create: %+v %v after %d applications", got, err, calls)
		}
	})
	t.Run("cannot tell", func(t *testing.T) {
		f := newEchoFixture(t)
		f.states.Create(ctx, "a", &invoice{Total: 1})
		f.otherWriter("a")
		f.faulty.Inject(faults.LoseResponse, faults.Writes, 1)
		calls := 0
		_, _, err := f.states.Mutate(ctx, "a", func(v *invoice) error { calls++; v.Total++; return nil }, nil)
		if !isUnknown(err) || calls != 1 {
			t.Fatalf("mutate: %v after %d applications; want ErrUnavailable after one", err, calls)
		}
	})
}
