package blobdocs

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/unified-data/gotables/tables/internal/wire"

	"github.com/unified-data/gotables/tables/internal/attempt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/service"
)

// StateDocuments is the handle of a type registered with RegisterState: documents of type T
// that are read, changed and written back, such as the state of a saga. Every write is
// conditional on the version read, so two writers of one document never silently lose an
// update: the loser fails with abstractions.ErrConcurrencyConflict and reads again (Mutate
// does that loop). It is safe for concurrent use.
//
// A version is the blob's ETag, as One, Create and Update return it.
type StateDocuments[T any] struct {
	b      *binding
	tenant string
}

// RegisterState registers T as a state-document type of r and returns its handle. It
// refuses what Register refuses, and a type r already has as a document: a type is either
// written last-writer-wins or conditionally, never both.
func RegisterState[T any](r *Registry, reg Registration) (*StateDocuments[T], error) {
	b, err := register[T](r, reg, "state document")
	if err != nil {
		return nil, err
	}
	return &StateDocuments[T]{b: b}, nil
}

// WithTenant returns a handle to the same documents that passes tenant to the BlobName
// function. The handle RegisterState returns has no tenant (an empty one).
func (s *StateDocuments[T]) WithTenant(tenant string) *StateDocuments[T] {
	return &StateDocuments[T]{b: s.b, tenant: tenant}
}

// Container returns the registration's container.
func (s *StateDocuments[T]) Container() string { return s.b.container }

// BlobName returns the name of the blob that holds the document id, for this handle's
// tenant.
func (s *StateDocuments[T]) BlobName(id string) (string, error) {
	return s.b.blobName("name", id, s.tenant)
}

// One returns the document id and its version, with the errors of Documents.One (a missing
// document matches abstractions.ErrNotFound, a missing container ErrContainerNotFound).
func (s *StateDocuments[T]) One(ctx context.Context, id string) (_ *T, _ string, err error) {
	ctx, c := s.b.begin(ctx, "get")
	defer c.Finish(&err)
	name, err := s.b.blobName("get", id, s.tenant)
	if err != nil {
		return nil, "", err
	}
	v := new(T)
	version, err := s.b.read(ctx, "get", name, v)
	if err != nil {
		return nil, "", err
	}
	return v, version, nil
}

// Create stores v as the new document id, only if there is none (an upload with
// If-None-Match: *), and returns its version. When another writer's document is there, the
// call fails with abstractions.ErrConcurrencyConflict (the service's 409 BlobAlreadyExists)
// and changes nothing; a 409 that answers a resend of this call's own create is a success
// (see Lost responses in the package doc). A nil v is refused with
// abstractions.ErrInvalidArgument before anything is sent.
func (s *StateDocuments[T]) Create(ctx context.Context, id string, v *T) (_ string, err error) {
	ctx, c := s.b.begin(ctx, "create")
	defer c.Finish(&err)
	name, err := s.b.blobName("create", id, s.tenant)
	if err != nil {
		return "", err
	}
	if v == nil {
		return "", refuse(abstractions.ErrInvalidArgument, "create", s.b.container, name, "the document is nil")
	}
	return s.b.write(ctx, "create", name, v, service.UploadOptions{Mode: service.UploadCreate})
}

// Update replaces the document id with v, only if it is still at version (an upload with
// If-Match: version), and returns the new version. When another writer changed the
// document since, or deleted it, the call fails with abstractions.ErrConcurrencyConflict
// (the service's 412 ConditionNotMet) and changes nothing: read it again and reapply the
// change, or use Mutate. A deleted document is never written again by Update. A 412 that
// answers a resend of this call's own update is a success; one after a resend that the
// stored document does not explain fails with abstractions.ErrUnavailable (see Lost
// responses in the package doc).
//
// version must be an entity tag that One, Create or Update returned. An empty version or
// "*" is refused with abstractions.ErrInvalidArgument before anything is sent: an update
// must name the version it was based on (and Azurite would create a missing blob on "*").
func (s *StateDocuments[T]) Update(ctx context.Context, id string, v *T, version string) (_ string, err error) {
	ctx, c := s.b.begin(ctx, "update")
	defer c.Finish(&err)
	name, err := s.b.blobName("update", id, s.tenant)
	if err != nil {
		return "", err
	}
	if err := checkVersion("update", s.b.container, name, version); err != nil {
		return "", err
	}
	if v == nil {
		return "", refuse(abstractions.ErrInvalidArgument, "update", s.b.container, name, "the document is nil")
	}
	return s.b.write(ctx, "update", name, v, service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: version})
}

