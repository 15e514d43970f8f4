package abstractions

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Row keys that sort newest first. The service returns rows in key order only, so "the most
// recent n" is a bounded read when later rows get smaller keys. Both formats below are stable
// wire formats: they match the keys .NET code writes for the same scheme.

const (
	// ticksAtUnixEpoch is the number of .NET ticks (100 ns since 0001-01-01T00:00:00Z) at
	// 1970-01-01T00:00:00Z.
	ticksAtUnixEpoch = 621_355_968_000_000_000
	// maxTicks is the tick count of 9999-12-31T23:59:59.9999999Z, the last .NET instant.
	maxTicks = 3_155_378_975_999_999_999
)

// Ticks returns t as .NET ticks: 100 ns intervals since 0001-01-01T00:00:00Z (UTC), clamped
// to the years 1 to 9999 that .NET represents.
func Ticks(t time.Time) int64 {
	sec := t.Unix()
	// Outside the years 1..9999 the product below could overflow; clamp first.
	const minSec, maxSec = -ticksAtUnixEpoch / 10_000_000, (maxTicks - ticksAtUnixEpoch) / 10_000_000
	if sec < minSec {
		return 0
	}
	if sec > maxSec {
		return maxTicks
	}
	ticks := sec*1e7 + int64(t.Nanosecond())/100 + ticksAtUnixEpoch
	return min(max(ticks, 0), maxTicks)
}

// InvertedTicks returns a row key for t that sorts later times first: MaxInt64 minus t's .NET
// ticks (see Ticks), as 19 decimal digits with leading zeros. Times closer than 100 ns apart
// get the same key.
func InvertedTicks(t time.Time) string {
	return invertedKey(Ticks(t))
}

// ParseInvertedTicks returns the time an InvertedTicks key stands for, in UTC.
func ParseInvertedTicks(key string) (time.Time, error) {
	n, err := parseDigits(key, 19)
	if err != nil || math.MaxInt64-n > maxTicks {
		return time.Time{}, fmt.Errorf("%w: %q is not an inverted-ticks key (19 digits)", ErrInvalidArgument, key)
	}
	ticks := math.MaxInt64 - n - ticksAtUnixEpoch
	return time.Unix(ticks/1e7, ticks%1e7*100).UTC(), nil
}

// MaxVersion is the highest version a versioned stream holds (int32's maximum, the range of
// the .NET scheme VersionKey follows).
const MaxVersion = math.MaxInt32

// VersionKey returns the row key of a version: MaxVersion minus the version, as 10 decimal
// digits with leading zeros, so that higher versions sort first ("2147483647" for version 0,
// "2147483644" for version 3). It is byte for byte the key of the common .NET scheme
// (int.MaxValue - version).ToString("D10"). It panics when version is outside 0..MaxVersion;
// the versioned-stream functions check the range and return an error instead.
func VersionKey(version int) string {
	if version < 0 || version > MaxVersion {
		panic(fmt.Sprintf("abstractions.VersionKey: version %d is outside 0..%d", version, MaxVersion))
	}
	return pad(int64(MaxVersion-version), 10)
}

// ParseVersionKey returns the version a VersionKey key stands for.
func ParseVersionKey(key string) (int, error) {
	n, err := parseDigits(key, 10)
	if err != nil || n > MaxVersion {
		return 0, fmt.Errorf("%w: %q is not a version key (10 digits)", ErrInvalidArgument, key)
	}
	return int(MaxVersion - n), nil
}

// invertedKey is the InvertedTicks key of a tick count.
func invertedKey(ticks int64) string {
	return pad(math.MaxInt64-min(max(ticks, 0), maxTicks), 19)
}

func pad(n int64, width int) string {
	s := strconv.FormatInt(n, 10)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

func parseDigits(s string, width int) (int64, error) {
	if len(s) != width {
		return 0, strconv.ErrSyntax
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.ParseInt(s, 10, 64)
}
