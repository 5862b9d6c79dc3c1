package tools

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/entity"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
)

// ProjectArgs name one project.
type ProjectArgs struct {
	ProjectName string `json:"project_name" jsonschema:"Project name or part of it, e.g. Nazareth Solar"`
}

// project resolves a project name. When it does not resolve to one
// project, ok is false and meta holds the note and the candidates.
func (k *Toolkit) project(ctx context.Context, tenant, toolName, name string, meta *Meta) (entity.ProjectMatch, bool, error) {
	if strings.TrimSpace(name) == "" {
		return entity.ProjectMatch{}, false, &ArgError{Tool: toolName, Arg: "project_name", Problem: "missing", Hint: "give the project's name, e.g. Nazareth Solar"}
	}
	m, err := k.projects.Resolve(ctx, tenant, name)
	if err != nil {
		return m, false, err
	}
	if m.Name != "" {
		return m, true, nil
	}
	meta.Note = m.Message(strings.TrimSpace(name))
	meta.Candidates = append(m.Matches, m.Suggestions...)
	return m, false, nil
}

// ProjectOverview is one project's current snapshot.
type ProjectOverview struct {
	Name         string   `json:"project_name"`
	ProjectID    string   `json:"project_id"`
	Stage        string   `json:"current_stage"`
	Technology   string   `json:"technology"`
	Market       string   `json:"market"`
	Location     string   `json:"location"`
	SPA          string   `json:"spa"`
	Sponsor      string   `json:"sponsor"`
	GenCapMW     float64  `json:"generation_capacity_mw"`
	StoreCapMW   float64  `json:"storage_capacity_mw"`
	Utility      string   `json:"utility"`
	Status       string   `json:"project_status"`
	Summary      string   `json:"status_summary"`
	ActualsLTD   float64  `json:"actuals_ltd"`
	Budget       float64  `json:"total_budget"`
	Forecast     float64  `json:"total_forecast"`
	ICLC         float64  `json:"ic_lc"`
	PPALC        float64  `json:"ppa_lc"`
	Buyer        string   `json:"buyer,omitempty"`
	Tenor        int64    `json:"tenor_years,omitempty"`
	Products     string   `json:"products,omitempty"`
	PPAPrice     *float64 `json:"ppa_price,omitempty"`
	RevisionDate string   `json:"revision_date,omitempty"`
}

// ProjectOverviewResult is the result of get_project_overview.
type ProjectOverviewResult struct {
	Found   bool             `json:"found"`
	Project *ProjectOverview `json:"data,omitempty"`
	Meta
}

