package rehab

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/apps/rehab/kb"
	"github.com/trellis-go/trellis/apps/rehab/reno"
	"github.com/trellis-go/trellis/apps/rehab/store"
	"github.com/trellis-go/trellis/apps/rehab/taxes"
	"github.com/trellis-go/trellis/document/pdf"
)

// report serves GET /api/v1/properties/{id}/report.pdf: the latest analysis of a portfolio
// property, room by room, with the purchase taxes when they were calculated.
func (a *API) report(w http.ResponseWriter, r *http.Request) {
	_, u, ok := a.caller(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	it, err := a.Data.Item(ctx, u, r.PathValue("id"))
	if err != nil {
		fail(w, err)
		return
	}
	an, err := a.Data.LatestAnalysis(ctx, u, it.PropertyID, "renovation")
	if err != nil {
		fail(w, fmt.Errorf("%w; analyse the property first (send its Idealista URL in the chat)", err))
		return
	}
	var res reno.Result
	if err := json.Unmarshal(an.Result, &res); err != nil {
		fail(w, err)
		return
	}
	prof, err := a.Data.Profile(ctx, u)
	if err != nil {
		fail(w, err)
		return
	}
	var tax *taxes.Result
	if fa, err := a.Data.LatestAnalysis(ctx, u, it.PropertyID, "fiscal"); err == nil {
		var t taxes.Result
		if json.Unmarshal(fa.Result, &t) == nil {
			tax = &t
		}
	}
	doc := pdf.Render(answer("report_title", "property", it.IndexSummary), ReportLines(it, &res, an.CreatedAt, prof, tax))
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`inline; filename="rehabify-%s.pdf"`, it.Property.IdealistaID))
	_, _ = w.Write(doc)
}

// ReportLines is the report's text.
func ReportLines(it *store.PortfolioItem, res *reno.Result, at time.Time, prof *store.Profile, tax *taxes.Result) []pdf.Line {
	L := func(text string) pdf.Line { return pdf.Line{Text: text} }
	H := func(text string) pdf.Line { return pdf.Line{Text: text, Size: 13, Bold: true, Gap: 10} }
	lines := []pdf.Line{
		{Text: answer("report_heading", "property", strings.TrimSpace(res.Typology+" "+kb.Neighbourhood(res.Location))), Size: 18, Bold: true},
		L(res.Title + ", " + res.Location),
		L(answer("report_listing", "url", it.Property.URL)),
		L(answer("report_when", "when", at.Format("02/01/2006 15:04"))),
	}
	if prof != nil && prof.Exists && prof.Name != "" {
		lines = append(lines, L(answer("report_for", "name", prof.Name)))
	}
	lines = append(lines, H(answer("report_summary")), L(kb.Compact(res.Price, res.AreaM2)),
		L(answer("report_works", "range", kb.EuroRange(res.TotalMin, res.TotalMax), "quality", res.Quality)),
		L(answer("report_total", "range", kb.EuroRange(res.Price+res.TotalMin, res.Price+res.TotalMax))))
	if len(res.Skills) > 0 {
		lines = append(lines, L(answer("report_skills", "skills", strings.Join(res.Skills, ", "))))
	}
	lines = append(lines, H(answer("report_rooms")))
	for _, r := range res.Rooms {
		line := answer("report_room", "room", reno.RoomLabel(r.Type), "area", kb.Area(r.AreaM2), "condition", reno.ConditionLabel(r.Condition), "range", kb.EuroRange(r.Min, r.Max))
		lines = append(lines, pdf.Line{Text: line, Bold: true, Gap: 4})
		if len(r.Features) > 0 {
			lines = append(lines, L(answer("report_features", "features", strings.Join(r.Features, ", "))))
		}
		if len(r.Issues) > 0 {
			lines = append(lines, L(answer("report_issues", "issues", strings.Join(r.Issues, ", "))))
		}
		if r.DIYSaving > 0 {
			lines = append(lines, L(answer("report_diy", "percent", strconv.Itoa(int(r.DIYSaving*100)))))
		}
	}
	if tax != nil {
		lines = append(lines, H(answer("report_taxes", "table", tax.Table, "year", strconv.Itoa(tax.TablesOfYear))),
			L(answer("report_imt", "amount", kb.EuroCents(tax.IMT))), L(answer("report_stamp", "amount", kb.EuroCents(tax.Stamp))),
			L(answer("report_tax_total", "amount", kb.EuroCents(tax.Total))),
			L(answer("report_total_cost", "range", kb.EuroRange(res.Price+res.TotalMin+tax.Total, res.Price+res.TotalMax+tax.Total))))
		if tax.YoungExempt {
			lines = append(lines, L(answer("report_young")))
		}
	}
	lines = append(lines, pdf.Line{Text: answer("report_disclaimer"), Size: 8, Gap: 16})
	return lines
}
