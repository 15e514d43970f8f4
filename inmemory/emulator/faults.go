package emulator

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
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
	// Delay waits FaultRule.Delay, then serves the request. A client that hangs up
	// during the wait ends it, and the request is not applied.
	Delay
	// DelayAnswer applies the request, then waits FaultRule.Delay before answering. A
	// client that hangs up during the wait ends it: the request is applied, unanswered.
	DelayAnswer
	// Throttle answers 503 ServerBusy with Retry-After, without applying the request, to
	// the requests beyond FaultRule.Rate per FaultRule.Per (a token bucket of Rate
	// tokens, refilled evenly over Per).
	Throttle
)

// faultNames are the faults the grammar names without an argument.
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
	case Delay:
		return "Delay"
	case DelayAnswer:
		return "DelayAnswer"
	case Throttle:
		return "Throttle"
	}
	return fmt.Sprintf("Fault(%d)", f)
}

// Calls is a set of kinds of requests, as tables/faults.Calls.
type Calls uint8

// The kinds of requests a fault rule matches: the first four are the table endpoint's, the
// next three the blob endpoint's.
const (
	Reads          Calls = 1 << iota // point reads and queries of entities
	Writes                           // single-entity writes
	Transactions                     // $batch
	TableCalls                       // create, delete, get and list tables; table ACLs
	BlobReads                        // downloads, properties, metadata and block lists of blobs; listings of a container's blobs
	BlobWrites                       // uploads, staged blocks, block lists, properties, metadata and deletes of blobs
	ContainerCalls                   // create, delete, get and list containers
	BlobCalls      = BlobReads | BlobWrites | ContainerCalls
	AllCalls       = Reads | Writes | Transactions | TableCalls | BlobCalls
)

var callNames = map[string]Calls{
	"read": Reads, "write": Writes, "batch": Transactions, "table": TableCalls,
	"blob-read": BlobReads, "blob-write": BlobWrites, "container": ContainerCalls, "blob": BlobCalls,
	"all": AllCalls,
}

// FaultHeader is the request header that injects one fault into that request alone: its
// value is a fault in the -faults grammar (lose, reset, 500, 503, delay=D, delay-answer=D;
// not throttle, which needs a rule's bucket).
const FaultHeader = "x-udtables-fault"

// A FaultRule injects Fault into the requests of the kinds Calls (on Table, when not
// empty: a table, or a container for the blob endpoint's requests): into the first First of them when First > 0, else into every Every-th when
// Every > 0, else into all of them. A Throttle rule ignores First and Every: its bucket
// decides.
type FaultRule struct {
	Fault Fault
	Calls Calls
	Table string
	First int
	Every int
	// Delay is how long a Delay or DelayAnswer rule waits.
	Delay time.Duration
	// Rate and Per are a Throttle rule's rate: Rate requests per Per.
	Rate int
	Per  time.Duration
	// RetryAfter is the Retry-After of the 503 a ServerBusy or Throttle rule answers, in
	// whole seconds; 0 means 1 second.
	RetryAfter time.Duration

	mu     sync.Mutex
	seen   int
	tokens float64   // a Throttle rule's bucket
	at     time.Time // when tokens was last brought up to date; zero: the bucket is full
}

// check reports a rule that cannot be applied.
func (r *FaultRule) check() error {
	switch {
	case r.Fault < LoseResponse || r.Fault > Throttle:
		return fmt.Errorf("emulator: fault rule with unknown fault %v", r.Fault)
	case (r.Fault == Delay || r.Fault == DelayAnswer) && r.Delay <= 0:
		return fmt.Errorf("emulator: %v rule without a positive Delay", r.Fault)
	case r.Fault == Throttle && (r.Rate <= 0 || r.Per <= 0):
		return fmt.Errorf("emulator: Throttle rule without a positive Rate and Per")
	case r.RetryAfter < 0 || r.RetryAfter%time.Second != 0:
		return fmt.Errorf("emulator: RetryAfter %v is not a whole number of seconds", r.RetryAfter)
	}
	return nil
}

// checkFaults reports the first rule of rules that cannot be applied.
func checkFaults(rules []*FaultRule) error {
	for _, r := range rules {
		if err := r.check(); err != nil {
			return err
		}
	}
	return nil
}

