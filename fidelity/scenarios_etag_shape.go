package fidelity

import (
	"context"
	"net/http"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// etagShapeScenarios cover If-Match values that pass the library's shape check but that the
// service never issued: a strong quoted string is refused with 400 (InvalidInput on Azure and
// in memory; InvalidOperation from Azurite for a merge, the deviation
// "etag-shape"), a weak one is a condition no row meets (412). A store reports the first as
// ErrInvalidArgument and the second as ErrConcurrencyConflict on every backend.
var etagShapeScenarios = []Scenario{
	{Name: "store/etag-not-issued", Deviation: "etag-shape", Run: etagNotIssued},
}

func etagNotIssued(ctx context.Context, e *Env) {
	_, err := e.Tables.Write(ctx, e.Table, insert(row("p", "r")))
	e.OK("insert", err)
	for _, tc := range []struct {
		step string
		op   service.Op
		// azurite is Azurite's error code for the strong tag; Azure and the memory
		// service answer InvalidInput.
		azurite string
	}{
		{"replace", service.OpReplace, "InvalidInput"},
		{"merge", service.OpMerge, "InvalidOperation"},
		{"delete", service.OpDelete, "InvalidInput"},
	} {
		_, err := e.Tables.Write(ctx, e.Table, service.Action{Op: tc.op, Row: row("p", "r"), IfMatch: `"abc"`})
		code := "InvalidInput"
		if e.OnAzurite() {
			code = tc.azurite
		}
		e.Status(tc.step+" with a strong tag the service did not issue", err, http.StatusBadRequest, code)
		_, err = e.Tables.Write(ctx, e.Table, service.Action{Op: tc.op, Row: row("p", "r"), IfMatch: `W/"abc"`})
		e.Status(tc.step+" with a weak tag the service did not issue", err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
	}
	_, err = e.Tables.GetRow(ctx, e.Table, "p", "r", nil)
	e.OK("the row is untouched", err)

	s := storeOf[customerRow](e, nil)
	c := alice()
	e.OK("create", s.Create(ctx, c))
	strong := *c
	strong.ETag = `"abc"`
	e.Is("update strict with a strong tag", s.Update(ctx, &strong, abstractions.Strict), abstractions.ErrInvalidArgument)
	weak := *c
	weak.ETag = `W/"abc"`
	e.Is("update strict with a weak tag", s.Update(ctx, &weak, abstractions.Strict), abstractions.ErrConcurrencyConflict)
	patch := func(etag string) error {
		name := abstractions.Field(func(v *customerRow) *string { return &v.Name })
		_, err := s.Patch(ctx, c.ID, abstractions.Set(abstractions.NewPatch[customerRow](), name, "changed").WithETag(etag))
		return err
	}
	e.Is("patch with a strong tag", patch(`"abc"`), abstractions.ErrInvalidArgument)
	e.Is("patch with a weak tag", patch(`W/"abc"`), abstractions.ErrConcurrencyConflict)
	got, err := s.One(ctx, c.ID)
	e.OK("read", err)
	e.Equal("the entity is unchanged", got.Name, c.Name)
}
