// Package lcwire holds the LangChain wire formats of the server's API, as the LangGraph API
// speaks them: state values, stream events, run outputs and history render every
// message.Message as a LangChain message dict ({"type": "human"|"ai"|"tool"|"system",
// "content", "id", "tool_calls": [{"id", "name", "args", "type"}], ...}), and input accepts
// that shape, trellis's own ({"role", "content", "tool_calls": [{"arguments"}]}), a plain
// string (a human message) and a [role, content] pair. The runtime keeps its own message type:
// the conversion happens only at the API's edge, with these functions.
//
// FromMessage and FromChunk render a message; ToMessage reads one; Value renders any state
// value, messages wherever they are in it; Input rewrites a request's state values into
// trellis's shape; MessagesIn finds the messages a value holds. Config, Checkpoint, Interrupts,
// TaskEvent and CheckpointEvent render the runtime's checkpoint references, interrupts and
// events as the LangGraph API does; ThreadRecord and Output render a thread's record and a
// run's output. Everything here is a pure function of its arguments.
package lcwire

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// lcType maps trellis roles onto LangChain's message types.
func lcType(r message.Role) string {
	switch r {
	case message.RoleUser:
		return "human"
	case message.RoleAssistant:
		return "ai"
	default: // system, tool, remove are the same words
		return string(r)
	}
}

// roleOfType maps a LangChain message type (or a role name, or a chunk class name) onto a
// trellis role.
func roleOfType(t string) (message.Role, bool) {
	switch t {
	case "human", "user", "HumanMessage", "HumanMessageChunk":
		return message.RoleUser, true
	case "ai", "assistant", "AIMessage", "AIMessageChunk":
		return message.RoleAssistant, true
	case "system", "developer", "SystemMessage", "SystemMessageChunk":
		return message.RoleSystem, true
	case "tool", "ToolMessage", "ToolMessageChunk":
		return message.RoleTool, true
	case "remove", "RemoveMessage":
		return message.RoleRemove, true
	}
	return "", false
}

// Message is a LangChain message dict. A struct rather than a map: encoding/json writes it
// an order of magnitude faster, and every values event of a conversation holds many.
type Message struct {
	Content          any             `json:"content"`
	AdditionalKwargs struct{}        `json:"additional_kwargs"` // always {}
	ResponseMetadata any             `json:"response_metadata"`
	Type             string          `json:"type"`
	Name             *string         `json:"name"`
	ID               *string         `json:"id"`
	Example          *bool           `json:"example,omitempty"`
	ToolCalls        *[]ToolCall     `json:"tool_calls,omitempty"` // pointers: an ai message's lists are sent even when empty
	InvalidToolCalls *[]BadToolCall  `json:"invalid_tool_calls,omitempty"`
	UsageMetadata    json.RawMessage `json:"usage_metadata,omitempty"`
	ToolCallChunks   *[]ToolChunk    `json:"tool_call_chunks,omitempty"`
	ToolCallID       *string         `json:"tool_call_id,omitempty"`
	Status           string          `json:"status,omitempty"`
}

type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	Type string          `json:"type"`
}

type BadToolCall struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Args  string `json:"args"`
	Error string `json:"error"`
	Type  string `json:"type"`
}

type ToolChunk struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Args  string `json:"args"`
	Index int    `json:"index"`
	Type  string `json:"type"`
}

var (
	lcFalse     = false
	lcNull      = json.RawMessage("null")
	lcEmptyArgs = json.RawMessage("{}")
	noBadCalls  = []BadToolCall{} // shared, never appended to
)

