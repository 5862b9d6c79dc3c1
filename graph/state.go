package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/trellis-go/trellis/internal/sharedjson"
	"github.com/trellis-go/trellis/message"
)

// Reducer names accepted in a state field's `reduce` tag.
//
//	type State struct {
//		Messages []message.Message `json:"messages" reduce:"messages"`
//		Notes    []string          `json:"notes" reduce:"append"`
//		Total    int               `json:"total" reduce:"sum"`
//		Scores   map[string]int    `json:"scores" reduce:"merge"`
//		Answer   string            `json:"answer"` // last value
//	}
//
// A field without a tag keeps the last value written; two nodes writing it in one superstep is an
// error. Custom binary operators are set with [SetReducer].
const (
	ReduceLast     = ""         // last value wins; one writer per superstep
	ReduceAppend   = "append"   // slices: the update's elements are appended
	ReduceMessages = "messages" // []message.Message: merged by ID (see message.Add)
	ReduceSum      = "sum"      // numbers: added
	ReduceMerge    = "merge"    // maps: the update's keys are set
	reduceCustom   = "custom"
)

var messageSliceType = reflect.TypeFor[[]message.Message]()

// Kinds of channel a state field may be, set with its `channel` tag (LangGraph's channel
// classes):
//
//	type State struct {
//		Query   string `json:"query" channel:"ephemeral"` // cleared after the superstep that follows its write
//		Client  *Conn  `json:"client" channel:"untracked"` // kept during the run, never checkpointed
//	}
//
// A field without the tag is an ordinary channel (its reducer decides how writes combine).
const (
	// ChannelEphemeral is LangGraph's EphemeralValue: a value written in one superstep is seen by
	// the nodes of the next, and cleared after that superstep unless it is written again. It is
	// checkpointed while it holds a value. It takes one write per superstep (no reducer).
	ChannelEphemeral = "ephemeral"
	// ChannelUntracked is LangGraph's UntrackedValue: written and read during a run like a
	// last-value key, but never stored: not in checkpoints, not in pending writes, not in the
	// payloads of sends saved for later. A run that resumes a thread starts with its zero value.
	// It takes one write per superstep (no reducer).
	ChannelUntracked = "untracked"
)

// RemainingSteps is a managed value (LangGraph's RemainingSteps): a state field of this type is
// filled by the runtime, in the state each node receives, with the supersteps left before the
// recursion limit stops the run. It is not a channel: writes to it are ignored, it is never
// checkpointed, and the run's output and streamed values leave it zero. A node that must finish
// (say, answer rather than call another tool) checks it.
type RemainingSteps int

// IsLastStep is a managed value (LangGraph's IsLastStep): a state field of this type is true in
// the state a node receives when [RemainingSteps] is 1 there, as LangGraph computes it (one
// superstep with RemainingSteps 0 may still run after it). Like RemainingSteps it is never
// written nor checkpointed.
type IsLastStep bool

var (
	remainingStepsType = reflect.TypeFor[RemainingSteps]()
	isLastStepType     = reflect.TypeFor[IsLastStep]()
)

// channel kinds
const (
	kindState     = iota
	kindEphemeral // ChannelEphemeral
	kindUntracked // ChannelUntracked
	kindManaged   // RemainingSteps or IsLastStep
)

// channel is one state key: a field of the state struct with its reducer.
type channel struct {
	name    string // the JSON name, used in checkpoints, errors and the wire
	index   int    // the field's index in the struct
	pos     int    // the channel's position in schema.channels
	typ     reflect.Type
	reducer string
	custom  reflect.Value // func(T, T) T for reduceCustom
	clip    bool          // a slice: snapshots clip its capacity so readers' appends copy
	kind    int           // kindState, kindEphemeral, kindUntracked or kindManaged
}

// stored reports whether the channel's value goes into checkpoints and pending writes.
func (c *channel) stored() bool { return c.kind == kindState || c.kind == kindEphemeral }

// schema is the reflected shape of a state struct.
type schema struct {
	typ      reflect.Type
	channels []*channel
	byName   map[string]*channel
	// Channels of the kinds that need work of the loop, in field order.
	ephemeral, untracked, managed []*channel
}

// StateKey is one key of a state type: its name (the field's JSON name) and the field holding it.
type StateKey struct {
	Name  string
	Field reflect.StructField
}

// StateKeys lists the keys of the state struct type t in field order, named as checkpoints,
// updates and the wire name them. It fails, as compiling a graph over t would, when t is not a
// usable state type. Code that writes state generically (tool nodes applying an update, say)
// uses it to check key names before writing.
func StateKeys(t reflect.Type) ([]StateKey, error) {
	s, err := newSchema(t)
	if err != nil {
		return nil, err
	}
	keys := make([]StateKey, len(s.channels))
	for i, c := range s.channels {
		keys[i] = StateKey{Name: c.name, Field: t.Field(c.index)}
	}
	return keys, nil
}