// take takes a token from a Throttle rule's bucket at now, or reports that it is empty.
// The bucket holds Rate tokens and refills at Rate per Per.
func (r *FaultRule) take(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at.IsZero() {
		r.tokens = float64(r.Rate)
	} else if d := now.Sub(r.at); d > 0 {
		r.tokens = min(float64(r.Rate), r.tokens+float64(r.Rate)*float64(d)/float64(r.Per))
	}
	r.at = now
	if r.tokens < 1 {
		return false
	}
	r.tokens--
	return true
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
// fault:calls[:table][:option...]. fault is lose, reset, 500, 503, delay=D (wait D, then
// serve), delay-answer=D (serve, then wait D before answering) or throttle=N/D (503 to the
// requests beyond N per D; D may be a bare unit: 100/s); D is a Go duration. calls is read,
// write, batch or table (the table endpoint's), blob-read, blob-write or container (the blob
// endpoint's), blob (those three) or all, several joined by +; table names a table or a
// container. The options are first=N or every=N
// (not with throttle), and retry-after=S (seconds, for 503 and throttle). For example
// "lose:write:every=10,503:read:first=3,delay=200ms:read,throttle=100/s:write:retry-after=2".
func ParseFaults(s string) ([]*FaultRule, error) {
	var rules []*FaultRule
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		fields := strings.Split(part, ":")
		if len(fields) < 2 {
			return nil, fmt.Errorf("emulator: fault rule %q is not fault:calls[:table][:option...]", part)
		}
		r := &FaultRule{}
		if err := parseFault(r, fields[0]); err != nil {
			return nil, fmt.Errorf("emulator: fault rule %q: %w", part, err)
		}
		for _, c := range strings.Split(fields[1], "+") {
			k, ok := callNames[c]
			if !ok {
				return nil, fmt.Errorf("emulator: fault rule %q: unknown calls %q (read, write, batch, table, blob-read, blob-write, container, blob, all)", part, c)
			}
			r.Calls |= k
		}
		for _, f := range fields[2:] {
			name, val, isOption := strings.Cut(f, "=")
			if !isOption {
				r.Table = f
				continue
			}
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("emulator: fault rule %q: %s wants a positive count", part, name)
			}
			switch {
			case name == "first" && r.Fault != Throttle:
				r.First = n
			case name == "every" && r.Fault != Throttle:
				r.Every = n
			case name == "retry-after" && (r.Fault == ServerBusy || r.Fault == Throttle):
				r.RetryAfter = time.Duration(n) * time.Second
			default:
				return nil, fmt.Errorf("emulator: fault rule %q: %q does not apply (first, every; retry-after with 503 and throttle)", part, name)
			}
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// parseFault reads a fault of the grammar, with its argument, into r.
func parseFault(r *FaultRule, s string) error {
	name, arg, hasArg := strings.Cut(s, "=")
	switch name {
	case "delay", "delay-answer":
		d, err := time.ParseDuration(arg)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s wants a positive duration, such as %s=200ms", name, name)
		}
		r.Fault, r.Delay = Delay, d
		if name == "delay-answer" {
			r.Fault = DelayAnswer
		}
	case "throttle":
		count, per, _ := strings.Cut(arg, "/")
		n, err := strconv.Atoi(count)
		if per != "" && (per[0] < '0' || per[0] > '9') {
			per = "1" + per // a bare unit: 100/s
		}
		d, err2 := time.ParseDuration(per)
		if err != nil || err2 != nil || n <= 0 || d <= 0 {
			return fmt.Errorf("throttle wants a rate N/D, such as throttle=100/s or throttle=5/10s")
		}
		r.Fault, r.Rate, r.Per = Throttle, n, d
	default:
		r.Fault = faultNames[name]
		if r.Fault == 0 || hasArg {
			return fmt.Errorf("unknown fault %q (lose, reset, 500, 503, delay=D, delay-answer=D, throttle=N/D)", s)
		}
	}
	return nil
}

// callsOf is the kind of a table request on res with method.
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

// A faultPlan is what the fault rules do to one request: wait before applying it or
// before answering, then inject fault (0: serve it).
type faultPlan struct {
	fault         Fault
	before, after time.Duration
	retryAfter    time.Duration // of a 503; 0 means 1 second
	refusal       string        // why the FaultHeader is refused, for unknownFault
}

// faultPlan is what to do to a request of the kind calls on the table or container name
// ("" for none): the request's FaultHeader alone when it has one, else the rules in order.
// A Delay or DelayAnswer rule that fires adds its wait and the search goes on; a Throttle
// rule fires when its bucket is empty; any other rule that matches and fires decides.
func (q *exchange) faultPlan(calls Calls, name string) faultPlan {
	if name := q.r.Header.Get(FaultHeader); name != "" {
		var r FaultRule
		if err := parseFault(&r, name); err != nil || r.Fault == Throttle {
			return faultPlan{fault: unknownFault, refusal: "The " + FaultHeader + " header names no fault of a single request (lose, reset, 500, 503, delay=D, delay-answer=D)."}
		}
		return (&r).plan(faultPlan{})
	}
	var p faultPlan
	for _, r := range q.h.faults {
		if r.Calls&calls == 0 || (r.Table != "" && !strings.EqualFold(r.Table, name)) {
			continue
		}
		if r.Fault == Throttle {
			if !r.take(q.h.now()) {
				return r.plan(p)
			}
			continue
		}
		if !r.hits() {
			continue
		}
		p = r.plan(p)
		if p.fault != Delay && p.fault != DelayAnswer {
			return p
		}
	}
	if p.before > 0 { // delays alone: the log names the first
		p.fault = Delay
	} else if p.after > 0 {
		p.fault = DelayAnswer
	}
	return p
}

// plan adds what r does to p.
func (r *FaultRule) plan(p faultPlan) faultPlan {
	switch r.Fault {
	case Delay:
		p.before += r.Delay
	case DelayAnswer:
		p.after += r.Delay
	default:
		p.retryAfter = r.RetryAfter
	}
	p.fault = r.Fault
	return p
}

// unknownFault stands for a FaultHeader that names no fault: the request is refused.
const unknownFault Fault = 255

// inject does what p says to the request; apply applies it, fail answers an error in the
// request's protocol, and busy is the message of its service's 503 ServerBusy.
func (q *exchange) inject(p faultPlan, fail func(error), busy string, apply func()) {
	if p.fault != unknownFault {
		q.faulted = p.fault
	}
	if p.before > 0 && !q.wait(p.before) {
		q.hangUp() // the client is gone: nothing is applied, nobody reads an answer
		return
	}
	answer := apply // the request's answer, or the fault's
	switch p.fault {
	case LoseResponse:
		real := q.w.ResponseWriter
		q.w.ResponseWriter = &discard{header: http.Header{}}
		apply()
		q.w.ResponseWriter = real
		q.hangUp()
		return
	case ResetMidRequest:
		q.hangUp()
		return
	case InternalError:
		answer = func() {
			fail(statusError(http.StatusInternalServerError, "InternalError", "The server encountered an internal error. Please retry the request."))
		}
	case ServerBusy, Throttle:
		msg := busy
		if p.fault == Throttle {
			msg = "Operations per second is over the account limit."
		}
		answer = func() {
			q.setRetryAfter(p.retryAfter)
			fail(statusError(http.StatusServiceUnavailable, "ServerBusy", msg))
		}
	case unknownFault:
		answer = func() { fail(errInvalidInput(p.refusal)) }
	}
	if p.after <= 0 {
		answer()
		return
	}
	// Hold the answer back: write it to a buffer, wait, then send it.
	real := q.w.ResponseWriter
	held := &heldAnswer{header: real.Header()}
	q.w.ResponseWriter = held
	answer()
	q.w.ResponseWriter = real
	if !q.wait(p.after) {
		q.hangUp() // the client that would read the answer is gone
		return
	}
	held.send(real)
}

// setRetryAfter sets the Retry-After header of a 503 to d, or 1 second when d is 0.
func (q *exchange) setRetryAfter(d time.Duration) {
	secs := int(d / time.Second)
	if secs <= 0 {
		secs = 1
	}
	q.w.Header().Set("Retry-After", strconv.Itoa(secs))
}

// wait waits d with the handler's clock, or until the request's context ends (the client
// hung up, the server shuts down); it reports whether d passed.
func (q *exchange) wait(d time.Duration) bool {
	return q.h.sleep(q.r.Context(), d) == nil
}

// sleep waits d, or until ctx ends, and returns ctx's error in that case. It starts no
// goroutine.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hangUp closes the request's connection without an answer.
func (q *exchange) hangUp() {
	q.w.status = 0
	conn, _, err := http.NewResponseController(q.w.ResponseWriter).Hijack()
	if err != nil {
		q.h.logFault(q.id, "the connection could not be taken over: "+err.Error())
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

func (h *Handler) logFault(id, msg string) {
	if h.log != nil {
		h.log.Warn(msg, slog.String("request_id", id))
	}
}

// heldAnswer is a ResponseWriter that keeps the answer's status and body until send; its
// header is the real writer's.
type heldAnswer struct {
	header http.Header
	status int
	body   []byte
}

func (h *heldAnswer) Header() http.Header { return h.header }
func (h *heldAnswer) Write(b []byte) (int, error) {
	h.body = append(h.body, b...)
	return len(b), nil
}
func (h *heldAnswer) WriteHeader(status int) { h.status = status }

// send writes the held answer to w.
func (h *heldAnswer) send(w http.ResponseWriter) {
	if h.status != 0 {
		w.WriteHeader(h.status)
	}
	_, _ = w.Write(h.body)
}

// discard is a ResponseWriter that throws the answer away.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}
