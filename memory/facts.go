package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/store"
)

// Labels under the caller's namespace.
const (
	FactsLabel    = "facts"
	EpisodesLabel = "episodes"
	HistoryLabel  = "history"
)

// Fact is one thing known, with the texts it replaced.
type Fact struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// Subject is what the fact is about ("budget", "city"), used to match corrections; may be empty.
	Subject string `json:"subject,omitempty"`
	// Previous holds the texts this fact had before corrections, oldest first.
	Previous  []string  `json:"previous,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// FactDoc is the document of facts under one namespace and key.
type FactDoc struct {
	Facts []Fact `json:"facts"`
}

// Text lists the facts, one per line ("- text"), for a prompt.
func (d FactDoc) Text() string {
	var b strings.Builder
	for _, f := range d.Facts {
		b.WriteString("- ")
		b.WriteString(f.Text)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// Find returns the fact with that id.
func (d FactDoc) Find(id string) (Fact, bool) {
	for _, f := range d.Facts {
		if f.ID == id {
			return f, true
		}
	}
	return Fact{}, false
}

// Operation kinds. There is deliberately no kind that removes a fact.
const (
	OpAdd     = "add"
	OpCorrect = "correct"
)

// Op is one change a model proposes to a fact document.
type Op struct {
	// Op is "add" or "correct".
	Op string `json:"op"`
	// ID names the fact a correction replaces; empty for an add.
	ID string `json:"id,omitempty"`
	// Text is the new fact, or the corrected text. Never empty.
	Text string `json:"text"`
	// Subject is what the fact is about, optional.
	Subject string `json:"subject,omitempty"`
}

// ErrRefused is matched by the error of an operation that [Apply] will not apply.
var ErrRefused = errors.New("memory: operation refused")

// OpsSchema is the structured-output schema a model fills to propose operations.
var OpsSchema = &model.Schema{Name: "fact_operations", Description: "Changes to the document of known facts: add new facts, correct existing ones by id. Facts are never removed.", JSON: json.RawMessage(`{
  "type": "object",
  "properties": {
    "operations": {
      "type": "array",
      "description": "One entry per new or corrected fact; empty when nothing new was said.",
      "items": {
        "type": "object",
        "properties": {
          "op": {"type": "string", "enum": ["add", "correct"], "description": "add a new fact, or correct the fact with the given id"},
          "id": {"type": "string", "description": "for correct: the id of the fact being corrected"},
          "subject": {"type": "string", "description": "one or two words naming what the fact is about, such as budget or city"},
          "text": {"type": "string", "description": "the fact, as a short sentence"}
        },
        "required": ["op", "text"]
      }
    }
  },
  "required": ["operations"]
}`)}

// Apply applies ops to doc and returns the new document and the operations refused (each with
// its reason, matching [ErrRefused]). It never removes a fact: an unknown kind of operation
// ("delete", "remove", ...), an empty text, or a correction of an id that does not exist is
// refused, and the document keeps every fact it had. A correction keeps the old text in
// Fact.Previous. Adding a fact whose text is already known changes nothing. doc is not modified.
func Apply(doc FactDoc, ops []Op, now time.Time) (FactDoc, []error) {
	out := FactDoc{Facts: make([]Fact, len(doc.Facts))}
	for i, f := range doc.Facts {
		f.Previous = slices.Clone(f.Previous)
		out.Facts[i] = f
	}
	var refused []error
	for i, op := range ops {
		text := strings.TrimSpace(op.Text)
		switch {
		case op.Op != OpAdd && op.Op != OpCorrect:
			refused = append(refused, fmt.Errorf("%w: operation %d has kind %q; only %q and %q are allowed, and facts are never removed", ErrRefused, i, op.Op, OpAdd, OpCorrect))
			continue
		case text == "":
			refused = append(refused, fmt.Errorf("%w: operation %d (%s) has no text; an empty fact would erase what is known", ErrRefused, i, op.Op))
			continue
		}
		if op.Op == OpAdd {
			if idx := indexOfText(out.Facts, text); idx >= 0 {
				continue
			}
			out.Facts = append(out.Facts, Fact{ID: nextID(out.Facts), Text: text, Subject: normSubject(op.Subject), UpdatedAt: now})
			continue
		}
		idx := slices.IndexFunc(out.Facts, func(f Fact) bool { return f.ID == op.ID })
		if idx < 0 {
			refused = append(refused, fmt.Errorf("%w: operation %d corrects fact %q, which does not exist; add it instead", ErrRefused, i, op.ID))
			continue
		}
		f := &out.Facts[idx]
		if f.Text == text {
			continue
		}
		f.Previous = append(f.Previous, f.Text)
		f.Text = text
		if s := normSubject(op.Subject); s != "" {
			f.Subject = s
		}
		f.UpdatedAt = now
	}
	return out, refused
}

func indexOfText(facts []Fact, text string) int {
	k := normText(text)
	return slices.IndexFunc(facts, func(f Fact) bool { return normText(f.Text) == k })
}

func nextID(facts []Fact) string {
	n := 0
	for _, f := range facts {
		if v, err := strconv.Atoi(strings.TrimPrefix(f.ID, "f")); err == nil && v > n {
			n = v
		}
	}
	return "f" + strconv.Itoa(n+1)
}

func normText(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }), " ")
}

func normSubject(s string) string { return normText(s) }

// FactsOptions configure [UpdateFacts].
type FactsOptions struct {
	// Model proposes the operations; nil, or the offline model, means [ExtractOps].
	Model model.Model
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// LoadFacts reads the fact document under ns and key; a missing document is an empty one.
func LoadFacts(ctx context.Context, st store.Store, ns []string, key string) (FactDoc, error) {
	if err := checkNS(ns, key); err != nil {
		return FactDoc{}, err
	}
	it, err := st.Get(ctx, store.GetRequest{Namespace: child(ns, FactsLabel), Key: key})
	if errors.Is(err, store.ErrNotFound) {
		return FactDoc{}, nil
	}
	if err != nil {
		return FactDoc{}, fmt.Errorf("memory: reading facts %v/%s: %w", ns, key, err)
	}
	var doc FactDoc
	if err := remarshal(it.Value, &doc); err != nil {
		return FactDoc{}, fmt.Errorf("memory: the fact document %v/%s is not {facts: [...]}: %w", ns, key, err)
	}
	return doc, nil
}

// Update is the outcome of [UpdateFacts].
type Update struct {
	Doc FactDoc
	// Applied are the operations proposed (by the model or [ExtractOps]); Refused says why
	// some of them were not applied.
	Applied []Op
	Refused []error
}

// UpdateFacts reads the fact document under ns and key, has the model (or [ExtractOps])
// propose operations from msgs, applies them with [Apply] and saves the result. Every fact the
// document had before is still in it afterwards, possibly corrected.
func UpdateFacts(ctx context.Context, st store.Store, ns []string, key string, msgs []message.Message, o *FactsOptions) (Update, error) {
	var opts FactsOptions
	if o != nil {
		opts = *o
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	doc, err := LoadFacts(ctx, st, ns, key)
	if err != nil {
		return Update{}, err
	}
	var ops []Op
	if opts.Model == nil || isOffline(opts.Model) {
		ops = ExtractOps(doc, msgs)
	} else if ops, err = proposeOps(ctx, opts.Model, doc, msgs); err != nil {
		return Update{}, err
	}
	next, refused := Apply(doc, ops, opts.Now())
	var value map[string]any
	if err := remarshal(next, &value); err != nil {
		return Update{}, err
	}
	if err := st.Put(ctx, store.PutRequest{Namespace: child(ns, FactsLabel), Key: key, Value: value, Index: []string{"facts[*].text"}}); err != nil {
		return Update{}, fmt.Errorf("memory: saving facts %v/%s: %w", ns, key, err)
	}
	return Update{Doc: next, Applied: ops, Refused: refused}, nil
}

func proposeOps(ctx context.Context, m model.Model, doc FactDoc, msgs []message.Message) ([]Op, error) {
	known, _ := json.Marshal(doc.Facts)
	var conv strings.Builder
	for _, msg := range msgs {
		if msg.Role == message.RoleUser || msg.Role == message.RoleAssistant {
			fmt.Fprintf(&conv, "%s: %s\n", msg.Role, msg.Text())
		}
	}
	req := &model.Request{Schema: OpsSchema, Messages: []message.Message{
		message.System("You maintain a document of facts about the user. Propose operations: \"add\" for a fact not yet known, \"correct\" (with the fact's id) when the user changed or corrected a known fact. Never drop a fact; there is no delete. Known facts (JSON):\n" + string(known)),
		message.User("Conversation:\n" + conv.String()),
	}}
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("memory: proposing fact updates: %w", err)
	}
	raw := resp.Structured
	if len(raw) == 0 {
		raw = json.RawMessage(resp.Message.Text())
	}
	var out struct {
		Operations []Op `json:"operations"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("memory: the model's fact operations are not valid JSON: %w", err)
	}
	return out.Operations, nil
}

