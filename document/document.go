package document

import (
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Document is a loaded file: its text split into sections under their headings.
type Document struct {
	// Source is where the document came from, usually its path.
	Source string
	// Title is the first top-level heading, the HTML <title>, or the file name.
	Title string
	// Sections hold the text in reading order.
	Sections []Section
	// Metadata is copied onto every chunk.
	Metadata map[string]any
}

// Section is text under a chain of headings (outermost first); text before the first heading
// has none.
type Section struct {
	Headings []string
	Text     string
}

// Text returns the whole document as plain text.
func (d *Document) Text() string {
	var b strings.Builder
	for _, s := range d.Sections {
		if len(s.Headings) > 0 {
			b.WriteString(s.Headings[len(s.Headings)-1])
			b.WriteString("\n\n")
		}
		b.WriteString(s.Text)
		b.WriteString("\n\n")
	}
	return strings.TrimSpace(b.String())
}

// ErrUnsupported is returned for a file whose kind no loader reads.
var ErrUnsupported = errors.New("document: unsupported file type")

// Kind is a loader's name.
type Kind string

// The kinds of document.
const (
	KindText     Kind = "text"
	KindMarkdown Kind = "markdown"
	KindHTML     Kind = "html"
)

// KindOf returns the loader for a path from its extension, or "" when none fits.
func KindOf(path string) Kind {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".txt", ".text", ".log", ".csv", ".rst":
		return KindText
	case ".md", ".markdown", ".mdx":
		return KindMarkdown
	case ".html", ".htm", ".xhtml":
		return KindHTML
	}
	return ""
}

// LoadFile reads a text, Markdown or HTML file by its extension.
func LoadFile(path string) (*Document, error) {
	kind := KindOf(path)
	if kind == "" {
		return nil, fmt.Errorf("%w: %s (readable: .txt .md .markdown .html .htm)", ErrUnsupported, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("document: %w", err)
	}
	return Load(kind, path, data)
}

// Load parses data of the given kind. Source names it in errors and metadata.
func Load(kind Kind, source string, data []byte) (*Document, error) {
	if strings.ContainsRune(string(data[:min(len(data), 8000)]), 0) {
		return nil, fmt.Errorf("document: %s looks binary (it has NUL bytes); only text, Markdown and HTML are read", source)
	}
	var d *Document
	switch kind {
	case KindText:
		d = &Document{Sections: []Section{{Text: strings.TrimSpace(normalizeNewlines(string(data)))}}}
	case KindMarkdown:
		d = parseMarkdown(string(data))
	case KindHTML:
		d = parseHTML(string(data))
	default:
		return nil, fmt.Errorf("%w: kind %q", ErrUnsupported, kind)
	}
	d.Source = source
	if d.Title == "" {
		base := filepath.Base(source)
		d.Title = strings.TrimSuffix(base, filepath.Ext(base))
	}
	return d, nil
}

func normalizeNewlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

var (
	atxHeading = regexp.MustCompile(`^(#{1,6})[ \t]+(.*?)[ \t#]*$`)
	fence      = regexp.MustCompile("^(```|~~~)")
)

// parseMarkdown splits Markdown into sections at ATX (#) and setext (underlined) headings,
// ignoring heading-like lines inside fenced code.
func parseMarkdown(src string) *Document {
	d := &Document{}
	lines := strings.Split(normalizeNewlines(src), "\n")
	var stack []string // headings by level, index = level-1
	var body []string
	flush := func() {
		text := strings.TrimSpace(strings.Join(body, "\n"))
		body = body[:0]
		if text == "" {
			return
		}
		d.Sections = append(d.Sections, Section{Headings: compact(stack), Text: text})
	}
	setHeading := func(level int, title string) {
		flush()
		for len(stack) < level {
			stack = append(stack, "")
		}
		stack = stack[:level]
		stack[level-1] = title
		if level == 1 && d.Title == "" {
			d.Title = title
		}
	}
	inFence := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence.MatchString(strings.TrimSpace(line)) {
			inFence = !inFence
			body = append(body, line)
			continue
		}
		if !inFence {
			if m := atxHeading.FindStringSubmatch(line); m != nil {
				setHeading(len(m[1]), m[2])
				continue
			}
			if i+1 < len(lines) && strings.TrimSpace(line) != "" && len(body) >= 0 {
				next := strings.TrimSpace(lines[i+1])
				if len(next) >= 2 && strings.Trim(next, "=") == "" {
					setHeading(1, strings.TrimSpace(line))
					i++
					continue
				}
				if len(next) >= 2 && strings.Trim(next, "-") == "" && (len(body) == 0 || strings.TrimSpace(body[len(body)-1]) == "") {
					setHeading(2, strings.TrimSpace(line))
					i++
					continue
				}
			}
		}
		body = append(body, line)
	}
	flush()
	return d
}

func compact(s []string) []string {
	var out []string
	for _, h := range s {
		if h != "" {
			out = append(out, h)
		}
	}
	return out
}

var (
	skipElements = regexp.MustCompile(`(?is)<(script|style|noscript|template|svg|head)\b[^>]*>.*?</(script|style|noscript|template|svg|head)>`)
	titleElement = regexp.MustCompile(`(?is)<title\b[^>]*>(.*?)</title>`)
	comment      = regexp.MustCompile(`(?s)<!--.*?-->`)
	headingTag   = regexp.MustCompile(`(?is)<h([1-6])\b[^>]*>(.*?)</h[1-6]\s*>`)
	blockTag     = regexp.MustCompile(`(?i)</?(p|div|br|li|ul|ol|tr|table|section|article|header|footer|blockquote|pre|hr|dd|dt|nav|main|aside|figure|figcaption)\b[^>]*>`)
	anyTag       = regexp.MustCompile(`(?s)<[^>]*>`)
	spaces       = regexp.MustCompile(`[ \t\f\v]+`)
	blankLines   = regexp.MustCompile(`\n\s*\n\s*`)
)

// parseHTML turns HTML into Markdown-like text (headings become # lines, block elements
// become line breaks, scripts and styles are dropped, entities decoded) and splits it as
// Markdown.
func parseHTML(src string) *Document {
	title := ""
	if m := titleElement.FindStringSubmatch(src); m != nil {
		title = strings.TrimSpace(html.UnescapeString(anyTag.ReplaceAllString(m[1], "")))
	}
	s := comment.ReplaceAllString(src, "")
	s = skipElements.ReplaceAllString(s, "")
	s = headingTag.ReplaceAllStringFunc(s, func(h string) string {
		m := headingTag.FindStringSubmatch(h)
		text := strings.Join(strings.Fields(html.UnescapeString(anyTag.ReplaceAllString(m[2], ""))), " ")
		return "\n\n" + strings.Repeat("#", int(m[1][0]-'0')) + " " + text + "\n\n"
	})
	s = blockTag.ReplaceAllString(s, "\n")
	s = anyTag.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	s = strings.ReplaceAll(s, "\u00a0", " ")
	lines := strings.Split(normalizeNewlines(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(spaces.ReplaceAllString(l, " "))
	}
	s = blankLines.ReplaceAllString(strings.Join(lines, "\n"), "\n\n")
	d := parseMarkdown(s)
	if title != "" {
		d.Title = title
	}
	return d
}
