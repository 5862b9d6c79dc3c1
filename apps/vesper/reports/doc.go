// Package reports turns the report keys of tool results into "Related
// Reports" deep links: ReportMenu maps each key to a menu key, Menu (the
// menu_items table) holds each tenant's report pages, and PowerBI fetches
// embed URLs and embed tokens from the Power BI REST API with a service
// principal.
//
//	pbi, _ := reports.NewPowerBI(reports.PowerBIConfig{TenantID: ..., ClientID: ..., ClientSecret: ...})
//	l := &reports.Linker{Menu: menu, PowerBI: pbi}
//	links := l.Links(ctx, "vesper", []string{"dayahead_curve_report"})
//
// Deep links are best effort: a Power BI failure degrades a link to the
// report page without a token, and never fails the answer. With no Power BI
// configured (PowerBI nil) every link points at the report page.
//
// The client takes its service-principal token from
// {AuthorityURL}/{TenantID}/oauth2/v2.0/token (client credentials), reads
// GET {BaseURL}/groups/{ws}/reports/{id} for the embed URL and calls
// POST .../GenerateToken for a View embed token, which it reuses for 55
// minutes. Both URLs are configurable, so tests use a local server.
package reports
