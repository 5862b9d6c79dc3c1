package analyst

import (
	"strings"

	"github.com/trellis-go/trellis/document/pdf"
)

// ReportPDF renders a saved report's Markdown as a PDF (the specification's pdf report format):
// headings in bold, bullets, table rows as text, with the report's ID and date at the top.
func ReportPDF(rep Report) []byte {
	lines := []pdf.Line{{Text: "Report " + rep.ID + " · " + rep.CreatedAt.UTC().Format("2006-01-02"), Size: 8}}
	gap := 0.0
	for _, raw := range strings.Split(rep.Content, "\n") {
		l := strings.TrimSpace(raw)
		if l == "" {
			gap = 6
			continue
		}
		line := pdf.Line{Gap: gap}
		gap = 0
		switch {
		case strings.HasPrefix(l, "# "):
			line.Text, line.Size, line.Bold, line.Gap = l[2:], 16, true, 10
		case strings.HasPrefix(l, "## "):
			line.Text, line.Size, line.Bold, line.Gap = l[3:], 13, true, 10
		case strings.HasPrefix(l, "### "):
			line.Text, line.Size, line.Bold, line.Gap = l[4:], 11, true, 6
		case strings.HasPrefix(l, "- "), strings.HasPrefix(l, "* "):
			line.Text = "• " + l[2:]
		case strings.HasPrefix(l, "|"):
			if strings.Trim(l, "|-: ") == "" {
				continue // a table's rule
			}
			cells := strings.Split(strings.Trim(l, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			line.Text = strings.Join(cells, "  ·  ")
		default:
			line.Text = l
		}
		line.Text = strings.NewReplacer("**", "", "__", "", "`", "").Replace(line.Text)
		lines = append(lines, line)
	}
	title := rep.Title
	if title == "" {
		title = "Report " + rep.ID
	}
	return pdf.Render(title, lines)
}
