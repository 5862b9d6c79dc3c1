package graph

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/trellis-go/trellis/checkpoint"
)

// subgraphRunner runs a compiled child graph as a node of a parent.
type subgraphRunner interface {
	runSub(ctx context.Context, parent *run, t *task) (result, error)
	// child returns the compiled child graph, for drawing and listing.
	child() Runnable
	// subState reads the child's newest snapshot in ref's namespace, with its subgraphs'
	// (saver is the parent's, used when the child has none of its own).
	subState(ctx context.Context, saver checkpoint.Saver, ref checkpoint.Ref) (*StateSnapshot[any], error)
}

type subgraph[P, C any] struct {
	g   *Compiled[C]
	in  func(P) C
	out func(C) P
}

// AddSubgraph adds a compiled graph as a node of g. in maps the parent's state (or a Send
// payload) to the child's input, and out maps the child's final state to the parent's update;
// both may be nil when the two graphs share the state type. The child checkpoints in its own
// namespace of the parent's thread (using the parent's saver unless it has its own), its
// interrupts pause the parent, and its events reach the parent's stream with their namespace.
func AddSubgraph[P, C any](g *Graph[P], name string, child *Compiled[C], in func(P) C, out func(C) P, opts ...NodeOption) *Graph[P] {
	if child == nil {
		g.errs = append(g.errs, fmt.Errorf("graph: subgraph node %q: the compiled graph is nil", name))
		return g
	}
	if in == nil || out == nil {
		same := reflect.TypeFor[P]() == reflect.TypeFor[C]()
		if !same {
			g.errs = append(g.errs, fmt.Errorf("graph: subgraph node %q: the parent state %s and the child state %s differ, so both mapping functions are required", name, reflect.TypeFor[P](), reflect.TypeFor[C]()))
			return g
		}
		if in == nil {
			in = func(p P) C { return any(p).(C) }
		}
		if out == nil {
			out = func(c C) P { return any(c).(P) }
		}
	}
	sg := &subgraph[P, C]{g: child, in: in, out: out}
	return g.addNode(name, &nodeSpec{sub: sg}, opts)
}

func (s *subgraph[P, C]) child() Runnable { return s.g.Runnable() }

func (s *subgraph[P, C]) subState(ctx context.Context, saver checkpoint.Saver, ref checkpoint.Ref) (*StateSnapshot[any], error) {
	snap, err := s.g.subgraphState(ctx, saver, ref)
	if err != nil {
		return nil, err
	}
	out := eraseSnapshot(snap)
	if s.g.view != nil {
		// An entrypoint's state is its return value (nil before it has one), as LangGraph's.
		out.Values = s.g.view.state(reflect.ValueOf(snap.Values))
	}
	return out, nil
}

// SubgraphNode is a compiled graph used as a node of another (see [AddSubgraph]).
type SubgraphNode struct {
	// Node is the node's name, which is also the namespace of the child's checkpoints and
	// events under its parent.
	Node  string
	Graph Runnable
}

// Subgraphs returns the compiled graphs that are nodes of this one, in the order the nodes were
// added (not those nested in them: call Subgraphs on each for those).
func (c *Compiled[S]) Subgraphs() []SubgraphNode {
	var out []SubgraphNode
	for _, name := range c.g.order {
		if sub := c.g.nodes[name].sub; sub != nil {
			out = append(out, SubgraphNode{Node: name, Graph: sub.child()})
		}
	}
	return out
}

func (s *subgraph[P, C]) runSub(ctx context.Context, parent *run, t *task) (result, error) {
	input := s.in(t.input.Interface().(P))
	link := &parentLink{run: parent, task: t, name: t.node.name}
	forward := func(ev Event) bool {
		switch ev.Mode {
		case ModeMessages, ModeCustom:
		default:
			if !parent.subgraphs {
				return true
			}
		}
		parent.emit(t, ev)
		return !parent.stopped.Load()
	}
	final, err := s.g.execute(ctx, input, nil, forward, link)
	var pc *parentCommandError
	if errors.As(err, &pc) {
		res := result{gotos: pc.cmd.Goto, isCmd: true}
		if pc.cmd.ParentUpdate != nil {
			up, ok := pc.cmd.ParentUpdate.(P)
			if !ok {
				var want P
				return result{}, fmt.Errorf("graph: subgraph %q sent its parent an update of type %T; the parent's state is %T", t.node.name, pc.cmd.ParentUpdate, want)
			}
			res.update, res.updated = reflect.ValueOf(&up).Elem(), true
		}
		return res, nil
	}
	if err != nil {
		return result{}, err
	}
	up := s.out(final)
	return result{update: reflect.ValueOf(&up).Elem(), updated: true}, nil
}
