package warehouse

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// StageNames are the project stages, 1-based (StageNames[1] is Stage 1).
var StageNames = []string{"", "Stage 1 Early Dev", "Stage 2 Mid Dev", "Stage 3 Late Dev", "Stage 4 Pre-Con & Finance",
	"Stage 5 Construction", "Stage 6 Operation", "Stage 7 Sale", "Stage 8 Closing"}

// HealthDomains are the health areas of every project, in display order.
var HealthDomains = []string{"Site Control", "Permits", "Interconnection", "Engineering", "Procurement",
	"Offtake", "Financing", "Construction", "Schedule"}

var healthSection = map[string]string{
	"Site Control": "Development", "Permits": "Development", "Interconnection": "Development",
	"Engineering": "Execution", "Procurement": "Execution", "Construction": "Execution",
	"Offtake": "Commercial", "Financing": "Commercial", "Schedule": "Schedule",
}

type projSpec struct {
	name, tech, market, location, utility string
	stage                                 int
	status                                string
	budget, actuals                       float64 // 0: derived from the stage
	summary                               string
	gen, store                            float64
	archived                              bool
}

var vesperProjects = []projSpec{
	{"Nazareth Solar", "Solar", "CAISO", "Kern County, CA", "PG&E", 4, "off_track", 2.1e6, 1.4e6, "Interconnection delay", 150, 0, false},
	{"Sierra Wind", "Wind", "ERCOT", "Nolan County, TX", "Oncor", 3, "off_track", 800e3, 620e3, "Permitting stalled", 200, 0, false},
	{"Mojave BESS", "BESS", "CAISO", "San Bernardino County, CA", "SCE", 5, "off_track", 5.4e6, 4.9e6, "EPC contractor dispute", 0, 100, false},
	{"Desert Sun", "Solar", "CAISO", "Riverside County, CA", "SCE", 4, "at_risk", 3.2e6, 1.9e6, "Panel deliveries slipping", 180, 0, false},
	{"Kern Wind", "Wind", "CAISO", "Kern County, CA", "PG&E", 3, "at_risk", 1.1e6, 0.7e6, "Avian study extended", 120, 0, false},
	{"Sierra Solar", "Solar", "CAISO", "Fresno County, CA", "PG&E", 2, "on_track", 450e3, 210e3, "Site control complete", 90, 0, false},
	{"Mojave Solar", "Solar", "CAISO", "Kern County, CA", "SCE", 6, "on_track", 12.5e6, 12.1e6, "Operating at plan", 250, 0, false},
	{"Panhandle Wind", "Wind", "ERCOT", "Carson County, TX", "Xcel Energy", 5, "on_track", 0, 0, "Turbine erection under way", 300, 0, false},
	{"Big Spring Wind", "Wind", "ERCOT", "Howard County, TX", "Oncor", 2, "on_track", 0, 0, "Met tower data collected", 160, 0, false},
	{"Lone Star BESS", "BESS", "ERCOT", "Harris County, TX", "CenterPoint", 4, "at_risk", 0, 0, "Transformer lead time", 0, 200, false},
	{"Pecos Solar", "Solar", "ERCOT", "Pecos County, TX", "AEP Texas", 3, "on_track", 0, 0, "Interconnection study complete", 220, 0, false},
	{"Caprock Wind", "Wind", "ERCOT", "Crosby County, TX", "Oncor", 1, "on_track", 0, 0, "Landowner outreach", 180, 0, false},
	{"Gulf Coast BESS", "BESS", "ERCOT", "Brazoria County, TX", "CenterPoint", 2, "at_risk", 0, 0, "Flood-zone permitting", 0, 150, false},
	{"Tehachapi Wind", "Wind", "CAISO", "Kern County, CA", "SCE", 6, "on_track", 0, 0, "Availability above 97%", 140, 0, false},
	{"Imperial Solar", "Solar", "CAISO", "Imperial County, CA", "IID", 1, "on_track", 0, 0, "Screening complete", 200, 0, false},
	{"Antelope Valley Solar", "Solar", "CAISO", "Los Angeles County, CA", "SCE", 5, "at_risk", 0, 0, "Tracker supply delays", 175, 0, false},
	{"Central Valley BESS", "BESS", "CAISO", "Merced County, CA", "PG&E", 3, "on_hold", 0, 0, "Paused pending RA contract", 0, 120, false},
	{"Coachella Solar+Storage", "Solar+Storage", "CAISO", "Riverside County, CA", "IID", 2, "on_track", 0, 0, "Layout optimisation", 120, 60, false},
	{"Hill Country Solar", "Solar", "ERCOT", "Gillespie County, TX", "CPS Energy", 1, "on_track", 0, 0, "Title review", 100, 0, false},
	{"Llano Estacado Wind", "Wind", "ERCOT", "Lubbock County, TX", "LP&L", 2, "on_hold", 0, 0, "Paused for transmission upgrade", 250, 0, false},
	{"Brazos BESS", "BESS", "ERCOT", "Brazos County, TX", "Oncor", 4, "on_track", 0, 0, "Financing in diligence", 0, 100, false},
	{"Permian Solar", "Solar", "ERCOT", "Ector County, TX", "Oncor", 5, "on_track", 0, 0, "Piles complete", 260, 0, false},
	{"Indiana Prairie Solar", "Solar", "MISO", "Benton County, IN", "NIPSCO", 3, "at_risk", 0, 0, "MISO queue restudy", 200, 0, false},
	{"Hoosier Wind", "Wind", "MISO", "White County, IN", "Duke Energy Indiana", 6, "on_track", 0, 0, "Operating at plan", 150, 0, false},
	{"Keystone Solar", "Solar", "PJM", "Lancaster County, PA", "PPL", 2, "on_track", 0, 0, "Zoning approved", 80, 0, false},
	{"Chesapeake BESS", "BESS", "PJM", "Anne Arundel County, MD", "BGE", 3, "at_risk", 0, 0, "PJM transition cycle slip", 0, 80, false},
	{"Adirondack Wind", "Wind", "NYISO", "Lewis County, NY", "National Grid", 1, "on_track", 0, 0, "Wind resource assessment", 110, 0, false},
	{"Berkshire Solar", "Solar", "ISO-NE", "Berkshire County, MA", "Eversource", 2, "on_track", 0, 0, "SMART program application", 40, 0, false},
	{"Red River Hybrid", "Hybrid", "ERCOT", "Wichita County, TX", "Oncor", 3, "on_track", 0, 0, "Hybrid layout approved", 150, 75, false},
	{"Owens Lake Solar", "Solar", "CAISO", "Inyo County, CA", "LADWP", 2, "on_hold", 0, 0, "Archived: site abandoned", 60, 0, true},
}