// keyName is the state key a struct field holds, if any: its JSON name, or its Go name when the
// json tag gives none; unexported fields and fields tagged json:"-" hold none.
func keyName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	name := f.Name
	if tag, ok := f.Tag.Lookup("json"); ok {
		n, _, _ := strings.Cut(tag, ",")
		if n == "-" {
			return "", false
		}
		if n != "" {
			name = n
		}
	}
	return name, true
}

func newSchema(t reflect.Type) (*schema, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("graph: the state type must be a struct, got %s", t)
	}
	s := &schema{typ: t, byName: map[string]*channel{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, ok := keyName(f)
		if !ok {
			continue
		}
		c := &channel{name: name, index: i, pos: len(s.channels), typ: f.Type, reducer: f.Tag.Get("reduce"), clip: f.Type.Kind() == reflect.Slice}
		if err := c.check(t); err != nil {
			return nil, err
		}
		if err := c.setKind(t, f); err != nil {
			return nil, err
		}
		switch c.kind {
		case kindEphemeral:
			s.ephemeral = append(s.ephemeral, c)
		case kindUntracked:
			s.untracked = append(s.untracked, c)
		case kindManaged:
			s.managed = append(s.managed, c)
		}
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("graph: state %s: two fields are named %q in JSON", t, name)
		}
		s.byName[name] = c
		s.channels = append(s.channels, c)
	}
	return s, nil
}

// setKind reads the field's `channel` tag and its type (the managed values).
func (c *channel) setKind(owner reflect.Type, f reflect.StructField) error {
	tag, tagged := f.Tag.Lookup("channel")
	if c.typ == remainingStepsType || c.typ == isLastStepType {
		if tagged || c.reducer != ReduceLast {
			return fmt.Errorf("graph: state %s field %q: %s is a managed value the runtime fills; it takes no `channel` or `reduce` tag", owner, c.name, c.typ)
		}
		c.kind = kindManaged
		return nil
	}
	if !tagged {
		return nil
	}
	switch tag {
	case ChannelEphemeral:
		c.kind = kindEphemeral
	case ChannelUntracked:
		c.kind = kindUntracked
	default:
		return fmt.Errorf("graph: state %s field %q: unknown channel %q (use %q or %q, or leave the tag out)", owner, c.name, tag, ChannelEphemeral, ChannelUntracked)
	}
	if c.reducer != ReduceLast {
		return fmt.Errorf("graph: state %s field %q: a %s channel takes one value per superstep and no reducer, but it has reduce:%q (drop one of the tags)", owner, c.name, tag, c.reducer)
	}
	return nil
}

func (c *channel) check(owner reflect.Type) error {
	bad := func(want string) error {
		return fmt.Errorf("graph: state %s field %q: reducer %q needs %s, but the field is %s", owner, c.name, c.reducer, want, c.typ)
	}
	switch c.reducer {
	case ReduceLast:
	case ReduceAppend:
		if c.typ.Kind() != reflect.Slice {
			return bad("a slice")
		}
	case ReduceMessages:
		if c.typ != messageSliceType {
			return bad("[]message.Message")
		}
	case ReduceSum:
		switch c.typ.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
		default:
			return bad("a number")
		}
	case ReduceMerge:
		if c.typ.Kind() != reflect.Map {
			return bad("a map")
		}
	default:
		return fmt.Errorf("graph: state %s field %q: unknown reducer %q (use append, messages, sum, merge, or SetReducer for your own)", owner, c.name, c.reducer)
	}
	return nil
}

// reduce applies one update to the current value. cur may share its backing array with the
// state (append and messages may extend it in place); snapshots handed to nodes are clipped,
// so nobody can observe that.
func (c *channel) reduce(cur, upd reflect.Value) (reflect.Value, error) {
	switch c.reducer {
	case ReduceAppend:
		if cur.Len() == 0 {
			// Clip: later appends must copy rather than write into the writer's array.
			return upd.Slice3(0, upd.Len(), upd.Len()), nil
		}
		return reflect.AppendSlice(cur, upd), nil
	case ReduceMessages:
		out, err := message.Add(mustAssert[[]message.Message](cur), mustAssert[[]message.Message](upd))
		if err != nil {
			return cur, fmt.Errorf("graph: state key %q: %w", c.name, err)
		}
		return reflect.ValueOf(out), nil
	case ReduceSum:
		v := reflect.New(c.typ).Elem()
		switch {
		case cur.CanInt():
			v.SetInt(cur.Int() + upd.Int())
		case cur.CanUint():
			v.SetUint(cur.Uint() + upd.Uint())
		default:
			v.SetFloat(cur.Float() + upd.Float())
		}
		return v, nil
	case ReduceMerge:
		out := reflect.MakeMapWithSize(c.typ, cur.Len()+upd.Len())
		iter := cur.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), iter.Value())
		}
		iter = upd.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), iter.Value())
		}
		return out, nil
	case reduceCustom:
		return c.custom.Call([]reflect.Value{cur, upd})[0], nil
	}
	return upd, nil
}

