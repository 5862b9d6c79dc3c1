package memory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/trellis-go/trellis/store"
)

// SetPreference records a typed preference in the fact document under ns and key: the fact
// "[TYPE] name: value" (type upper-cased). A preference of the same type and name is corrected
// (its old value kept in the fact's history), any other is added, so the document lists each
// preference once with its latest value.
func SetPreference(ctx context.Context, st store.Store, ns []string, key, typ, name, value string) (FactDoc, error) {
	typ, name, value = strings.TrimSpace(typ), strings.TrimSpace(name), strings.TrimSpace(value)
	if typ == "" || name == "" || value == "" {
		return FactDoc{}, fmt.Errorf("memory: a preference needs a type, a name and a value (got %q, %q, %q)", typ, name, value)
	}
	doc, err := LoadFacts(ctx, st, ns, key)
	if err != nil {
		return FactDoc{}, err
	}
	subject := normSubject(typ + " " + name)
	op := Op{Op: OpAdd, Subject: subject, Text: fmt.Sprintf("[%s] %s: %s", strings.ToUpper(typ), name, value)}
	for _, f := range doc.Facts {
		if f.Subject == subject {
			op.Op, op.ID = OpCorrect, f.ID
			break
		}
	}
	next, refused := Apply(doc, []Op{op}, time.Now().UTC())
	if len(refused) > 0 {
		return FactDoc{}, refused[0]
	}
	var v map[string]any
	if err := remarshal(next, &v); err != nil {
		return FactDoc{}, err
	}
	if err := st.Put(ctx, store.PutRequest{Namespace: child(ns, FactsLabel), Key: key, Value: v, Index: []string{"facts[*].text"}}); err != nil {
		return FactDoc{}, fmt.Errorf("memory: saving preference: %w", err)
	}
	return next, nil
}