// GetProjectOverview returns a project's stage, technology, market,
// sponsor, budget and commercial terms.
func (k *Toolkit) GetProjectOverview(ctx context.Context, a ProjectArgs) (*ProjectOverviewResult, error) {
	const name = "get_project_overview"
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	out := &ProjectOverviewResult{Meta: Meta{ReportKey: "per_project_report", Searched: searchWords("project", "name", strconv.Quote(a.ProjectName))}}
	m, ok, err := k.project(ctx, p.Tenant, name, a.ProjectName, &out.Meta)
	if err != nil || !ok {
		return out, err
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT name, project_id, currentprojectstage, technology, market, location, spa, sponsor,
		gencap, storecap, utility, status_type, summary, actuals_ltd, total_operating_budget, total_operating_forecast,
		ic_lc, ppa_lc, buyer, tenor, products, price, revision_date
		FROM per_project WHERE name = $1`, m.Name)
	if err != nil {
		return nil, err
	}
	if len(res.Rows) == 0 {
		return out, nil
	}
	r := res.Rows[0]
	out.Found = true
	out.Project = &ProjectOverview{Name: str(r[0]), ProjectID: str(r[1]), Stage: str(r[2]), Technology: str(r[3]), Market: str(r[4]),
		Location: str(r[5]), SPA: str(r[6]), Sponsor: str(r[7]), GenCapMW: num(r[8]), StoreCapMW: num(r[9]), Utility: str(r[10]),
		Status: str(r[11]), Summary: str(r[12]), ActualsLTD: num(r[13]), Budget: num(r[14]), Forecast: num(r[15]),
		ICLC: num(r[16]), PPALC: num(r[17]), Buyer: str(r[18]), Tenor: integer(r[19]), Products: str(r[20]), RevisionDate: date(r[22])}
	if r[21] != nil && num(r[21]) != 0 {
		out.Project.PPAPrice = numPtr(r[21])
	}
	return out, nil
}

// HealthRow is one health domain of a project.
type HealthRow struct {
	Section     string   `json:"section"`
	Area        string   `json:"health_area"`
	Color       string   `json:"health_color"` // green, yellow, red, blue, n/a
	Notes       string   `json:"notes"`
	Due         string   `json:"due_date,omitempty"`
	PctComplete *float64 `json:"percent_complete,omitempty"`
	Sort        int64    `json:"sort_order"`
}

// ProjectHealthResult is the result of get_project_health.
type ProjectHealthResult struct {
	Project string      `json:"project_name,omitempty"`
	Stage   string      `json:"current_stage,omitempty"`
	Status  string      `json:"project_status,omitempty"`
	Rows    []HealthRow `json:"data"`
	Meta
}

// GetProjectHealth returns the health colour of each domain of a project
// (site, permits, interconnection, ...) with notes and completion.
func (k *Toolkit) GetProjectHealth(ctx context.Context, a ProjectArgs) (*ProjectHealthResult, error) {
	const name = "get_project_health"
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	out := &ProjectHealthResult{Rows: []HealthRow{}, Meta: Meta{ReportKey: "per_project_health_report", Searched: searchWords("health", "name", strconv.Quote(a.ProjectName))}}
	m, ok, err := k.project(ctx, p.Tenant, name, a.ProjectName, &out.Meta)
	if err != nil || !ok {
		return out, err
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT h.section, h.name, h.healthcolor, h.notes, h.due_on, h.pctcomplete, h.sort,
		p.name, p.currentprojectstage, p.status_type
		FROM per_projecthealth h JOIN per_project p ON p.gid = h.project_gid
		WHERE p.name = $1 ORDER BY h.sort`, m.Name)
	if err != nil {
		return nil, err
	}
	out.fromResult(res)
	for _, r := range res.Rows {
		out.Project, out.Stage, out.Status = str(r[7]), str(r[8]), str(r[9])
		out.Rows = append(out.Rows, HealthRow{Section: str(r[0]), Area: str(r[1]), Color: strings.ToLower(str(r[2])), Notes: str(r[3]),
			Due: date(r[4]), PctComplete: numPtr(r[5]), Sort: integer(r[6])})
	}
	return out, nil
}

// Milestone is one dated milestone.
type Milestone struct {
	Name string `json:"milestone"`
	Date string `json:"date,omitempty"`
}

// MilestoneResult is the result of get_milestone_dates.
type MilestoneResult struct {
	Project           string      `json:"project_name,omitempty"`
	Stage             string      `json:"current_stage,omitempty"`
	StatusColor       string      `json:"status_color,omitempty"`
	Commercialization string      `json:"commercialization_status,omitempty"`
	COD               string      `json:"cod,omitempty"`
	CODYear           int64       `json:"cod_year,omitempty"`
	AsOf              string      `json:"asof_day,omitempty"`
	Milestones        []Milestone `json:"data"`
	Meta
}