// FromMessage renders a message as a LangChain message dict. It is the one place the API's
// output shape of a message is decided; chunks and events start from it. Lists that LangChain
// always sends for a type (tool_calls of an ai message) are never nil here, so they are
// written even when empty.
func FromMessage(m message.Message) *Message {
	if m.Role == message.RoleRemove {
		return &Message{Type: "remove", ID: &m.ID, Content: "", ResponseMetadata: struct{}{}}
	}
	d := &Message{Type: lcType(m.Role), Content: lcContent(m), ResponseMetadata: struct{}{}}
	if m.ID != "" {
		d.ID = &m.ID
	}
	if m.Name != "" {
		d.Name = &m.Name
	}
	if len(m.Metadata) > 0 {
		d.ResponseMetadata = m.Metadata
	}
	switch m.Role {
	case message.RoleAssistant:
		d.Example, d.UsageMetadata = &lcFalse, lcNull
		calls, invalid := make([]ToolCall, 0, len(m.ToolCalls)), []BadToolCall(nil)
		for _, tc := range m.ToolCalls {
			args := bytes.TrimSpace(tc.Arguments)
			switch {
			case len(args) == 0:
				calls = append(calls, ToolCall{ID: tc.ID, Name: tc.Name, Args: lcEmptyArgs, Type: "tool_call"})
			case json.Valid(args):
				calls = append(calls, ToolCall{ID: tc.ID, Name: tc.Name, Args: args, Type: "tool_call"})
			default:
				invalid = append(invalid, BadToolCall{ID: tc.ID, Name: tc.Name, Args: string(tc.Arguments), Error: "the arguments are not JSON", Type: "invalid_tool_call"})
			}
		}
		d.ToolCalls, d.InvalidToolCalls = &calls, &noBadCalls
		if invalid != nil {
			d.InvalidToolCalls = &invalid
		}
	case message.RoleTool:
		id := m.ToolCallID
		d.ToolCallID = &id
		d.Status = "success"
		if m.IsError {
			d.Status = "error"
		}
	}
	return d
}

// FromChunk renders a streamed piece of a message: an assistant's as an AIMessageChunk
// (with its tool calls also as tool_call_chunks), anything else as the whole message it is.
func FromChunk(m message.Message) *Message {
	d := FromMessage(m)
	if m.Role != message.RoleAssistant {
		return d
	}
	d.Type = "AIMessageChunk"
	chunks := make([]ToolChunk, 0, len(m.ToolCalls))
	for i, tc := range m.ToolCalls {
		chunks = append(chunks, ToolChunk{ID: tc.ID, Name: tc.Name, Args: string(tc.Arguments), Index: i, Type: "tool_call_chunk"})
	}
	d.ToolCallChunks = &chunks
	return d
}

// lcContent is a message's content: its text, or a list of content blocks when it has parts.
func lcContent(m message.Message) any {
	if len(m.Parts) == 0 {
		return m.Content
	}
	blocks := make([]map[string]any, 0, len(m.Parts)+1)
	if m.Content != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": m.Content})
	}
	for _, p := range m.Parts {
		switch {
		case p.Type == message.PartText:
			blocks = append(blocks, map[string]any{"type": "text", "text": p.Text})
		case p.Type == message.PartImage && p.MIMEType != "":
			blocks = append(blocks, map[string]any{"type": "image", "source_type": "base64", "data": p.ImageURL, "mime_type": p.MIMEType})
		case p.Type == message.PartImage:
			blocks = append(blocks, map[string]any{"type": "image_url", "image_url": map[string]any{"url": p.ImageURL}})
		default:
			blocks = append(blocks, map[string]any{"type": string(p.Type), "text": p.Text})
		}
	}
	return blocks
}

// ToMessage reads one message of a request in any shape the API accepts: a LangChain dict
// (with "type"), trellis's (with "role"), a string (a human message) or a [type, content] pair.
func ToMessage(v any) (message.Message, error) {
	switch x := v.(type) {
	case string:
		return message.User(x), nil
	case []any:
		if len(x) != 2 {
			return message.Message{}, fmt.Errorf("a message given as a list must be a [type, content] pair, not %d items", len(x))
		}
		t, ok := x[0].(string)
		if !ok {
			return message.Message{}, fmt.Errorf("a [type, content] pair must start with a string")
		}
		role, ok := roleOfType(t)
		if !ok || role == message.RoleRemove {
			return message.Message{}, fmt.Errorf("unknown message type %q (use human, user, ai, assistant, system or tool)", t)
		}
		m := message.Message{Role: role}
		if err := contentFromAPI(x[1], &m); err != nil {
			return message.Message{}, err
		}
		return m, nil
	case map[string]any:
		if _, hasRole := x["role"]; hasRole {
			if _, hasType := x["type"]; !hasType {
				return trellisMessage(x)
			}
		}
		if _, hasType := x["type"]; !hasType {
			return message.Message{}, fmt.Errorf(`a message needs "type" (human, ai, system, tool) or "role" (user, assistant, system, tool)`)
		}
		return langChainMessage(x)
	case nil:
		return message.Message{}, fmt.Errorf("a message is null")
	}
	return message.Message{}, fmt.Errorf("a message must be an object, a string or a [type, content] pair, not %s", valueKind(v))
}