// write is one update of one channel by one task.
type write struct {
	ch        *channel
	val       reflect.Value
	overwrite bool // bypasses the reducer
}

// writesOf returns the writes a partial state stands for: every non-zero field (managed values
// are the runtime's to fill, and writes to them are dropped, as LangGraph drops them).
func (s *schema) writesOf(partial reflect.Value, out []write) []write {
	for _, c := range s.channels {
		f := partial.Field(c.index)
		if c.kind != kindManaged && !f.IsZero() {
			out = append(out, write{ch: c, val: f})
		}
	}
	return out
}

// snapshot copies the state struct, clipping slices so that a reader's append never writes into
// the state's spare capacity.
func (s *schema) snapshot(state reflect.Value) reflect.Value {
	out := reflect.New(s.typ).Elem()
	out.Set(state)
	for _, c := range s.channels {
		if c.clip {
			f := out.Field(c.index)
			if f.Cap() > f.Len() {
				f.Set(f.Slice3(0, f.Len(), f.Len()))
			}
		}
	}
	return out
}

// withoutUntracked returns v (a state value) with its untracked fields zeroed, for storing: a
// copy when it has some, v itself otherwise.
func (s *schema) withoutUntracked(v reflect.Value) reflect.Value {
	if len(s.untracked) == 0 || !v.IsValid() {
		return v
	}
	if v.Kind() == reflect.Pointer && v.Type().Elem() == s.typ && !v.IsNil() {
		v = v.Elem()
	}
	if v.Type() != s.typ {
		return v
	}
	out := reflect.New(s.typ).Elem()
	out.Set(v)
	for _, c := range s.untracked {
		f := out.Field(c.index)
		f.Set(reflect.Zero(c.typ))
	}
	return out
}

// decodeValue decodes a channel's full value.
func (c *channel) decodeValue(data []byte) (reflect.Value, error) {
	data, err := sharedjson.Expand(data)
	if err != nil {
		return reflect.Value{}, fmt.Errorf("graph: state key %q: %w", c.name, err)
	}
	v := reflect.New(c.typ)
	if err := json.Unmarshal(data, v.Interface()); err != nil {
		return reflect.Value{}, fmt.Errorf("graph: state key %q: stored value does not decode as %s: %w", c.name, c.typ, err)
	}
	return v.Elem(), nil
}

// decodeDelta decodes the updates a delta blob holds.
func (c *channel) decodeDelta(data []byte) ([]reflect.Value, error) {
	data, err := sharedjson.Expand(data)
	if err != nil {
		return nil, fmt.Errorf("graph: state key %q: %w", c.name, err)
	}
	v := reflect.New(reflect.SliceOf(c.typ))
	if err := json.Unmarshal(data, v.Interface()); err != nil {
		return nil, fmt.Errorf("graph: state key %q: stored updates do not decode as []%s: %w", c.name, c.typ, err)
	}
	out := make([]reflect.Value, v.Elem().Len())
	for i := range out {
		out[i] = v.Elem().Index(i)
	}
	return out, nil
}

// DecodeState decodes JSON into a state value, rejecting keys the state does not have, so that
// input from outside (an HTTP request, a CLI flag) fails with a message that names the problem.
func DecodeState[S any](data []byte) (S, error) {
	var s S
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("graph: input does not fit the state type %T: %w", s, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		var zero S
		return zero, fmt.Errorf("graph: input has more data after the state object (send exactly one JSON object)")
	}
	return s, nil
}

// SetReducer makes fn the reducer of the state key named key: the value after an update is
// fn(current, update). A key that does not exist or has another type makes Compile fail.
func SetReducer[S, T any](g *Graph[S], key string, fn func(current, update T) T) {
	c, ok := g.schema.byName[key]
	if !ok {
		g.errs = append(g.errs, fmt.Errorf("graph: SetReducer: state %s has no key %q", g.schema.typ, key))
		return
	}
	if c.typ != reflect.TypeFor[T]() {
		g.errs = append(g.errs, fmt.Errorf("graph: SetReducer: state key %q is %s, the reducer takes %s", key, c.typ, reflect.TypeFor[T]()))
		return
	}
	c.reducer = reduceCustom
	c.custom = reflect.ValueOf(fn)
}

// mustAssert returns v's value as a T, as v.Interface().(T) would, without boxing it in an
// interface first (a copy of the state or of a slice header, on every node call and every
// reduce).
func mustAssert[T any](v reflect.Value) T {
	if t, ok := reflect.TypeAssert[T](v); ok {
		return t
	}
	return v.Interface().(T) // panics as the plain assertion does, naming both types
}