// GetMilestoneDates returns a project's stage dates, COD and key agreement
// dates from the latest monthly portfolio snapshot.
func (k *Toolkit) GetMilestoneDates(ctx context.Context, a ProjectArgs) (*MilestoneResult, error) {
	const name = "get_milestone_dates"
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	out := &MilestoneResult{Milestones: []Milestone{}, Meta: Meta{ReportKey: "per_portfolio_report", Searched: searchWords("milestones", "name", strconv.Quote(a.ProjectName))}}
	m, ok, err := k.project(ctx, p.Tenant, name, a.ProjectName, &out.Meta)
	if err != nil || !ok {
		return out, err
	}
	cols := make([]string, len(warehouse.MilestoneColumns))
	for i, c := range warehouse.MilestoneColumns {
		cols[i] = warehouse.QuoteIdent(c)
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT "Project Name", "Current Project Stage", "Project Status Color", "CommercializationStatus",
		"COD Year", asofday, `+strings.Join(cols, ", ")+`
		FROM activeportfolio_mm WHERE "Project Name" = $1 AND monthlysnapshot = 1
		ORDER BY asofday DESC LIMIT 1`, m.Name)
	if err != nil {
		return nil, err
	}
	if len(res.Rows) == 0 {
		return out, nil
	}
	r := res.Rows[0]
	out.Project, out.Stage, out.StatusColor, out.Commercialization = str(r[0]), str(r[1]), str(r[2]), str(r[3])
	out.CODYear, out.AsOf = integer(r[4]), date(r[5])
	for i, c := range warehouse.MilestoneColumns {
		d := date(r[6+i])
		if d == "" {
			continue
		}
		out.Milestones = append(out.Milestones, Milestone{Name: c, Date: d})
		if c == "Commercial Operation" {
			out.COD = d
		}
	}
	return out, nil
}

// BudgetRow is one line of the budget detail.
type BudgetRow struct {
	Group    string   `json:"budget_group"`
	SubGroup string   `json:"sub_group"`
	Metric   string   `json:"metric"`
	Amount   *float64 `json:"value_amount,omitempty"`
	Date     string   `json:"value_date,omitempty"`
}

// BudgetResult is the result of get_budget_overview.
type BudgetResult struct {
	Project  string      `json:"project_name,omitempty"`
	Budget   float64     `json:"total_budget"`
	Actuals  float64     `json:"actuals_ltd"`
	Forecast float64     `json:"total_forecast"`
	ICLC     float64     `json:"ic_lc"`
	PPALC    float64     `json:"ppa_lc"`
	Lines    []BudgetRow `json:"data"`
	Meta
}

// GetBudgetOverview returns a project's budget, actuals, forecast and
// letters of credit, with the detail by group, sub-group and metric of the
// current budget file.
func (k *Toolkit) GetBudgetOverview(ctx context.Context, a ProjectArgs) (*BudgetResult, error) {
	const name = "get_budget_overview"
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	out := &BudgetResult{Lines: []BudgetRow{}, Meta: Meta{ReportKey: "per_budget_report", Searched: searchWords("budget", "name", strconv.Quote(a.ProjectName))}}
	m, ok, err := k.project(ctx, p.Tenant, name, a.ProjectName, &out.Meta)
	if err != nil || !ok {
		return out, err
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT pp.name, pp.total_operating_budget, pp.actuals_ltd, pp.total_operating_forecast, pp.ic_lc, pp.ppa_lc,
		p45."group", p45.subgrouping, p45.metric, p45.value_numbers, p45.value_dates
		FROM per_project pp LEFT JOIN per_project45 p45 ON p45.project_id = pp.project_id AND p45.monthfromfilename IS NULL
		WHERE pp.name = $1
		ORDER BY p45."group", p45.subgrouping, p45.metric`, m.Name)
	if err != nil {
		return nil, err
	}
	out.fromResult(res)
	for _, r := range res.Rows {
		out.Project, out.Budget, out.Actuals, out.Forecast, out.ICLC, out.PPALC = str(r[0]), num(r[1]), num(r[2]), num(r[3]), num(r[4]), num(r[5])
		if r[6] == nil {
			continue
		}
		out.Lines = append(out.Lines, BudgetRow{Group: str(r[6]), SubGroup: str(r[7]), Metric: str(r[8]), Amount: numPtr(r[9]), Date: date(r[10])})
	}
	return out, nil
}

// TaskRisksArgs are the arguments of get_task_risks.
type TaskRisksArgs struct {
	ProjectName string `json:"project_name,omitempty" jsonschema:"Project name or part of it; empty for the whole portfolio"`
	RiskLevel   string `json:"risk_level,omitempty" jsonschema:"High, Medium or Low; empty for any"`
}

// TaskRisk is one task flagged with a risk.
type TaskRisk struct {
	Project string `json:"project_name"`
	Task    string `json:"task_name"`
	Type    string `json:"task_type"`
	Due     string `json:"due_date,omitempty"`
	Status  string `json:"status"`
	Risk    string `json:"risk_level"`
	Notes   string `json:"notes"`
}

// TaskRisksResult is the result of get_task_risks.
type TaskRisksResult struct {
	Tasks []TaskRisk `json:"data"`
	Meta
}