var northwindProjects = []projSpec{
	{"Prairie Wind", "Wind", "SPP", "Custer County, OK", "OG&E", 3, "on_track", 0, 0, "Turbine supply agreement signed", 180, 0, false},
	{"Harbor BESS", "BESS", "ISO-NE", "Bristol County, MA", "Eversource", 2, "at_risk", 0, 0, "Fire code review", 0, 50, false},
	{"Nazareth Ridge Solar", "Solar", "PJM", "Northampton County, PA", "PPL", 4, "off_track", 0, 0, "Tax equity withdrawn", 90, 0, false},
}

var statusColor = map[string]string{"on_track": "Green", "at_risk": "Yellow", "off_track": "Red", "on_hold": "Blue"}

func fptr(f float64) *float64 { return &f }

// milestoneOverrides are the post-change dates of the example change log.
var milestoneOverrides = map[string]map[string]time.Time{
	"Sierra Wind":    {"Execute Interconnection Agreement": day(2026, 6, 30)},
	"Nazareth Solar": {"Project Finance": day(2025, 11, 28), "Commercial Operation": day(2027, 3, 31)},
	"Desert Sun":     {"EPC FNTP": day(2026, 4, 15)},
	"Mojave BESS":    {"Mechanical Completion": day(2027, 2, 15)},
	"Kern Wind":      {"Commercial Operation": day(2027, 9, 30)},
}

// exampleChanges are the FinishDate changes of the last week in the
// specification's example B.5, newest first, with their previous dates.
var exampleChanges = []struct {
	date             time.Time
	project, task    string
	previous, latest time.Time
}{
	{day(2026, 2, 26), "Sierra Wind", "Execute Interconnection Agreement", day(2026, 3, 31), day(2026, 6, 30)},
	{day(2026, 2, 25), "Nazareth Solar", "Project Finance", day(2025, 8, 29), day(2025, 11, 28)},
	{day(2026, 2, 24), "Desert Sun", "EPC FNTP", day(2026, 4, 15), day(2026, 4, 15)},
	{day(2026, 2, 23), "Mojave BESS", "Mechanical Completion", day(2026, 12, 15), day(2027, 2, 15)},
	{day(2026, 2, 21), "Kern Wind", "Commercial Operation", day(2027, 6, 30), day(2027, 9, 30)},
}

