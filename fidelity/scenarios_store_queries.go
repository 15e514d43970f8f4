package fidelity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/unified-data/gotables/abstractions"
)

var queryStoreScenarios = []Scenario{
	{
		Name: "store/query-prefix-ranges",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			keys := []string{"a", "ab", "abc", "ab~", "ac", "b", "a\uffff", "a\uffffz", "a\ufffe", "b\uffff", "\uffff", "\uffff\uffff",
				"c😀", "c😀x", "c😁", "c\U0010ffff", "c\U0010ffffq", "c\ue000", "d\ud7ff", "d\ud7ffz", "d\U00010000", "e\"x", "e\"", "e$",
				"it's", "it's-me", "its", "msg_1", "msg_2", "msg`"}
			var batch []*customerRow
			for _, k := range keys {
				batch = append(batch, &customerRow{Entity: abstractions.Entity{ID: "p|" + k}, Name: k})
				batch = append(batch, &customerRow{Entity: abstractions.Entity{ID: "q|" + k}, Name: k})
			}
			e.OK("seed", s.CreateBatch(ctx, batch))
			for _, prefix := range []string{"a", "ab", "a\uffff", "\uffff", "b\uffff", "c😀", "c\U0010ffff", "d\ud7ff", "e\"", "it's", "msg_", "A", "zzz"} {
				got, err := s.Query(ctx, abstractions.Query[customerRow]{Partition: "P", RowKeyPrefix: prefix})
				e.OK(fmt.Sprintf("prefix %+q", prefix), err)
				e.Observe(fmt.Sprintf("prefix %+q", prefix), ids(got))
				for _, c := range got {
					if _, rk := abstractions.SplitID(c.ID); !strings.HasPrefix(rk, strings.ToLower(prefix)) || !strings.HasPrefix(c.ID, "p|") {
						e.Errorf("prefix %+q returned %q", prefix, c.ID)
					}
				}
			}
			n := 0
			for _, k := range keys {
				if strings.HasPrefix(k, "a") {
					n++
				}
			}
			got, err := s.Query(ctx, abstractions.Query[customerRow]{Partition: "p", RowKeyPrefix: "a"})
			e.OK("prefix a", err)
			e.Equal("prefix a selects every key starting with a", len(got), n)
			got, err = s.Query(ctx, abstractions.Query[customerRow]{Partition: "p", RowKeyPrefix: "a", Take: 3})
			e.OK("prefix with take", err)
			e.Observe("prefix with take", ids(got))
			c, ct := countingStoreOf[customerRow](e)
			_, err = c.Query(ctx, abstractions.Query[customerRow]{RowKeyPrefix: "a"})
			e.Is("prefix without partition", err, abstractions.ErrNotSupported)
			_, err = c.Query(ctx, abstractions.Query[customerRow]{Partition: "p", RowKeyPrefix: "a/b"})
			e.Is("prefix with a forbidden character", err, abstractions.ErrInvalidKey)
			_, err = c.Query(ctx, abstractions.Query[customerRow]{Partition: "p/q"})
			e.Is("bad partition", err, abstractions.ErrInvalidKey)
			_, err = c.Query(ctx, abstractions.Query[customerRow]{Partition: "p", Take: -1})
			e.Is("negative take", err, abstractions.ErrInvalidArgument)
			_, err = c.Query(ctx, abstractions.Query[customerRow]{Partition: "p", Cursor: "x"})
			e.Is("a cursor outside Page", err, abstractions.ErrInvalidArgument)
			e.Equal("refusals sent nothing", ct.n.Load(), int64(0))
		},
	},
	{
		Name: "store/query-2500-rows",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			var batch []*customerRow
			for i := 0; i < 2500; i++ {
				batch = append(batch, &customerRow{Entity: abstractions.Entity{ID: fmt.Sprintf("big|%05d", i)}, Name: fmt.Sprint(i), Balance: float64(i)})
			}
			batch = append(batch, &customerRow{Entity: abstractions.Entity{ID: "other|1"}}, &customerRow{Entity: abstractions.Entity{ID: "a|1"}})
			e.OK("seed", s.CreateBatch(ctx, batch))
			want := func(from, to int) []string {
				var out []string
				for i := from; i < to; i++ {
					out = append(out, fmt.Sprintf("big|%05d", i))
				}
				return out
			}
			same := func(step string, got []string, want []string) {
				e.Equal(step+": rows", len(got), len(want))
				e.Equal(step+": exactly the rows, in order", strings.Join(got, ",") == strings.Join(want, ","), true)
			}

			got, err := s.Query(ctx, abstractions.Query[customerRow]{Partition: "big", Take: 1500})
			e.OK("take 1500", err)
			same("take 1500 across a page boundary", ids(got), want(0, 1500))
			got, err = s.Query(ctx, abstractions.Query[customerRow]{Partition: "big", Take: 1000})
			e.OK("take 1000", err)
			same("take 1000", ids(got), want(0, 1000))
			got, err = s.Query(ctx, abstractions.Query[customerRow]{Partition: "big"})
			e.OK("all", err)
			same("all 2500", ids(got), want(0, 2500))

			var streamed []string
			for c, err := range s.Stream(ctx, abstractions.Query[customerRow]{Partition: "big"}) {
				e.OK("stream", err)
				streamed = append(streamed, c.ID)
			}
			same("stream 2500", streamed, want(0, 2500))
			streamed = streamed[:0]
			for c, err := range s.Stream(ctx, abstractions.Query[customerRow]{Partition: "big", Take: 1001}) {
				e.OK("stream take", err)
				streamed = append(streamed, c.ID)
			}
			same("stream take 1001", streamed, want(0, 1001))
			streamed = streamed[:0]
			for c, err := range s.Stream(ctx, abstractions.Query[customerRow]{Partition: "big"}) {
				e.OK("stream break", err)
				streamed = append(streamed, c.ID)
				if len(streamed) == 1200 {
					break
				}
			}
			same("stream stopped by the consumer", streamed, want(0, 1200))

			var paged []string
			pages, cursor := 0, ""
			var firstCursor string
			for {
				page, err := s.Page(ctx, abstractions.Query[customerRow]{Partition: "big", Take: 50, Cursor: cursor})
				e.OK("page", err)
				pages++
				if len(page.Items) > 50 {
					e.Errorf("page %d holds %d rows", pages, len(page.Items))
				}
				paged = append(paged, ids(page.Items)...)
				if pages == 1 {
					firstCursor = page.Cursor
				}
				if !page.HasMore() {
					break
				}
				cursor = page.Cursor
			}
			same("pages of 50", paged, want(0, 2500))
			e.Equal("pages", pages <= 51, true)
			page, err := s.Page(ctx, abstractions.Query[customerRow]{Partition: "big", Take: 50, Cursor: firstCursor})
			e.OK("a cursor replayed", err)
			e.Equal("replayed page", strings.Join(ids(page.Items), ","), strings.Join(want(50, 100), ","))

			c, ct := countingStoreOf[customerRow](e)
			for _, q := range []abstractions.Query[customerRow]{
				{Partition: "other", Take: 50, Cursor: firstCursor},
				{Partition: "big", Take: 51, Cursor: firstCursor},
				{Partition: "big", RowKeyPrefix: "0", Take: 50, Cursor: firstCursor},
				{Partition: "big", Take: 50, Where: abstractions.Field(func(c *customerRow) *float64 { return &c.Balance }).Gt(1), Cursor: firstCursor},
				{Take: 50, Cursor: firstCursor},
				{Partition: "big", Take: 50, Cursor: "not a cursor"},
				{Partition: "big", Take: 50, Cursor: firstCursor + "x"},
				{Partition: "big", Take: 1001},
			} {
				_, err := c.Page(ctx, q)
				e.Is(fmt.Sprintf("page refused: partition=%q prefix=%q take=%d", q.Partition, q.RowKeyPrefix, q.Take), err, abstractions.ErrInvalidArgument)
			}
			e.Equal("refused cursors sent nothing", ct.n.Load(), int64(0))

			page, err = s.Page(ctx, abstractions.Query[customerRow]{Partition: "big"})
			e.OK("default page size", err)
			e.Equal("default page size", len(page.Items), abstractions.DefaultPageSize)
			page, err = s.Page(ctx, abstractions.Query[customerRow]{Partition: "big", Take: 1000})
			e.OK("page of 1000", err)
			e.Equal("page of 1000", len(page.Items), 1000)
			page, err = s.Page(ctx, abstractions.Query[customerRow]{Partition: "big", RowKeyPrefix: "024", Take: 1000})
			e.OK("last page", err)
			e.Equal("last page", len(page.Items) == 100 && !page.HasMore(), true)

			found, err := s.Any(ctx, abstractions.Query[customerRow]{Partition: "big"})
			e.OK("any", err)
			e.Equal("any", found, true)
			found, err = s.Any(ctx, abstractions.Query[customerRow]{Partition: "big", Where: abstractions.Field(func(c *customerRow) *float64 { return &c.Balance }).Gt(2498)})
			e.OK("any filtered", err)
			e.Equal("any filtered", found, true)
			found, err = s.Any(ctx, abstractions.Query[customerRow]{Partition: "nowhere"})
			e.OK("any none", err)
			e.Equal("any none", found, false)
			n, err := s.Count(ctx, "big")
			e.OK("count", err)
			e.Equal("count", n, 2500)
		},
	},
	{
		Name: "store/query-projection",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[itemRow](e, nil)
			e.OK("seed", s.CreateBatch(ctx, items()))
			for _, c := range []struct {
				name string
				sel  []abstractions.Selector[itemRow]
			}{
				{"name", []abstractions.Selector[itemRow]{fName}},
				{"nested struct", []abstractions.Selector[itemRow]{fHome}},
				{"nested field and json", []abstractions.Selector[itemRow]{fCity, fTags}},
				{"pointer and enum", []abstractions.Selector[itemRow]{fNick, fLevel, fWhen}},
				{"none", []abstractions.Selector[itemRow]{}},
			} {
				got, err := s.Query(ctx, abstractions.Query[itemRow]{Partition: "p", Select: c.sel, Take: 4})
				e.OK("select "+c.name, err)
				for _, it := range got {
					e.Observe("select "+c.name, item(it))
					if it.ETag == "" || it.Timestamp.IsZero() {
						e.Errorf("select %s: %s has no ETag or Timestamp", c.name, it.ID)
					}
				}
			}
			c, ct := countingStoreOf[itemRow](e)
			_, err := c.Query(ctx, abstractions.Query[itemRow]{Select: []abstractions.Selector[itemRow]{abstractions.Field(func(i *itemRow) *string { return &i.Secret })}})
			e.Is("select a field without a column", err, abstractions.ErrNotSupported)
			_, err = c.Query(ctx, abstractions.Query[itemRow]{Select: []abstractions.Selector[itemRow]{abstractions.Field(func(i *itemRow) *string { return &i.Away.City })}})
			e.Is("select below a pointer", err, abstractions.ErrNotSupported)
			e.Equal("refusals sent nothing", ct.n.Load(), int64(0))
		},
	},
	{
		Name: "store/query-filters",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[itemRow](e, nil)
			e.OK("seed", s.CreateBatch(ctx, items()))
			e.OK("elsewhere", s.Create(ctx, &itemRow{Entity: abstractions.Entity{ID: "other|x"}, Name: "carol", Count: 10, Active: true}))
			for _, f := range supportedFilters() {
				got, err := s.Query(ctx, abstractions.Query[itemRow]{Partition: "p", Where: f.f})
				e.OK(f.name, err)
				e.Observe(f.name, ids(got))
			}
			got, err := s.Query(ctx, abstractions.Query[itemRow]{Where: fName.Eq("carol")})
			e.OK("across partitions", err)
			e.Observe("across partitions", ids(got))
			combos := []namedFilter{
				{"and", abstractions.And(fActIs, fCount.Ge(0))},
				{"or", abstractions.Or(fName.Eq("alice"), fCount.Gt(30))},
				{"and of or", abstractions.And(abstractions.Or(fCity.Eq("Lviv"), fCity.Eq("Oslo")), fScore.Lt(3))},
				{"or of and", abstractions.Or(abstractions.And(fActIs, fBig.Lt(0)), abstractions.And(fLevel.Eq(itemLevelHigh), fSpan.Gt(time.Minute)))},
				{"not of and", abstractions.Not(abstractions.And(fActIs, fCount.Lt(0)))},
				{"not not", abstractions.Not(abstractions.Not(fCount.Eq(10)))},
				{"not of or", abstractions.Not(abstractions.Or(fScore.Gt(2), fBig.Eq(0)))},
				{"single and", abstractions.And(fCount.Eq(0))},
				{"15 comparisons without a partition", abstractions.Or(func() []abstractions.Filter[itemRow] {
					var fs []abstractions.Filter[itemRow]
					for i := int32(0); i < 15; i++ {
						fs = append(fs, fCount.Eq(i*10-30))
					}
					return fs
				}()...)},
			}
			for _, f := range combos {
				q := abstractions.Query[itemRow]{Partition: "p", Where: f.f}
				if strings.HasPrefix(f.name, "15") {
					q.Partition = ""
				}
				got, err := s.Query(ctx, q)
				e.OK(f.name, err)
				e.Observe(f.name, ids(got))
			}
			found, err := s.Any(ctx, abstractions.Query[itemRow]{Partition: "p", Where: fName.Eq("😀")})
			e.OK("any", err)
			e.Equal("any", found, true)
		},
	},
	{
		Name: "store/query-absent-columns",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[itemRow](e, nil)
			old := storeOf[itemRowV1](e, nil)
			e.OK("seed", s.CreateBatch(ctx, items()[:3]))
			e.OK("old rows", old.CreateBatch(ctx, []*itemRowV1{{Entity: abstractions.Entity{ID: "p|old1"}, Name: "alice"}, {Entity: abstractions.Entity{ID: "p|old2"}, Name: "zed"}}))
			for _, f := range []namedFilter{
				{"eq on a missing int", fCount.Eq(0)},
				{"ne on a missing int", fCount.Ne(-30)},
				{"lt on a missing int", fCount.Lt(100)},
				{"not lt on a missing int", abstractions.Not(fCount.Lt(-100))},
				{"bare bool missing", fActIs},
				{"not bare bool missing", abstractions.Not(fActIs)},
				{"pointer eq", fNick.Eq("bo")},
				{"present string", fName.Eq("alice")},
				{"or across", abstractions.Or(fName.Eq("zed"), fCount.Eq(-20))},
			} {
				got, err := s.Query(ctx, abstractions.Query[itemRow]{Partition: "p", Where: f.f})
				e.OK(f.name, err)
				e.Observe(f.name, ids(got))
				for _, it := range got {
					e.Observe(f.name+" row", item(it))
				}
			}
		},
	},
	{
		Name: "store/query-refused-filters",
		Run: func(ctx context.Context, e *Env) {
			s, ct := countingStoreOf[itemRow](e)
			for _, f := range refusedFilters() {
				_, err := s.Query(ctx, abstractions.Query[itemRow]{Partition: "p", Where: f.f})
				kind := abstractions.ErrNotSupported
				if strings.HasPrefix(f.name, "empty") || strings.HasPrefix(f.name, "zero filter") {
					kind = abstractions.ErrInvalidArgument
				}
				e.Is(f.name, err, kind)
				if err != nil {
					e.Observe(f.name+" says", strings.ReplaceAll(err.Error(), e.Table, "TABLE"))
				}
				_, err = s.Any(ctx, abstractions.Query[itemRow]{Partition: "p", Where: f.f})
				e.Is(f.name+" (any)", err, kind)
				for _, err := range s.Stream(ctx, abstractions.Query[itemRow]{Partition: "p", Where: f.f}) {
					e.Is(f.name+" (stream)", err, kind)
				}
				_, err = s.Page(ctx, abstractions.Query[itemRow]{Partition: "p", Where: f.f})
				e.Is(f.name+" (page)", err, kind)
			}
			e.Equal("nothing was sent", ct.n.Load(), int64(0))
		},
	},
	{
		Name: "store/stream-append-log",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[eventRow](e, nil)
			t0 := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
			for i := 0; i < 5; i++ {
				e.OK(fmt.Sprint("main ", i), abstractions.AppendAt(ctx, s, "vision-42", &eventRow{Text: fmt.Sprint("main ", i)}, "", t0.Add(time.Duration(i)*time.Minute)))
				e.OK(fmt.Sprint("s1 ", i), abstractions.AppendAt(ctx, s, "vision-42", &eventRow{Text: fmt.Sprint("s1 ", i)}, "Session1", t0.Add(time.Duration(i)*time.Second)))
			}
			e.OK("s2", abstractions.AppendAt(ctx, s, "vision-42", &eventRow{Text: "s2 0"}, "session2", t0))
			same := &eventRow{Text: "same tick"}
			e.OK("same tick", abstractions.AppendAt(ctx, s, "vision-42", same, "", t0.Add(4*time.Minute)))
			e.Observe("same tick moves on", same.ID)
			e.Equal("ticks key", same.ID, "vision-42|"+abstractions.InvertedTicks(t0.Add(4*time.Minute+100*time.Nanosecond)))
			texts := func(evs []*eventRow) []string {
				out := make([]string, len(evs))
				for i, ev := range evs {
					out[i] = ev.Text
				}
				return out
			}
			got, err := abstractions.Recent(ctx, s, "vision-42", 3, "")
			e.OK("recent main", err)
			e.Equal("recent main, newest first", texts(got), []string{"same tick", "main 4", "main 3"})
			got, err = abstractions.Recent(ctx, s, "vision-42", 100, "")
			e.OK("recent main all", err)
			e.Equal("the main log only", len(got), 6)
			got, err = abstractions.Recent(ctx, s, "vision-42", 2, "session1")
			e.OK("recent s1", err)
			e.Equal("recent s1", texts(got), []string{"s1 4", "s1 3"})
			got, err = abstractions.Recent(ctx, s, "vision-42", 10, "session2")
			e.OK("recent s2", err)
			e.Equal("sub-streams isolate", texts(got), []string{"s2 0"})
			got, err = abstractions.Recent(ctx, s, "vision-42", 10, "session")
			e.OK("recent of a name that prefixes others", err)
			e.Equal("a prefix of a sub-stream name is another stream", len(got), 0)
			now := &eventRow{Text: "now"}
			e.OK("append now", abstractions.Append(ctx, s, "vision-42", now, ""))
			got, err = abstractions.Recent(ctx, s, "vision-42", 1, "")
			e.OK("recent after now", err)
			e.Equal("now is newest", texts(got), []string{"now"})
			e.Deleted("delete now", true)(s.Delete(ctx, now.ID, ""))
			e.Is("a bad sub-stream", abstractions.AppendAt(ctx, s, "vision-42", &eventRow{}, "1x", t0), abstractions.ErrInvalidArgument)
			e.Is("a sub-stream with |", abstractions.AppendAt(ctx, s, "vision-42", &eventRow{}, "a|b", t0), abstractions.ErrInvalidArgument)
			_, err = abstractions.Recent(ctx, s, "vision-42", -1, "")
			e.Is("a negative count", err, abstractions.ErrInvalidArgument)
		},
	},
	{
		Name: "store/stream-versions",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[snapshotRow](e, nil)
			for _, v := range []int{1, 2, 3, 5, 8} {
				snap := &snapshotRow{State: fmt.Sprint("state ", v)}
				snap.Version = v
				e.OK(fmt.Sprint("append ", v), abstractions.AppendVersion(ctx, s, "order-42", snap))
				e.Observe(fmt.Sprint("id ", v), snap.ID)
			}
			other := &snapshotRow{State: "other"}
			other.Version = 100
			e.OK("another stream", abstractions.AppendVersion(ctx, s, "order-43", other))
			dup := &snapshotRow{State: "again"}
			dup.Version = 3
			e.Is("a version twice", abstractions.AppendVersion(ctx, s, "order-42", dup), abstractions.ErrDuplicateKey)
			bad := &snapshotRow{}
			bad.Version = -1
			e.Is("a negative version", abstractions.AppendVersion(ctx, s, "order-42", bad), abstractions.ErrInvalidArgument)
			state := func(step string, v *snapshotRow, err error) {
				if errors.Is(err, abstractions.ErrNotFound) {
					e.Observe(step, "not found")
					return
				}
				e.OK(step, err)
				if v == nil {
					e.Observe(step, "nil")
					return
				}
				e.Observe(step, fmt.Sprintf("%s v%d %s", v.ID, v.Version, v.State))
			}
			v, err := abstractions.Latest(ctx, s, "order-42")
			state("latest", v, err)
			e.Equal("latest", v != nil && v.Version == 8, true)
			v, err = abstractions.AtVersion(ctx, s, "order-42", 2)
			state("at 2", v, err)
			v, err = abstractions.AtVersion(ctx, s, "order-42", 4)
			state("at 4", v, err)
			e.Is("no version 4", err, abstractions.ErrNotFound)
			for _, n := range []int{0, 1, 4, 5, 7, 1000, abstractions.MaxVersion} {
				v, err = abstractions.AtOrBefore(ctx, s, "order-42", n)
				state(fmt.Sprint("at or before ", n), v, err)
			}
			v, err = abstractions.AtOrBefore(ctx, s, "order-42", 6)
			e.OK("as of 6", err)
			e.Equal("as of 6", v != nil && v.Version == 5, true)
			var hist []int
			for v, err := range abstractions.History(ctx, s, "order-42", 3) {
				e.OK("history", err)
				hist = append(hist, v.Version)
			}
			e.Equal("history, newest first", hist, []int{8, 5, 3})
			v, err = abstractions.Latest(ctx, s, "order-44")
			state("latest of an empty stream", v, err)
			e.Is("latest of an empty stream", err, abstractions.ErrNotFound)
			_, err = abstractions.AtOrBefore(ctx, s, "order-42", 0)
			e.Is("before the first version", err, abstractions.ErrNotFound)
			_, err = abstractions.Latest(ctx, s, "order|42")
			e.Is("a stream id with the separator", err, abstractions.ErrInvalidKey)
			v, err = abstractions.AtOrBefore(ctx, s, "order-42", 2)
			state("at or before 2", v, err)
			e.Equal("version keys", abstractions.VersionKey(3), "2147483644")
			if errors.Is(err, abstractions.ErrNotFound) {
				e.Errorf("unexpected not found")
			}
		},
	},
}

// The differential filter test: random filters over a fixed random data set must select the
// same rows on both backends, and the rows a Go evaluation of the filter selects.
