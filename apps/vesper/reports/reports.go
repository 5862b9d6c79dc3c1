package reports

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/trellis-go/trellis/appdb"
)

// ReportMenu maps the report keys the tools return to menu keys, as the
// specification's PBI_REPORT_MAP does.
var ReportMenu = map[string]string{
	"dayahead_curve_report":         "mc_dayahead_curves",
	"price_curve_hourly_report":     "mc_price_curves",
	"price_curve_comparison_report": "mc_price_curves",
	"pbi_usage_metrics_report":      "pbi_usage_dashboard",
	"per_project_report":            "per_project_overview",
	"per_project_health_report":     "per_project_health",
	"per_portfolio_report":          "per_portfolio_view",
	"per_budget_report":             "per_budget_tracker",
}

// MenuItem is a report page of the portal's menu, per tenant.
type MenuItem struct {
	ID          int64
	Tenant      string
	Key         string // menu_key
	Label       string // "Day-Ahead Curves Dashboard"
	Description string // "View interactive price curves and vendor comparisons in Power BI"
	WorkspaceID string // Power BI group ID
	ReportID    string
	PageName    string // optional report page
}

// WebURL is the report page in the Power BI service, for users who sign in
// themselves: the link used when no embed token is available.
func (m MenuItem) WebURL() string {
	u := "https://app.powerbi.com/groups/" + url.PathEscape(m.WorkspaceID) + "/reports/" + url.PathEscape(m.ReportID)
	if m.PageName != "" {
		u += "/" + url.PathEscape(m.PageName)
	}
	return u
}

// Migrations create the menu_items table in the app's database (package appdb).
var Migrations = []appdb.Migration{{
	Name: "vesper_menu_items_1",
	SQLite: `CREATE TABLE menu_items (id INTEGER PRIMARY KEY AUTOINCREMENT,
		tenant_id TEXT NOT NULL, menu_key TEXT NOT NULL, label TEXT NOT NULL, description TEXT NOT NULL DEFAULT '',
		workspace_id TEXT NOT NULL DEFAULT '', report_id TEXT NOT NULL DEFAULT '', page_name TEXT NOT NULL DEFAULT '',
		UNIQUE (tenant_id, menu_key))`,
	Postgres: `CREATE TABLE menu_items (id BIGSERIAL PRIMARY KEY,
		tenant_id TEXT NOT NULL, menu_key TEXT NOT NULL, label TEXT NOT NULL, description TEXT NOT NULL DEFAULT '',
		workspace_id TEXT NOT NULL DEFAULT '', report_id TEXT NOT NULL DEFAULT '', page_name TEXT NOT NULL DEFAULT '',
		UNIQUE (tenant_id, menu_key))`,
}}

// Menu is the menu_items table in the app's database.
type Menu struct {
	db *appdb.DB
}

// NewMenu applies [Migrations] to db (those not applied yet) and keeps the menu there.
func NewMenu(ctx context.Context, db *appdb.DB) (*Menu, error) {
	if db == nil {
		return nil, errors.New("reports: NewMenu needs the app's database; open it with appdb.Open")
	}
	if err := db.Migrate(ctx, Migrations); err != nil {
		return nil, fmt.Errorf("reports: create menu_items: %w", err)
	}
	return &Menu{db: db}, nil
}

