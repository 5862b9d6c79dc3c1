package graph

import (
	"fmt"
	"slices"
	"strings"
)

// Shape is a graph's structure, for drawing and for describing it over an API.
type Shape struct {
	Name  string      `json:"name"`
	Nodes []ShapeNode `json:"nodes"`
	Edges []ShapeEdge `json:"edges"`
}

// ShapeNode is a node of a Shape; Subgraph is set for a compiled graph used as a node.
type ShapeNode struct {
	ID       string         `json:"id"`
	Deferred bool           `json:"deferred,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Subgraph *Shape         `json:"subgraph,omitempty"`
}

// ShapeEdge is an edge of a Shape. Conditional edges are taken only when a route or command
// chooses them; Label is the path-map key, if any.
type ShapeEdge struct {
	Source      string `json:"source"`
	Target      string `json:"target"`
	Conditional bool   `json:"conditional,omitempty"`
	Label       string `json:"label,omitempty"`
}

// Shape returns the graph's nodes and edges, with subgraphs nested.
func (c *Compiled[S]) Shape() Shape {
	g := c.g
	sh := Shape{Name: c.name}
	sh.Nodes = append(sh.Nodes, ShapeNode{ID: START})
	for _, name := range g.order {
		n := g.nodes[name]
		sn := ShapeNode{ID: name, Deferred: n.deferred, Metadata: n.metadata}
		if n.sub != nil {
			inner := n.sub.child().Shape()
			sn.Subgraph = &inner
		}
		sh.Nodes = append(sh.Nodes, sn)
	}
	sh.Nodes = append(sh.Nodes, ShapeNode{ID: END})
	add := func(e ShapeEdge) {
		if !slices.Contains(sh.Edges, e) {
			sh.Edges = append(sh.Edges, e)
		}
	}
	sources := append([]string{START}, g.order...)
	for _, from := range sources {
		for _, to := range g.edges[from] {
			add(ShapeEdge{Source: from, Target: to})
		}
		for _, b := range g.branches[from] {
			switch {
			case b.pathMap != nil:
				for _, k := range sortedKeys(b.pathMap) {
					label := k
					if k == b.pathMap[k] {
						label = ""
					}
					add(ShapeEdge{Source: from, Target: b.pathMap[k], Conditional: true, Label: label})
				}
			case len(b.ends) > 0:
				for _, e := range b.ends {
					add(ShapeEdge{Source: from, Target: e, Conditional: true})
				}
			default:
				// A route with no declared destinations may go to any node.
				for _, to := range g.order {
					add(ShapeEdge{Source: from, Target: to, Conditional: true})
				}
				add(ShapeEdge{Source: from, Target: END, Conditional: true})
			}
		}
		if n := g.nodes[from]; n != nil {
			for _, e := range n.ends {
				add(ShapeEdge{Source: from, Target: e, Conditional: true})
			}
		}
	}
	for _, j := range g.joins {
		for _, s := range j.sources {
			add(ShapeEdge{Source: s, Target: j.to})
		}
	}
	// A node with no way out ends the run.
	for _, name := range g.order {
		if next, open := g.successors(name); len(next) == 0 && !open {
			add(ShapeEdge{Source: name, Target: END})
		}
	}
	return sh
}

// Mermaid draws the graph as a Mermaid flowchart. With xray, subgraphs are drawn inside their
// nodes.
func (c *Compiled[S]) Mermaid(xray bool) string {
	var b strings.Builder
	b.WriteString("---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;\n")
	sh := c.Shape()
	writeMermaid(&b, sh, "", xray, "\t")
	b.WriteString("\tclassDef default fill:#f2f0ff,line-height:1.2\n")
	b.WriteString("\tclassDef first fill-opacity:0\n")
	b.WriteString("\tclassDef last fill:#bfb6fc\n")
	return b.String()
}

func writeMermaid(b *strings.Builder, sh Shape, prefix string, xray bool, indent string) {
	id := func(n string) string { return mermaidID(prefix + n) }
	for _, n := range sh.Nodes {
		switch {
		case n.ID == START && prefix == "":
			fmt.Fprintf(b, "%s%s([<p>%s</p>]):::first\n", indent, id(n.ID), n.ID)
		case n.ID == END && prefix == "":
			fmt.Fprintf(b, "%s%s([<p>%s</p>]):::last\n", indent, id(n.ID), n.ID)
		case n.ID == START || n.ID == END:
			// A subgraph's own START and END are drawn only when it is expanded.
			if xray {
				fmt.Fprintf(b, "%s%s(( ))\n", indent, id(n.ID))
			}
		case n.Subgraph != nil && xray:
			fmt.Fprintf(b, "%ssubgraph %s [%s]\n", indent, id(n.ID), n.ID)
			writeMermaid(b, *n.Subgraph, prefix+n.ID+"/", xray, indent+"\t")
			fmt.Fprintf(b, "%send\n", indent)
		default:
			label := n.ID
			if n.Deferred {
				label += " (deferred)"
			}
			fmt.Fprintf(b, "%s%s(%s)\n", indent, id(n.ID), mermaidLabel(label))
		}
	}
	for _, e := range sh.Edges {
		arrow := "-->"
		if e.Conditional {
			arrow = "-.->"
		}
		if e.Label != "" {
			arrow = fmt.Sprintf("-. &nbsp;%s&nbsp; .->", mermaidLabel(e.Label))
		}
		fmt.Fprintf(b, "%s%s %s %s;\n", indent, id(e.Source), arrow, id(e.Target))
	}
}

func mermaidID(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "_%x_", r)
		}
	}
	return b.String()
}

func mermaidLabel(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "(", "#40;", ")", "#41;", "[", "#91;", "]", "#93;", "<", "#lt;", ">", "#gt;")
	return r.Replace(s)
}
