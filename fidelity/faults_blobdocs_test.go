package fidelity

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/azblobs"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/blobdocs"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/service"
)

// A faultyBlobBackend is a blob service whose calls go through a fault injector, with a
// clean one beside it to check what the container holds afterwards.
type faultyBlobBackend struct {
	name          string
	plan          *faults.Plan
	faulty, clean service.Blobs
}

// faultyBlobBackends returns the memory service behind faults.Blobs and, when a connection
// string is set, Azurite behind faults.Transport with the SDK's default retries.
func faultyBlobBackends(t *testing.T) []faultyBlobBackend {
	t.Helper()
	mem := memservice.New()
	fb := faults.NewBlobs(mem)
	out := []faultyBlobBackend{{name: Memory, plan: &fb.Plan, faulty: fb, clean: mem}}
	conn, ok := azuritetest.LookupConnectionString(t)
	if !ok {
		t.Log(azuritetest.ConnEnv + " not set: the blob-document fault matrix runs on the memory service only")
		return out
	}
	if os.Getenv(emulatorEnv) == "1" {
		t.Log("the connection string names the table emulator, which serves no blobs: the blob-document fault matrix runs on the memory service only")
		return out
	}
	tr := faults.NewTransport(&http.Client{Transport: transport})
	faulty, err := azblobs.NewFromConnectionString(conn, &azblobs.Options{ClientOptions: azcore.ClientOptions{Transport: tr, Retry: faultRetry}})
	if err != nil {
		t.Fatal(err)
	}
	clean, err := azblobs.NewFromConnectionString(conn, &azblobs.Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: transport}}})
	if err != nil {
		t.Fatal(err)
	}
	return append([]faultyBlobBackend{{name: Azurite, plan: &tr.Plan, faulty: faulty, clean: clean}}, out...)
}

// docCounter is the document of the matrix: a write stores N=1 over N=0.
type docCounter struct{ N int }

// docHandles are the two registrations of docCounter over one blob service.
type docHandles struct {
	docs   *blobdocs.Documents[docCounter]
	states *blobdocs.StateDocuments[docCounter]
}

