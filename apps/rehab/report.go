package rehab

import (
	"encoding/json"
	"fmt"
	"net/http"
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
	doc := pdf.Render("Relatório Rehabify: "+it.IndexSummary, ReportLines(it, &res, an.CreatedAt, prof, tax))
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`inline; filename="rehabify-%s.pdf"`, it.Property.IdealistaID))
	_, _ = w.Write(doc)
}

// ReportLines is the report's text.
func ReportLines(it *store.PortfolioItem, res *reno.Result, at time.Time, prof *store.Profile, tax *taxes.Result) []pdf.Line {
	L := func(text string) pdf.Line { return pdf.Line{Text: text} }
	H := func(text string) pdf.Line { return pdf.Line{Text: text, Size: 13, Bold: true, Gap: 10} }
	lines := []pdf.Line{
		{Text: "Relatório de análise — " + strings.TrimSpace(res.Typology+" "+kb.Neighbourhood(res.Location)), Size: 18, Bold: true},
		L(res.Title + ", " + res.Location),
		L("Anúncio: " + it.Property.URL),
		L("Análise de " + at.Format("02/01/2006 15:04") + " UTC"),
	}
	if prof != nil && prof.Exists && prof.Name != "" {
		lines = append(lines, L("Preparado para: "+prof.Name))
	}
	lines = append(lines, H("Resumo"), L(kb.Compact(res.Price, res.AreaM2)),
		L("Obras estimadas: "+kb.EuroRange(res.TotalMin, res.TotalMax)+" (acabamentos "+res.Quality+")"),
		L("Total com obras: "+kb.EuroRange(res.Price+res.TotalMin, res.Price+res.TotalMax)))
	if len(res.Skills) > 0 {
		lines = append(lines, L("Competências DIY consideradas: "+strings.Join(res.Skills, ", ")))
	}
	lines = append(lines, H("Divisões"))
	for _, r := range res.Rooms {
		line := fmt.Sprintf("%s (%s): %s — %s", reno.RoomLabel(r.Type), kb.Area(r.AreaM2), reno.ConditionLabel(r.Condition), kb.EuroRange(r.Min, r.Max))
		lines = append(lines, pdf.Line{Text: line, Bold: true, Gap: 4})
		if len(r.Features) > 0 {
			lines = append(lines, L("   Características: "+strings.Join(r.Features, ", ")))
		}
		if len(r.Issues) > 0 {
			lines = append(lines, L("   Problemas: "+strings.Join(r.Issues, ", ")))
		}
		if r.DIYSaving > 0 {
			lines = append(lines, L(fmt.Sprintf("   Poupança com trabalho próprio: %d%%", int(r.DIYSaving*100))))
		}
	}
	if tax != nil {
		lines = append(lines, H("Impostos na compra ("+tax.Table+", tabelas de "+fmt.Sprint(tax.TablesOfYear)+")"),
			L("IMT: "+kb.EuroCents(tax.IMT)), L("Imposto do Selo: "+kb.EuroCents(tax.Stamp)), L("Total de impostos: "+kb.EuroCents(tax.Total)),
			L("Custo total (preço + obras + impostos): "+kb.EuroRange(res.Price+res.TotalMin+tax.Total, res.Price+res.TotalMax+tax.Total)))
		if tax.YoungExempt {
			lines = append(lines, L("Aplicada a isenção para jovens até 35 anos (art. 9.º, n.º 2, do CIMT)."))
		}
	}
	lines = append(lines, pdf.Line{Text: "Estimativas indicativas, a partir das fotografias do anúncio; confirme com um orçamento de empreiteiro.", Size: 8, Gap: 16})
	return lines
}
