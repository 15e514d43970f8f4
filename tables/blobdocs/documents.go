package blobdocs

import (
	"context"
	"errors"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/service"
)

// Documents is the handle of a type registered with Register: documents of type T, one per
// blob, written last-writer-wins. It is safe for concurrent use.
type Documents[T any] struct {
	b      *binding
	tenant string
}

// Register registers T as a document type of r and returns its handle. It refuses, with
// abstractions.ErrInvalidArgument and nothing registered, a nil registry, a registration
// without both Container and BlobName, a malformed container name, an unknown Compression,
// and a type r already has (as a document or a state document).
func Register[T any](r *Registry, reg Registration) (*Documents[T], error) {
	b, err := register[T](r, reg, "document")
	if err != nil {
		return nil, err
	}
	return &Documents[T]{b: b}, nil
}

// WithTenant returns a handle to the same documents that passes tenant to the BlobName
// function. The handle Register returns has no tenant (an empty one).
func (d *Documents[T]) WithTenant(tenant string) *Documents[T] {
	return &Documents[T]{b: d.b, tenant: tenant}
}

// Container returns the registration's container.
func (d *Documents[T]) Container() string { return d.b.container }

// BlobName returns the name of the blob that holds the document id, for this handle's
// tenant. It fails as the calls do for an empty id or an unusable name.
func (d *Documents[T]) BlobName(id string) (string, error) {
	return d.b.blobName("name", id, d.tenant)
}

// One returns the document id. A missing blob is a missing document: the error matches
// abstractions.ErrNotFound. A missing container is not: it fails with an error matching
// ErrContainerNotFound that names it. A blob that does not decode fails with
// abstractions.ErrIntegrity, one stored with a Content-Encoding other than gzip, br or none
// with abstractions.ErrNotSupported, one larger than Options.MaxSize with
// abstractions.ErrOversizedValue.
func (d *Documents[T]) One(ctx context.Context, id string) (_ *T, err error) {
	ctx, c := d.b.begin(ctx, "get")
	defer c.Finish(&err)
	name, err := d.b.blobName("get", id, d.tenant)
	if err != nil {
		return nil, err
	}
	v := new(T)
	if _, err := d.b.read(ctx, "get", name, v); err != nil {
		return nil, err
	}
	return v, nil
}

// Put stores v as the document id with one unconditional upload: it creates the blob or
// overwrites whatever is there, so concurrent writers of one document are last-writer-wins.
// Blob Storage has no insert-versus-update to honour, so there is no Insert or Update: Put
// is both. A nil v is refused with abstractions.ErrInvalidArgument, a document serializing
// above Options.MaxSize with abstractions.ErrOversizedValue, both before anything is sent.
// A Put that gets no answer succeeds if the blob holds its write (see Lost responses in the
// package doc), and fails with abstractions.ErrUnavailable otherwise.
func (d *Documents[T]) Put(ctx context.Context, id string, v *T) (err error) {
	ctx, c := d.b.begin(ctx, "put")
	defer c.Finish(&err)
	name, err := d.b.blobName("put", id, d.tenant)
	if err != nil {
		return err
	}
	if v == nil {
		return refuse(abstractions.ErrInvalidArgument, "put", d.b.container, name, "the document is nil")
	}
	_, err = d.b.write(ctx, "put", name, v, service.UploadOptions{Mode: service.UploadOverwrite})
	return err
}

// Delete deletes the document id, unconditionally. Deleting a missing document is not an
// error; deleting in a missing container is (ErrContainerNotFound). A delete that gets no
// answer reads the blob, and succeeds when it is gone, whoever removed it.
func (d *Documents[T]) Delete(ctx context.Context, id string) (err error) {
	ctx, c := d.b.begin(ctx, "delete")
	defer c.Finish(&err)
	name, err := d.b.blobName("delete", id, d.tenant)
	if err != nil {
		return err
	}
	err = translate(callerr.Write, "delete", d.b.container, name, d.b.deleteBlob(ctx, name, service.Conditions{}))
	if errors.Is(err, abstractions.ErrNotFound) || errors.Is(err, abstractions.ErrUnavailable) && d.b.gone(ctx, name) {
		return nil
	}
	return err
}
