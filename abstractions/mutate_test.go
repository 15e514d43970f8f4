package abstractions

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions/internal/backend"
)

type counter struct {
	Entity
	N      int
	Status string
	By     string
}

// fakeStore is the part of Storage the outcome verbs use (a ReadWriter), over a map with
// versions.
type fakeStore struct {
	mu      sync.Mutex
	rows    map[string]counter
	version int
	// beforeUpdate, when set, runs inside Update before the version check (to inject a
	// competing write).
	beforeUpdate func()
	reads        atomic.Int64
}

func newFake() *fakeStore { return &fakeStore{rows: map[string]counter{}} }

func (f *fakeStore) Table() string { return "Fake" }

func (f *fakeStore) One(_ context.Context, id string) (*counter, error) {
	f.reads.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.rows[id]
	if !ok {
		return nil, &StoreError{Kind: ErrNotFound, Op: "read"}
	}
	return &c, nil
}

func (f *fakeStore) Create(_ context.Context, v *counter) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.rows[v.ID]; ok {
		return &StoreError{Kind: ErrDuplicateKey, Op: "create"}
	}
	f.version++
	v.ETag = strconv.Itoa(f.version)
	f.rows[v.ID] = *v
	return nil
}

func (f *fakeStore) Update(_ context.Context, v *counter, mode ConcurrencyMode) error {
	if f.beforeUpdate != nil {
		f.beforeUpdate()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.rows[v.ID]
	if !ok {
		return &StoreError{Kind: ErrNotFound, Op: "update"}
	}
	if mode != Strict {
		panic("the verbs write Strict")
	}
	if c.ETag != v.ETag {
		return &StoreError{Kind: ErrConcurrencyConflict, Op: "update"}
	}
	f.version++
	v.ETag = strconv.Itoa(f.version)
	f.rows[v.ID] = *v
	return nil
}

func (f *fakeStore) bump(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.rows[id]
	c.N += 100
	f.version++
	c.ETag = strconv.Itoa(f.version)
	f.rows[id] = c
}

var fast = &RetryOptions{Backoff: -1}

func inc(c *counter) error { c.N++; return nil }

func TestMutateIncrements(t *testing.T) {
	ctx := context.Background()
	s := newFake()
	if _, err := Mutate(ctx, s, "p|missing", inc, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing row: got %v, want ErrNotFound", err)
	}
	_ = s.Create(ctx, &counter{Entity: Entity{ID: "p|1"}})
	v, err := Mutate(ctx, s, "p|1", inc, nil)
	if err != nil || v.N != 1 || v.ETag == "" {
		t.Fatalf("got %+v, %v", v, err)
	}
}

func TestMutateRunsOutOfAttempts(t *testing.T) {
	ctx := context.Background()
	s := newFake()
	_ = s.Create(ctx, &counter{Entity: Entity{ID: "p|1"}})
	s.beforeUpdate = func() { s.bump("p|1") }
	calls := 0
	_, err := Mutate(ctx, s, "p|1", func(c *counter) error { calls++; return inc(c) }, &RetryOptions{Attempts: 4, Backoff: time.Microsecond})
	if !errors.Is(err, ErrConcurrencyConflict) {
		t.Fatalf("got %v, want ErrConcurrencyConflict", err)
	}
	if calls != 4 {
		t.Fatalf("mutate ran %d times, want 4", calls)
	}
	out, err := TryMutate(ctx, s, "p|1", inc, fast)
	if err != nil || out.Status != OutcomeConflicted || out.Attempts != 4 || out.Value != nil {
		t.Fatalf("TryMutate: got %+v, %v; want OutcomeConflicted after the default 4 attempts, no error", out, err)
	}
	if c, _ := s.One(ctx, "p|1"); c.N%100 != 0 {
		t.Fatalf("a lost attempt was written: N=%d", c.N)
	}
}

func TestMutateErrorWritesNothing(t *testing.T) {
	ctx := context.Background()
	s := newFake()
	_ = s.Create(ctx, &counter{Entity: Entity{ID: "p|1"}})
	boom := errors.New("boom")
	_, err := Mutate(ctx, s, "p|1", func(c *counter) error { c.N = 7; return boom }, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if c, _ := s.One(ctx, "p|1"); c.N != 0 {
		t.Fatalf("written: %+v", c)
	}
}

func TestMutateCannotRetarget(t *testing.T) {
	ctx := context.Background()
	s := newFake()
	_ = s.Create(ctx, &counter{Entity: Entity{ID: "p|1"}})
	v, err := Mutate(ctx, s, "p|1", func(c *counter) error { c.ID, c.ETag = "p|2", ""; return inc(c) }, nil)
	if err != nil || v.ID != "p|1" {
		t.Fatalf("got %+v, %v", v, err)
	}
	if _, err := s.One(ctx, "p|2"); !errors.Is(err, ErrNotFound) {
		t.Fatal("the mutate function moved the write to another row")
	}
}

func TestTryTransition(t *testing.T) {
	ctx := context.Background()
	s := newFake()
	when := func(c *counter) bool { return c.Status == "open" }
	apply := func(by string) func(*counter) error {
		return func(c *counter) error { c.Status, c.By = "resolved", by; return nil }
	}
	out, err := TryTransition(ctx, s, "g|1", when, apply("a"), nil)
	if err != nil || out.Status != OutcomeNotFound {
		t.Fatalf("missing: %+v %v", out, err)
	}
	_ = s.Create(ctx, &counter{Entity: Entity{ID: "g|1"}, Status: "open"})
	// A competitor resolves the gate between this caller's read and write.
	s.beforeUpdate = func() {
		s.beforeUpdate = nil
		c, _ := s.One(ctx, "g|1")
		c.Status, c.By = "resolved", "winner"
		if err := s.Update(ctx, c, Strict); err != nil {
			t.Error(err)
		}
	}
	out, err = TryTransition(ctx, s, "g|1", when, apply("loser"), fast)
	if err != nil || out.Status != OutcomePreconditionFailed || out.Value == nil || out.Value.By != "winner" || out.Attempts != 2 {
		t.Fatalf("loser: got %+v %v, want OutcomePreconditionFailed with the winner's row on the second attempt", out, err)
	}
	if _, err := TryTransition(ctx, s, "g|1", nil, apply("x"), nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("nil condition: %v", err)
	}
}

func TestTryTransitionRace(t *testing.T) {
	ctx := context.Background()
	s := newFake()
	_ = s.Create(ctx, &counter{Entity: Entity{ID: "g|1"}, Status: "open"})
	var wg sync.WaitGroup
	results := make([]Outcome[counter], 16)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := TryTransition(ctx, s, "g|1", func(c *counter) bool { return c.Status == "open" },
				func(c *counter) error { c.Status, c.By = "resolved", strconv.Itoa(i); return nil }, &RetryOptions{Attempts: 16})
			if err != nil {
				t.Error(err)
			}
			results[i] = out
		}()
	}
	wg.Wait()
	updated, winner := 0, ""
	for _, r := range results {
		if r.Status == OutcomeUpdated {
			updated++
			winner = r.Value.By
		}
	}
	if updated != 1 {
		t.Fatalf("%d Updated, want 1", updated)
	}
	for _, r := range results {
		if r.Status != OutcomeUpdated && (r.Status != OutcomePreconditionFailed || r.Value.By != winner) {
			t.Fatalf("a loser got %v with %+v, want OutcomePreconditionFailed with the winner %s", r.Status, r.Value, winner)
		}
	}
}

