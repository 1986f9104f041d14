package bench

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tableWidth is the widest line, in columns, WriteTable prints.
const tableWidth = 120

// column is one column of the table: its header, the most runes a cell
// takes before it wraps onto a continuation line, and its alignment.
type column struct {
	head  string
	max   int
	right bool
}

// Indents of the table's lines: figure rows under their scenario's name,
// the per-run and verdict lines under their row.
const (
	rowIndent    = "  "
	detailIndent = "      "
)

// tableColumns are the table's columns; with the indent and the gaps
// they add up to at most tableWidth.
func tableColumns() []column {
	return []column{
		{head: "figure", max: 37},
		{head: "unit", max: 5},
		{head: "hub", max: 10, right: true},
		{head: "ceiling", max: 10, right: true},
		{head: "ratio", max: 10, right: true},
		{head: "better", max: 6},
		{head: "goal", max: 16},
		{head: "verdict", max: 7},
	}
}

// WriteTable prints r for a person: a legend, the figures grouped by
// scenario (with each run's ratio and, under a NO, the goal missed and by
// how much), then the settings, notes and errors; no line is wider than
// tableWidth.
func (r *Report) WriteTable(w io.Writer) error {
	var lines []string
	add := func(ls ...string) { lines = append(lines, ls...) }
	add(paragraph("", "Medians over "+r.Settings["runs"]+" run(s). hub = the figure with the hub; ceiling = the same load "+
		"without the hub, in the same run (see the notes); ratio = hub/ceiling, the median of the per-run ratios; "+
		"better = which way is better.")...)
	add(paragraph("", verdictLegend)...)
	add("")
	cols := tableColumns()
	cells := make([][]string, len(r.Rows))
	for i, row := range r.Rows {
		v, _ := row.verdict()
		cells[i] = []string{row.Figure, row.Unit, num(row.Hub), num(row.Ceiling), pct(row.Ratio), row.Better, row.Target.goal(row.Unit), v}
	}
	head, body := layout(cols, cells)
	add(head...)
	for i, row := range r.Rows {
		if i == 0 || r.Rows[i-1].Scenario != row.Scenario {
			add(paragraph("", row.Scenario)...)
		}
		add(body[i]...)
		if runs := perRun(row); runs != "" {
			add(paragraph(detailIndent, "ratio per run: "+runs)...)
		}
		if _, why := row.verdict(); why != "" {
			add(paragraph(detailIndent, why)...)
		}
	}
	add("")
	var set []string
	for _, k := range []string{"runs", "scenarios", "subscribers", "callback-servers", "per-host", "concurrency", "clients", "notifications", "nats-messages", "cpus"} {
		if v, ok := r.Settings[k]; ok {
			set = append(set, k+"="+v)
		}
	}
	add(paragraph("", "settings: "+strings.Join(set, " ")+"; elapsed "+r.Elapsed)...)
	for _, n := range r.Notes {
		add(paragraph("", "note: "+n)...)
	}
	for _, e := range r.Errors {
		add(paragraph("", "ERROR: "+e)...)
	}
	if _, err := io.WriteString(w, strings.Join(lines, "\n")+"\n"); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// perRun lists row's ratio in each run, or "" for a single run or a
// figure without a ceiling.
func perRun(row Row) string {
	runs, any := make([]string, len(row.HubRuns)), false
	for k := range row.HubRuns {
		r := Ratio(row.HubRuns[k], row.CeilRuns[k])
		any = any || !math.IsNaN(r)
		runs[k] = pct(r)
	}
	if len(runs) < 2 || !any {
		return ""
	}
	return strings.Join(runs, " ")
}

// layout returns the header line and, per row of cells, its lines: each
// cell padded to its column's width (the widest cell, at most the
// column's max; the first column also takes the room the others leave
// within tableWidth), a longer cell wrapped onto continuation lines.
func layout(cols []column, rows [][]string) (head []string, body [][]string) {
	width := make([]int, len(cols))
	for c, col := range cols {
		width[c] = min(col.max, utf8.RuneCountInString(col.head))
		for _, row := range rows {
			width[c] = max(width[c], min(col.max, utf8.RuneCountInString(row[c])))
		}
	}
	// The figure column takes what the others leave, up to its
	// longest cell.
	used := utf8.RuneCountInString(rowIndent) + 2*(len(cols)-1)
	for _, w := range width {
		used += w
	}
	longest := 0
	for _, row := range rows {
		longest = max(longest, utf8.RuneCountInString(row[0]))
	}
	width[0] = max(width[0], min(longest, width[0]+tableWidth-used))
	render := func(cells []string) []string {
		wrapped := make([][]string, len(cols))
		n := 1
		for c, cell := range cells {
			wrapped[c] = wrap(cell, width[c])
			n = max(n, len(wrapped[c]))
		}
		out := make([]string, n)
		for l := range out {
			var b strings.Builder
			b.WriteString(rowIndent)
			for c, col := range cols {
				part := ""
				if l < len(wrapped[c]) {
					part = wrapped[c][l]
				}
				if c > 0 {
					b.WriteString("  ")
				}
				if col.right {
					fmt.Fprintf(&b, "%*s", width[c], part)
				} else {
					fmt.Fprintf(&b, "%-*s", width[c], part)
				}
			}
			out[l] = strings.TrimRight(b.String(), " ")
		}
		return out
	}
	heads := make([]string, len(cols))
	for c, col := range cols {
		heads[c] = col.head
	}
	body = make([][]string, len(rows))
	for i, row := range rows {
		body[i] = render(row)
	}
	return render(heads), body
}

// paragraph wraps text to tableWidth, every line after indent, the lines
// after the first one further indented by two.
func paragraph(indent, text string) []string {
	lines := wrap(text, tableWidth-utf8.RuneCountInString(indent)-2)
	for i := range lines {
		if i > 0 {
			lines[i] = "  " + lines[i]
		}
		lines[i] = indent + lines[i]
	}
	return lines
}

// wrap breaks s into lines of at most width runes, at spaces where it
// can; a word longer than width is cut. An empty s is one empty line.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		for utf8.RuneCountInString(word) > width {
			if line != "" {
				lines, line = append(lines, line), ""
			}
			r := []rune(word)
			lines, word = append(lines, string(r[:width])), string(r[width:])
		}
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// num formats a figure with three significant digits or so, in at most
// 10 runes.
func num(x float64) string {
	switch a := math.Abs(x); {
	case math.IsNaN(x):
		return "-"
	case math.IsInf(x, 0) || a >= 1e9:
		return strconv.FormatFloat(x, 'g', 3, 64)
	case a >= 1e6:
		return fmt.Sprintf("%.1fM", x/1e6)
	case a >= 1000:
		return fmt.Sprintf("%.0f", x)
	case a >= 100:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

// pct formats a ratio as a percentage in at most 10 runes.
func pct(x float64) string {
	switch p := x * 100; {
	case math.IsNaN(x):
		return "-"
	case math.IsInf(x, 0) || math.Abs(p) >= 1e6:
		return strconv.FormatFloat(p, 'g', 2, 64) + "%"
	default:
		return fmt.Sprintf("%.0f%%", p)
	}
}
