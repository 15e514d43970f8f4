package outbox

// SetAfterMark makes the relay run f after it marks each event sent; an error from f stops
// the run there, as a crash would.
func SetAfterMark(r *Relay, f func(seq int64) error) { r.afterMark = f }