func TestGetOrCreate(t *testing.T) {
	ctx := context.Background()
	s := newFake()
	var creates atomic.Int64
	var wg sync.WaitGroup
	got := make([]*counter, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, created, err := GetOrCreate(ctx, s, "m|1", func() *counter { return &counter{By: strconv.Itoa(i)} })
			if err != nil {
				t.Error(err)
			}
			if created {
				creates.Add(1)
			}
			got[i] = v
		}()
	}
	wg.Wait()
	if creates.Load() != 1 {
		t.Fatalf("%d callers created, want 1", creates.Load())
	}
	for _, v := range got {
		if v == nil || v.By != got[0].By || v.ID != "m|1" {
			t.Fatalf("callers got different rows: %+v vs %+v", v, got[0])
		}
	}
}

func TestMutateOrCreate(t *testing.T) {
	ctx := context.Background()
	s := newFake()
	var wg sync.WaitGroup
	var conflicts atomic.Int64
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, err := MutateOrCreate(ctx, s, "f|1", func() *counter { return &counter{} }, inc, &RetryOptions{Backoff: time.Microsecond})
				if errors.Is(err, ErrConcurrencyConflict) {
					conflicts.Add(1)
					continue
				}
				if err != nil {
					t.Error(err)
				}
				return
			}
		}()
	}
	wg.Wait()
	if c, _ := s.One(ctx, "f|1"); c == nil || c.N != 16 {
		t.Fatalf("got %+v, want N=16", c)
	}
	t.Logf("attempt budget ran out %d times", conflicts.Load())
}