func trellisMessage(x map[string]any) (message.Message, error) {
	raw, err := json.Marshal(x)
	if err != nil {
		return message.Message{}, err
	}
	var m message.Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return message.Message{}, err
	}
	return m, nil
}

func langChainMessage(x map[string]any) (message.Message, error) {
	t, _ := x["type"].(string)
	if t == "chat" { // LangChain's ChatMessage carries its role
		t, _ = x["role"].(string)
	}
	role, ok := roleOfType(t)
	if !ok {
		return message.Message{}, fmt.Errorf("unknown message type %q (use human, ai, system, tool or remove)", t)
	}
	m := message.Message{Role: role}
	var err error
	if m.ID, err = optString(x, "id"); err != nil {
		return m, err
	}
	if role == message.RoleRemove {
		if m.ID == "" {
			return m, fmt.Errorf(`a remove message needs an "id"`)
		}
		return m, nil
	}
	if m.Name, err = optString(x, "name"); err != nil {
		return m, err
	}
	if err := contentFromAPI(x["content"], &m); err != nil {
		return m, err
	}
	if md, ok := x["response_metadata"].(map[string]any); ok && len(md) > 0 {
		m.Metadata = md
	}
	switch role {
	case message.RoleTool:
		if m.ToolCallID, err = optString(x, "tool_call_id"); err != nil {
			return m, err
		}
		m.IsError = x["status"] == "error"
	case message.RoleAssistant:
		calls, _ := x["tool_calls"].([]any)
		if x["tool_calls"] != nil && calls == nil {
			return m, fmt.Errorf(`"tool_calls" must be a list`)
		}
		for i, c := range calls {
			tc, err := toolCallFromAPI(c)
			if err != nil {
				return m, fmt.Errorf("tool_calls[%d]: %w", i, err)
			}
			m.ToolCalls = append(m.ToolCalls, tc)
		}
	}
	return m, nil
}

func toolCallFromAPI(v any) (message.ToolCall, error) {
	x, ok := v.(map[string]any)
	if !ok {
		return message.ToolCall{}, fmt.Errorf("a tool call must be an object, not %s", valueKind(v))
	}
	var tc message.ToolCall
	var err error
	if tc.ID, err = optString(x, "id"); err != nil {
		return tc, err
	}
	if tc.Name, err = optString(x, "name"); err != nil {
		return tc, err
	}
	if tc.Name == "" {
		return tc, fmt.Errorf(`a tool call needs a "name"`)
	}
	args, ok := x["args"]
	if !ok {
		args = x["arguments"]
	}
	switch a := args.(type) {
	case nil:
	case string: // arguments as a JSON text, as OpenAI sends them
		if strings.TrimSpace(a) != "" {
			if !json.Valid([]byte(a)) {
				return tc, fmt.Errorf("the arguments %q are not JSON", a)
			}
			tc.Arguments = json.RawMessage(a)
		}
	default:
		raw, err := json.Marshal(a)
		if err != nil {
			return tc, err
		}
		tc.Arguments = raw
	}
	return tc, nil
}

// contentFromAPI reads a message's content: a string, or a list of content blocks (text,
// image_url, and LangChain's standard image blocks).
func contentFromAPI(v any, m *message.Message) error {
	switch c := v.(type) {
	case nil:
		return nil
	case string:
		m.Content = c
		return nil
	case []any:
		for i, b := range c {
			p, err := partFromAPI(b)
			if err != nil {
				return fmt.Errorf("content[%d]: %w", i, err)
			}
			m.Parts = append(m.Parts, p)
		}
		return nil
	}
	return fmt.Errorf(`"content" must be a string or a list of content blocks, not %s`, valueKind(v))
}

