package backup

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// The CSV text itself, as RFC 4180 and Storage Explorer write it: fields separated by
// commas, records by CRLF (LF alone is read too), a field quoted when it holds a comma, a
// quote, a CR or an LF or starts or ends with a space, a quote inside a quoted field
// doubled. Unlike encoding/csv, a CR inside a quoted field is kept, so that every string
// value reads back exactly as it was written.

// csvWriter writes records.
type csvWriter struct {
	w *bufio.Writer
}

func (c *csvWriter) record(fields []string) error {
	for i, f := range fields {
		if i > 0 {
			c.w.WriteByte(',')
		}
		if !needsQuotes(f) {
			c.w.WriteString(f)
			continue
		}
		c.w.WriteByte('"')
		c.w.WriteString(strings.ReplaceAll(f, `"`, `""`))
		c.w.WriteByte('"')
	}
	_, err := c.w.WriteString("\r\n")
	return err
}

func needsQuotes(f string) bool {
	return strings.ContainsAny(f, ",\"\r\n") || strings.HasPrefix(f, " ") || strings.HasSuffix(f, " ")
}

// csvReader reads records and knows the line each starts on.
type csvReader struct {
	r    *bufio.Reader
	line int // the line the next record starts on
}

func newCSVReader(r io.Reader) *csvReader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte{0xEF, 0xBB, 0xBF}) {
		br.Discard(3) //nolint:errcheck // a byte-order mark, as spreadsheet programs write
	}
	return &csvReader{r: br, line: 1}
}

// next returns the next record and the line it starts on; io.EOF after the last. An empty
// line is a record of one empty field, which callers skip.
func (c *csvReader) next() ([]string, int, error) {
	start := c.line
	var fields []string
	var f strings.Builder
	quoted, inQuotes, any := false, false, false
	for {
		b, err := c.r.ReadByte()
		if err == io.EOF {
			switch {
			case inQuotes:
				return nil, start, fmt.Errorf("line %d: a quoted field is not closed before the end of the file", start)
			case !any:
				return nil, start, io.EOF
			}
			return append(fields, f.String()), start, nil
		}
		if err != nil {
			return nil, start, err
		}
		any = true
		if b == '\n' {
			c.line++
		}
		if inQuotes {
			if b != '"' {
				f.WriteByte(b)
				continue
			}
			if p, err := c.r.Peek(1); err == nil && p[0] == '"' {
				c.r.ReadByte() //nolint:errcheck // peeked
				f.WriteByte('"')
				continue
			}
			inQuotes = false
			continue
		}
		switch b {
		case '"':
			if f.Len() > 0 || quoted {
				return nil, start, fmt.Errorf("line %d: a quote inside an unquoted field; quote the whole field and double the quotes inside it", c.line)
			}
			quoted, inQuotes = true, true
		case ',':
			fields = append(fields, f.String())
			f.Reset()
			quoted = false
		case '\r':
			if p, err := c.r.Peek(1); err == nil && p[0] == '\n' {
				continue
			}
			f.WriteByte(b)
		case '\n':
			return append(fields, f.String()), start, nil
		default:
			if quoted {
				return nil, start, fmt.Errorf("line %d: text after a quoted field's closing quote", c.line)
			}
			f.WriteByte(b)
		}
	}
}
