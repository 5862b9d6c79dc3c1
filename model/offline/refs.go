package offline

import (
	"encoding/json"
	"math"
	"sort"
	"strings"

	"github.com/trellis-go/trellis/message"
)

// generalIDWords are the words after which anyone writes an identifier ("order 8812", "ref A-12").
const generalIDWords = "id ref item order number artigo encomenda numero pedido referencia articulo commande artikel bestellung"

// generalOrdinals are the ordinal words of the five languages (accents folded). Words that are
// also nouns ("quarto", "cuarto": a room) are left out.
var generalOrdinals = map[string]int{
	"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5,
	"sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "last": -1,
	"primeiro": 1, "primeira": 1, "segundo": 2, "segunda": 2, "terceiro": 3, "terceira": 3, "quinto": 5, "quinta": 5,
	"ultimo": -1, "ultima": -1,
	"primero": 1, "primer": 1, "primera": 1, "tercero": 3, "tercer": 3, "tercera": 3,
	"premier": 1, "premiere": 1, "deuxieme": 2, "troisieme": 3, "quatrieme": 4, "cinquieme": 5, "dernier": -1, "derniere": -1,
	"erste": 1, "ersten": 1, "erstes": 1, "zweite": 2, "zweiten": 2, "dritte": 3, "dritten": 3, "vierte": 4, "letzte": -1, "letzten": -1,
}

// generalThis are the words that point at the one item the conversation is about.
var generalThis = []string{"that one", "this one", "the same one", "esse", "essa", "ese", "esa", "celui ci", "celui la", "dieses"}

// reference fills the ID argument name from the items a tool listed earlier in the conversation,
// when the user's words point at one: an ordinal ("the second one"), a pack's superlative ("the
// oldest") or a word for the item in view ("that one").
func (f *filler) reference(name string) (string, bool) {
	items := f.listedItems()
	if len(items) == 0 {
		return "", false
	}
	uw := words(f.primary)
	pick := -1
	for _, k := range sortedKeys(f.v.ordinals) {
		if containsPhrase(uw, k) >= 0 {
			n := f.v.ordinals[k]
			if n < 0 {
				n = len(items)
			}
			if n >= 1 && n <= len(items) {
				pick = n - 1
			}
			break
		}
	}
	if pick < 0 {
		for _, k := range sortedKeys(f.v.superlatives) {
			if containsPhrase(uw, k) < 0 {
				continue
			}
			s := f.v.superlatives[k]
			best := math.NaN()
			for i, it := range items {
				x, ok := numberIn(it[s.Field])
				if !ok {
					continue
				}
				if math.IsNaN(best) || (s.Lowest && x < best) || (!s.Lowest && x > best) {
					best, pick = x, i
				}
			}
			break
		}
	}
	if pick < 0 {
		for _, k := range f.v.this {
			if containsPhrase(uw, k) < 0 {
				continue
			}
			if len(items) == 1 {
				pick = 0
			} else {
				pick = f.lastNamed(items, name)
			}
			break
		}
	}
	if pick < 0 {
		return "", false
	}
	return idOf(items[pick], name)
}

// listedItems returns the records of the newest tool result that holds a list of them: a JSON
// array of objects, or the first such array (by key) inside an object.
func (f *filler) listedItems() []map[string]any {
	for i := len(f.msgs) - 1; i >= 0; i-- {
		msg := f.msgs[i]
		if msg.Role != message.RoleTool {
			continue
		}
		var v any
		if json.Unmarshal([]byte(strings.TrimSpace(msg.Text())), &v) != nil {
			continue
		}
		if recs := records(v); len(recs) > 0 {
			return recs
		}
		if obj, ok := v.(map[string]any); ok {
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if recs := records(obj[k]); len(recs) > 0 {
					return recs
				}
			}
		}
	}
	return nil
}

func records(v any) []map[string]any {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]map[string]any, 0, len(arr))
	for _, e := range arr {
		o, ok := e.(map[string]any)
		if !ok {
			return nil
		}
		out = append(out, o)
	}
	return out
}

// lastNamed returns the item whose identifier the assistant's newest text names last, or -1.
func (f *filler) lastNamed(items []map[string]any, name string) int {
	for i := len(f.msgs) - 1; i >= 0; i-- {
		msg := f.msgs[i]
		if msg.Role != message.RoleAssistant || strings.TrimSpace(msg.Text()) == "" {
			continue
		}
		text, pick, at := msg.Text(), -1, -1
		for j, it := range items {
			id, ok := idOf(it, name)
			if !ok || id == "" {
				continue
			}
			if k := strings.LastIndex(text, id); k > at {
				pick, at = j, k
			}
		}
		return pick
	}
	return -1
}

// idOf returns the item's value for the argument name: the key of the same name (separators and
// case ignored), else a key ending with the same word ("property_id" and "id"), else "id".
func idOf(item map[string]any, name string) (string, bool) {
	nk := normKey(name)
	nw := words(name)
	last := ""
	if len(nw) > 0 {
		last = nw[len(nw)-1]
	}
	keys := make([]string, 0, len(item))
	for k := range item {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if normKey(k) == nk {
			return toString(item[k]), true
		}
	}
	for _, k := range keys {
		if kw := words(k); len(kw) > 0 && kw[len(kw)-1] == last {
			return toString(item[k]), true
		}
	}
	if v, ok := item["id"]; ok {
		return toString(v), true
	}
	return "", false
}

// numberIn reads a number from a JSON value: a number, or a string holding an amount.
func numberIn(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		_, nums := numbersIn(x)
		if len(nums) > 0 {
			return nums[0].v, true
		}
	}
	return 0, false
}