// GetTaskRisks returns tasks flagged with a risk, highest first, for one
// project or the portfolio.
func (k *Toolkit) GetTaskRisks(ctx context.Context, a TaskRisksArgs) (*TaskRisksResult, error) {
	const name = "get_task_risks"
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	out := &TaskRisksResult{Tasks: []TaskRisk{}, Meta: Meta{ReportKey: "per_project_report", Searched: searchWords("risks")}}
	var q query
	q.where("t.risk IS NOT NULL")
	q.where("t.risk <> ''")
	if a.ProjectName != "" {
		m, ok, err := k.project(ctx, p.Tenant, name, a.ProjectName, &out.Meta)
		if err != nil || !ok {
			return out, err
		}
		q.where("t.projectname = ?", m.Name)
		out.Searched += searchWords("in_project", "project", m.Name)
	}
	if a.RiskLevel != "" {
		lvl := strings.ToUpper(a.RiskLevel[:1]) + strings.ToLower(a.RiskLevel[1:])
		if lvl != "High" && lvl != "Medium" && lvl != "Low" {
			return nil, &ArgError{Tool: name, Arg: "risk_level", Problem: fmt.Sprintf("%q is not a risk level", a.RiskLevel), Hint: "use High, Medium or Low"}
		}
		q.where("t.risk = ?", lvl)
		out.Searched += searchWords("at_level", "level", lvl)
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT t.projectname, t.taskname, t.task_type, t.finishdate, t.status, t.risk, t.notesforper
		FROM per_tasks t `+q.clause()+`
		ORDER BY t.projectname, CASE t.risk WHEN 'High' THEN 0 WHEN 'Medium' THEN 1 ELSE 2 END, t.finishdate`, q.args...)
	if err != nil {
		return nil, err
	}
	out.fromResult(res)
	for _, r := range res.Rows {
		out.Tasks = append(out.Tasks, TaskRisk{Project: str(r[0]), Task: str(r[1]), Type: str(r[2]), Due: date(r[3]), Status: str(r[4]), Risk: str(r[5]), Notes: str(r[6])})
	}
	return out, nil
}

// PortfolioArgs are the arguments of get_portfolio_summary.
type PortfolioArgs struct {
	Technology  string `json:"technology,omitempty" jsonschema:"Solar, Wind, BESS, Hybrid or Solar+Storage"`
	Market      string `json:"market,omitempty" jsonschema:"Market (ISO) the projects are in, e.g. CAISO, ERCOT, PJM"`
	Stage       string `json:"stage,omitempty" jsonschema:"Stage, e.g. Stage 3"`
	StatusColor string `json:"status_color,omitempty" jsonschema:"green (on track), yellow (at risk), red (off track) or blue (on hold)"`
	Sponsor     string `json:"sponsor,omitempty" jsonschema:"Sponsor, or part of the name, e.g. Patel"`
	Buyer       string `json:"buyer,omitempty" jsonschema:"Offtaker of the PPA, or part of the name, e.g. Amazon"`
	// Milestones names the milestone dates to list with each project, from
	// its latest monthly portfolio snapshot.
	Milestones []string `json:"milestones,omitempty" jsonschema:"Milestone dates to list per project: Commercial Operation (COD), Project Finance, EPC FNTP, Execute Interconnection Agreement, Execute Power Purchase Agreement, Mechanical Completion, Substantial Completion, Minimum Site Control, Decisioning Date or a stage (e.g. Stage 5 Construction)"`
}

// PortfolioProject is one active project.
type PortfolioProject struct {
	Name       string  `json:"project_name"`
	ProjectID  string  `json:"project_id"`
	Stage      string  `json:"current_stage"`
	Technology string  `json:"technology"`
	Market     string  `json:"market"`
	Sponsor    string  `json:"sponsor"`
	Buyer      string  `json:"buyer,omitempty"`
	PPAPrice   float64 `json:"ppa_price,omitempty"`
	Status     string  `json:"status"`
	GenCapMW   float64 `json:"gen_capacity_mw"`
	StoreCapMW float64 `json:"stor_capacity_mw"`
	ActualsLTD float64 `json:"actuals_ltd"`
	Budget     float64 `json:"total_budget"`
	Summary    string  `json:"status_summary"`
	// Dates are the milestone dates asked for (YYYY-MM-DD), by milestone;
	// a milestone without a date is absent.
	Dates map[string]string `json:"milestone_dates,omitempty"`
}

// PortfolioResult is the result of get_portfolio_summary.
type PortfolioResult struct {
	Projects []PortfolioProject `json:"data"`
	// Milestones are the milestone dates listed per project, in order.
	Milestones []string `json:"milestones,omitempty"`
	// SnapshotDay is the latest monthly snapshot the dates come from.
	SnapshotDay string `json:"snapshot_day,omitempty"`
	// Stage is the stage asked for, as given.
	Stage string `json:"stage,omitempty"`
	Meta
}

// milestoneColumn returns the activeportfolio_mm column a milestone name
// means: a column's name in any case, or COD.
func milestoneColumn(name string) (string, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if alias, ok := texts.MilestoneAliases[n]; ok {
		n = alias
	}
	for _, c := range warehouse.MilestoneColumns {
		if strings.ToLower(c) == n {
			return c, true
		}
	}
	return "", false
}

// GetPortfolioSummary lists the active (not archived) projects, filtered by
// technology, market, stage and status.
func (k *Toolkit) GetPortfolioSummary(ctx context.Context, a PortfolioArgs) (*PortfolioResult, error) {
	const name = "get_portfolio_summary"
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	var q query
	q.where("(pp.is_archived = 0 OR pp.is_archived IS NULL)")
	words := []string{searchWords("portfolio")}
	if a.Technology != "" {
		t := resolve(entity.Technology, a.Technology)
		q.where("LOWER(pp.technology) = LOWER(?)", t)
		words = append(words, searchWords("by_technology", "technology", t))
	}
	if a.Market != "" {
		m := resolve(entity.Market, a.Market)
		q.where("LOWER(pp.market) = LOWER(?)", m)
		words = append(words, searchWords("by_market", "market", m))
	}
	if a.Stage != "" {
		q.like("pp.currentprojectstage", strings.TrimSpace(a.Stage))
		words = append(words, searchWords("by_stage", "stage", a.Stage))
	}
	if a.StatusColor != "" {
		s, ok, _ := entity.Resolve(entity.ProjectStatus, a.StatusColor)
		if !ok {
			return nil, &ArgError{Tool: name, Arg: "status_color", Problem: fmt.Sprintf("%q is not a status", a.StatusColor), Hint: "use green, yellow, red or blue (on_track, at_risk, off_track, on_hold)"}
		}
		q.where("pp.status_type = ?", s)
		words = append(words, searchWords("by_status", "status", s))
	}
	if a.Sponsor != "" {
		q.like("pp.sponsor", strings.TrimSpace(a.Sponsor))
		words = append(words, searchWords("by_sponsor", "sponsor", a.Sponsor))
	}
	if a.Buyer != "" {
		q.like("pp.buyer", strings.TrimSpace(a.Buyer))
		words = append(words, searchWords("by_buyer", "buyer", a.Buyer))
	}
	var milestones []string
	for _, m := range a.Milestones {
		c, ok := milestoneColumn(m)
		if !ok {
			return nil, &ArgError{Tool: name, Arg: "milestones", Problem: fmt.Sprintf("%q is not a milestone", m), Hint: "use COD or one of: " + strings.Join(warehouse.MilestoneColumns, ", ")}
		}
		if !slices.Contains(milestones, c) {
			milestones = append(milestones, c)
		}
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT pp.name, pp.project_id, pp.currentprojectstage, pp.technology, pp.market, pp.sponsor,
		pp.status_type, pp.gencap, pp.storecap, pp.actuals_ltd, pp.total_operating_budget, pp.summary, pp.buyer, pp.price
		FROM per_project pp `+q.clause()+`
		ORDER BY CASE pp.status_type WHEN 'off_track' THEN 0 WHEN 'at_risk' THEN 1 WHEN 'on_hold' THEN 2 ELSE 3 END,
			pp.currentprojectstage, pp.name`, q.args...)
	if err != nil {
		return nil, err
	}
	out := &PortfolioResult{Projects: []PortfolioProject{}, Stage: strings.TrimSpace(a.Stage), Meta: Meta{ReportKey: "per_portfolio_report", Searched: strings.Join(words, ", ")}}
	out.fromResult(res)
	for _, r := range res.Rows {
		out.Projects = append(out.Projects, PortfolioProject{Name: str(r[0]), ProjectID: str(r[1]), Stage: str(r[2]), Technology: str(r[3]),
			Market: str(r[4]), Sponsor: str(r[5]), Status: str(r[6]), GenCapMW: num(r[7]), StoreCapMW: num(r[8]), ActualsLTD: num(r[9]),
			Budget: num(r[10]), Summary: str(r[11]), Buyer: str(r[12]), PPAPrice: num(r[13])})
	}
	if len(milestones) > 0 && len(out.Projects) > 0 {
		if err := k.portfolioDates(ctx, p.Tenant, milestones, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// portfolioDates adds the milestone dates of each listed project, from its
// latest monthly portfolio snapshot.
func (k *Toolkit) portfolioDates(ctx context.Context, tenant string, milestones []string, out *PortfolioResult) error {
	cols := make([]string, len(milestones))
	for i, c := range milestones {
		cols[i] = "m." + warehouse.QuoteIdent(c)
	}
	res, err := k.w.Query(ctx, tenant, `SELECT m."Project Name", m.asofday, `+strings.Join(cols, ", ")+`
		FROM activeportfolio_mm m
		WHERE m.monthlysnapshot = 1 AND m.asofday = (SELECT MAX(l.asofday) FROM activeportfolio_mm l
			WHERE l."Project Name" = m."Project Name" AND l.monthlysnapshot = 1)`)
	if err != nil {
		return err
	}
	byName := map[string][]any{}
	for _, r := range res.Rows {
		byName[str(r[0])] = r
		if d := date(r[1]); d > out.SnapshotDay {
			out.SnapshotDay = d
		}
	}
	out.Milestones = milestones
	for i := range out.Projects {
		r, ok := byName[out.Projects[i].Name]
		if !ok {
			continue
		}
		out.Projects[i].Dates = map[string]string{}
		for j, c := range milestones {
			if d := date(r[2+j]); d != "" {
				out.Projects[i].Dates[c] = d
			}
		}
	}
	return nil
}

// ChangeFields are the fields the change log records.
var ChangeFields = []string{"FinishDate", "Status", "Risk Assessment", "NotesForPER", "Duration(Hrs)", "GenerationCapacity",
	"StorageCapacity", "TotalCapacity", "HuborUtility", "Location", "Technology", "ProjectStatus", "Spend", "Budget",
	"Forecast", "IC_LC", "PPA_LC"}

// RecentChangesArgs are the arguments of get_recent_changes.
type RecentChangesArgs struct {
	ProjectName  string `json:"project_name,omitempty" jsonschema:"Project name or part of it; empty for the whole portfolio"`
	FieldChanged string `json:"field_changed,omitempty" jsonschema:"FinishDate, Status, Risk Assessment, NotesForPER, Budget, Forecast, ..."`
	// Milestones are the tasks whose changes to show; empty for all.
	Milestones []string `json:"milestones,omitempty" jsonschema:"Milestones (tasks) whose changes to show, e.g. Commercial Operation (COD), Project Finance; empty for all"`
	SinceDate  string   `json:"since_date,omitempty" jsonschema:"ISO date of the oldest change to show; default seven days ago"`
	UntilDate  string   `json:"until_date,omitempty" jsonschema:"ISO date of the newest change to show (a month named: its last day); default today"`
}

// ChangeRow is one recorded change.
type ChangeRow struct {
	Date     string `json:"change_date"`
	Project  string `json:"project_name"`
	Task     string `json:"task_name,omitempty"`
	Field    string `json:"field_changed"`
	Previous string `json:"previous_value"`
	New      string `json:"new_value"`
	// ShiftDays is, for a date field, how many days the date moved (later > 0).
	ShiftDays *int `json:"shift_days,omitempty"`
}

// RecentChangesResult is the result of get_recent_changes.
type RecentChangesResult struct {
	Since   string      `json:"since_date"`
	Until   string      `json:"until_date,omitempty"`
	Changes []ChangeRow `json:"data"`
	Meta
}

// GetRecentChanges returns the latest changes to project fields and task
// dates (at most 100), newest first.
func (k *Toolkit) GetRecentChanges(ctx context.Context, a RecentChangesArgs) (*RecentChangesResult, error) {
	const name = "get_recent_changes"
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	since := k.now().UTC().AddDate(0, 0, -7)
	since = time.Date(since.Year(), since.Month(), since.Day(), 0, 0, 0, 0, time.UTC)
	if a.SinceDate != "" {
		if since, err = parseDate(name, "since_date", a.SinceDate); err != nil {
			return nil, err
		}
	}
	out := &RecentChangesResult{Since: since.Format("2006-01-02"), Changes: []ChangeRow{}, Meta: Meta{ReportKey: "per_portfolio_report"}}
	var q query
	q.where("dateofchange >= ?", since.Format("2006-01-02"))
	words := []string{searchWords("changes_since", "day", humanDay(since))}
	if a.UntilDate != "" {
		until, err := parseDate(name, "until_date", a.UntilDate)
		if err != nil {
			return nil, err
		}
		if until.Before(since) {
			return nil, &ArgError{Tool: name, Arg: "until_date", Problem: "it is before since_date", Hint: "swap the dates"}
		}
		out.Until = until.Format("2006-01-02")
		// dateofchange may hold a time of day: the whole last day counts
		q.where("dateofchange < ?", until.AddDate(0, 0, 1).Format("2006-01-02"))
		words = []string{searchWords("changes_from", "range", humanRange(since, until))}
	}
	if a.ProjectName != "" {
		m, ok, err := k.project(ctx, p.Tenant, name, a.ProjectName, &out.Meta)
		if err != nil || !ok {
			return out, err
		}
		q.where("projectname = ?", m.Name)
		words = append(words, searchWords("changes_in", "project", m.Name))
	}
	if a.FieldChanged != "" {
		f := canonicalField(a.FieldChanged)
		q.where("fieldchanged = ?", f)
		words = append(words, searchWords("changes_to", "field", f))
	}
	if len(a.Milestones) > 0 {
		ph := make([]string, len(a.Milestones))
		for i, m := range a.Milestones {
			if c, ok := milestoneColumn(m); ok {
				m = c
			}
			ph[i] = "LOWER(" + q.arg(strings.TrimSpace(m)) + ")"
		}
		q.conds = append(q.conds, "LOWER(taskname) IN ("+strings.Join(ph, ", ")+")")
		words = append(words, searchWords("changes_of", "milestones", strings.Join(a.Milestones, ", ")))
	}
	out.Searched = strings.Join(words, " ")
	res, err := k.w.Query(ctx, p.Tenant, `SELECT dateofchange, projectname, taskname, fieldchanged, previousvalue, newvalue
		FROM changes `+q.clause()+` ORDER BY dateofchange DESC, change_id DESC LIMIT 100`, q.args...)
	if err != nil {
		return nil, err
	}
	out.fromResult(res)
	for _, r := range res.Rows {
		c := ChangeRow{Date: date(r[0]), Project: str(r[1]), Task: str(r[2]), Field: str(r[3]), Previous: str(r[4]), New: str(r[5])}
		if c.Field == "FinishDate" {
			a, errA := time.Parse("2006-01-02", c.Previous)
			b, errB := time.Parse("2006-01-02", c.New)
			if errA == nil && errB == nil {
				d := int(b.Sub(a).Hours() / 24)
				c.ShiftDays = &d
			}
		}
		out.Changes = append(out.Changes, c)
	}
	return out, nil
}

// canonicalField maps "finish date", "finishdate" or "risk" to the change
// log's field names (a field's own name, or texts.json's field_aliases); other text is kept.
func canonicalField(s string) string {
	norm := func(x string) string {
		return strings.Map(func(r rune) rune {
			if r == ' ' || r == '_' || r == '-' {
				return -1
			}
			return r
		}, strings.ToLower(x))
	}
	n := norm(s)
	for _, f := range ChangeFields {
		if norm(f) == n {
			return f
		}
	}
	if f, ok := texts.FieldAliases[n]; ok {
		return f
	}
	return strings.TrimSpace(s)
}
