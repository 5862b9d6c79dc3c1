// Package pdf writes text as a PDF: a small PDF 1.4 writer (Helvetica in WinAnsiEncoding, which
// holds every Western European letter, the euro sign, ² and the dashes), pages of text lines with
// sizes, bold and gaps, and nothing else to install. Applications render reports with it (rehab's
// property analysis, the analyst's saved reports).
package pdf

import (
	"bytes"
	"fmt"
	"strings"
)

// Line is one line of the report.
type Line struct {
	Text string
	Size float64 // points; zero means 10
	Bold bool
	// Gap adds space above the line, in points.
	Gap float64
}

const (
	pageW, pageH = 595.0, 842.0 // A4
	margin       = 56.0
)

// cp1252 maps the runes outside Latin-1 that WinAnsiEncoding places in 0x80-0x9F.
var cp1252 = map[rune]byte{'€': 0x80, '‚': 0x82, '„': 0x84, '…': 0x85, '‘': 0x91, '’': 0x92, '“': 0x93, '”': 0x94, '•': 0x95, '–': 0x96, '—': 0x97, '™': 0x99}

// encode turns text into a PDF string literal in WinAnsiEncoding; runes it cannot show become '?'.
func encode(s string) string {
	var b strings.Builder
	b.WriteByte('(')
	for _, r := range s {
		var c byte
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteByte('\\')
			c = byte(r)
		case r < 0x80:
			c = byte(r)
		case r >= 0xA0 && r <= 0xFF:
			c = byte(r)
		default:
			if x, ok := cp1252[r]; ok {
				c = x
			} else {
				c = '?'
			}
		}
		if c < 0x20 || c >= 0x80 {
			fmt.Fprintf(&b, "\\%03o", c)
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteByte(')')
	return b.String()
}

// wrap cuts a line to fit the page width (Helvetica averages about half an em a character).
func wrap(text string, size float64) []string {
	max := int((pageW - 2*margin) / (size * 0.5))
	var out []string
	for len([]rune(text)) > max {
		r := []rune(text)
		cut := max
		for i := max; i > max/2; i-- {
			if r[i] == ' ' {
				cut = i
				break
			}
		}
		out = append(out, string(r[:cut]))
		text = strings.TrimLeft(string(r[cut:]), " ")
	}
	return append(out, text)
}

// Render writes the lines as a PDF, starting a new page when one is full.
func Render(title string, lines []Line) []byte {
	var pages []string
	var cur strings.Builder
	y := pageH - margin
	flush := func() {
		pages = append(pages, cur.String())
		cur.Reset()
		y = pageH - margin
	}
	for _, l := range lines {
		size := l.Size
		if size == 0 {
			size = 10
		}
		font := "F1"
		if l.Bold {
			font = "F2"
		}
		for i, part := range wrap(l.Text, size) {
			step := size * 1.4
			if i == 0 {
				step += l.Gap
			}
			if y-step < margin {
				flush()
			}
			y -= step
			fmt.Fprintf(&cur, "BT /%s %.1f Tf %.1f %.1f Td %s Tj ET\n", font, size, margin, y, encode(part))
		}
	}
	flush()

	var buf bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, buf.Len())
		fmt.Fprintf(&buf, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	buf.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	// 1 catalog, 2 pages, 3 and 4 fonts, 5 info, then a page and its content per page.
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 6+2*i)
	}
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
	obj(fmt.Sprintf("<< /Title %s /Producer (trellis rehab) >>", encode(title)))
	for i, content := range pages {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.0f %.0f] /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents %d 0 R >>", pageW, pageH, 7+2*i))
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content), content))
	}
	xref := buf.Len()
	fmt.Fprintf(&buf, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&buf, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&buf, "trailer\n<< /Size %d /Root 1 0 R /Info 5 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return buf.Bytes()
}