func partFromAPI(v any) (message.Part, error) {
	if s, ok := v.(string); ok {
		return message.Part{Type: message.PartText, Text: s}, nil
	}
	b, ok := v.(map[string]any)
	if !ok {
		return message.Part{}, fmt.Errorf("a content block must be an object or a string, not %s", valueKind(v))
	}
	t, _ := b["type"].(string)
	switch t {
	case "text":
		s, _ := b["text"].(string)
		return message.Part{Type: message.PartText, Text: s}, nil
	case "image_url":
		switch u := b["image_url"].(type) {
		case string:
			return message.Part{Type: message.PartImage, ImageURL: u}, nil
		case map[string]any:
			if s, ok := u["url"].(string); ok && s != "" {
				return message.Part{Type: message.PartImage, ImageURL: s}, nil
			}
		}
		return message.Part{}, fmt.Errorf(`an image_url block needs "image_url" (a URL, or {"url": ...})`)
	case "image":
		if s, _ := b["url"].(string); s != "" {
			return message.Part{Type: message.PartImage, ImageURL: s}, nil
		}
		data, _ := b["data"].(string)
		mime, _ := b["mime_type"].(string)
		if data != "" && mime != "" {
			return message.Part{Type: message.PartImage, ImageURL: data, MIMEType: mime}, nil
		}
		return message.Part{}, fmt.Errorf(`an image block needs "url", or "data" with "mime_type"`)
	}
	return message.Part{}, fmt.Errorf("content block type %q is not supported (use text, image_url or image)", t)
}

func optString(x map[string]any, key string) (string, error) {
	switch s := x[key].(type) {
	case nil:
		return "", nil
	case string:
		return s, nil
	}
	return "", fmt.Errorf("%q must be a string, not %s", key, valueKind(x[key]))
}

func valueKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// ---- where messages are in a Go type ----

// lcShape describes where a type holds messages, so values are walked only where one may be.
// A nil shape means the type holds none (it is passed through as it is).
type lcShape struct {
	kind   lcKind
	elem   *lcShape  // pointer, slice, array, map
	fields []lcField // struct: every field encoding/json writes, in order
}

type lcKind uint8

const (
	lcMsg     lcKind = iota + 1
	lcDynamic        // an interface: look at the value inside
	lcPointer
	lcList
	lcMap
	lcStruct
)

type lcField struct {
	name      string
	index     []int
	omitEmpty bool
	omitZero  bool
	quoted    bool
	shape     *lcShape
}

var (
	messageType   = reflect.TypeFor[message.Message]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	lcShapes      sync.Map // reflect.Type -> *lcShape (nil stored as lcNone)
	lcShapeMu     sync.Mutex
	lcNone        = &lcShape{}
)

// shapeOf returns where t holds messages, or nil when it holds none.
func shapeOf(t reflect.Type) *lcShape {
	if v, ok := lcShapes.Load(t); ok {
		if v == lcNone {
			return nil
		}
		return v.(*lcShape)
	}
	lcShapeMu.Lock()
	defer lcShapeMu.Unlock()
	sh := buildShape(t, map[reflect.Type]*lcShape{})
	return sh
}

func buildShape(t reflect.Type, building map[reflect.Type]*lcShape) (sh *lcShape) {
	if v, ok := lcShapes.Load(t); ok {
		if v == lcNone {
			return nil
		}
		return v.(*lcShape)
	}
	if b, ok := building[t]; ok {
		return b // a recursive type: walked through its placeholder
	}
	defer func() {
		if sh == nil {
			lcShapes.Store(t, lcNone)
		} else {
			lcShapes.Store(t, sh)
		}
	}()
	if t == messageType {
		return &lcShape{kind: lcMsg}
	}
	if t.Kind() != reflect.Interface && (t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)) {
		return nil // encodes itself
	}
	switch t.Kind() {
	case reflect.Interface:
		return &lcShape{kind: lcDynamic}
	case reflect.Pointer:
		if e := buildShape(t.Elem(), building); e != nil {
			return &lcShape{kind: lcPointer, elem: e}
		}
	case reflect.Slice, reflect.Array:
		if e := buildShape(t.Elem(), building); e != nil {
			return &lcShape{kind: lcList, elem: e}
		}
	case reflect.Map:
		k := t.Key().Kind()
		if k != reflect.String && (k < reflect.Int || k > reflect.Uintptr) {
			return nil
		}
		if e := buildShape(t.Elem(), building); e != nil {
			return &lcShape{kind: lcMap, elem: e}
		}
	case reflect.Struct:
		s := &lcShape{kind: lcStruct}
		building[t] = s
		defer delete(building, t)
		any := false
		s.fields = structFields(t, building)
		for _, f := range s.fields {
			if f.shape != nil {
				any = true
			}
		}
		if any {
			return s
		}
	}
	return nil
}

