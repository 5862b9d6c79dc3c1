package analyst

// The DOCX report format. No maintained Go DOCX writer is listed on the module proxy this
// project uses, so the report is written as the few OOXML (ECMA-376) parts a word processor
// needs, with archive/zip and encoding/xml: the content types, the package relationships, the
// document with its relationships, the styles (Title, Heading1 to Heading3, ListBullet,
// ListNumber, TableGrid) and the numbering of the lists.

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
)

const (
	wordNS  = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	relNS   = "http://schemas.openxmlformats.org/package/2006/relationships"
	typesNS = "http://schemas.openxmlformats.org/package/2006/content-types"
	docRel  = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
)

// ReportDOCX renders a saved report as a Word document: its Markdown's headings as heading
// styles, bullets and numbered items as lists, tables as tables with a header row, bold runs,
// and the citations as they are written, with the sources listed at the end. A report saved as
// JSON is rendered from its structured sections.
func ReportDOCX(rep Report) ([]byte, error) {
	var body strings.Builder
	title := rep.Title
	if title == "" {
		title = "Report " + rep.ID
	}
	para(&body, "Title", "", title)
	para(&body, "Subtitle", "", "Report "+rep.ID+" · "+rep.CreatedAt.UTC().Format("2006-01-02"))
	md := reportMarkdown(rep)
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case l == "" || l == "---":
		case strings.HasPrefix(l, "# "):
			if strings.TrimSpace(l[2:]) != title {
				para(&body, "Heading1", "", l[2:])
			}
		case strings.HasPrefix(l, "## "):
			para(&body, "Heading1", "", l[3:])
		case strings.HasPrefix(l, "### "):
			para(&body, "Heading2", "", l[4:])
		case strings.HasPrefix(l, "#### "):
			para(&body, "Heading3", "", l[5:])
		case strings.HasPrefix(l, "- "), strings.HasPrefix(l, "* "):
			para(&body, "ListBullet", `<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>`, l[2:])
		case numberedRe.MatchString(l):
			para(&body, "ListNumber", `<w:numPr><w:ilvl w:val="0"/><w:numId w:val="2"/></w:numPr>`, numberedRe.ReplaceAllString(l, ""))
		case strings.HasPrefix(l, "|"):
			var rows [][]string
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				row := strings.TrimSpace(lines[i])
				if strings.Trim(row, "|-: ") == "" {
					continue // the header's rule
				}
				cells := strings.Split(strings.Trim(row, "|"), "|")
				for j := range cells {
					cells[j] = strings.TrimSpace(cells[j])
				}
				rows = append(rows, cells)
			}
			i--
			table(&body, rows)
		case strings.HasPrefix(l, "> "):
			para(&body, "Quote", "", strings.TrimPrefix(l, "> "))
		default:
			para(&body, "", "", l)
		}
	}
	doc := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
		`<w:document xmlns:w="` + wordNS + `" xmlns:r="` + docRel + `"><w:body>` + body.String() +
		`<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>`
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, part := range []struct{ name, text string }{
		{"[Content_Types].xml", docxTypes},
		{"_rels/.rels", docxRels},
		{"word/document.xml", doc},
		{"word/_rels/document.xml.rels", docxDocRels},
		{"word/styles.xml", docxStyles},
		{"word/numbering.xml", docxNumbering},
	} {
		w, err := z.Create(part.name)
		if err != nil {
			return nil, fmt.Errorf("analyst: writing the DOCX: %w", err)
		}
		if _, err := w.Write([]byte(part.text)); err != nil {
			return nil, fmt.Errorf("analyst: writing the DOCX: %w", err)
		}
	}
	if err := z.Close(); err != nil {
		return nil, fmt.Errorf("analyst: writing the DOCX: %w", err)
	}
	return buf.Bytes(), nil
}

var numberedRe = regexp.MustCompile(`^\d+[.)]\s+`)

// reportMarkdown is the report's Markdown: its content, or for a JSON report its structured
// sections and sources.
func reportMarkdown(rep Report) string {
	if rep.Format != "json" {
		return rep.Content
	}
	var b strings.Builder
	secs, _ := rep.Structured["sections"].([]any)
	for _, s := range secs {
		m, _ := s.(map[string]any)
		name, _ := m["name"].(string)
		content, _ := m["content"].(string)
		if !strings.HasPrefix(strings.TrimSpace(content), "#") {
			fmt.Fprintf(&b, "## %s\n\n", name)
		}
		b.WriteString(content + "\n\n")
	}
	if srcs, _ := rep.Structured["sources"].([]any); len(srcs) > 0 {
		fmt.Fprintf(&b, "## %s\n\n", secSources)
		for _, s := range srcs {
			m, _ := s.(map[string]any)
			fmt.Fprintf(&b, "%v. %v, %v, %v\n", m["n"], m["title"], m["date"], m["ref"])
		}
	}
	if b.Len() == 0 {
		return rep.Content
	}
	return b.String()
}

var boldRe = regexp.MustCompile(`\*\*(.+?)\*\*|__(.+?)__`)

