package backup

import (
	"errors"
	"log/slog"
	"time"
)

// Existing says what Restore and Copy do with an entity whose main row the destination
// table already holds.
type Existing uint8

const (
	// Refuse is the default: a destination table that holds any row is refused with
	// ErrNotEmpty before anything is written. An empty or missing table is filled.
	Refuse Existing = iota
	// Skip leaves an entity that exists in the destination as it is and restores the others.
	Skip
	// Replace replaces an entity that exists in the destination, its continuation rows
	// included, with the archive's.
	Replace
)

// String returns the mode's name as the command line spells it.
func (e Existing) String() string {
	switch e {
	case Refuse:
		return "refuse"
	case Skip:
		return "skip"
	case Replace:
		return "replace"
	}
	return "Existing(?)"
}

// ErrNotEmpty reports a restore or copy into a table that already holds rows, under Refuse.
var ErrNotEmpty = errors.New("backup: the destination table is not empty")

// Options configure Write, WriteFile, Restore, Copy and Verify; a nil *Options means the
// defaults. Each function reads the fields that concern it and ignores the others.
type Options struct {
	// Partitions limits a backup (or copy) to these partitions; nil backs up the whole
	// table. They are written in the service's key order whatever their order here.
	Partitions []string
	// Parallel is how many partitions a backup reads at once (0 or 1: one scan of the
	// table). With more, the partitions are discovered with one small query each and read
	// concurrently; the archive holds them in key order all the same, byte for byte what a
	// run with Parallel 1 writes.
	Parallel int
	// Checkpoint is the checkpoint file of WriteFile; "" means the archive's path with
	// ".checkpoint" appended.
	Checkpoint string
	// Existing is what Restore and Copy do with entities the destination already holds.
	Existing Existing
	// Progress, when not nil, is called with the counts so far, at most five times a
	// second and once at the end, on the goroutine that called the function.
	Progress func(Stats)
	// Untyped makes ExportCSV write no @type columns, and ImportCSV infer the type of each
	// value that has no @type column from its text.
	Untyped bool
	// Timestamps makes ExportCSV write each row's Timestamp column.
	Timestamps bool
	// DryRun makes Delete count what it would delete, deleting nothing.
	DryRun bool
	// Logger receives a line for each backoff after a throttled or busy answer; nil means
	// slog.Default().
	Logger *slog.Logger
}

// progressInterval is the least time between two calls of Options.Progress.
const progressInterval = 200 * time.Millisecond

// Stats count what a backup, restore, copy or verification did.
type Stats struct {
	// Entities counts entities: a main row with its continuation rows and blobs is one.
	Entities int64
	// Rows counts stored rows, continuation rows included.
	Rows int64
	// Blobs and BlobBytes count offloaded values and files, and their stored bytes.
	Blobs     int64
	BlobBytes int64
	// Bytes counts the archive's bytes written (backup) or read (restore, verify), as
	// stored: compressed.
	Bytes int64
	// Skipped counts entities a restore left as the destination had them (Skip); Replaced
	// those it replaced (Replace).
	Skipped  int64
	Replaced int64
	// Retries counts requests sent again after a throttled or busy answer.
	Retries int64
	// Elapsed is the time since the call started.
	Elapsed time.Duration
}

func (o *Options) orDefault() *Options {
	if o == nil {
		return &Options{}
	}
	return o
}

func (o *Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// progress calls Options.Progress at most every progressInterval, and always when final.
type progress struct {
	fn    func(Stats)
	start time.Time
	last  time.Time
}

func newProgress(fn func(Stats)) *progress {
	now := time.Now()
	return &progress{fn: fn, start: now}
}

func (p *progress) report(st *Stats, final bool) {
	now := time.Now()
	st.Elapsed = now.Sub(p.start)
	if p.fn == nil || (!final && now.Sub(p.last) < progressInterval) {
		return
	}
	p.last = now
	p.fn(*st)
}