// structFields lists the fields encoding/json writes for t, with the names it gives them.
// Untagged embedded structs lend their fields; a shallower field wins over a deeper one.
func structFields(t reflect.Type, building map[reflect.Type]*lcShape) []lcField {
	var out []lcField
	seen := map[string]int{} // name -> depth
	var walk func(t reflect.Type, index []int, depth int)
	walk = func(t reflect.Type, index []int, depth int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), index...), i)
			ft := f.Type
			if f.Anonymous && name == "" {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, idx, depth+1)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if d, ok := seen[name]; ok && d <= depth {
				continue
			}
			seen[name] = depth
			lf := lcField{name: name, index: idx, shape: buildShape(f.Type, building)}
			for o := range strings.SplitSeq(opts, ",") {
				switch o {
				case "omitempty":
					lf.omitEmpty = true
				case "omitzero":
					lf.omitZero = true
				case "string":
					switch f.Type.Kind() {
					case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
						reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr, reflect.Float32, reflect.Float64:
						lf.quoted = true
					}
				}
			}
			out = append(out, lf)
		}
	}
	walk(t, nil, 0)
	// A deeper field met first loses to a shallower one met later.
	kept := out[:0]
	for _, f := range out {
		if seen[f.name] == len(f.index)-1 {
			kept = append(kept, f)
		}
	}
	return kept
}

// Value renders v for the API: what encoding/json would write, with every message.Message
// in LangChain's shape. Values holding no messages are returned as they are.
func Value(v any) any {
	if v == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	sh := shapeOf(rv.Type())
	if sh == nil {
		return v
	}
	return walkOut(rv, sh)
}

func walkOut(v reflect.Value, sh *lcShape) any {
	if sh == nil {
		if !v.IsValid() {
			return nil
		}
		return v.Interface()
	}
	switch sh.kind {
	case lcMsg:
		return FromMessage(v.Interface().(message.Message))
	case lcDynamic:
		if v.IsNil() {
			return nil
		}
		return Value(v.Elem().Interface())
	case lcPointer:
		if v.IsNil() {
			return nil
		}
		return walkOut(v.Elem(), sh.elem)
	case lcList:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = walkOut(v.Index(i), sh.elem)
		}
		return out
	case lcMap:
		if v.IsNil() {
			return nil
		}
		out := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			k := it.Key()
			var ks string
			switch {
			case k.Kind() == reflect.String:
				ks = k.String()
			case k.CanInt():
				ks = strconv.FormatInt(k.Int(), 10)
			default:
				ks = strconv.FormatUint(k.Uint(), 10)
			}
			out[ks] = walkOut(it.Value(), sh.elem)
		}
		return out
	case lcStruct:
		out := make(map[string]any, len(sh.fields))
		for _, f := range sh.fields {
			fv, ok := fieldByIndex(v, f.index)
			if !ok {
				continue
			}
			if f.omitZero && fv.IsZero() || f.omitEmpty && isEmpty(fv) {
				continue
			}
			if f.quoted {
				raw, err := json.Marshal(fv.Interface())
				if err == nil { // the value's JSON, as a JSON string
					raw, _ = json.Marshal(string(raw))
					out[f.name] = json.RawMessage(raw)
					continue
				}
			}
			out[f.name] = walkOut(fv, f.shape)
		}
		return out
	}
	return v.Interface()
}

// fieldByIndex follows index through embedded pointers; ok is false past a nil one.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// Input rewrites a request's state values (a JSON object of state keys, for the state
// type t) so that every message in them is in trellis's shape, whatever shape it came in; a
// key whose field is a list of messages also takes a single message. Keys holding no messages
// are left as they are; the graph reports anything else wrong with the input.
func Input(t reflect.Type, raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' || t == nil {
		return raw, nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	sh := shapeOf(t)
	if sh == nil || sh.kind != lcStruct {
		return raw, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(trimmed, &obj) != nil {
		return raw, nil // malformed: the graph's decoder names the problem
	}
	changed := false
	for _, f := range sh.fields {
		val, ok := obj[f.name]
		if !ok || f.shape == nil {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(val))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return raw, nil
		}
		out, err := walkIn(v, f.shape, f.name)
		if err != nil {
			return nil, &InputError{Hint: `send messages as {"type": "human", "content": "..."} or {"role": "user", "content": "..."}`, Err: err}
		}
		enc, err := json.Marshal(out)
		if err != nil {
			return nil, &InputError{Err: fmt.Errorf("field %q: %v", f.name, err)}
		}
		obj[f.name] = enc
		changed = true
	}
	if !changed {
		return raw, nil
	}
	return json.Marshal(obj)
}

