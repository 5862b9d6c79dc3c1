package analyst_test

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fumiama/go-docx"

	"github.com/trellis-go/trellis/apps/analyst"
)

// docxPara is a paragraph read back from a DOCX: its style, its text, whether it is in a table.
type docxPara struct {
	style string
	text  string
	cell  bool
	list  bool
}

// readDOCX unzips a DOCX, checks that every XML part is well-formed and that the parts a word
// processor needs are there and related, and reads the document's paragraphs back.
func readDOCX(t *testing.T, raw []byte) []docxPara {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	parts := map[string][]byte{}
	for _, f := range z.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		parts[f.Name] = b
		dec := xml.NewDecoder(bytes.NewReader(b))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s is not well-formed XML: %v", f.Name, err)
			}
		}
	}
	for _, need := range []string{"[Content_Types].xml", "_rels/.rels", "word/document.xml", "word/styles.xml", "word/numbering.xml", "word/_rels/document.xml.rels"} {
		if parts[need] == nil {
			t.Fatalf("the DOCX lacks %s", need)
		}
	}
	var types struct {
		Overrides []struct {
			PartName    string `xml:"PartName,attr"`
			ContentType string `xml:"ContentType,attr"`
		} `xml:"Override"`
	}
	if err := xml.Unmarshal(parts["[Content_Types].xml"], &types); err != nil {
		t.Fatal(err)
	}
	main := false
	for _, o := range types.Overrides {
		main = main || o.PartName == "/word/document.xml" && strings.HasSuffix(o.ContentType, "document.main+xml")
	}
	var rels struct {
		Rels []struct {
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if err := xml.Unmarshal(parts["_rels/.rels"], &rels); err != nil || !main || len(rels.Rels) != 1 || rels.Rels[0].Target != "word/document.xml" {
		t.Fatalf("the package does not point at its document: %v %+v", err, rels)
	}
	// the styles the document uses are defined
	var styles struct {
		Styles []struct {
			ID string `xml:"styleId,attr"`
		} `xml:"style"`
	}
	if err := xml.Unmarshal(parts["word/styles.xml"], &styles); err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, s := range styles.Styles {
		defined[s.ID] = true
	}
	// read the body: paragraphs and table cells, in order
	var out []docxPara
	dec := xml.NewDecoder(bytes.NewReader(parts["word/document.xml"]))
	var cur *docxPara
	depth := 0 // table nesting
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "tbl":
				depth++
			case "p":
				cur = &docxPara{cell: depth > 0}
			case "pStyle":
				for _, a := range e.Attr {
					if a.Name.Local == "val" {
						cur.style = a.Value
						if !defined[a.Value] {
							t.Fatalf("style %q is used but not defined", a.Value)
						}
					}
				}
			case "numPr":
				cur.list = true
			case "t":
				inText = true
			}
		case xml.EndElement:
			switch e.Name.Local {
			case "tbl":
				depth--
			case "p":
				if cur.text != "" {
					out = append(out, *cur)
				}
				cur = nil
			case "t":
				inText = false
			}
		case xml.CharData:
			if inText && cur != nil {
				cur.text += string(e)
			}
		}
	}
	return out
}

