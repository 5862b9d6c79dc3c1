package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/entity"
	"github.com/trellis-go/trellis/apps/vesper/rbac"
	"github.com/trellis-go/trellis/apps/vesper/sqlguard"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/tool"
)

// Options configures a Toolkit. The zero value is ready to use.
type Options struct {
	// Cache holds resolved project names (nil: in process; use
	// entity.NewRedisCache to share it between replicas).
	Cache entity.Cache
	// Guard checks general_sql_query (nil: sqlguard.New(nil)).
	Guard *sqlguard.Guard
	// Now is the clock for default date ranges such as "the last week"
	// (nil: time.Now).
	Now func() time.Time
}

// Toolkit holds the Vesper tools: typed methods whose arguments come from
// the model and whose caller (tenant, user, permissions) comes from the
// tool.CallInfo in the context. Every method checks the caller's permission
// before it touches data, and builds its SQL from fixed text with $n
// placeholders only. A Toolkit is safe for concurrent use.
type Toolkit struct {
	w        *warehouse.Warehouse
	projects *entity.ProjectResolver
	guard    *sqlguard.Guard
	now      func() time.Time
	vocab    vocabularies
}

// New returns the toolkit over a warehouse; a nil opts means the zero Options.
func New(w *warehouse.Warehouse, opts *Options) *Toolkit {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Guard == nil {
		o.Guard = sqlguard.New(nil)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Toolkit{w: w, projects: entity.NewProjectResolver(w, o.Cache), guard: o.Guard, now: o.Now}
}

// Projects is the toolkit's project-name resolver (the supervisor uses it too).
func (k *Toolkit) Projects() *entity.ProjectResolver { return k.projects }

// ErrNoCaller is returned when the context carries no tool.CallInfo with a
// tenant: tools never run for nobody.
var ErrNoCaller = errors.New("tools: no caller in the context; put a tool.CallInfo with a Tenant in it (tool.WithCallInfo)")

// ArgError reports an argument the model got wrong, with what to send instead.
type ArgError struct {
	Tool, Arg, Problem, Hint string
}

func (e *ArgError) Error() string {
	s := fmt.Sprintf("tools: %s: argument %s: %s", e.Tool, e.Arg, e.Problem)
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// caller checks that the context carries a caller who may run the tool.
func caller(ctx context.Context, toolName string) (rbac.Principal, error) {
	info, ok := tool.CallInfoFrom(ctx)
	if !ok || strings.TrimSpace(info.Tenant) == "" {
		return rbac.Principal{}, ErrNoCaller
	}
	p := rbac.Principal{Tenant: info.Tenant, User: info.User, Permissions: info.Permissions}
	if err := rbac.Check(p, toolName); err != nil {
		return rbac.Principal{}, err
	}
	return p, nil
}

// Meta is what every result carries besides its data.
type Meta struct {
	// ReportKey names the Power BI report that shows this data (see package reports).
	ReportKey string `json:"pbi_report_key,omitempty"`
	// Truncated is true when the query matched more rows than the cap.
	Truncated bool `json:"truncated,omitempty"`
	// Note is a sentence for the user: a cut result, an ambiguous name,
	// why nothing was found.
	Note string `json:"note,omitempty"`
	// Searched says in words what was looked for, so an empty result can be explained.
	Searched string `json:"searched,omitempty"`
	// Candidates are the projects an ambiguous or unknown name could mean;
	// the result then holds no data and Note asks the user to choose.
	Candidates []string `json:"candidates,omitempty"`
}

func (m *Meta) fromResult(r *warehouse.Result) {
	if r.Truncated || r.CutValues > 0 {
		m.Truncated = r.Truncated
		m.Note = r.Note()
	}
}

// query builds a WHERE clause from fixed conditions; each "?" becomes the
// next $n placeholder and its value is bound, never spliced.
type query struct {
	conds []string
	args  []any
}

func (q *query) where(cond string, vals ...any) {
	for _, v := range vals {
		q.args = append(q.args, v)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(q.args)), 1)
	}
	q.conds = append(q.conds, cond)
}

// arg binds a value and returns its placeholder.
func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

func (q *query) clause() string {
	if len(q.conds) == 0 {
		return ""
	}
	return "WHERE " + strings.Join(q.conds, " AND ")
}

// like adds a case-insensitive contains-match on a column.
func (q *query) like(column, text string) {
	q.args = append(q.args, entity.LikePattern(text))
	q.conds = append(q.conds, entity.LikeClause(column, len(q.args)))
}

// Value conversions from warehouse rows, which hold plain Go values that
// differ a little between dialects (dates are time.Time on Postgres and
// text on SQLite; integers may come back as floats from expressions).

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case time.Time:
		return x.Format("2006-01-02")
	}
	return fmt.Sprint(v)
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	return 0
}

func numPtr(v any) *float64 {
	if v == nil {
		return nil
	}
	f := num(v)
	return &f
}

func integer(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(math.Round(x))
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// date returns a value as YYYY-MM-DD, or "" for NULL.
func date(v any) string {
	s := str(v)
	if len(s) > 10 {
		s = s[:10]
	}
	return s
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// parseDate checks a YYYY-MM-DD argument.
func parseDate(toolName, arg, s string) (time.Time, error) {
	t, err := time.Parse("2006-01-02", strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, &ArgError{Tool: toolName, Arg: arg, Problem: fmt.Sprintf("%q is not a date", s), Hint: "write it as YYYY-MM-DD, e.g. 2025-01-31"}
	}
	return t, nil
}

// resolve normalises an optional entity argument; an unknown value is kept
// as given so the query runs and finds nothing, which the result explains.
func resolve(kind, value string) string {
	v, _, err := entity.Resolve(kind, value)
	if err != nil {
		return value
	}
	return v
}