// InputError is what Input returns for state values holding a message it cannot read: Err
// names the field and the problem, Hint says how to send a message. The server answers it
// with a 400.
type InputError struct {
	Hint string
	Err  error
}

func (e *InputError) Error() string { return e.Err.Error() }

func (e *InputError) Unwrap() error { return e.Err }

// walkIn converts the messages in v (decoded JSON) where shape sh says they are.
func walkIn(v any, sh *lcShape, path string) (any, error) {
	if sh == nil || v == nil {
		return v, nil
	}
	switch sh.kind {
	case lcMsg:
		m, err := ToMessage(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return m, nil
	case lcPointer:
		return walkIn(v, sh.elem, path)
	case lcList:
		list, ok := v.([]any)
		if !ok {
			if sh.elem.kind != lcMsg {
				return v, nil
			}
			list = []any{v} // one message where a list is expected, as add_messages allows
		}
		out := make([]any, len(list))
		for i, e := range list {
			var err error
			if out[i], err = walkIn(e, sh.elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	case lcMap:
		m, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		for k, e := range m {
			var err error
			if m[k], err = walkIn(e, sh.elem, path+"."+k); err != nil {
				return nil, err
			}
		}
		return m, nil
	case lcStruct:
		m, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		for _, f := range sh.fields {
			if e, ok := m[f.name]; ok && f.shape != nil {
				var err error
				if m[f.name], err = walkIn(e, f.shape, path+"."+f.name); err != nil {
					return nil, err
				}
			}
		}
		return m, nil
	}
	return v, nil
}

// MessagesIn returns the messages v holds, wherever they are in it.
func MessagesIn(v any) []message.Message {
	if v == nil {
		return nil
	}
	var out []message.Message
	visitMessages(reflect.ValueOf(v), shapeOf(reflect.TypeOf(v)), func(m message.Message) { out = append(out, m) })
	return out
}

func visitMessages(v reflect.Value, sh *lcShape, fn func(message.Message)) {
	if sh == nil || !v.IsValid() {
		return
	}
	switch sh.kind {
	case lcMsg:
		fn(v.Interface().(message.Message))
	case lcDynamic:
		if !v.IsNil() {
			e := v.Elem()
			visitMessages(e, shapeOf(e.Type()), fn)
		}
	case lcPointer:
		if !v.IsNil() {
			visitMessages(v.Elem(), sh.elem, fn)
		}
	case lcList:
		for i := range v.Len() {
			visitMessages(v.Index(i), sh.elem, fn)
		}
	case lcMap:
		it := v.MapRange()
		for it.Next() {
			visitMessages(it.Value(), sh.elem, fn)
		}
	case lcStruct:
		for _, f := range sh.fields {
			if fv, ok := fieldByIndex(v, f.index); ok {
				visitMessages(fv, f.shape, fn)
			}
		}
	}
}

// Config renders a checkpoint reference as LangGraph's RunnableConfig.
func Config(ref *checkpoint.Ref) any {
	if ref == nil {
		return nil
	}
	return map[string]any{"configurable": map[string]any{"thread_id": ref.ThreadID, "checkpoint_ns": ref.NS, "checkpoint_id": ref.CheckpointID}}
}

func Checkpoint(ref *checkpoint.Ref) any {
	if ref == nil {
		return nil
	}
	return map[string]any{"thread_id": ref.ThreadID, "checkpoint_ns": ref.NS, "checkpoint_id": ref.CheckpointID, "checkpoint_map": nil}
}

// Interrupts renders interrupts the way the LangGraph API does: value and id first.
func Interrupts(ins []graph.Interruption) []map[string]any {
	out := make([]map[string]any, 0, len(ins))
	for _, in := range ins {
		m := map[string]any{"value": Value(in.Value), "id": in.ID}
		if in.When != "" {
			m["when"] = in.When
		}
		if in.NS != "" {
			m["ns"] = in.NS
		}
		out = append(out, m)
	}
	return out
}

// TaskEvent renders a tasks-mode event as LangGraph does: a start as {id, name, input,
// triggers, interrupts}, a result as {id, name, error, result, interrupts}, result being the
// task's writes as [channel, value] pairs (LangGraph's list of write tuples; here in channel
// order, one per key of the task's update).
func TaskEvent(te graph.TaskEvent) map[string]any {
	if !te.Finished {
		triggers := te.Triggers
		if triggers == nil {
			triggers = []string{}
		}
		return map[string]any{"id": te.ID, "name": te.Name, "input": Value(te.Input), "triggers": triggers, "interrupts": Interrupts(te.Interrupts)}
	}
	var errv any
	if te.Error != "" {
		errv = te.Error
	}
	return map[string]any{"id": te.ID, "name": te.Name, "error": errv, "result": writePairs(Value(te.Result)), "interrupts": Interrupts(te.Interrupts)}
}

// writePairs turns a task's update into LangGraph's list of [channel, value] writes, one per
// key of the update as it encodes (a struct's in field order), null keys left out as unwritten.
func writePairs(v any) []any {
	pairs := []any{}
	if v == nil {
		return pairs
	}
	raw, err := json.Marshal(v)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		if err == nil && string(raw) != "null" {
			pairs = append(pairs, []any{"__return__", json.RawMessage(raw)})
		}
		return pairs
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	_, _ = dec.Token() // {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		var val json.RawMessage
		if dec.Decode(&val) != nil {
			break
		}
		if k, ok := tok.(string); ok && string(val) != "null" {
			pairs = append(pairs, []any{k, val})
		}
	}
	return pairs
}

// CheckpointEvent renders a checkpoint as the checkpoints mode (and, with debug, the debug
// mode's checkpoint payload) of the LangGraph API does: config and parent_config as
// RunnableConfigs, checkpoint and parent_checkpoint, values, metadata, next, and the tasks the
// checkpoint leaves to run, each {id, name, error, interrupts, state}. (debug is kept for
// callers; both modes' payloads are the same.)
func CheckpointEvent(data any, debug bool) any {
	raw, err := json.Marshal(data)
	if err != nil {
		return data
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return data
	}
	for _, k := range []string{"config", "parent_config"} {
		if ref, ok := m[k].(map[string]any); ok {
			m[k] = map[string]any{"configurable": ref}
		}
	}
	if _, ok := m["parent_config"]; !ok {
		m["parent_config"] = nil
	}
	if tasks, ok := m["tasks"].([]any); ok {
		for _, t := range tasks {
			if t, ok := t.(map[string]any); ok {
				if _, ok := t["error"]; !ok {
					t["error"] = nil
				}
				if _, ok := t["state"]; !ok {
					t["state"] = nil // a subgraph's state config in LangGraph; trellis sends none
				}
				if ins, ok := t["interrupts"].([]any); ok {
					for _, in := range ins {
						if in, ok := in.(map[string]any); ok {
							delete(in, "node") // LangGraph's interrupts hold value and id
						}
					}
				}
			}
		}
	} else {
		m["tasks"] = []any{}
	}
	// LangGraph's server adds the checkpoints themselves to both modes' payloads.
	m["checkpoint"] = checkpointOfConfig(m["config"])
	m["parent_checkpoint"] = checkpointOfConfig(m["parent_config"])
	return m
}

// checkpointOfConfig is the checkpoint a RunnableConfig of CheckpointEvent names, as
// Checkpoint renders it; nil for none.
func checkpointOfConfig(cfg any) any {
	c, ok := cfg.(map[string]any)
	if !ok {
		return nil
	}
	ref, ok := c["configurable"].(map[string]any)
	if !ok {
		return nil
	}
	out := maps.Clone(ref)
	out["checkpoint_map"] = nil
	return out
}

// ThreadRecord renders a thread's newest values and the interrupts it waits on, by task ID, for
// its record (the thread's "values" and "interrupts").
func ThreadRecord(snap *graph.StateSnapshot[any]) (values, interrupts json.RawMessage) {
	values, _ = json.Marshal(snap.Values)
	ints := map[string]any{}
	for _, t := range snap.Tasks {
		if len(t.Interrupts) > 0 {
			ints[t.ID] = Interrupts(t.Interrupts)
		}
	}
	interrupts, _ = json.Marshal(ints)
	return values, interrupts
}

// Output renders what a run answers its waiters with (POST /runs/wait, join): the thread's
// newest values, with the interrupts it waits on under "__interrupt__".
func Output(snap *graph.StateSnapshot[any]) any {
	raw, err := json.Marshal(snap.Values)
	if err != nil {
		return snap.Values
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return snap.Values
	}
	if ins := snap.Interrupts(); len(ins) > 0 {
		m["__interrupt__"] = Interrupts(ins)
	}
	return m
}
