package pdf_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/document/pdf"
)

func TestRender(t *testing.T) {
	t.Parallel()
	lines := []pdf.Line{{Text: "Relatório: T2 Alfama", Size: 16, Bold: true}, {Text: "Preço: 180.000€ | Área: 65m² | €/m²: 2.769€"},
		{Text: "Obras: 15.100€–25.000€ (cozinha (mau estado))"}}
	for i := 0; i < 80; i++ {
		lines = append(lines, pdf.Line{Text: "Divisão " + strconv.Itoa(i) + ": " + strings.Repeat("texto longo ", 12)})
	}
	doc := pdf.Render("Relatório", lines)
	if !bytes.HasPrefix(doc, []byte("%PDF-1.4")) || !bytes.HasSuffix(doc, []byte("%%EOF\n")) {
		t.Fatal("not a PDF")
	}
	// WinAnsi: ç = \347, € = \200, ² = \262, – = \226; parentheses escaped.
	for _, want := range []string{`Pre\347o: 180.000\200`, `65m\262`, `15.100\200\22625.000\200`, `\(mau estado\)\)`} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("PDF lacks %s", want)
		}
	}
	// The cross-reference table points at every object.
	m := regexp.MustCompile(`startxref\n(\d+)`).FindSubmatch(doc)
	at, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(doc[at:], []byte("xref")) {
		t.Fatal("startxref is wrong")
	}
	for _, o := range regexp.MustCompile(`(\d{10}) 00000 n`).FindAllSubmatch(doc, -1) {
		off, _ := strconv.Atoi(string(o[1]))
		if !regexp.MustCompile(`^\d+ 0 obj`).Match(doc[off:]) {
			t.Errorf("xref offset %d is not an object", off)
		}
	}
	if n := bytes.Count(doc, []byte("/Type /Page ")); n < 2 {
		t.Errorf("%d pages for 83 lines", n)
	}
}
