package tables

import (
	"context"
	"sync"
)

// maxRowWaiters is how many outcome-verb calls of one account may hold or wait for the turn
// of one row at a time (see Store.turn). A call beyond it is let through without a turn and
// races the others through the service, as every call did before rows had turns, with its
// attempt budget: a row that busy is better told "conflicted, retry later" by the service's
// answers than made to wait behind hundreds of writes.
const maxRowWaiters = 256

// turnstile holds one queue per row that an outcome verb of the account is working on. An
// entry lives while a call holds or waits for its turn, so the map is only as large as the
// rows in use. The zero value is ready.
type turnstile struct {
	mu   sync.Mutex
	rows map[string]*rowTurn
}

// rowTurn is one row's queue: a token in a channel of capacity one. Go queues blocked
// senders on a channel in order, so callers get the turn first come, first served.
type rowTurn struct {
	token chan struct{}
	users int // holders and waiters; guarded by turnstile.mu
}

// take waits for the turn of the row key and returns its release; ok is false when the row
// already has maxRowWaiters users, and the caller goes without a turn.
func (ts *turnstile) take(ctx context.Context, key string) (release func(), ok bool, err error) {
	ts.mu.Lock()
	r := ts.rows[key]
	if r == nil {
		if ts.rows == nil {
			ts.rows = map[string]*rowTurn{}
		}
		r = &rowTurn{token: make(chan struct{}, 1)}
		ts.rows[key] = r
	}
	if r.users >= maxRowWaiters {
		ts.mu.Unlock()
		return func() {}, false, nil
	}
	r.users++
	ts.mu.Unlock()
	select {
	case r.token <- struct{}{}:
	case <-ctx.Done():
		// The select took this case, so the token was not sent: there is nothing to give back.
		ts.leave(key, r)
		return nil, false, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-r.token
			ts.leave(key, r)
		})
	}, true, nil
}

func (ts *turnstile) leave(key string, r *rowTurn) {
	ts.mu.Lock()
	r.users--
	if r.users == 0 {
		delete(ts.rows, key)
	}
	ts.mu.Unlock()
}

// turn waits for the turn of the row with the id among the account's outcome-verb calls
// (the turn of the store's [driver.Hooks]); the verbs call it, a program does not. The
// queue is the account's: two stores of one table in one account share it, whatever the
// case of the table's name, and the id is resolved as the store resolves it (normalised
// unless the account keeps ids as written), so "EU|Alice" and "eu|alice" wait in one queue.
// Callers are served in the order they came. When ctx ends first, turn returns ctx's error.
// An id the store refuses to write, and a caller beyond maxRowWaiters, get no turn and a
// release that does nothing: the verb's read or write refuses the one (an id with an empty
// key is read, not written), the other races as before.
//
// Only calls through this account queue: another account value over the same table, like
// another process, is a writer the verbs' attempts may lose to.
func (s *Store[T]) turn(ctx context.Context, id string) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stored, _, _, err := s.core.ResolveID("turn", id)
	if err != nil {
		return func() {}, nil
	}
	release, _, err = s.account.turns.take(ctx, s.core.CacheTable+"\x00"+stored)
	return release, err
}
