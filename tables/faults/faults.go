package faults

import (
	"fmt"
	"sync"
)

// Fault is one kind of failure.
type Fault uint8

// The faults.
const (
	// LoseResponse sends the request, lets the service apply it, and fails the try as a
	// connection reset before the answer arrives.
	LoseResponse Fault = iota + 1
	// ResetMidBody sends the request and breaks the connection half-way through the
	// response body. The SDK retries it for GET, PUT and DELETE only.
	ResetMidBody
	// InternalError answers 500 InternalError without sending the request.
	InternalError
	// ServerBusy answers 503 ServerBusy without sending the request.
	ServerBusy
	// Stall holds the request, unsent, until its context ends.
	Stall
	// StallAfterSend sends the request, lets the service apply it, and holds the answer
	// until the request's context ends: the one fault whose outcome the client cannot
	// learn in time (the call fails, although the write was applied).
	StallAfterSend
	// ResetMidRequest breaks the connection while the request is being sent: the service
	// never receives it whole and applies nothing. The SDK resends it, whatever the method.
	ResetMidRequest
)

var faultNames = [...]string{"", "LoseResponse", "ResetMidBody", "InternalError", "ServerBusy", "Stall", "StallAfterSend", "ResetMidRequest"}

// String returns the fault's name.
func (f Fault) String() string {
	if int(f) < len(faultNames) && f != 0 {
		return faultNames[f]
	}
	return fmt.Sprintf("Fault(%d)", f)
}

// Faults lists every fault, for tables of cases.
var Faults = []Fault{LoseResponse, ResetMidBody, InternalError, ServerBusy, Stall, StallAfterSend, ResetMidRequest}

// Calls is a set of kinds of service calls.
type Calls uint8

// The kinds of calls a fault can hit.
const (
	// Reads are point reads and queries.
	Reads Calls = 1 << iota
	// Writes are single-row writes: insert, replace, merge, upserts, delete.
	Writes
	// Transactions are entity-group transactions (batches).
	Transactions
	// TableCalls create, delete and list tables.
	TableCalls

	// AllCalls is every kind.
	AllCalls = Reads | Writes | Transactions | TableCalls
)

// Error is the failure a LoseResponse, ResetMidBody or ResetMidRequest fault leaves: what a
// broken connection looks like to the client.
type Error struct {
	Fault Fault
}

// Error implements error.
func (e *Error) Error() string {
	switch e.Fault {
	case LoseResponse:
		return "faults: connection reset before the response (injected; the service applied the request)"
	case ResetMidBody:
		return "faults: connection reset in the middle of the response body (injected; the service applied the request)"
	case ResetMidRequest:
		return "faults: connection reset while the request was being sent (injected; the service did not receive it)"
	}
	return "faults: injected " + e.Fault.String()
}

// Temporary reports true: the failure is the network's, and a retry may succeed.
func (e *Error) Temporary() bool { return true }

// Timeout reports false.
func (e *Error) Timeout() bool { return false }

// rule is one pending fault.
type rule struct {
	fault Fault
	on    Calls
	left  int
}

// Plan holds the pending faults of an injector. The zero Plan injects nothing.
type Plan struct {
	mu       sync.Mutex
	rules    []rule
	injected map[Fault]int
}

// Inject adds a fault for the next times calls of the given kinds (times < 1 means 1).
// Faults are used in the order they were added.
func (p *Plan) Inject(f Fault, on Calls, times int) {
	if times < 1 {
		times = 1
	}
	p.mu.Lock()
	p.rules = append(p.rules, rule{fault: f, on: on, left: times})
	p.mu.Unlock()
}

// Clear drops every pending fault.
func (p *Plan) Clear() {
	p.mu.Lock()
	p.rules = nil
	p.mu.Unlock()
}

// Pending returns how many injections are still waiting for a call.
func (p *Plan) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.rules {
		n += r.left
	}
	return n
}

// Injected returns how many times the fault was injected so far.
func (p *Plan) Injected(f Fault) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.injected[f]
}

// take returns the fault for one call of kind c, consuming it, or 0.
func (p *Plan) take(c Calls) Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.rules {
		r := &p.rules[i]
		if r.left == 0 || r.on&c == 0 {
			continue
		}
		r.left--
		f := r.fault
		if r.left == 0 {
			p.rules = append(p.rules[:i], p.rules[i+1:]...)
		}
		if p.injected == nil {
			p.injected = map[Fault]int{}
		}
		p.injected[f]++
		return f
	}
	return 0
}