func milestones(p projSpec) map[string]time.Time {
	m := map[string]time.Time{}
	entered := Today.AddDate(0, -4, 0)
	stageDate := func(k int) time.Time { return entered.AddDate(0, 9*(k-p.stage), 0) }
	for k := 1; k <= 6; k++ {
		m[StageNames[k]] = stageDate(k)
	}
	m["Minimum Site Control"] = stageDate(1).AddDate(0, 3, 0)
	m["Execute Interconnection Agreement"] = stageDate(3).AddDate(0, 4, 0)
	m["Execute Power Purchase Agreement"] = stageDate(3).AddDate(0, 6, 0)
	m["Decisioning Date"] = stageDate(4).AddDate(0, -1, 0)
	m["Project Finance"] = stageDate(4).AddDate(0, 5, 0)
	m["EPC FNTP"] = stageDate(5)
	m["Mechanical Completion"] = stageDate(6).AddDate(0, -3, 0)
	m["Substantial Completion"] = stageDate(6).AddDate(0, -1, 0)
	m["Commercial Operation"] = stageDate(6)
	for k, v := range milestoneOverrides[p.name] {
		m[k] = v
	}
	return m
}

func genProjects(d *Dataset) {
	rng := rand.New(rand.NewPCG(0x9e, 1))
	n := 0
	for _, group := range []struct {
		tenant string
		specs  []projSpec
	}{{TenantVesper, vesperProjects}, {TenantNorthwind, northwindProjects}} {
		for _, s := range group.specs {
			n++
			genProject(d, rng, group.tenant, n, s)
		}
	}
	genChanges(d, rng)
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func genProject(d *Dataset, rng *rand.Rand, tenant string, n int, s projSpec) {
	size := math.Max(s.gen, s.store*1.5) / 150
	budget, actuals := s.budget, s.actuals
	if budget == 0 {
		budget = math.Round((0.3+1.4*float64(s.stage))*size*1e6/1e4) * 1e4
		actuals = math.Round(budget*(0.15*float64(s.stage)+rng.Float64()*0.1)/1e4) * 1e4
		actuals = math.Min(actuals, budget*0.98)
	}
	forecast := math.Round(budget*map[string]float64{"on_track": 1.0, "at_risk": 1.06, "off_track": 1.14, "on_hold": 1.0}[s.status]/1e4) * 1e4
	ms := milestones(s)
	cod := ms["Commercial Operation"]
	p := Project{
		GID: fmt.Sprintf("12050000%08d", n), ProjectID: fmt.Sprintf("PRJ-%04d", n), Tenant: tenant, Name: s.name,
		Stage: StageNames[s.stage], SPA: []string{"West", "Texas", "East"}[map[string]int{"CAISO": 0, "ERCOT": 1}[s.market]],
		Sponsor:    []string{"M. Okafor", "J. Lindqvist", "R. Patel", "S. Moreau", "T. Nakamura"}[n%5],
		Technology: s.tech, GenCap: s.gen, StoreCap: s.store, Market: s.market, Location: s.location, Utility: s.utility,
		StatusType: s.status, Summary: s.summary, ActualsLTD: actuals, Budget: budget, Forecast: forecast,
		ICLC: math.Round(budget*0.08/1e3) * 1e3, PPALC: math.Round(budget*0.05/1e3) * 1e3,
		Archived: s.archived,
	}
	if s.stage >= 3 {
		p.Buyer = []string{"PG&E", "Shell Energy", "Google", "Microsoft", "Constellation", "Amazon"}[n%6]
		p.Tenor = 10 + 5*(n%3)
		p.Products = map[bool]string{true: "Energy + RA", false: "Energy + RECs"}[s.store > 0]
		p.Price = round2(28 + float64(n%9)*3.15)
		p.RevisionDate = Today.AddDate(0, -(n % 5), -(n % 11))
	}
	d.Projects = append(d.Projects, p)

	// health
	for i, dom := range HealthDomains {
		h := Health{ProjectGID: p.GID, Tenant: tenant, Section: healthSection[dom], Name: dom, Sort: i + 1}
		if s.name == "Nazareth Solar" {
			h = nazarethHealth(h)
		} else {
			h = genHealth(h, s, i, cod)
		}
		d.Health = append(d.Health, h)
	}

	// tasks, one per milestone task
	for i, name := range []string{"Minimum Site Control", "Execute Interconnection Agreement", "Execute Power Purchase Agreement",
		"Project Finance", "EPC FNTP", "Mechanical Completion", "Commercial Operation"} {
		t := Task{ProjectGID: p.GID, Tenant: tenant, ProjectName: s.name, Name: name, Type: "Milestone", Finish: ms[name]}
		switch {
		case t.Finish.Before(Today) && !(s.name == "Nazareth Solar" && name == "Project Finance"):
			t.Status = "Complete"
		case t.Finish.Before(Today.AddDate(0, 6, 0)):
			t.Status = "In Progress"
		default:
			t.Status = "Not Started"
		}
		if t.Status != "Complete" {
			switch s.status {
			case "off_track":
				t.Risk = []string{"High", "Medium"}[i%2]
				t.Notes = s.summary + " affects " + name
			case "at_risk":
				if i%2 == 1 {
					t.Risk = "Medium"
					t.Notes = s.summary
				}
			case "on_track":
				if i%4 == 3 {
					t.Risk = "Low"
					t.Notes = "Watch item"
				}
			}
		}
		d.Tasks = append(d.Tasks, t)
	}
	d.Tasks = append(d.Tasks, Task{ProjectGID: p.GID, Tenant: tenant, ProjectName: s.name, Name: "Monthly PER update",
		Type: "Task", Finish: Today.AddDate(0, 0, 3), Status: "In Progress"})

	// budget detail (per_project45): current file plus last month's file
	for _, file := range []string{"", "Jan_2026"} {
		k := 1.0
		if file != "" {
			k = 0.97
		}
		add := func(group, sub, metric string, num *float64, date time.Time) {
			d.Budget = append(d.Budget, BudgetLine{ProjectID: p.ProjectID, Tenant: tenant, Group: group, SubGroup: sub,
				Metric: metric, Number: num, Date: date, MonthFromFileName: file})
		}
		for _, sub := range []struct {
			name  string
			share float64
		}{{"Development", 0.2}, {"Interconnection", 0.3}, {"EPC", 0.5}} {
			add("Capital Budget", sub.name, "Budget", fptr(math.Round(budget*sub.share*k)), time.Time{})
			add("Capital Budget", sub.name, "Actuals", fptr(math.Round(actuals*sub.share*k)), time.Time{})
			add("Capital Budget", sub.name, "Forecast", fptr(math.Round(forecast*sub.share*k)), time.Time{})
		}
		add("Capital At Risk", "Letters of Credit", "IC_LC", fptr(p.ICLC), time.Time{})
		add("Capital At Risk", "Letters of Credit", "PPA_LC", fptr(p.PPALC), time.Time{})
		add("Project Return", "Returns", "Levered IRR", fptr(round2(0.065+float64(n%7)*0.004)), time.Time{})
		add("Schedule", "Key Dates", "COD", nil, cod)
	}

	// monthly snapshots of the portfolio
	commercial := []string{"Merchant", "RFP Submitted", "Shortlisted", "In Negotiation", "PPA Executed", "PPA Executed", "PPA Executed"}[min(s.stage, 6)]
	for _, snap := range []struct {
		asof    time.Time
		monthly bool
	}{{day(2025, 12, 31), true}, {day(2026, 1, 31), true}, {day(2026, 2, 13), false}, {Today, true}} {
		m := map[string]time.Time{}
		for k, v := range ms {
			m[k] = v
		}
		if snap.asof.Before(day(2026, 2, 20)) { // before the example changes
			for _, c := range exampleChanges {
				if c.project == s.name {
					m[c.task] = c.previous
				}
			}
		}
		color := statusColor[s.status]
		stage := StageNames[s.stage]
		d.Snaps = append(d.Snaps, Snapshot{ProjectID: p.ProjectID, Tenant: tenant, Name: s.name, Stage: stage, StatusColor: color,
			Commercialization: commercial, Milestones: m, CODYear: m["Commercial Operation"].Year(), Monthly: snap.monthly, AsOfDay: snap.asof})
	}
}

func nazarethHealth(h Health) Health {
	type row struct {
		color string
		pct   *float64
		due   time.Time
		notes string
	}
	rows := map[string]row{
		"Site Control":    {"green", fptr(100), time.Time{}, "Site secured"},
		"Permits":         {"yellow", fptr(65), day(2025, 6, 30), "CEQA review pending"},
		"Interconnection": {"red", fptr(40), day(2025, 9, 30), "Phase II study delayed"},
		"Engineering":     {"green", fptr(80), time.Time{}, ""},
		"Procurement":     {"yellow", fptr(30), day(2025, 8, 31), "Panel pricing TBD"},
		"Offtake":         {"green", fptr(100), time.Time{}, "PPA executed"},
		"Financing":       {"red", fptr(20), day(2025, 10, 31), "Term sheet not yet received"},
		"Construction":    {"n/a", fptr(0), time.Time{}, "Not started"},
		"Schedule":        {"yellow", nil, time.Time{}, "COD at risk by ~3 months"},
	}
	r := rows[h.Name]
	h.Color, h.PctComplete, h.Due, h.Notes = r.color, r.pct, r.due, r.notes
	return h
}

// domainStage is the stage by which a health domain is normally complete.
var domainStage = map[string]int{"Site Control": 2, "Permits": 3, "Interconnection": 4, "Engineering": 4,
	"Procurement": 5, "Offtake": 4, "Financing": 5, "Construction": 6, "Schedule": 99}

func genHealth(h Health, s projSpec, i int, cod time.Time) Health {
	done := domainStage[h.Name]
	switch {
	case h.Name == "Schedule":
		h.Color = map[string]string{"on_track": "green", "at_risk": "yellow", "off_track": "red", "on_hold": "blue"}[s.status]
		h.Notes = "COD " + cod.Format("Jan 2006")
	case s.stage >= done:
		h.Color, h.PctComplete, h.Notes = "green", fptr(100), "Complete"
	case h.Name == "Construction" && s.stage < 5:
		h.Color, h.PctComplete, h.Notes = "n/a", fptr(0), "Not started"
	default:
		pct := math.Round(100 * float64(s.stage) / float64(done+1))
		h.Color, h.PctComplete = "green", fptr(pct)
		h.Due = Today.AddDate(0, 2+i, 0)
		switch s.status {
		case "off_track":
			if i%2 == 0 {
				h.Color, h.Notes = "red", s.summary
			} else {
				h.Color = "yellow"
			}
		case "at_risk":
			if i%3 == 1 {
				h.Color, h.Notes = "yellow", s.summary
			}
		case "on_hold":
			h.Color, h.Notes = "blue", "On hold"
		}
	}
	return h
}

var changeFields = []string{"Status", "Risk Assessment", "NotesForPER", "Budget", "Forecast", "Spend", "FinishDate"}

func genChanges(d *Dataset, rng *rand.Rand) {
	var id int64
	add := func(tenant string, date time.Time, project, task, field, prev, next string) {
		id++
		d.Changes = append(d.Changes, Change{ID: id, Tenant: tenant, Date: date, ProjectName: project, TaskName: task, Field: field, Previous: prev, New: next})
	}
	for _, c := range exampleChanges {
		add(TenantVesper, c.date, c.project, c.task, "FinishDate", c.previous.Format("2006-01-02"), c.latest.Format("2006-01-02"))
	}
	add(TenantVesper, day(2026, 2, 24), "Lone Star BESS", "", "Status", "On Track", "At Risk")
	add(TenantVesper, day(2026, 2, 22), "Nazareth Solar", "Execute Interconnection Agreement", "Risk Assessment", "Medium", "High")
	add(TenantVesper, day(2026, 2, 19), "Panhandle Wind", "Mechanical Completion", "FinishDate", "2026-09-30", "2026-10-30")
	// older history: about five changes a week since December
	for dt := day(2025, 12, 1); dt.Before(day(2026, 2, 19)); dt = dt.AddDate(0, 0, 1) {
		if dt.Weekday() == time.Saturday || dt.Weekday() == time.Sunday {
			continue
		}
		p := vesperProjects[rng.IntN(len(vesperProjects)-1)]
		field := changeFields[rng.IntN(len(changeFields))]
		var prev, next, task string
		switch field {
		case "Status":
			prev, next = "On Track", "At Risk"
		case "Risk Assessment":
			prev, next, task = "Low", "Medium", "Execute Power Purchase Agreement"
		case "NotesForPER":
			prev, next = "", p.summary
		case "Budget", "Forecast", "Spend":
			v := float64(100+rng.IntN(900)) * 1e3
			prev, next = fmt.Sprintf("%.0f", v), fmt.Sprintf("%.0f", v*1.05)
		case "FinishDate":
			task = "EPC FNTP"
			t := day(2026, time.Month(3+rng.IntN(9)), 15)
			prev, next = t.Format("2006-01-02"), t.AddDate(0, 1, 0).Format("2006-01-02")
		}
		add(TenantVesper, dt, p.name, task, field, prev, next)
	}
	add(TenantNorthwind, day(2026, 2, 25), "Nazareth Ridge Solar", "Project Finance", "FinishDate", "2026-05-29", "2026-09-30")
	add(TenantNorthwind, day(2026, 2, 10), "Harbor BESS", "", "Status", "On Track", "At Risk")
}