// para writes a paragraph of style (none: Normal) with extra paragraph properties; **bold**
// spans become bold runs.
func para(b *strings.Builder, style, props, text string) {
	b.WriteString("<w:p>")
	if style != "" || props != "" {
		b.WriteString("<w:pPr>")
		if style != "" {
			b.WriteString(`<w:pStyle w:val="` + style + `"/>`)
		}
		b.WriteString(props + "</w:pPr>")
	}
	runs(b, text)
	b.WriteString("</w:p>")
}

func runs(b *strings.Builder, text string) {
	text = strings.ReplaceAll(text, "`", "")
	last := 0
	for _, m := range boldRe.FindAllStringSubmatchIndex(text, -1) {
		run(b, text[last:m[0]], false)
		var inner string
		if m[2] >= 0 {
			inner = text[m[2]:m[3]]
		} else {
			inner = text[m[4]:m[5]]
		}
		run(b, inner, true)
		last = m[1]
	}
	run(b, text[last:], false)
}

func run(b *strings.Builder, text string, bold bool) {
	if text == "" {
		return
	}
	b.WriteString("<w:r>")
	if bold {
		b.WriteString("<w:rPr><w:b/></w:rPr>")
	}
	b.WriteString(`<w:t xml:space="preserve">`)
	_ = xml.EscapeText(b, []byte(text))
	b.WriteString("</w:t></w:r>")
}

// table writes rows as a table; the first row is the header, repeated on each page.
func table(b *strings.Builder, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	width := 9026 / cols
	b.WriteString(`<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid>`)
	for range cols {
		fmt.Fprintf(b, `<w:gridCol w:w="%d"/>`, width)
	}
	b.WriteString("</w:tblGrid>")
	for i, r := range rows {
		b.WriteString("<w:tr>")
		if i == 0 {
			b.WriteString("<w:trPr><w:tblHeader/></w:trPr>")
		}
		for j := range cols {
			cell := ""
			if j < len(r) {
				cell = r[j]
			}
			fmt.Fprintf(b, `<w:tc><w:tcPr><w:tcW w:w="%d" w:type="dxa"/></w:tcPr>`, width)
			if i == 0 {
				cell = "**" + strings.Trim(cell, "*") + "**"
			}
			para(b, "", "", cell)
			b.WriteString("</w:tc>")
		}
		b.WriteString("</w:tr>")
	}
	b.WriteString("</w:tbl>")
	para(b, "", "", "") // Word wants a paragraph between a table and what follows
}

const docxTypes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="` + typesNS + `"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/></Types>`

const docxRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="` + relNS + `"><Relationship Id="rId1" Type="` + docRel + `/officeDocument" Target="word/document.xml"/></Relationships>`

const docxDocRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="` + relNS + `"><Relationship Id="rId1" Type="` + docRel + `/styles" Target="styles.xml"/><Relationship Id="rId2" Type="` + docRel + `/numbering" Target="numbering.xml"/></Relationships>`

const docxStyles = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="` + wordNS + `">` +
	`<w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii="Calibri" w:hAnsi="Calibri" w:cs="Calibri"/><w:sz w:val="22"/></w:rPr></w:rPrDefault><w:pPrDefault><w:pPr><w:spacing w:after="120"/></w:pPr></w:pPrDefault></w:docDefaults>` +
	`<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:qFormat/></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/><w:rPr><w:b/><w:sz w:val="40"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Subtitle"><w:name w:val="Subtitle"/><w:basedOn w:val="Normal"/><w:qFormat/><w:rPr><w:color w:val="666666"/><w:sz w:val="18"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/><w:pPr><w:keepNext/><w:spacing w:before="240"/><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:b/><w:sz w:val="32"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/><w:pPr><w:keepNext/><w:spacing w:before="200"/><w:outlineLvl w:val="1"/></w:pPr><w:rPr><w:b/><w:sz w:val="26"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading3"><w:name w:val="heading 3"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/><w:pPr><w:keepNext/><w:outlineLvl w:val="2"/></w:pPr><w:rPr><w:b/><w:sz w:val="24"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/><w:basedOn w:val="Normal"/><w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="ListNumber"><w:name w:val="List Number"/><w:basedOn w:val="Normal"/><w:pPr><w:numPr><w:numId w:val="2"/></w:numPr></w:pPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Quote"><w:name w:val="Quote"/><w:basedOn w:val="Normal"/><w:pPr><w:ind w:left="720"/></w:pPr><w:rPr><w:i/></w:rPr></w:style>` +
	`<w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/><w:tblPr><w:tblBorders><w:top w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:left w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:bottom w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:right w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:insideH w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:insideV w:val="single" w:sz="4" w:space="0" w:color="auto"/></w:tblBorders></w:tblPr></w:style>` +
	`</w:styles>`

const docxNumbering = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering xmlns:w="` + wordNS + `">` +
	`<w:abstractNum w:abstractNumId="0"><w:multiLevelType w:val="singleLevel"/><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="bullet"/><w:lvlText w:val="•"/><w:lvlJc w:val="left"/><w:pPr><w:ind w:left="720" w:hanging="360"/></w:pPr></w:lvl></w:abstractNum>` +
	`<w:abstractNum w:abstractNumId="1"><w:multiLevelType w:val="singleLevel"/><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/><w:lvlJc w:val="left"/><w:pPr><w:ind w:left="720" w:hanging="360"/></w:pPr></w:lvl></w:abstractNum>` +
	`<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num><w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>` +
	`</w:numbering>`
