package warehouse

import (
	"iter"
	"time"
)

// Dataset is a whole warehouse in memory, as Generate makes it and Load
// writes it. Tests read it to know the answers the tools must give.
type Dataset struct {
	Files    []VendorFile
	Curves   []Curve
	Events   []Event
	Projects []Project
	Health   []Health
	Tasks    []Task
	Budget   []BudgetLine
	Snaps    []Snapshot
	Changes  []Change
}

// VendorFile is one row of mc_vendor_files: one hub-zone of one vendor's
// As-Of curve file.
type VendorFile struct {
	FileInfoKey, HubzoneKey string
	Vendor, Market, Hubzone string
	AsOf                    string // "Jan_2025", "Q1_2025"
	Year                    int    // year the file was issued
	Reference               string // "Base"
	Selection               int    // 1 for the vendor's latest file for the hub-zone
}

// CompositeKey joins a file and a hub-zone, as mc_dayahead does.
func (f VendorFile) CompositeKey() string { return f.FileInfoKey + "_" + f.HubzoneKey }

// Curve is the hourly day-ahead price series of one VendorFile: Prices[i]
// is the price of hour Start+i hours, in $/MWh rounded to cents.
type Curve struct {
	File   VendorFile
	Start  time.Time
	Prices []float64
}

// Hour returns the time of the i-th price.
func (c Curve) Hour(i int) time.Time { return c.Start.Add(time.Duration(i) * time.Hour) }

// Event is one row of pbi_activity_events.
type Event struct {
	ID                              int64
	Tenant                          string
	ReportID, ReportName, Workspace string
	UserEmail, ActivityType         string
	Date                            time.Time
}

// Project is one row of per_project.
type Project struct {
	GID, ProjectID, Tenant, Name          string
	Stage, SPA, Sponsor, Technology       string
	GenCap, StoreCap                      float64
	Market, Location, Utility, StatusType string
	Summary                               string
	ActualsLTD, Budget, Forecast          float64
	ICLC, PPALC                           float64
	Buyer                                 string
	Tenor                                 int
	Products                              string
	Price                                 float64
	RevisionDate                          time.Time
	Archived                              bool
}

// Health is one row of per_projecthealth.
type Health struct {
	ProjectGID, Tenant, Section, Name, Color, Notes string
	Due                                             time.Time // zero: none
	PctComplete                                     *float64  // nil: not measured
	Sort                                            int
}

// Task is one row of per_tasks.
type Task struct {
	ProjectGID, Tenant, ProjectName, Name, Type string
	Finish                                      time.Time
	Status, Risk, Notes                         string
}

// BudgetLine is one row of per_project45.
type BudgetLine struct {
	ProjectID, Tenant, Group, SubGroup, Metric string
	Number                                     *float64
	Date                                       time.Time // zero: none
	MonthFromFileName                          string    // "" for the current file
}

// Snapshot is one row of activeportfolio_mm. Milestones maps the column
// name ("Stage 1 Early Dev", "Commercial Operation", ...) to its date.
type Snapshot struct {
	ProjectID, Tenant, Name, Stage, StatusColor, Commercialization string
	Milestones                                                     map[string]time.Time
	CODYear                                                        int
	Monthly                                                        bool
	AsOfDay                                                        time.Time
}

// Change is one row of changes.
type Change struct {
	ID                           int64
	Tenant                       string
	Date                         time.Time
	ProjectName, TaskName, Field string
	Previous, New                string
}

// MilestoneColumns are the date columns of activeportfolio_mm, in order.
var MilestoneColumns = []string{
	"Stage 1 Early Dev", "Stage 2 Mid Dev", "Stage 3 Late Dev", "Stage 4 Pre-Con & Finance",
	"Stage 5 Construction", "Stage 6 Operation", "Stage 7 Sale", "Stage 8 Closing",
	"Minimum Site Control", "Substantial Completion", "Mechanical Completion", "Project Finance",
	"EPC FNTP", "Execute Power Purchase Agreement", "Execute Interconnection Agreement",
	"Commercial Operation", "Decisioning Date",
}

func dateOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

func floatOrNil(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Rows yields the dataset's rows of one view, in the view's column order.
func (d *Dataset) Rows(view string) iter.Seq[[]any] {
	return func(yield func([]any) bool) {
		switch view {
		case "mc_vendor_files":
			for _, f := range d.Files {
				if !yield([]any{f.CompositeKey(), f.FileInfoKey, f.HubzoneKey, f.Vendor, f.Market, f.Hubzone, f.AsOf, int64(f.Year), f.Reference, int64(f.Selection)}) {
					return
				}
			}
		case "mc_dayahead":
			for _, c := range d.Curves {
				ck := c.File.CompositeKey()
				for i, p := range c.Prices {
					h := c.Hour(i)
					day := time.Date(h.Year(), h.Month(), h.Day(), 0, 0, 0, 0, time.UTC)
					if !yield([]any{c.File.FileInfoKey, c.File.HubzoneKey, ck, day, int64(h.Year()), int64(h.Month()), int64(h.Hour()), p}) {
						return
					}
				}
			}
		case "pbi_activity_events":
			for _, e := range d.Events {
				if !yield([]any{e.ID, e.Tenant, e.ReportID, e.ReportName, e.Workspace, e.UserEmail, e.ActivityType, e.Date}) {
					return
				}
			}
		case "per_project":
			for _, p := range d.Projects {
				if !yield([]any{p.GID, p.ProjectID, p.Tenant, p.Name, p.Stage, p.SPA, p.Sponsor, p.Technology, p.GenCap, p.StoreCap,
					p.Market, p.Location, p.Utility, p.StatusType, p.Summary, p.ActualsLTD, p.Budget, p.Forecast, p.ICLC, p.PPALC,
					p.Buyer, int64(p.Tenor), p.Products, p.Price, dateOrNil(p.RevisionDate), boolInt(p.Archived)}) {
					return
				}
			}
		case "per_projecthealth":
			for _, h := range d.Health {
				if !yield([]any{h.ProjectGID, h.Tenant, h.Section, h.Name, h.Color, h.Notes, dateOrNil(h.Due), floatOrNil(h.PctComplete), int64(h.Sort)}) {
					return
				}
			}
		case "per_tasks":
			for _, t := range d.Tasks {
				if !yield([]any{t.ProjectGID, t.Tenant, t.ProjectName, t.Name, t.Type, dateOrNil(t.Finish), t.Status, t.Risk, t.Notes}) {
					return
				}
			}
		case "per_project45":
			for _, b := range d.Budget {
				var month any
				if b.MonthFromFileName != "" {
					month = b.MonthFromFileName
				}
				if !yield([]any{b.ProjectID, b.Tenant, b.Group, b.SubGroup, b.Metric, floatOrNil(b.Number), dateOrNil(b.Date), month}) {
					return
				}
			}
		case "activeportfolio_mm":
			for _, s := range d.Snaps {
				row := []any{s.ProjectID, s.Tenant, s.Name, s.Stage, s.StatusColor, s.Commercialization}
				for _, m := range MilestoneColumns {
					row = append(row, dateOrNil(s.Milestones[m]))
				}
				row = append(row, int64(s.CODYear), boolInt(s.Monthly), s.AsOfDay)
				if !yield(row) {
					return
				}
			}
		case "changes":
			for _, c := range d.Changes {
				if !yield([]any{c.ID, c.Tenant, c.Date, c.ProjectName, c.TaskName, c.Field, c.Previous, c.New}) {
					return
				}
			}
		}
	}
}