// The wait before a retry ends when the context does. The backoff is an hour: a wait that
// ignored the context would outlast the test binary's timeout, so no clock is read here.
func TestBackoffHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := newFake()
	_ = s.Create(ctx, &counter{Entity: Entity{ID: "p|1"}})
	s.beforeUpdate = func() { s.bump("p|1"); cancel() }
	_, err := Mutate(ctx, s, "p|1", inc, &RetryOptions{Attempts: 5, Backoff: time.Hour})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if err := (RetryOptions{Backoff: time.Hour}).Wait(ctx, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: got %v, want context.Canceled", err)
	}
}

func TestRetryOptionsDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *RetryOptions
		want RetryOptions
	}{
		{"nil", nil, RetryOptions{Attempts: 4, Backoff: 20 * time.Millisecond}},
		{"zero", &RetryOptions{}, RetryOptions{Attempts: 4, Backoff: 20 * time.Millisecond}},
		{"negative attempts", &RetryOptions{Attempts: -1, Backoff: time.Second}, RetryOptions{Attempts: 4, Backoff: time.Second}},
		{"set", &RetryOptions{Attempts: 7, Backoff: -1}, RetryOptions{Attempts: 7, Backoff: -1}},
	} {
		if got := tc.in.WithDefaults(); got != tc.want {
			t.Errorf("%s: WithDefaults() = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	for range 20 {
		start := time.Now()
		if err := (RetryOptions{Backoff: time.Millisecond}).Wait(context.Background(), 3); err != nil {
			t.Fatal(err)
		}
		// A lower bound only: a timer never fires early, however loaded the machine.
		if d := time.Since(start); d < time.Millisecond {
			t.Fatalf("the third attempt waited %v, want at least half of 2ms", d)
		}
	}
	// The zero value means the defaults in Wait too: half of 20 ms at least before the second
	// attempt (it returned at once when a zero Backoff meant no wait).
	start := time.Now()
	if err := (RetryOptions{}).Wait(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 10*time.Millisecond {
		t.Fatalf("the zero RetryOptions waited %v before the second attempt, want at least 10ms", d)
	}
}

func TestRetryWaitsGrowWithLosses(t *testing.T) {
	ms := time.Millisecond
	def := (*RetryOptions)(nil).WithDefaults()
	for _, tc := range []struct {
		name   string
		o      RetryOptions
		next   int
		lo, hi time.Duration
	}{
		{"first attempt", def, 1, 0, 0},
		{"after one loss", def, 2, 10 * ms, 20 * ms},
		{"after two", def, 3, 20 * ms, 40 * ms},
		{"after three", def, 4, 40 * ms, 80 * ms},
		{"doubling stops at maxRetryWait", def, 12, maxRetryWait / 2, maxRetryWait},
		{"far beyond", def, 1000, maxRetryWait / 2, maxRetryWait},
		{"a Backoff above the bound stays", RetryOptions{Backoff: time.Hour}, 5, 30 * time.Minute, time.Hour},
		{"no wait", RetryOptions{Backoff: -1}, 3, 0, 0},
		{"zero value: the default Backoff", RetryOptions{}, 2, 10 * ms, 20 * ms},
		{"zero Backoff: the default", RetryOptions{Attempts: 9}, 4, 40 * ms, 80 * ms},
		{"zero value, first attempt", RetryOptions{}, 1, 0, 0},
	} {
		if lo, hi := tc.o.waitRange(tc.next); lo != tc.lo || hi != tc.hi {
			t.Errorf("%s: waitRange(%d) = %v..%v, want %v..%v", tc.name, tc.next, lo, hi, tc.lo, tc.hi)
		}
	}
}

// tracedStore is a fakeStore that records the spans the verbs start: its Hooks give the
// verbs its startSpan method.
type tracedStore struct {
	*fakeStore
	backend.Hooks
	spans []*recSpan
}

func newTraced() *tracedStore {
	t := &tracedStore{fakeStore: newFake()}
	t.Hooks = backend.NewHooks(nil, t.startSpan, false)
	return t
}

type recSpan struct {
	op, id string
	events []string
	ended  bool
	err    error
}

func (r *recSpan) Event(name string, keyvals ...any) { r.events = append(r.events, name) }
func (r *recSpan) End(err error)                     { r.ended, r.err = true, err }

func (t *tracedStore) startSpan(ctx context.Context, op, id string) (context.Context, backend.Span) {
	s := &recSpan{op: op, id: id}
	t.spans = append(t.spans, s)
	return ctx, s
}

func TestVerbsTraceTheirAttempts(t *testing.T) {
	ctx := context.Background()
	s := newTraced()
	_ = s.Create(ctx, &counter{Entity: Entity{ID: "p|1"}})
	lose := 1
	s.beforeUpdate = func() {
		if lose > 0 {
			lose--
			s.bump("p|1")
		}
	}
	if _, err := Mutate(ctx, s, "p|1", inc, fast); err != nil {
		t.Fatal(err)
	}
	if _, err := TryTransition(ctx, s, "p|none", func(*counter) bool { return true }, inc, fast); err != nil {
		t.Fatal(err)
	}
	if len(s.spans) != 2 {
		t.Fatalf("%d spans, want one per verb call", len(s.spans))
	}
	m, tr := s.spans[0], s.spans[1]
	if m.op != "mutate" || m.id != "p|1" || !m.ended || m.err != nil || len(m.events) != 1 || m.events[0] != "attempt lost" {
		t.Errorf("mutate span %+v, want one lost attempt and a clean end", m)
	}
	if tr.op != "try transition" || !tr.ended || len(tr.events) != 1 || tr.events[0] != "outcome" {
		t.Errorf("try transition span %+v, want an outcome event", tr)
	}
}

// Every lost attempt is one event: EventAttemptLost while the verb tries again,
// EventAttemptsExhausted for the last, and EventCreateLost for GetOrCreate's lost create.
func TestVerbsNameEachLostAttempt(t *testing.T) {
	ctx := context.Background()
	s := newTraced()
	_ = s.Create(ctx, &counter{Entity: Entity{ID: "p|1"}})
	s.beforeUpdate = func() { s.bump("p|1") } // every attempt loses
	if _, err := Mutate(ctx, s, "p|1", inc, &RetryOptions{Attempts: 3, Backoff: -1}); !errors.Is(err, ErrConcurrencyConflict) {
		t.Fatalf("Mutate: %v, want a conflict", err)
	}
	s.beforeUpdate = nil
	want := []string{backend.EventAttemptLost, backend.EventAttemptLost, backend.EventAttemptsExhausted}
	if got := s.spans[0].events; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
