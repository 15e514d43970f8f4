package abstractions

import (
	"context"
	"fmt"

	"github.com/unified-data/gotables/abstractions/internal/backend"
)

// The hooks through which package driver reads what these values hold (see its package
// documentation); driver's typed functions pass only the types named here.
func init() {
	backend.Root = func(f any) *backend.Node {
		return f.(interface{ root() *backend.Node }).root()
	}
	backend.FieldOf = func(sel any) backend.Field {
		s, ok := sel.(interface{ field() backend.Field })
		if !ok {
			return backend.Field{Err: fmt.Errorf("%w: the selector is nil", ErrInvalidArgument)}
		}
		return s.field()
	}
	backend.PatchOf = func(p any) backend.Patch {
		return p.(interface{ view() backend.Patch }).view()
	}
	backend.TakeFile = func(ctx context.Context, f any) (backend.FileSource, error) {
		src, err := f.(*File).take(ctx)
		if err != nil {
			return nil, err
		}
		return src, nil
	}
	backend.StoredFile = func(blob backend.FileBlob, sha256 string, length int64, contentType string) any {
		return newStoredFile(blob, sha256, length, contentType)
	}
}