func TestReportDOCX(t *testing.T) {
	t.Parallel()
	rep := analyst.Report{ID: "0b6f8e4e-5d33-4a57-9f55-6b1d7c1f5c11", Title: "Voltra & B2B <leasing>", Format: "markdown", CreatedAt: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		Content: "# Voltra & B2B <leasing>\n\n## Executive Summary\n\n- Voltra launched a **leasing pilot** [1].\n- Battery prices are flat [2].\n\n## Evidence\n\n| Assumption | Evidence |\n|---|---|\n| A1 | Voltra Fleet pilot [1] |\n| A2 | Prices flat [2] |\n\n1. First step\n2. Second step\n\n## Sources\n\n1. Voltra launches Voltra Fleet, 2026-03-17\n2. Battery pack prices stop falling, 2026-02-26\n"}
	raw, err := analyst.ReportDOCX(rep)
	if err != nil {
		t.Fatal(err)
	}
	ps := readDOCX(t, raw)
	var got []string
	for _, p := range ps {
		got = append(got, p.style+"|"+p.text)
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{
		"Title|Voltra & B2B <leasing>", "Heading1|Executive Summary", "ListBullet|Voltra launched a leasing pilot [1].",
		"Heading1|Evidence", "|Assumption", "|Voltra Fleet pilot [1]", "ListNumber|Second step", "Heading1|Sources", "ListNumber|Battery pack prices stop falling, 2026-02-26",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("the document lacks %q:\n%s", want, joined)
		}
	}
	cells := 0
	for _, p := range ps {
		if p.cell {
			cells++
		}
	}
	if cells != 6 {
		t.Errorf("table cells: %d, want 6", cells)
	}
	if strings.Count(joined, "Title|") != 1 {
		t.Errorf("the title is repeated:\n%s", joined)
	}
	// A DOCX reader of its own (github.com/fumiama/go-docx) reads the same document back: the
	// headings and lists with their styles, and the table with its cells.
	doc, err := docx.Parse(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatalf("the DOCX reader refuses the document: %v", err)
	}
	var read []string
	tables := 0
	for _, it := range doc.Document.Body.Items {
		switch v := it.(type) {
		case *docx.Paragraph:
			style := ""
			if v.Properties != nil && v.Properties.Style != nil {
				style = v.Properties.Style.Val
			}
			read = append(read, style+"|"+strings.TrimSpace(v.String()))
		case *docx.Table:
			tables++
			if rows := len(v.TableRows); rows != 3 || !strings.Contains(v.String(), "Voltra Fleet pilot [1]") {
				t.Errorf("the reader's table: %d rows, %q", rows, v.String())
			}
		}
	}
	readJoined := strings.Join(read, "\n")
	for _, want := range []string{"Title|Voltra & B2B <leasing>", "Heading1|Executive Summary", "ListBullet|Voltra launched a leasing pilot [1].", "ListNumber|Battery pack prices stop falling, 2026-02-26"} {
		if !strings.Contains(readJoined, want) {
			t.Errorf("the DOCX reader does not find %q:\n%s", want, readJoined)
		}
	}
	if tables != 1 {
		t.Errorf("the DOCX reader finds %d tables, want 1", tables)
	}
}

// A report approved as DOCX is saved and downloaded as a Word document with the report's
// headings, lists and citations.
func TestApproveAsDOCX(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{})
	s := newSession(t, hs, "")
	s.ask(voltraQuestion, map[string]any{"profile": dana["profile"]}) // the dev user, whose reports the route serves
	s.resume("accept", nil)
	s.resume("accept", nil)
	s.wantGate("Review final report")
	draft := s.values["report_draft"].(string)
	s.resume("response", "approve, as a docx please")
	id, _ := s.values["report_id"].(string)
	if id == "" || !strings.Contains(s.lastMessage(), "/docx") {
		t.Fatalf("not saved as docx: %s", s.lastMessage())
	}
	resp, err := http.Get(hs.URL + "/apps/analyst/api/v1/reports/" + id + "/docx")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "wordprocessingml") {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ps := readDOCX(t, raw)
	headings, bullets := 0, 0
	var text strings.Builder
	for _, p := range ps {
		if strings.HasPrefix(p.style, "Heading") {
			headings++
			if !strings.Contains(draft, p.text) {
				t.Errorf("heading %q is not in the draft", p.text)
			}
		}
		if p.list {
			bullets++
		}
		text.WriteString(p.text + "\n")
	}
	if headings < 3 || bullets < 2 {
		t.Fatalf("%d headings, %d list items:\n%s", headings, bullets, text.String())
	}
	if !strings.Contains(text.String(), "Voltra") {
		t.Fatalf("the report's text is missing:\n%s", text.String())
	}
}