func newDocHandles(t *testing.T, blobs service.Blobs, container string) docHandles {
	t.Helper()
	name := func(c blobdocs.NameContext) string { return c.ID + ".json" }
	reg := func() *blobdocs.Registry {
		r, err := blobdocs.New(blobs, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	docs, err := blobdocs.Register[docCounter](reg(), blobdocs.Registration{Container: container, BlobName: name})
	if err != nil {
		t.Fatal(err)
	}
	states, err := blobdocs.RegisterState[docCounter](reg(), blobdocs.Registration{Container: container, BlobName: name})
	if err != nil {
		t.Fatal(err)
	}
	return docHandles{docs: docs, states: states}
}

// A docFaultCase is one blob-document verb of the matrix, as faultCase is for table
// writes: setup prepares the document through the clean service, run calls the verb
// through the faulty one, and check reads the document through the clean service and says
// whether the verb's write is there (applied) or there more than once (half: a mutation
// applied twice).
type docFaultCase struct {
	verb  string
	setup func(ctx context.Context, h docHandles, id string) error
	run   func(ctx context.Context, h docHandles, id string) error
	check func(ctx context.Context, h docHandles, id string) (applied, half bool, err error)
}

func seedDoc(ctx context.Context, h docHandles, id string) error {
	_, err := h.states.Create(ctx, id, &docCounter{})
	return err
}

// docIsOne checks the document: applied when it holds N=1, half when N is more.
func docIsOne(ctx context.Context, h docHandles, id string) (bool, bool, error) {
	v, _, err := h.states.One(ctx, id)
	if errors.Is(err, abstractions.ErrNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return v.N == 1, v.N > 1, nil
}

func docGone(ctx context.Context, h docHandles, id string) (bool, bool, error) {
	_, _, err := h.states.One(ctx, id)
	if errors.Is(err, abstractions.ErrNotFound) {
		return true, false, nil
	}
	return false, false, err
}

func increment(v *docCounter) error { v.N++; return nil }

func docFaultCases() []docFaultCase {
	return []docFaultCase{
		{verb: "Put", setup: seedDoc, check: docIsOne,
			run: func(ctx context.Context, h docHandles, id string) error {
				return h.docs.Put(ctx, id, &docCounter{N: 1})
			}},
		{verb: "Delete", setup: seedDoc, check: docGone,
			run: func(ctx context.Context, h docHandles, id string) error { return h.docs.Delete(ctx, id) }},
		{verb: "Create", check: docIsOne,
			run: func(ctx context.Context, h docHandles, id string) error {
				_, err := h.states.Create(ctx, id, &docCounter{N: 1})
				return err
			}},
		{verb: "Update", setup: seedDoc, check: docIsOne,
			run: func(ctx context.Context, h docHandles, id string) error {
				v, version, err := h.states.One(ctx, id)
				if err != nil {
					return err
				}
				v.N = 1
				next, err := h.states.Update(ctx, id, v, version)
				if err == nil && (next == "" || next == version) {
					return fmt.Errorf("the update reported the version %q (it was %q)", next, version)
				}
				return err
			}},
		{verb: "Delete conditional", setup: seedDoc, check: docGone,
			run: func(ctx context.Context, h docHandles, id string) error {
				_, version, err := h.states.One(ctx, id)
				if err != nil {
					return err
				}
				return h.states.Delete(ctx, id, version)
			}},
		{verb: "Mutate", setup: seedDoc, check: docIsOne,
			run: func(ctx context.Context, h docHandles, id string) error {
				v, _, err := h.states.Mutate(ctx, id, increment, nil)
				if err == nil && v.N != 1 {
					return fmt.Errorf("Mutate returned N=%d", v.N)
				}
				return err
			}},
		{verb: "MutateOrCreate", check: docIsOne,
			run: func(ctx context.Context, h docHandles, id string) error {
				v, _, err := h.states.MutateOrCreate(ctx, id, func() *docCounter { return &docCounter{} }, increment, nil)
				if err == nil && v.N != 1 {
					return fmt.Errorf("MutateOrCreate returned N=%d", v.N)
				}
				return err
			}},
	}
}

// ambiguousByDesign reports the cases the package documents as unknowable (see Lost
// responses in the blobdocs package doc): a write stalled past its deadline after it was
// sent, and a conditional delete whose resend was refused (a lost response, a reset
// mid-body: the SDK resends a DELETE).
func ambiguousByDesign(verb string, f faults.Fault) bool {
	return f == faults.StallAfterSend || verb == "Delete conditional" && (f == faults.LoseResponse || f == faults.ResetMidBody)
}

// docErrorKind renders an error by its sentinels and status only, so both backends' errors
// compare.
func docErrorKind(err error) string {
	var parts []string
	var se *abstractions.StatusError
	if errors.As(err, &se) {
		parts = append(parts, fmt.Sprintf("status=%d", se.StatusCode))
	}
	for _, s := range []error{abstractions.ErrNotFound, abstractions.ErrConcurrencyConflict, abstractions.ErrUnavailable,
		abstractions.ErrInvalidArgument, context.Canceled} {
		if errors.Is(err, s) {
			parts = append(parts, "is="+s.Error())
		}
	}
	return strings.Join(parts, " ")
}

// TestBlobDocumentFaultMatrix runs every blob-document write under every fault, as
// TestFaultMatrix does for table writes: success means the write is stored, once; an error
// is classified and, unless it is ErrUnavailable in a case the package documents as
// unknowable, means the write is not stored. No acknowledged write may be lost, no mutation
// applied twice, no refusal reported for a write that was applied, and both backends must
// report the same outcome case by case.
func TestBlobDocumentFaultMatrix(t *testing.T) {
	outcomes := map[string]map[string]string{}
	for _, b := range faultyBlobBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			fig := faultFigures{}
			ctx := context.Background()
			container := "docfaults" + randomSuffix()
			if err := b.clean.CreateContainer(ctx, container); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = b.clean.DeleteContainer(context.Background(), container) }()
			faulty, clean := newDocHandles(t, b.faulty, container), newDocHandles(t, b.clean, container)
			seen := map[string]string{}
			for ci, fc := range docFaultCases() {
				for fi, f := range faults.Faults {
					name := fc.verb + "/" + f.String()
					id, err, injected := runFaulted(t, ctx, b.plan, f, faults.Writes, fmt.Sprintf("c%02df%d", ci, fi), func(id string) error {
						if fc.setup == nil {
							return nil
						}
						return fc.setup(ctx, clean, id)
					}, func(ctx context.Context, id string) error { return fc.run(ctx, faulty, id) })
					applied, half, cerr := fc.check(ctx, clean, id)
					if cerr != nil {
						t.Fatalf("%s: reading the outcome: %v", name, cerr)
					}
					outcome := fig.judge(t, name, injected, applied, half, err, ambiguousByDesign(fc.verb, f), docErrorKind, "stored")
					seen[name] = outcome
				}
			}
			outcomes[b.name] = seen
			t.Logf("%s: %d cases, %d truthful, %d ambiguous by design (ErrUnavailable for an applied write), %d acknowledged writes lost, %d applied twice",
				b.name, fig.cases, fig.truthful, fig.ambiguous, fig.lost, fig.half)
		})
	}
	compareOutcomes(t, outcomes)
}
