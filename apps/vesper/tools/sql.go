package tools

import (
	"context"
	"strings"
)

// GeneralSQLArgs are the arguments of general_sql_query.
type GeneralSQLArgs struct {
	Description string `json:"description" jsonschema:"One sentence: what the query answers"`
	SQL         string `json:"sql" jsonschema:"One SELECT over the approved views (mc_dayahead, mc_vendor_files, pbi_activity_events, per_project, per_projecthealth, per_tasks, per_project45, activeportfolio_mm, changes), without schema names, comments or parameters"`
}

// GeneralSQLResult is the result of general_sql_query.
type GeneralSQLResult struct {
	Description string           `json:"description"`
	Views       []string         `json:"views"`
	Columns     []string         `json:"columns"`
	Rows        []map[string]any `json:"data"`
	Meta
}

// GeneralSQLQuery is the supervised escape hatch: it runs a model-written
// SELECT after sqlguard has accepted it, read-only, scoped to the caller's
// tenant, capped and timed out like every other query. It needs
// chat:advanced_sql.
func (k *Toolkit) GeneralSQLQuery(ctx context.Context, a GeneralSQLArgs) (*GeneralSQLResult, error) {
	const name = "general_sql_query"
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	checked, err := k.guard.Check(a.SQL)
	if err != nil {
		return nil, err
	}
	res, err := k.w.Query(ctx, p.Tenant, checked.SQL)
	if err != nil {
		return nil, err
	}
	out := &GeneralSQLResult{Description: strings.TrimSpace(a.Description), Views: checked.Views, Columns: res.Columns,
		Rows: res.Maps(), Meta: Meta{Searched: strings.TrimSpace(a.Description)}}
	out.fromResult(res)
	return out, nil
}
