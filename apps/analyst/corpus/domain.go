package corpus

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

//go:embed vocabulary.json
var vocabularyJSON []byte

// Domain is what the knowledge base says about the firm, read from the documents' headers and
// the vocabulary file; no Go code names a company, project or place of the corpus.
//
//   - The firm: the document whose header has "company:" (the fact sheet); its other header
//     lines (industry:, priorities:, vocabulary:) are the firm's facts.
//   - The competitors: the "about:" of the competitor notes (type competitor_note).
//   - The projects: the "project:" values of the documents.
//   - The assumptions: the statements of the documents tagged "assumptions", with the
//     contradiction signals of assumptions.json.
//   - Themes, synonyms, time frames and the report's cue words: vocabulary.json.
type Domain struct {
	Company     string
	Facts       []Fact // the fact sheet's header lines other than company:, in key order
	FactSource  string // the fact sheet's title
	Competitors []string
	Projects    []string
	Assumptions []Assumption
	Vocabulary  Vocabulary
}

// Fact is one line of the fact sheet's header.
type Fact struct{ Key, Value string }

// Vocabulary is vocabulary.json.
type Vocabulary struct {
	// Themes name a request by the words it uses ("leasing" → "B2B fleet leasing").
	Themes []Theme `json:"themes"`
	// Synonyms are groups of words retrieval matches as one.
	Synonyms [][]string `json:"synonyms"`
	// TimeFrames are the phrases that name a period relative to today.
	TimeFrames []TimeFrame `json:"time_frames"`
	// Report holds the cue words the offline writer sorts evidence by.
	Report ReportCues `json:"report"`
}

// Theme is a subject a request can be about.
type Theme struct {
	Name  string   `json:"name"`
	Words []string `json:"words"`
}

// TimeFrame is a period a question can name: the unit (year, quarter, month) Back units ago, the
// whole unit, or until today when UntilNow.
type TimeFrame struct {
	Words    []string `json:"words"`
	Unit     string   `json:"unit"`
	Back     int      `json:"back"`
	UntilNow bool     `json:"until_now"`
}

// ReportCues sort evidence into a framework's parts.
type ReportCues struct {
	Threats       []string `json:"threats"`
	Opportunities []string `json:"opportunities"`
	Weaknesses    []string `json:"weaknesses"`
	OwnWeaknesses []string `json:"own_weaknesses"` // in the firm's own documents only
	Forces        []Force  `json:"forces"`
}

// Force is one of Porter's five forces and the words of evidence on it; Competitors adds the
// competitors' names.
type Force struct {
	Name        string   `json:"name"`
	Words       []string `json:"words"`
	Competitors bool     `json:"competitors"`
}

// Load reads the domain from the shipped corpus.
func Load() (*Domain, error) {
	docs, err := Documents()
	if err != nil {
		return nil, err
	}
	d := &Domain{}
	if err := json.Unmarshal(vocabularyJSON, &d.Vocabulary); err != nil {
		return nil, fmt.Errorf("corpus: vocabulary.json: %w", err)
	}
	for _, tf := range d.Vocabulary.TimeFrames {
		switch tf.Unit {
		case "year", "quarter", "month":
		default:
			return nil, fmt.Errorf("corpus: vocabulary.json: time frame %q has unit %q; use year, quarter or month", strings.Join(tf.Words, "/"), tf.Unit)
		}
	}
	seenC, seenP := map[string]bool{}, map[string]bool{}
	for _, doc := range docs {
		if c := doc.Fields["company"]; c != "" {
			if d.Company != "" && d.Company != c {
				return nil, fmt.Errorf("corpus: two documents name the company (%q and %q); give one fact sheet the company: line", d.Company, c)
			}
			d.Company, d.FactSource = c, doc.Title
			var keys []string
			for k := range doc.Fields {
				if k != "company" {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				d.Facts = append(d.Facts, Fact{Key: k, Value: doc.Fields[k]})
			}
		}
		if doc.Type == "competitor_note" && doc.About != "" && !seenC[doc.About] {
			seenC[doc.About] = true
			d.Competitors = append(d.Competitors, doc.About)
		}
		if doc.Project != "" && !seenP[doc.Project] {
			seenP[doc.Project] = true
			d.Projects = append(d.Projects, doc.Project)
		}
	}
	if d.Company == "" {
		return nil, fmt.Errorf("corpus: no document names the company; give the fact sheet a company: line")
	}
	if d.Assumptions, err = Assumptions(); err != nil {
		return nil, err
	}
	return d, nil
}

// Names are the proper names the corpus defines: the company (and each word of its name), its
// competitors and its projects.
func (d *Domain) Names() []string {
	out := []string{d.Company}
	out = append(out, strings.Fields(d.Company)...)
	out = append(out, d.Competitors...)
	return append(out, d.Projects...)
}