func isOffline(m model.Model) bool {
	return model.IsOffline(m)
}

// statement patterns: "my X is Y", "I live in Y", "o meu X é Y", "X: Y".
var (
	reMyIs     = regexp.MustCompile(`(?i)^(?:actually,?\s+|na verdade,?\s+|afinal,?\s+)?(?:my|our|o meu|a minha|os meus|as minhas|meu|minha|nosso|nossa)\s+(.{2,40}?)\s+(?:is|are|was|is now|é|são|passou a ser|agora é)\s+(.+)$`)
	reILive    = regexp.MustCompile(`(?i)^(?:actually,?\s+)?(?:i|we|eu|nós)\s+(?:now\s+)?(?:live|vivo|moro|vivemos|moramos)\s+(?:in|em|no|na)\s+(.+)$`)
	reIAm      = regexp.MustCompile(`(?i)^(?:i am|i'm|eu sou|sou)\s+(?:a|an|um|uma)?\s*(.+)$`)
	reIPrefer  = regexp.MustCompile(`(?i)^(?:(?:i|we|eu|nós)\s+)?(?:prefer|like|love|want|need|prefiro|gosto de|quero|preciso de|preferimos|queremos)\s+(.+)$`)
	reSentence = regexp.MustCompile(`(?:[^.!?\n]|[.!?]\S)+[.!?]?`)
)

