package abstractions_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
)

// What package driver reads of abstractions' values, through the hooks abstractions
// installs.

type hookRow struct {
	abstractions.Entity
	Name string
	Nick *string
}

var (
	hookName = abstractions.Field(func(r *hookRow) *string { return &r.Name })
	hookNick = abstractions.NullableField(func(r *hookRow) **string { return &r.Nick })
)

func TestDriverRoot(t *testing.T) {
	if n := driver.Root(abstractions.Filter[hookRow]{}); n != nil {
		t.Errorf("the zero Filter's tree = %+v, want nil", n)
	}
	n := driver.Root(abstractions.Or(hookName.Eq("a"), hookNick.Lt("b")))
	if n == nil || n.Op != driver.OpOr || len(n.Operands) != 2 {
		t.Fatalf("tree %+v", n)
	}
	eq, lt := n.Operands[0], n.Operands[1]
	if eq.Op != driver.OpEq || eq.Value != "a" || eq.Field != driver.FieldOf[hookRow](hookName) {
		t.Errorf("first operand %+v", eq)
	}
	if lt.Op != driver.OpLt || lt.Value != "b" || lt.Field.Type != reflect.TypeFor[*string]() || lt.Op.String() != "lt" {
		t.Errorf("second operand %+v", lt)
	}
}

func TestDriverFieldOf(t *testing.T) {
	f := driver.FieldOf[hookRow](hookName)
	sf, _ := reflect.TypeFor[hookRow]().FieldByName("Name")
	if f.Err != nil || f.Owner != reflect.TypeFor[hookRow]() || f.Type != reflect.TypeFor[string]() || f.Offset != sf.Offset {
		t.Errorf("field %+v", f)
	}
	if f := driver.FieldOf[hookRow](nil); !errors.Is(f.Err, abstractions.ErrInvalidArgument) {
		t.Errorf("a nil selector: %+v, want ErrInvalidArgument", f)
	}
	if f := driver.FieldOf[hookRow](abstractions.TypedField[hookRow, int]{}); !errors.Is(f.Err, abstractions.ErrInvalidArgument) {
		t.Errorf("the zero TypedField: %+v, want ErrInvalidArgument", f)
	}
}

func TestDriverPatchOf(t *testing.T) {
	if p := driver.PatchOf[hookRow](nil); p.Fields != nil || p.Err != nil || p.ETag != "" {
		t.Errorf("a nil patch reads as %+v", p)
	}
	p := abstractions.Set(abstractions.NewPatch[hookRow](), hookName, "n").WithETag(`W/"x"`).AllowProtected()
	abstractions.Set(p, hookNick, "al")
	v := driver.PatchOf(p)
	if v.ETag != `W/"x"` || !v.AllowProtected || v.Err != nil || len(v.Fields) != 2 {
		t.Fatalf("patch %+v", v)
	}
	if v.Fields[0].Path != "Name" || v.Fields[0].Value.Interface() != "n" || v.Fields[1].Path != "Nick" || *v.Fields[1].Value.Interface().(*string) != "al" {
		t.Errorf("fields %+v", v.Fields)
	}
	bad := abstractions.Set(abstractions.NewPatch[hookRow](), abstractions.Field(func(*hookRow) *string { return nil }), "x")
	if v := driver.PatchOf(bad); !errors.Is(v.Err, abstractions.ErrInvalidArgument) || len(v.Fields) != 0 {
		t.Errorf("a selector returning nil: %+v", v)
	}
}

// hookBlob is a blob over bytes, as a store binds one.
type hookBlob struct{ data []byte }

func (b *hookBlob) OpenBlob(context.Context) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(b.data)), nil
}

func TestDriverFiles(t *testing.T) {
	ctx := context.Background()
	if _, err := driver.TakeFile(ctx, nil); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("TakeFile(nil) = %v, want ErrInvalidArgument", err)
	}
	data := []byte("content")
	sum := sha256.Sum256(data)
	hexSum := hex.EncodeToString(sum[:])

	src, err := driver.TakeFile(ctx, abstractions.FileFromBytes(data, ""))
	if err != nil {
		t.Fatal(err)
	}
	if src.SHA256() != hexSum || src.Length() != int64(len(data)) || src.Blob() != nil {
		t.Errorf("source of bytes: %s %d %v", src.SHA256(), src.Length(), src.Blob())
	}
	src.Release()

	blob := &hookBlob{data: data}
	f := driver.NewStoredFile(blob, hexSum, int64(len(data)), "text/plain")
	if f.ContentType() != "text/plain" {
		t.Errorf("content type %q", f.ContentType())
	}
	src, err = driver.TakeFile(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if src.Blob() != blob {
		t.Errorf("a stored File's source streams %v, want its blob", src.Blob())
	}
	rc, err := src.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	src.Release()
	if err != nil || string(got) != "content" {
		t.Errorf("Open read %q, %v", got, err)
	}

	// A stored File verifies what its blob delivers.
	damaged := driver.NewStoredFile(&hookBlob{data: []byte("changed")}, hexSum, int64(len(data)), "")
	rc, err = damaged.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(rc)
	rc.Close()
	if !errors.Is(err, abstractions.ErrIntegrity) {
		t.Errorf("reading a changed blob = %v, want ErrIntegrity", err)
	}
}
