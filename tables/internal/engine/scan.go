package engine

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/plan"
	"github.com/unified-data/gotables/tables/internal/telemetry"
)

// ScanPolicy is what a store does with a query the service runs as a table scan
// (plan.TableScan).
type ScanPolicy uint8

// The scan policies; the zero policy logs.
const (
	ScanLog    ScanPolicy = iota // send it, logging each query shape once with its call site
	ScanAllow                    // send it
	ScanRefuse                   // refuse it before sending anything
)

// Planned classifies the query that sends filter, records its class on the call (span
// and duration) and applies the store's table-scan policy. whole says the call names the
// whole table itself (ListAll, CountAll): it is refused under ScanRefuse but not logged,
// since the caller asked for every row.
func (s *Table) Planned(c *telemetry.Call, op, filter string, whole bool) error {
	p := plan.Of(filter)
	c.Plan(p.Class.String())
	if p.Class != plan.TableScan {
		return nil
	}
	switch s.Scans {
	case ScanAllow:
		return nil
	case ScanRefuse:
		what := "the query (no filter)"
		if filter != "" {
			what = "the query with filter " + plan.Shape(filter)
		}
		if whole {
			what = "a read of the whole table"
		}
		return s.QueryError(op, abstractions.ErrInvalidArgument, fmt.Sprintf(
			"%s bounds no partition, so the service would read every row of the table (a table scan), which this store refuses: "+
				"set the query's Partition (with a RowKeyPrefix for a range of rows), or let this store scan "+
				"(StoreOptions.TableScans = tables.AllowTableScans)", what))
	}
	if !whole {
		s.Acct.Scans.log(s.Acct, s.Name, op, filter)
	}
	return nil
}

// maxScanShapes bounds the shapes an account remembers having logged; beyond it, a new
// shape is not logged.
const maxScanShapes = 4096

// ScanShapes remembers the shapes of the table scans an account has logged, so that each
// is logged once, whatever the number of calls.
type ScanShapes struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (l *ScanShapes) log(a *Account, table, op, filter string) {
	shape := plan.Shape(filter)
	if filter == "" {
		shape = "(no filter)"
	}
	key := strings.ToLower(table) + "\x00" + shape
	l.mu.Lock()
	if l.seen[key] || len(l.seen) >= maxScanShapes {
		l.mu.Unlock()
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[key] = true
	l.mu.Unlock()
	a.Logger().Warn("udtables: a query bounds no partition, so the service reads the whole table; "+
		"set its Partition, or allow table scans for the store (StoreOptions.TableScans) to silence this",
		"table", table, "op", op, "filter", shape, "site", callSite())
}

// libraryPrefixes are the packages whose frames are not a call site.
var libraryPrefixes = []string{"github.com/unified-data/gotables/tables", "github.com/unified-data/gotables/abstractions", "iter.", "runtime."}

// callSite is the first frame outside the library (its own tests count as outside), as
// file:line.
func callSite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		lib := !strings.HasSuffix(f.File, "_test.go")
		if lib {
			lib = false
			for _, p := range libraryPrefixes {
				if strings.HasPrefix(f.Function, p) {
					lib = true
					break
				}
			}
		}
		if !lib {
			file := f.File
			if i := strings.LastIndexByte(file, '/'); i >= 0 {
				if j := strings.LastIndexByte(file[:i], '/'); j >= 0 {
					file = file[j+1:]
				}
			}
			return f.Function + " (" + file + ":" + strconv.Itoa(f.Line) + ")"
		}
		if !more {
			return "unknown"
		}
	}
}
