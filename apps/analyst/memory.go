package analyst

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/trellis-go/trellis/memory"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/store"
)

// The four memory namespaces of a user, ("strategic_analyst", user_id, <name>), and their keys.
const (
	NSUserProfile    = "user_profile"
	NSCompanyProfile = "company_profile"
	NSPreferences    = "user_preferences"
	NSEpisodic       = "episodic_memory"
)

// Namespaces lists the four namespaces in the order they are shown to models.
var Namespaces = []string{NSUserProfile, NSCompanyProfile, NSPreferences, NSEpisodic}

var memoryKeys = map[string]string{NSUserProfile: "profile", NSCompanyProfile: "profile", NSPreferences: "preferences", NSEpisodic: "episodes"}

func memoryNS(user, name string) []string { return []string{"strategic_analyst", user, name} }

// Memory reads and writes a user's four namespaces. Every write is a set of add and correct
// operations applied by memory.Apply, so no fact is ever dropped.
type Memory struct {
	st    store.Store
	log   *slog.Logger
	fast  model.Model // proposes operations; nil or offline: derived by rule
	now   func() time.Time
	locks sync.Map // user/ns → *sync.Mutex
}

// Mem is the loaded memory of a user: each namespace's facts.
type Mem map[string]memory.FactDoc

// Text renders a namespace for a prompt.
func (m Mem) Text(ns string) string {
	t := m[ns].Text()
	if t == "" {
		return sentence("memory_empty", nil)
	}
	return t
}

// Typed returns the value of the typed fact "[TYP] name: value" in ns, or "".
func (m Mem) Typed(ns, typ, name string) string {
	prefix := typedPrefix(typ, name)
	for _, f := range m[ns].Facts {
		if strings.HasPrefix(strings.ToLower(f.Text), prefix) {
			return strings.TrimSpace(f.Text[len(prefix):])
		}
	}
	return ""
}

func typedPrefix(typ, name string) string {
	return "[" + strings.ToLower(typ) + "] " + strings.ToLower(name) + ":"
}

func typedSubject(typ, name string) string {
	return strings.ToLower(typ) + "." + strings.ToLower(name)
}

// TypedOp is the operation that sets "[TYP] name: value" in doc: a correction of the fact with
// that subject, or an addition.
func TypedOp(doc memory.FactDoc, typ, name, value string) memory.Op {
	subj := typedSubject(typ, name)
	text := fmt.Sprintf("[%s] %s: %s", strings.ToUpper(typ), name, value)
	for _, f := range doc.Facts {
		if strings.HasPrefix(strings.ToLower(f.Text), typedPrefix(typ, name)) {
			return memory.Op{Op: memory.OpCorrect, ID: f.ID, Text: text, Subject: subj}
		}
	}
	return memory.Op{Op: memory.OpAdd, Text: text, Subject: subj}
}

func (mm *Memory) span(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	sp := trace.SpanFromContext(ctx)
	if !sp.IsRecording() {
		return ctx, sp
	}
	return sp.TracerProvider().Tracer("github.com/trellis-go/trellis/apps/analyst").Start(ctx, name, trace.WithAttributes(attrs...))
}

// Load reads one namespace.
func (mm *Memory) Load(ctx context.Context, user, ns string) (memory.FactDoc, error) {
	ctx, sp := mm.span(ctx, "memory.read "+ns, attribute.String("analyst.memory.namespace", strings.Join(memoryNS(user, ns), "/")))
	defer sp.End()
	it, err := mm.st.Get(ctx, store.GetRequest{Namespace: memoryNS(user, ns), Key: memoryKeys[ns]})
	if errors.Is(err, store.ErrNotFound) {
		mm.log.Debug("analyst: memory read", "namespace", ns, "user", user, "bytes", 0)
		sp.SetAttributes(attribute.Int("analyst.memory.bytes", 0))
		return memory.FactDoc{}, nil
	}
	if err != nil {
		return memory.FactDoc{}, fmt.Errorf("analyst: reading memory %s: %w", ns, err)
	}
	raw, _ := json.Marshal(it.Value)
	var doc memory.FactDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return memory.FactDoc{}, fmt.Errorf("analyst: memory %s is not a fact document: %w", ns, err)
	}
	mm.log.Debug("analyst: memory read", "namespace", ns, "user", user, "bytes", len(raw), "facts", len(doc.Facts))
	sp.SetAttributes(attribute.Int("analyst.memory.bytes", len(raw)), attribute.Int("analyst.memory.facts", len(doc.Facts)))
	return doc, nil
}

// LoadAll reads the four namespaces in parallel.
func (mm *Memory) LoadAll(ctx context.Context, user string) (Mem, error) {
	docs := make([]memory.FactDoc, len(Namespaces))
	errs := make([]error, len(Namespaces))
	var wg sync.WaitGroup
	for i, ns := range Namespaces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			docs[i], errs[i] = mm.Load(ctx, user, ns)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := Mem{}
	for i, ns := range Namespaces {
		out[ns] = docs[i]
	}
	return out, nil
}

