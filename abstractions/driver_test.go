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

// What package driver reads of abstractions' values, through the parts their types embed.

type driverRow struct {
	abstractions.Entity
	Name string
	Nick *string
}

var (
	driverName = abstractions.Field(func(r *driverRow) *string { return &r.Name })
	driverNick = abstractions.NullableField(func(r *driverRow) **string { return &r.Nick })
)

func TestDriverRoot(t *testing.T) {
	if n := driver.Root(abstractions.Filter[driverRow]{}); n != nil {
		t.Errorf("the zero Filter's tree = %+v, want nil", n)
	}
	n := driver.Root(abstractions.Or(driverName.Eq("a"), driverNick.Lt("b")))
	if n == nil || n.Op != driver.OpOr || len(n.Operands) != 2 {
		t.Fatalf("tree %+v", n)
	}
	eq, lt := n.Operands[0], n.Operands[1]
	if eq.Op != driver.OpEq || eq.Value != "a" || eq.Field != driver.FieldOf[driverRow](driverName) {
		t.Errorf("first operand %+v", eq)
	}
	if lt.Op != driver.OpLt || lt.Value != "b" || lt.Field.Type != reflect.TypeFor[*string]() || lt.Op.String() != "lt" {
		t.Errorf("second operand %+v", lt)
	}
}

func TestDriverFieldOf(t *testing.T) {
	f := driver.FieldOf[driverRow](driverName)
	sf, _ := reflect.TypeFor[driverRow]().FieldByName("Name")
	if f.Err != nil || f.Owner != reflect.TypeFor[driverRow]() || f.Type != reflect.TypeFor[string]() || f.Offset != sf.Offset {
		t.Errorf("field %+v", f)
	}
	if f := driver.FieldOf[driverRow](nil); !errors.Is(f.Err, abstractions.ErrInvalidArgument) {
		t.Errorf("a nil selector: %+v, want ErrInvalidArgument", f)
	}
	if f := driver.FieldOf[driverRow](abstractions.TypedField[driverRow, int]{}); !errors.Is(f.Err, abstractions.ErrInvalidArgument) {
		t.Errorf("the zero TypedField: %+v, want ErrInvalidArgument", f)
	}
}

func TestDriverPatchOf(t *testing.T) {
	if p := driver.PatchOf[driverRow](nil); p.Fields != nil || p.Err != nil || p.ETag != "" {
		t.Errorf("a nil patch reads as %+v", p)
	}
	p := abstractions.Set(abstractions.NewPatch[driverRow](), driverName, "n").WithETag(`W/"x"`).AllowProtected()
	abstractions.Set(p, driverNick, "al")
	v := driver.PatchOf(p)
	if v.ETag != `W/"x"` || !v.AllowProtected || v.Err != nil || len(v.Fields) != 2 {
		t.Fatalf("patch %+v", v)
	}
	if v.Fields[0].Path != "Name" || v.Fields[0].Value.Interface() != "n" || v.Fields[1].Path != "Nick" || *v.Fields[1].Value.Interface().(*string) != "al" {
		t.Errorf("fields %+v", v.Fields)
	}
	bad := abstractions.Set(abstractions.NewPatch[driverRow](), abstractions.Field(func(*driverRow) *string { return nil }), "x")
	if v := driver.PatchOf(bad); !errors.Is(v.Err, abstractions.ErrInvalidArgument) || len(v.Fields) != 0 {
		t.Errorf("a selector returning nil: %+v", v)
	}
}

// driverBlob is a blob over bytes, as a store binds one.
type driverBlob struct{ data []byte }

func (b *driverBlob) OpenBlob(context.Context) (io.ReadCloser, error) {
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

	blob := &driverBlob{data: data}
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
	damaged := driver.NewStoredFile(&driverBlob{data: []byte("changed")}, hexSum, int64(len(data)), "")
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