// ExtractOps derives operations from the user's statements in msgs, deterministically: "my
// budget is 200k", "I live in Porto", "I am an investor", "I prefer ...", and their Portuguese
// forms ("o meu orçamento é ...", "moro em ..."). A statement about a subject the document
// already has a fact on ("budget", "city") corrects that fact; any other is added. Questions
// are ignored.
func ExtractOps(doc FactDoc, msgs []message.Message) []Op {
	facts := slices.Clone(doc.Facts)
	var ops []Op
	for _, m := range msgs {
		if m.Role != message.RoleUser {
			continue
		}
		for _, sent := range reSentence.FindAllString(m.Text(), -1) {
			sent = strings.TrimSpace(sent)
			if sent == "" || strings.HasSuffix(sent, "?") {
				continue
			}
			body := strings.TrimRight(sent, ".! ")
			subject := ""
			switch {
			case reMyIs.MatchString(body):
				subject = reMyIs.FindStringSubmatch(body)[1]
			case reILive.MatchString(body):
				subject = "city"
			case reIAm.MatchString(body):
				subject = "role"
			case reIPrefer.MatchString(body):
				subject = "preference " + firstWords(reIPrefer.FindStringSubmatch(body)[1], 2)
			default:
				continue
			}
			subject = normSubject(subject)
			text := body
			if i := slices.IndexFunc(facts, func(f Fact) bool { return f.Subject == subject }); i >= 0 {
				if normText(facts[i].Text) != normText(text) {
					ops = append(ops, Op{Op: OpCorrect, ID: facts[i].ID, Text: text, Subject: subject})
					facts[i].Text = text
				}
				continue
			}
			if indexOfText(facts, text) >= 0 {
				continue
			}
			ops = append(ops, Op{Op: OpAdd, Text: text, Subject: subject})
			facts = append(facts, Fact{ID: nextID(facts), Text: text, Subject: subject})
		}
	}
	return ops
}

func firstWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) > n {
		w = w[:n]
	}
	return strings.Join(w, " ")
}

func child(ns []string, label string) []string {
	return append(slices.Clone(ns), label)
}

func checkNS(ns []string, key string) error {
	if len(ns) == 0 {
		return errors.New("memory: the namespace is empty; give one such as {\"myapp\", \"users\", userID}")
	}
	for i, l := range ns {
		if l == "" {
			return fmt.Errorf("memory: label %d of namespace %q is empty; every label needs a value (a user or thread id missing?)", i, ns)
		}
	}
	if key == "" {
		return errors.New("memory: the key is empty; name the document, such as \"profile\"")
	}
	return nil
}

func remarshal(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
