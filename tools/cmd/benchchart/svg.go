package main

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// Layout of the chart, in pixels.
const (
	chartWidth = 980
	fontSize   = 13
	charWidth  = 7.0 // a generous mean advance of fontSize sans-serif text
	barHeight  = 11
	barGap     = 2
	groupPad   = 9 // above and below each workload's pair of bars
	plotTop    = 104
	axisSpace  = 62 // below the plot: tick labels and the axis title
	rightPad   = 70 // room for the value of the longest bar
	tickStep   = 0.25
)

// Series colours: a blue and an orange that stay apart for the common colour-vision
// deficiencies.
const (
	colourRaw   = "#2b6cb0"
	colourFloor = "#dd8a0e"
)

// writeSVG draws the charted rows of rep as an SVG document.
func writeSVG(w io.Writer, rep report) error {
	rows := rep.charted()
	if len(rows) == 0 {
		return errors.New("no workload has a ratio to chart (only the memory backend ran?); run make bench with Azurite")
	}
	longest := 0
	top := 1.5 // the scale reaches past 1.0 however fast every workload was
	for _, r := range rows {
		longest = max(longest, utf8.RuneCountInString(r.workload))
		for _, v := range []*float64{r.ratio, r.floor} {
			if v != nil {
				top = max(top, *v*1.08)
			}
		}
	}
	top = math.Ceil(top/tickStep) * tickStep
	left := 36 + float64(longest)*charWidth + 12 // the y axis title, the names, a gap
	plotW := chartWidth - left - rightPad
	group := 2*barHeight + barGap + 2*groupPad
	plotH := float64(len(rows) * group)
	height := plotTop + plotH + axisSpace
	x := func(v float64) float64 { return left + v/top*plotW }

	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="%d">`,
		chartWidth, height, chartWidth, height, fontSize)
	p(`<title>Library time per operation over the raw Azure SDK's and over the plain-HTTP floor's, per workload</title>`)
	p(`<rect width="100%%" height="100%%" fill="#ffffff"/>`)
	p(`<text x="16" y="28" font-size="18" font-weight="600" fill="#1a202c">Unified Data Tables on Azurite: library ÷ raw Azure SDK and library ÷ plain-HTTP floor</text>`)
	sub := "medians, one worker (the hot row: its whole run); below 1.0 the library is faster"
	if rep.command != "" {
		sub = esc(rep.command) + " · " + sub
	}
	p(`<text x="16" y="50" fill="#4a5568">%s</text>`, sub)

	// Legend.
	ly := 74.0
	p(`<rect x="16" y="%.0f" width="14" height="%d" fill="%s"/>`, ly-10, barHeight, colourRaw)
	p(`<text x="36" y="%.0f" fill="#1a202c">library ÷ raw Azure SDK (hand-written aztables code)</text>`, ly)
	lx := 36 + 52*charWidth
	p(`<rect x="%.0f" y="%.0f" width="14" height="%d" fill="%s"/>`, lx, ly-10, barHeight, colourFloor)
	p(`<text x="%.0f" y="%.0f" fill="#1a202c">library ÷ plain-HTTP floor (net/http, requests signed by hand)</text>`, lx+20, ly)

	// Stripes behind every other workload, then the grid and its tick labels.
	for i := range rows {
		if i%2 == 1 {
			p(`<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#f4f6f9"/>`, left-float64(longest)*charWidth-12, plotTop+i*group,
				plotW+float64(longest)*charWidth+12, group)
		}
	}
	bottom := float64(plotTop) + plotH
	for v := 0.0; v <= top+1e-9; v += tickStep {
		gx := x(v)
		if math.Abs(v-1) > 1e-9 {
			p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#e2e8f0"/>`, gx, plotTop, gx, bottom)
		}
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#4a5568"/>`, gx, bottom, gx, bottom+5)
		p(`<text x="%.1f" y="%.1f" text-anchor="middle" fill="#4a5568">%s</text>`, gx, bottom+20, tick(v))
	}
	p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#4a5568"/>`, left, bottom, left+plotW, bottom)
	p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#4a5568"/>`, left, plotTop, left, bottom)

	// The bars, their values, and the workload names.
	for i, r := range rows {
		gy := float64(plotTop + i*group + groupPad)
		p(`<text x="%.1f" y="%.1f" text-anchor="end" fill="#1a202c">%s</text>`, left-8, gy+barHeight+barGap/2+4.5, esc(r.workload))
		for k, v := range []*float64{r.ratio, r.floor} {
			by := gy + float64(k*(barHeight+barGap))
			colour, what := colourRaw, "raw Azure SDK"
			if k == 1 {
				colour, what = colourFloor, "plain-HTTP floor"
			}
			if v == nil {
				p(`<text x="%.1f" y="%.1f" font-size="11" fill="#a0aec0">%s: not measured</text>`, left+6, by+barHeight-1.5, what)
				continue
			}
			bw := max(x(*v)-left, 1) // a ratio that rounds to nothing still shows
			p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"><title>%s: library ÷ %s = %s</title></rect>`,
				left, by, bw, barHeight, colour, esc(r.workload), what, value(*v))
			p(`<text x="%.1f" y="%.1f" font-size="11" fill="#1a202c" stroke="#ffffff" stroke-width="3" paint-order="stroke">%s</text>`, left+bw+4, by+barHeight-1.5, value(*v))
		}
	}

	// The 1.0 line over the bars, and the axis titles.
	one := x(1)
	p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#c53030" stroke-width="1.5" stroke-dasharray="6 4"/>`, one, plotTop-8, one, bottom)
	p(`<text x="%.1f" y="%d" text-anchor="middle" font-size="11" fill="#c53030">1.0: as fast as the baseline</text>`, one, plotTop-12)
	p(`<text x="%.1f" y="%.1f" text-anchor="middle" fill="#1a202c">library time ÷ baseline time per operation (lower is faster)</text>`, left+plotW/2, bottom+44)
	p(`<text transform="translate(22 %.1f) rotate(-90)" text-anchor="middle" fill="#1a202c">workload</text>`, float64(plotTop)+plotH/2)
	p(`</svg>`)
	_, err := io.WriteString(w, b.String())
	return err
}

// tick writes an axis value with as few decimals as it needs: 0, 0.25, 0.5, 1.
func tick(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

// value writes a ratio as the harness's table does: two decimals, four under 0.1.
func value(v float64) string {
	if v < 0.1 {
		return fmt.Sprintf("%.4f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// esc escapes text for SVG character data and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}
