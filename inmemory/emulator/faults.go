package emulator

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Fault is one kind of failure the emulator injects into a request. The names and meanings
// are those of the Go injectors' faults (package tables/faults), which the emulator does
// not import: that package pulls the Azure SDK in.
type Fault uint8

// The faults the emulator injects.
const (
	// LoseResponse lets the service apply the request and closes the connection with no
	// answer.
	LoseResponse Fault = iota + 1
	// ResetMidRequest closes the connection with no answer before the service applies
	// the request: nothing is applied.
	ResetMidRequest
	// InternalError answers 500 InternalError without applying the request.
	InternalError
	// ServerBusy answers 503 ServerBusy with Retry-After without applying the request.
	ServerBusy
)

var faultNames = map[string]Fault{"lose": LoseResponse, "reset": ResetMidRequest, "500": InternalError, "503": ServerBusy}

// String returns the fault's name, as in tables/faults.
func (f Fault) String() string {
	switch f {
	case LoseResponse:
		return "LoseResponse"
	case ResetMidRequest:
		return "ResetMidRequest"
	case InternalError:
		return "InternalError"
	case ServerBusy:
		return "ServerBusy"
	}
	return fmt.Sprintf("Fault(%d)", f)
}

// Calls is a set of kinds of requests, as tables/faults.Calls.
type Calls uint8

// The kinds of requests a fault rule matches.
const (
	Reads        Calls = 1 << iota // point reads and queries of entities
	Writes                         // single-entity writes
	Transactions                   // $batch
	TableCalls                     // create, delete, get and list tables
	AllCalls     = Reads | Writes | Transactions | TableCalls
)

var callNames = map[string]Calls{"read": Reads, "write": Writes, "batch": Transactions, "table": TableCalls, "all": AllCalls}

// FaultHeader is the request header that injects one fault into that request alone: its
// value is a fault's name in the -faults grammar (lose, reset, 500, 503).
const FaultHeader = "x-udtables-fault"

// A FaultRule injects Fault into the requests of the kinds Calls (on Table, when not
// empty): into the first First of them when First > 0, else into every Every-th when
// Every > 0, else into all of them.
type FaultRule struct {
	Fault Fault
	Calls Calls
	Table string
	First int
	Every int

	mu   sync.Mutex
	seen int
}

// hits counts one matching request and reports whether the rule injects its fault.
func (r *FaultRule) hits() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen++
	switch {
	case r.First > 0:
		return r.seen <= r.First
	case r.Every > 0:
		return r.seen%r.Every == 0
	}
	return true
}

// ParseFaults reads fault rules in the command's grammar: rules separated by commas, each
// fault:calls[:table][:first=N|every=N], where fault is lose, reset, 500 or 503 and calls
// is read, write, batch, table or all (several joined by +). For example
// "lose:write:every=10,503:read:first=3".
func ParseFaults(s string) ([]*FaultRule, error) {
	var rules []*FaultRule
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		fields := strings.Split(part, ":")
		if len(fields) < 2 {
			return nil, fmt.Errorf("emulator: fault rule %q is not fault:calls[:table][:first=N|every=N]", part)
		}
		r := &FaultRule{Fault: faultNames[fields[0]]}
		if r.Fault == 0 {
			return nil, fmt.Errorf("emulator: fault rule %q: unknown fault %q (lose, reset, 500, 503)", part, fields[0])
		}
		for _, c := range strings.Split(fields[1], "+") {
			k, ok := callNames[c]
			if !ok {
				return nil, fmt.Errorf("emulator: fault rule %q: unknown calls %q (read, write, batch, table, all)", part, c)
			}
			r.Calls |= k
		}
		for _, f := range fields[2:] {
			name, val, isCount := strings.Cut(f, "=")
			if !isCount {
				r.Table = f
				continue
			}
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("emulator: fault rule %q: %s wants a positive count", part, name)
			}
			switch name {
			case "first":
				r.First = n
			case "every":
				r.Every = n
			default:
				return nil, fmt.Errorf("emulator: fault rule %q: unknown %q (first, every)", part, name)
			}
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// callsOf is the kind of a request on res with method.
func callsOf(method string, res resource) Calls {
	switch res.kind {
	case resBatch:
		return Transactions
	case resEntities, resEntity:
		if method == http.MethodGet {
			return Reads
		}
		return Writes
	}
	return TableCalls
}

// fault is the fault to inject into the request, or 0: the request's header first, then the
// first rule that matches and hits.
func (q *request) fault(method string, res resource) Fault {
	if name := q.r.Header.Get(FaultHeader); name != "" {
		if f, ok := faultNames[name]; ok {
			return f
		}
		return unknownFault
	}
	calls := callsOf(method, res)
	for _, r := range q.h.faults {
		if r.Calls&calls == 0 || (r.Table != "" && !strings.EqualFold(r.Table, res.table)) {
			continue
		}
		if r.hits() {
			return r.Fault
		}
	}
	return 0
}

// unknownFault stands for a FaultHeader that names no fault: the request is refused.
const unknownFault Fault = 255

// retryAfter is the Retry-After of a ServerBusy answer, in seconds.
const retryAfter = "1"

// inject answers the request with fault f; apply applies the request, for LoseResponse.
func (q *request) inject(f Fault, apply func()) {
	if f != unknownFault {
		q.faulted = f
	}
	switch f {
	case InternalError:
		q.fail(statusError(http.StatusInternalServerError, "InternalError", "The server encountered an internal error. Please retry the request."))
	case ServerBusy:
		q.w.Header().Set("Retry-After", retryAfter)
		q.fail(statusError(http.StatusServiceUnavailable, "ServerBusy", "The server is busy."))
	case LoseResponse:
		real := q.w.ResponseWriter
		q.w.ResponseWriter = &discard{header: http.Header{}}
		apply()
		q.w.ResponseWriter = real
		q.hangUp()
	case ResetMidRequest:
		q.hangUp()
	default:
		q.fail(errInvalidInput("The " + FaultHeader + " header names no fault (lose, reset, 500, 503)."))
	}
}

// hangUp closes the request's connection without an answer.
func (q *request) hangUp() {
	q.w.status = 0
	conn, _, err := http.NewResponseController(q.w.ResponseWriter).Hijack()
	if err != nil {
		q.h.logFault(q, "the connection could not be taken over: "+err.Error())
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

func (h *Handler) logFault(q *request, msg string) {
	if h.log != nil {
		h.log.Warn(msg, slog.String("request_id", q.id))
	}
}

// discard is a ResponseWriter that throws the answer away.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}
