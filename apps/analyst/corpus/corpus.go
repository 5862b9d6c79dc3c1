// Package corpus holds the analyst's shipped data: the knowledge base of a
// fictional shared e-bike operator (forty documents: strategy, market reports, competitor notes
// and project files), and the web pages the offline search engine answers from, some of which
// contradict the firm's planning assumptions.
package corpus

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
)

//go:embed kb/*.md
var kbFS embed.FS

//go:embed web/web.json
var webJSON []byte

//go:embed assumptions.json
var assumptionsJSON []byte

// Document is one document of the knowledge base.
type Document struct {
	ID      string   // the file name without .md
	Title   string   // title:
	Type    string   // type: strategy, market_report, competitor_note, project_file
	Project string   // project:, "" when none
	Date    string   // date: YYYY-MM-DD
	Tags    []string // tags:
	// About is the subject a competitor note is about (about:), "" when none.
	About string
	// Fields are the header's other lines ("company: ...", "industry: ..."), by key.
	Fields map[string]string
	Body   string
}

// WebPage is one page of the offline web.
type WebPage struct {
	URL           string `json:"url"`
	Title         string `json:"title"`
	Content       string `json:"content"`
	PublishedDate string `json:"published_date"`
}

// Documents parses the shipped knowledge base, in file order.
func Documents() ([]Document, error) {
	entries, err := fs.ReadDir(kbFS, "kb")
	if err != nil {
		return nil, err
	}
	var docs []Document
	for _, e := range entries {
		raw, err := kbFS.ReadFile("kb/" + e.Name())
		if err != nil {
			return nil, err
		}
		d, err := parse(strings.TrimSuffix(e.Name(), ".md"), string(raw))
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].ID < docs[j].ID })
	return docs, nil
}

func parse(id, raw string) (Document, error) {
	head, body, ok := strings.Cut(raw, "\n---\n")
	if !ok {
		return Document{}, fmt.Errorf("corpus: %s has no header ending in ---", id)
	}
	d := Document{ID: id, Body: strings.TrimSpace(body)}
	for _, line := range strings.Split(head, "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "title":
			d.Title = v
		case "type":
			d.Type = v
		case "project":
			if v != "-" {
				d.Project = v
			}
		case "date":
			d.Date = v
		case "tags":
			for _, t := range strings.Split(v, ",") {
				if t = strings.TrimSpace(t); t != "" {
					d.Tags = append(d.Tags, t)
				}
			}
		case "about":
			d.About = v
		default:
			if k = strings.TrimSpace(k); k != "" && v != "" {
				if d.Fields == nil {
					d.Fields = map[string]string{}
				}
				d.Fields[k] = v
			}
		}
	}
	if d.Title == "" || d.Type == "" || d.Date == "" {
		return Document{}, fmt.Errorf("corpus: %s lacks a title, type or date", id)
	}
	return d, nil
}

// Web returns the offline web's pages.
func Web() ([]WebPage, error) {
	var pages []WebPage
	if err := json.Unmarshal(webJSON, &pages); err != nil {
		return nil, fmt.Errorf("corpus: web.json: %w", err)
	}
	return pages, nil
}

// Assumption is one of the firm's planning assumptions: its statement, as a strategy document
// tagged "assumptions" gives it ("A1: <competitor> will not ..."), and what evidence that contradicts
// it looks like (assumptions.json): every group of Subject must have a word in the evidence, and
// one of ContradictedBy must be in it.
type Assumption struct {
	ID             string     `json:"id"`
	Statement      string     `json:"statement"`
	Subject        [][]string `json:"subject"`
	ContradictedBy []string   `json:"contradicted_by"`
	Source         string     `json:"source"` // the document that states it
}

var assumptionRe = regexp.MustCompile(`\b(A\d+): ([^.]+)`)

// Assumptions reads the firm's planning assumptions from the knowledge base's documents tagged
// "assumptions", with the contradiction signals of assumptions.json.
func Assumptions() ([]Assumption, error) {
	var signals []Assumption
	if err := json.Unmarshal(assumptionsJSON, &signals); err != nil {
		return nil, fmt.Errorf("corpus: assumptions.json: %w", err)
	}
	docs, err := Documents()
	if err != nil {
		return nil, err
	}
	stated := map[string][2]string{}
	for _, d := range docs {
		tagged := false
		for _, t := range d.Tags {
			tagged = tagged || t == "assumptions"
		}
		if !tagged {
			continue
		}
		for _, m := range assumptionRe.FindAllStringSubmatch(d.Body, -1) {
			if _, ok := stated[m[1]]; !ok {
				stated[m[1]] = [2]string{strings.TrimSpace(m[2]), d.Title}
			}
		}
	}
	for i, a := range signals {
		st, ok := stated[a.ID]
		if !ok {
			return nil, fmt.Errorf("corpus: assumptions.json names %s, which no document tagged \"assumptions\" states", a.ID)
		}
		signals[i].Statement, signals[i].Source = st[0], st[1]
	}
	return signals, nil
}