// Put adds or replaces the item with the same tenant and key.
func (m *Menu) Put(ctx context.Context, it MenuItem) error {
	if it.Tenant == "" || it.Key == "" || it.Label == "" {
		return fmt.Errorf("reports: a menu item needs a tenant, a key and a label; got %+v", it)
	}
	return m.db.System(ctx, func(tx *appdb.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO menu_items (tenant_id, menu_key, label, description, workspace_id, report_id, page_name)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant_id, menu_key) DO UPDATE SET label = excluded.label, description = excluded.description,
			workspace_id = excluded.workspace_id, report_id = excluded.report_id, page_name = excluded.page_name`,
			it.Tenant, it.Key, it.Label, it.Description, it.WorkspaceID, it.ReportID, it.PageName)
		return err
	})
}

// ByKey returns a tenant's menu item, or ok false.
func (m *Menu) ByKey(ctx context.Context, tenant, key string) (MenuItem, bool, error) {
	var it MenuItem
	err := m.db.System(ctx, func(tx *appdb.Tx) error {
		return tx.QueryRow(ctx, `SELECT id, tenant_id, menu_key, label, description, workspace_id, report_id, page_name
		FROM menu_items WHERE tenant_id = ? AND menu_key = ?`, tenant, key).
			Scan(&it.ID, &it.Tenant, &it.Key, &it.Label, &it.Description, &it.WorkspaceID, &it.ReportID, &it.PageName)
	})
	if err == sql.ErrNoRows {
		return MenuItem{}, false, nil
	}
	return it, err == nil, err
}

// DefaultItems are the menu of a demonstration tenant: one item per menu
// key, with made-up workspace and report IDs.
func DefaultItems(tenant string) []MenuItem {
	ws := "6f1c0de2-0000-4000-8000-00000000000a"
	mk := func(key, label, desc, report string) MenuItem {
		return MenuItem{Tenant: tenant, Key: key, Label: label, Description: desc, WorkspaceID: ws, ReportID: report}
	}
	return []MenuItem{
		mk("mc_dayahead_curves", "Day-Ahead Curves Dashboard", "View interactive price curves and vendor comparisons in Power BI", "0b7a1f10-0000-4000-8000-000000000001"),
		mk("mc_price_curves", "Price Curves Report", "Hourly shapes and hub-zone spreads in Power BI", "0b7a1f10-0000-4000-8000-000000000002"),
		mk("pbi_usage_dashboard", "PBI Usage Dashboard", "Report views and viewers over time", "0b7a1f10-0000-4000-8000-000000000003"),
		mk("per_project_overview", "Project Overview", "Budget and milestone view", "0b7a1f10-0000-4000-8000-000000000004"),
		mk("per_project_health", "Project Health Report", "Full health breakdown", "0b7a1f10-0000-4000-8000-000000000005"),
		mk("per_portfolio_view", "Portfolio View", "All active projects and their milestones", "0b7a1f10-0000-4000-8000-000000000006"),
		mk("per_budget_tracker", "Budget Tracker", "Budget, actuals and forecast by project", "0b7a1f10-0000-4000-8000-000000000007"),
	}
}

// DeepLink is a related report for an answer.
type DeepLink struct {
	ReportKey   string `json:"report_key"`
	MenuKey     string `json:"menu_key"`
	ReportName  string `json:"report_name"`
	Description string `json:"description,omitempty"`
	// URL is where the link goes: the embed URL when Power BI is
	// configured and answered, the report page otherwise.
	URL        string `json:"url"`
	EmbedURL   string `json:"embed_url,omitempty"`
	EmbedToken string `json:"embed_token,omitempty"`
}

// Embedder makes embed tokens; *PowerBI is one.
type Embedder interface {
	EmbedReport(ctx context.Context, workspaceID, reportID string) (Embed, error)
}

// Linker turns report keys into deep links.
type Linker struct {
	Menu *Menu
	// PowerBI makes embed tokens; nil means links to the report pages
	// without a token.
	PowerBI Embedder
	// Log records failures, which never fail the answer (nil: slog.Default()).
	Log *slog.Logger
}

// Links returns one link per distinct known key, in the order given. It is
// best effort: an unknown key, a missing menu item or a Power BI failure
// drops or degrades that link, and is logged, but never returns an error.
func (l *Linker) Links(ctx context.Context, tenant string, keys []string) []DeepLink {
	log := l.Log
	if log == nil {
		log = slog.Default()
	}
	seen := map[string]bool{}
	var out []DeepLink
	for _, key := range keys {
		menuKey, ok := ReportMenu[key]
		if !ok || seen[menuKey] {
			continue
		}
		seen[menuKey] = true
		it, ok, err := l.Menu.ByKey(ctx, tenant, menuKey)
		if err != nil {
			log.WarnContext(ctx, "vesper: deep link menu lookup failed", "tenant", tenant, "menu_key", menuKey, "err", err)
			continue
		}
		if !ok {
			continue
		}
		link := DeepLink{ReportKey: key, MenuKey: menuKey, ReportName: it.Label, Description: it.Description, URL: it.WebURL()}
		if l.PowerBI != nil {
			e, err := l.PowerBI.EmbedReport(ctx, it.WorkspaceID, it.ReportID)
			if err != nil {
				log.WarnContext(ctx, "vesper: power bi embed failed; linking the report page", "tenant", tenant, "menu_key", menuKey, "err", err)
			} else {
				link.URL, link.EmbedURL, link.EmbedToken = e.EmbedURL, e.EmbedURL, e.Token
			}
		}
		out = append(out, link)
	}
	return out
}