// Delete deletes the document id, only if it is still at version (If-Match: version), as
// when a saga completes. When another writer changed or deleted the document since, the
// call fails with abstractions.ErrConcurrencyConflict: completing a saga twice
// concurrently is a lost race, not a success. A refusal that answers a resend cannot be told
// from one: this call's first try may have deleted the document. It fails with
// abstractions.ErrUnavailable instead, saying so (see Lost responses in the package doc).
// version is checked as by Update.
func (s *StateDocuments[T]) Delete(ctx context.Context, id, version string) (err error) {
	ctx, c := s.b.begin(ctx, "delete")
	defer c.Finish(&err)
	name, err := s.b.blobName("delete", id, s.tenant)
	if err != nil {
		return err
	}
	if err := checkVersion("delete", s.b.container, name, version); err != nil {
		return err
	}
	tctx, tries := attempt.WithAttempts(ctx)
	err = s.b.deleteBlob(tctx, name, service.Conditions{IfMatch: version})
	refused := abstractions.HasStatus(err, http.StatusNotFound, "BlobNotFound") || abstractions.HasStatus(err, http.StatusPreconditionFailed, "")
	if refused && tries.Retried() {
		// The refusal may answer a resend of this delete, and a deleted blob keeps no trace
		// of who deleted it.
		return unknownOutcome(ctx, "delete", s.b.container, name,
			"the service refused a resend of this delete: either its first try deleted the document, or another writer had changed or deleted it first", err)
	}
	if abstractions.HasStatus(err, http.StatusNotFound, "BlobNotFound") {
		// Azure answers a conditional delete of a missing blob with 404 (Azurite with 412):
		// the version this call was based on is gone either way.
		return &Error{Kind: abstractions.ErrConcurrencyConflict, Op: "delete", Container: s.b.container, Blob: name,
			Message: "the document was deleted since the version this call was based on", Err: err}
	}
	return translate(callerr.Write, "delete", s.b.container, name, err)
}

func checkVersion(op, container, name, version string) error {
	if !wire.IsEntityTag(version) {
		return refuse(abstractions.ErrInvalidArgument, op, container, name,
			"the version %q is not a version One, Create or Update returned (a quoted entity tag); an empty version or * is not allowed", version)
	}
	return nil
}

// Mutate reads the document id, applies mutate to it and writes it back on condition of the
// version read, reading and applying again after a lost race, like abstractions.Mutate does
// for table rows. It returns the stored document and its version. A missing document fails
// with an error matching abstractions.ErrNotFound; every attempt lost with one matching
// abstractions.ErrConcurrencyConflict (call again, or spread the writers out); an error of
// mutate ends the call with nothing written and is returned as it is. A nil opts means the
// default attempts and backoff of abstractions.RetryOptions.
//
// mutate runs once per attempt, each time on a fresh read, so it must compute its change
// from the document it is given. A write whose response was lost is recognised as this
// call's (see Lost responses in the package doc) and never applied again; when that cannot
// be known, Mutate fails with abstractions.ErrUnavailable, and calling it again may apply
// the change twice: make the change idempotent (record the message id in the document,
// say) when that matters.
func (s *StateDocuments[T]) Mutate(ctx context.Context, id string, mutate func(*T) error, opts *abstractions.RetryOptions) (_ *T, _ string, err error) {
	ctx, c := s.b.begin(ctx, "mutate")
	defer c.Finish(&err)
	return s.transition(ctx, "mutate", id, nil, mutate, opts)
}

// MutateOrCreate is Mutate that starts the document from create when there is none: the
// change applies to a new document as to a stored one, and a create that loses to another
// writer's counts as a lost race (the next attempt applies the change to the winner's
// document). create must return a new value each time; a nil create, or a nil value from it,
// is refused with abstractions.ErrInvalidArgument.
func (s *StateDocuments[T]) MutateOrCreate(ctx context.Context, id string, create func() *T, mutate func(*T) error,
	opts *abstractions.RetryOptions) (_ *T, _ string, err error) {
	ctx, c := s.b.begin(ctx, "mutate or create")
	defer c.Finish(&err)
	if create == nil {
		return nil, "", fmt.Errorf("%w: blobdocs: MutateOrCreate needs a create function", abstractions.ErrInvalidArgument)
	}
	return s.transition(ctx, "mutate or create", id, create, mutate, opts)
}

// transition is the compare-and-swap loop of Mutate and MutateOrCreate.
func (s *StateDocuments[T]) transition(ctx context.Context, op, id string, create func() *T, mutate func(*T) error,
	opts *abstractions.RetryOptions) (*T, string, error) {
	if mutate == nil {
		return nil, "", fmt.Errorf("%w: blobdocs: the mutate function is nil", abstractions.ErrInvalidArgument)
	}
	name, err := s.b.blobName(op, id, s.tenant)
	if err != nil {
		return nil, "", err
	}
	o := opts.WithDefaults()
	var lost error
	for attempt := 1; attempt <= o.Attempts; attempt++ {
		if err := o.Wait(ctx, attempt); err != nil {
			return nil, "", err
		}
		v, version, err := s.One(ctx, id)
		switch {
		case err == nil:
			if err := mutate(v); err != nil {
				return nil, "", err
			}
			version, err = s.Update(ctx, id, v, version)
		case errors.Is(err, abstractions.ErrNotFound) && create != nil:
			if v = create(); v == nil {
				return nil, "", fmt.Errorf("%w: blobdocs: the create function returned nil", abstractions.ErrInvalidArgument)
			}
			if err := mutate(v); err != nil {
				return nil, "", err
			}
			version, err = s.Create(ctx, id, v)
		default:
			return nil, "", err
		}
		if err == nil {
			return v, version, nil
		}
		if !errors.Is(err, abstractions.ErrConcurrencyConflict) {
			return nil, "", err
		}
		lost = err
	}
	return nil, "", &Error{Kind: abstractions.ErrConcurrencyConflict, Op: op, Container: s.b.container, Blob: name,
		Message: fmt.Sprintf("other writers changed the document during each of %d attempts; call again, or spread the writes out", o.Attempts),
		Err:     lost}
}
