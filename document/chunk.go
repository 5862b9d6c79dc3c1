package document

import (
	"fmt"
	"regexp"
	"strings"
)

// Tokenizer counts and splits text into tokens. Chunk sizes are measured in its tokens.
type Tokenizer interface {
	// Tokens returns the [start, end) byte offsets of each token of s.
	Tokens(s string) [][2]int
}

// WordTokenizer is the default Tokenizer: a run of letters and digits, or a single other
// visible character, is one token. Model tokenizers split long words further, so a chunk of
// N of these tokens is about 1.3 N model tokens for English prose.
type WordTokenizer struct{}

var tokenRE = regexp.MustCompile(`[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]`)

// Tokens implements Tokenizer.
func (WordTokenizer) Tokens(s string) [][2]int {
	idx := tokenRE.FindAllStringIndex(s, -1)
	out := make([][2]int, len(idx))
	for i, p := range idx {
		out[i] = [2]int{p[0], p[1]}
	}
	return out
}

// ChunkOptions control chunking. The zero value is the documented default.
type ChunkOptions struct {
	// Size is the most tokens in a chunk, headings included; zero means 300.
	Size int
	// Overlap is how many tokens of a section's previous chunk start the next; zero means 40.
	// It must be less than half of Size.
	Overlap int
	// Tokenizer measures text; nil means WordTokenizer.
	Tokenizer Tokenizer
	// NoHeadings leaves the heading path out of the chunk text (it stays in Chunk.Headings).
	NoHeadings bool
}

func (o ChunkOptions) withDefaults() (ChunkOptions, error) {
	if o.Size == 0 {
		o.Size = 300
	}
	if o.Overlap == 0 {
		o.Overlap = 40
	}
	if o.Tokenizer == nil {
		o.Tokenizer = WordTokenizer{}
	}
	if o.Size < 8 {
		return o, fmt.Errorf("document: chunk Size %d is too small (use at least 8 tokens, or 0 for 300)", o.Size)
	}
	if o.Overlap < 0 || o.Overlap*2 >= o.Size {
		return o, fmt.Errorf("document: chunk Overlap %d must be between 0 and half of Size %d", o.Overlap, o.Size)
	}
	return o, nil
}

// Chunk is a piece of a document small enough to embed.
type Chunk struct {
	// Index is the chunk's position in its document, from 0.
	Index int
	// Text is what gets embedded: the heading path ("Guide > Install") on its own line, then
	// the body text.
	Text string
	// Body is the text without the heading line.
	Body string
	// Headings is the chain of headings the text sits under.
	Headings []string
	// Tokens is the chunk's size in the tokenizer's tokens.
	Tokens int
	// Metadata is the document's metadata plus source, title and heading.
	Metadata map[string]any
}

// Split cuts a document into chunks of at most Size tokens. Each section is chunked on its own,
// so a chunk never spans two headings, and each chunk repeats its heading path, so a chunk
// taken alone still says what it is about. Long sections are cut with Overlap tokens repeated
// between neighbours, preferring to end a chunk at a paragraph or sentence end.
func Split(d *Document, opts *ChunkOptions) ([]Chunk, error) {
	var o ChunkOptions
	if opts != nil {
		o = *opts
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	var out []Chunk
	for _, sec := range d.Sections {
		head := ""
		headTokens := 0
		if len(sec.Headings) > 0 && !o.NoHeadings {
			head = strings.Join(sec.Headings, " > ")
			headTokens = len(o.Tokenizer.Tokens(head))
			if headTokens > o.Size/2 {
				// An absurdly long heading path keeps only its last heading.
				head = sec.Headings[len(sec.Headings)-1]
				headTokens = len(o.Tokenizer.Tokens(head))
				if headTokens > o.Size/2 {
					head, headTokens = "", 0
				}
			}
		}
		budget := o.Size - headTokens
		toks := o.Tokenizer.Tokens(sec.Text)
		for start := 0; start < len(toks); {
			end := min(start+budget, len(toks))
			if end < len(toks) {
				end = breakPoint(sec.Text, toks, start, end, o.Overlap)
			}
			body := sec.Text[toks[start][0]:toks[end-1][1]]
			text := body
			if head != "" {
				text = head + "\n\n" + body
			}
			meta := map[string]any{}
			for k, v := range d.Metadata {
				meta[k] = v
			}
			meta["source"] = d.Source
			meta["title"] = d.Title
			if len(sec.Headings) > 0 {
				meta["heading"] = sec.Headings[len(sec.Headings)-1]
			}
			out = append(out, Chunk{Index: len(out), Text: text, Body: body, Headings: append([]string(nil), sec.Headings...), Tokens: headTokens + end - start, Metadata: meta})
			if end == len(toks) {
				break
			}
			start = max(end-o.Overlap, start+1)
		}
	}
	return out, nil
}

// breakPoint moves a chunk's end back to the last paragraph or sentence end in its final third,
// so chunks end on whole thoughts when they can.
func breakPoint(text string, toks [][2]int, start, end, overlap int) int {
	low := start + max((end-start)*2/3, overlap+1)
	for i := end - 1; i > low; i-- {
		gap := text[toks[i-1][1]:toks[i][0]]
		if strings.Contains(gap, "\n\n") {
			return i
		}
	}
	for i := end - 1; i > low; i-- {
		t := text[toks[i-1][0]:toks[i-1][1]]
		if t == "." || t == "!" || t == "?" {
			return i
		}
	}
	return end
}
