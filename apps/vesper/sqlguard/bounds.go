package sqlguard

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// This file holds the rules that bound how much work and memory a query
// that passes the allowlist can still ask for: recursion in disguise and
// values that grow without bound.

// checkCTEOrder refuses a WITH query that reads itself or a WITH query
// declared after it. PostgreSQL would read such a name as a table, but
// SQLite treats a self-referencing CTE as recursive even without the
// RECURSIVE keyword, so a query the parser calls plain could loop for as
// long as the timeout allows, holding its rows in memory.
//
// visible holds the CTE names in scope; all holds every CTE name of the
// query (a name outside it is a view or an unknown relation, which the
// walker judges).
func checkCTEOrder(m protoreflect.Message, visible map[string]bool, all map[string]bool, depth int) error {
	if depth > 400 {
		return reject(-1, "simplify the query", "the query nests too deeply")
	}
	switch x := m.Interface().(type) {
	case *pg.SelectStmt:
		if with := x.GetWithClause(); with != nil {
			if with.GetRecursive() {
				return reject(int(with.GetLocation()), "write the query without RECURSIVE", "recursive queries are not allowed")
			}
			scope := copySet(visible)
			for _, n := range with.GetCtes() {
				cte := n.GetCommonTableExpr()
				if cte == nil {
					continue
				}
				name := strings.ToLower(cte.GetCtename())
				// The CTE's own body sees only the CTEs declared before it.
				if q := cte.GetCtequery(); q != nil {
					if err := checkCTEOrder(q.ProtoReflect(), scope, all, depth+1); err != nil {
						if re, ok := err.(*RejectedError); ok && re.Reason == selfReference {
							re.Reason = "the WITH query " + quoteName(name) + " reads itself or a WITH query declared after it, which SQLite runs as recursion"
						}
						return err
					}
				}
				scope[name] = true
			}
			// The rest of the statement sees all of them.
			return rangeChildren(m, func(child protoreflect.Message, fd protoreflect.FieldDescriptor) error {
				if fd.Name() == "with_clause" {
					return nil
				}
				return checkCTEOrder(child, scope, all, depth+1)
			})
		}
	case *pg.RangeVar:
		rel := strings.ToLower(x.GetRelname())
		if x.GetSchemaname() == "" && all[rel] && !visible[rel] {
			return &RejectedError{Reason: selfReference, Hint: "read only WITH queries declared before this one; recursion is not allowed", Offset: int(x.GetLocation())}
		}
	}
	return rangeChildren(m, func(child protoreflect.Message, _ protoreflect.FieldDescriptor) error {
		return checkCTEOrder(child, visible, all, depth+1)
	})
}

const selfReference = "a WITH query reads itself or a WITH query declared after it"

func quoteName(s string) string { return `"` + s + `"` }

func copySet(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m)+4)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// rangeChildren calls fn for every message directly below m, stopping at
// the first error.
func rangeChildren(m protoreflect.Message, fn func(protoreflect.Message, protoreflect.FieldDescriptor) error) error {
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = fn(l.Get(i).Message(), fd)
			}
		case fd.Message() != nil && !fd.IsMap():
			err = fn(v.Message(), fd)
		}
		return err == nil
	})
	return err
}

// stringAggregates build one value out of many rows.
var stringAggregates = map[string]bool{"string_agg": true, "group_concat": true}

// checkReplace refuses replace(x, from, to) unless to is a literal no
// longer than from: nested replaces that lengthen their input grow a value
// geometrically (each level multiplies it), within one row and one
// statement of a few hundred bytes.
func checkReplace(x *pg.FuncCall) error {
	args := x.GetArgs()
	if len(args) != 3 {
		return nil // the database reports the wrong arity itself
	}
	from, fromOK := stringLiteral(args[1])
	to, toOK := stringLiteral(args[2])
	if !toOK || !fromOK || len(to) > len(from) {
		return reject(int(x.GetLocation()), "replace with a literal no longer than the text it replaces, e.g. replace(name, '_', ' ')",
			"replace() that lengthens its input can grow a value without bound")
	}
	return nil
}

func stringLiteral(n *pg.Node) (string, bool) {
	c := n.GetAConst()
	if c == nil || c.GetSval() == nil {
		return "", false
	}
	return c.GetSval().GetSval(), true
}

// checkCrossAggregate refuses a string aggregate in a SELECT whose FROM is
// a cross product (two items in the FROM list, CROSS JOIN, or a join on a
// constant): there one value would be built from every pair of rows,
// hundreds of megabytes within the row cap.
func checkCrossAggregate(x *pg.SelectStmt) error {
	if !crossProduct(x) {
		return nil
	}
	found := false
	for _, n := range append(append([]*pg.Node{}, x.GetTargetList()...), x.GetHavingClause()) {
		if n != nil && hasStringAggregate(n.ProtoReflect()) {
			found = true
		}
	}
	if !found {
		return nil
	}
	return reject(-1, "join the views with JOIN ... ON a matching column, or aggregate each view in a subquery first",
		"string_agg over a cross join builds one value from every pair of rows")
}

func crossProduct(x *pg.SelectStmt) bool {
	from := x.GetFromClause()
	if len(from) > 1 {
		return true
	}
	for _, n := range from {
		if j := n.GetJoinExpr(); j != nil && crossJoin(j) {
			return true
		}
	}
	return false
}

func crossJoin(j *pg.JoinExpr) bool {
	if j.GetIsNatural() || len(j.GetUsingClause()) > 0 {
		return false
	}
	q := j.GetQuals()
	if q == nil {
		return true
	}
	if c := q.GetAConst(); c != nil {
		return true // ON TRUE, ON 1
	}
	for _, side := range []*pg.Node{j.GetLarg(), j.GetRarg()} {
		if inner := side.GetJoinExpr(); inner != nil && crossJoin(inner) {
			return true
		}
	}
	return false
}

// hasStringAggregate looks for a string aggregate in an expression, not
// descending into subqueries (they have a FROM of their own).
func hasStringAggregate(m protoreflect.Message) bool {
	switch x := m.Interface().(type) {
	case *pg.SelectStmt:
		return false
	case *pg.FuncCall:
		names := x.GetFuncname()
		if len(names) > 0 && stringAggregates[strings.ToLower(names[len(names)-1].GetString_().GetSval())] {
			return true
		}
	}
	found := false
	_ = rangeChildren(m, func(child protoreflect.Message, _ protoreflect.FieldDescriptor) error {
		if hasStringAggregate(child) {
			found = true
			return errStop
		}
		return nil
	})
	return found
}

var errStop = &RejectedError{Reason: "stop"}
