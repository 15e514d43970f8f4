package service

import (
	"errors"
	"time"

	"github.com/unified-data/gotables/tables/internal/wire"
)

// The text of an Edm.DateTime, as the service writes it in responses and ETags and reads it
// in request bodies and filter literals. Every layer formats and parses it here.

// FormatDateTime formats t the way the service writes Edm.DateTime values: UTC, seven
// fractional digits, a trailing Z, such as "2026-11-29T18:30:11.1234567Z". ParseDateTime
// reads it back.
func FormatDateTime(t time.Time) string { return string(wire.AppendDateTime(nil, t)) }

var errDateTime = errors.New("service: an Edm.DateTime is yyyy-mm-ddThh:mm:ss, an optional fraction of at most 7 digits, " +
	"and Z or an offset ±hh:mm, within the years 1 to 9999")

// ParseDateTime parses the text of an Edm.DateTime and returns the time in UTC: the date and
// time yyyy-mm-ddThh:mm:ss, an optional fraction of one to seven digits (the service's
// 100 ns ticks), and Z or an offset ±hh:mm of at most 14 hours. It is the grammar the service
// accepts in filter literals and the one it writes (FormatDateTime's output is one case).
// It refuses any other shape (a date alone, no zone, a lower-case t or z, eight fractional
// digits), an impossible date such as February 30, a leap second, and a time outside the
// years 1 to 9999.
func ParseDateTime(s string) (time.Time, error) {
	year, ok1 := digitsAt(s, 0, 4)
	month, ok2 := digitsAt(s, 5, 2)
	day, ok3 := digitsAt(s, 8, 2)
	hour, ok4 := digitsAt(s, 11, 2)
	minute, ok5 := digitsAt(s, 14, 2)
	sec, ok6 := digitsAt(s, 17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		!byteAt(s, 4, '-') || !byteAt(s, 7, '-') || !byteAt(s, 10, 'T') || !byteAt(s, 13, ':') || !byteAt(s, 16, ':') {
		return time.Time{}, errDateTime
	}
	i, nsec := 19, 0
	if byteAt(s, i, '.') {
		i++
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			if n == 7 {
				return time.Time{}, errDateTime
			}
			nsec = nsec*10 + int(s[i]-'0')
			n++
			i++
		}
		if n == 0 {
			return time.Time{}, errDateTime
		}
		for ; n < 9; n++ {
			nsec *= 10
		}
	}
	offset := 0
	switch {
	case byteAt(s, i, 'Z') && i+1 == len(s):
	case (byteAt(s, i, '+') || byteAt(s, i, '-')) && i+6 == len(s) && byteAt(s, i+3, ':'):
		oh, ok1 := digitsAt(s, i+1, 2)
		om, ok2 := digitsAt(s, i+4, 2)
		if !ok1 || !ok2 || om > 59 || oh*60+om > 14*60 {
			return time.Time{}, errDateTime
		}
		offset = (oh*60 + om) * 60
		if s[i] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, errDateTime
	}
	if year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, errDateTime
	}
	var zone *time.Location = time.UTC
	if offset != 0 {
		zone = time.FixedZone("", offset)
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, zone)
	if t.Day() != day { // time.Date normalised an impossible day such as February 30
		return time.Time{}, errDateTime
	}
	t = t.UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, errDateTime
	}
	return t, nil
}

// ReadDateTime reads date-time text that came from a service or was copied from one (a
// Timestamp, an Edm.DateTime cell, the time inside an ETag): the text ParseDateTime reads
// or, failing that, any RFC 3339 time, as an emulator may echo a value in another writer's
// spelling (more than seven fractional digits, say). It returns the time in UTC. Filter
// literals are not read this way: the service refuses what ParseDateTime refuses.
func ReadDateTime(s string) (time.Time, error) {
	if t, err := ParseDateTime(s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// digitsAt returns the number written by the n decimal digits of s at i.
func digitsAt(s string, i, n int) (int, bool) {
	if i+n > len(s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func byteAt(s string, i int, c byte) bool { return i < len(s) && s[i] == c }