// Apply applies ops to the namespace and saves it; refused operations (a deletion, an unknown
// id) are logged and skipped. It returns the new document.
func (mm *Memory) Apply(ctx context.Context, user, ns, reason string, ops []memory.Op) (memory.FactDoc, error) {
	lk, _ := mm.locks.LoadOrStore(user+"\x00"+ns, &sync.Mutex{})
	lk.(*sync.Mutex).Lock()
	defer lk.(*sync.Mutex).Unlock()
	doc, err := mm.Load(ctx, user, ns)
	if err != nil {
		return doc, err
	}
	if len(ops) == 0 {
		return doc, nil
	}
	ctx, sp := mm.span(ctx, "memory.write "+ns, attribute.String("analyst.memory.namespace", strings.Join(memoryNS(user, ns), "/")),
		attribute.String("analyst.memory.reason", reason), attribute.Int("analyst.memory.ops", len(ops)))
	defer sp.End()
	next, refused := memory.Apply(doc, ops, mm.now())
	for _, r := range refused {
		mm.log.Warn("analyst: memory operation refused", "namespace", ns, "user", user, "err", r)
	}
	raw, _ := json.Marshal(next)
	var value map[string]any
	_ = json.Unmarshal(raw, &value)
	if err := mm.st.Put(ctx, store.PutRequest{Namespace: memoryNS(user, ns), Key: memoryKeys[ns], Value: value, NoIndex: true}); err != nil {
		return doc, fmt.Errorf("analyst: writing memory %s: %w", ns, err)
	}
	mm.log.Info("analyst: memory write", "namespace", ns, "user", user, "reason", reason, "ops", len(ops), "bytes", len(raw), "facts", len(next.Facts))
	sp.SetAttributes(attribute.Int("analyst.memory.bytes", len(raw)), attribute.Int("analyst.memory.facts", len(next.Facts)))
	return next, nil
}

// Note adds a date-stamped note to episodic memory.
func (mm *Memory) Note(ctx context.Context, user, reason, text string) error {
	_, err := mm.Apply(ctx, user, NSEpisodic, reason, []memory.Op{{Op: memory.OpAdd, Text: sentence("note_dated", map[string]any{"Date": mm.now().UTC().Format("2006-01-02"), "Text": text})}})
	return err
}

// Update is the targeted, model-proposed update of write_memory_tool and of the gates: the fast
// model (or memory.ExtractOps on the offline model) proposes operations from msgs, and typed
// preferences found in the text by rule are added as corrections or additions.
func (mm *Memory) Update(ctx context.Context, user, ns, reason string, msgs []message.Message) (memory.FactDoc, error) {
	doc, err := mm.Load(ctx, user, ns)
	if err != nil {
		return doc, err
	}
	var ops []memory.Op
	if mm.fast == nil || isOffline(mm.fast) {
		ops = memory.ExtractOps(doc, msgs)
	} else {
		ops, err = proposeMemoryOps(ctx, mm.fast, ns, reason, doc, msgs)
		if err != nil {
			return doc, err
		}
	}
	if ns == NSPreferences {
		var text strings.Builder
		for _, m := range msgs {
			if m.Role == message.RoleUser {
				text.WriteString(m.Text() + "\n")
			}
		}
		for _, p := range preferencesIn(text.String()) {
			ops = append(ops, TypedOp(doc, p[0], p[1], p[2]))
		}
	}
	return mm.Apply(ctx, user, ns, reason, ops)
}

func proposeMemoryOps(ctx context.Context, m model.Model, ns, reason string, doc memory.FactDoc, msgs []message.Message) ([]memory.Op, error) {
	known, _ := json.Marshal(doc.Facts)
	var conv strings.Builder
	for _, msg := range msgs {
		if msg.Role == message.RoleUser || msg.Role == message.RoleAssistant {
			fmt.Fprintf(&conv, "%s: %s\n", msg.Role, msg.Text())
		}
	}
	sys := prompt("memory_update", nil, map[string]any{"NS": ns, "Reason": reason, "Memory": string(known)})
	var out struct {
		Ops []memory.Op `json:"operations"`
	}
	if err := structured(ctx, m, memory.OpsSchema, sys, "Conversation:\n"+conv.String(), &out); err != nil {
		return nil, fmt.Errorf("analyst: proposing memory updates for %s: %w", ns, err)
	}
	return out.Ops, nil
}

// preferencesIn finds stylistic preferences in text by rule: [type, name, value] triples, one per
// preference of the pack's words.json whose value's cues the text holds (the first such value).
func preferencesIn(text string) [][3]string {
	t := strings.ToLower(text)
	var out [][3]string
	for _, p := range words.Preferences {
		for _, v := range p.Values {
			if slices.ContainsFunc(v.Cues, func(c string) bool { return strings.Contains(t, c) }) {
				out = append(out, [3]string{p.Type, p.Name, v.Value})
				break
			}
		}
	}
	return out
}
