package period

import (
	"strings"
	"testing"
	"time"
)

// wed is Wednesday 2025-03-19.
var wed = time.Date(2025, 3, 19, 15, 4, 5, 0, time.UTC)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func show(p Period) string {
	end := "open"
	if !p.End.IsZero() {
		end = p.End.Format(time.DateOnly)
	}
	return p.Start.Format(time.DateOnly) + ".." + end
}

func TestRead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ text, want string }{
		// ISO dates and months
		{"sales from 2025-01-02 to 2025-01-09", "2025-01-02..2025-01-09"},
		{"from 2025-01-09 to 2025-01-02", "2025-01-02..2025-01-09"},
		{"on 2024-12-25", "2024-12-25..2024-12-25"},
		{"in 2024-11", "2024-11-01..2024-11-30"},
		{"since 2025-01-02", "2025-01-02..open"},
		{"until 2025-01-31", "2025-01-01..2025-01-31"},
		// written dates, English and Portuguese
		{"get sales for March 2024", "2024-03-01..2024-03-31"},
		{"sales on January 15, 2024", "2024-01-15..2024-01-15"},
		{"sales on 3rd February", "2025-02-03..2025-02-03"},
		{"5 January 2026", "2026-01-05..2026-01-05"},
		{"vendas em março", "2025-03-01..2025-03-31"},
		{"vendas de 15 de janeiro", "2025-01-15..2025-01-15"},
		{"vendas de 15 de janeiro de 2024", "2024-01-15..2024-01-15"},
		{"março de 2024", "2024-03-01..2024-03-31"},
		{"in December", "2024-12-01..2024-12-31"}, // the latest December begun
		{"on March 20", "2024-03-20..2024-03-20"}, // tomorrow's date last year
		{"from November to February", "2024-11-01..2025-02-28"},
		{"between Jan 5 and Jan 9", "2025-01-05..2025-01-09"},
		{"since the start of February", "2025-02-01..open"},
		{"desde 1 de fevereiro", "2025-02-01..open"},
		{"in May", "2024-05-01..2024-05-31"},
		{"May 5", "2024-05-05..2024-05-05"},
		// quarters and seasons
		{"Q1 2024", "2024-01-01..2024-03-31"},
		{"q3", "2024-07-01..2024-09-30"},
		{"the second quarter of 2024", "2024-04-01..2024-06-30"},
		{"primeiro trimestre", "2025-01-01..2025-03-31"},
		{"summer 2024", "2024-06-01..2024-08-31"},
		{"this winter", "2024-12-01..2025-02-28"},
		{"last fall", "2024-09-01..2024-11-30"},
		{"verão de 2025", "2024-12-01..2025-02-28"},
		// last N
		{"the last 30 days", "2025-02-17..2025-03-19"},
		{"past 2 weeks", "2025-03-05..2025-03-19"},
		{"last 3 months", "2024-12-19..2025-03-19"},
		{"last 2 years", "2023-03-19..2025-03-19"},
		{"últimos 10 dias", "2025-03-09..2025-03-19"},
		// relative
		{"today", "2025-03-19..2025-03-19"},
		{"what happened yesterday?", "2025-03-18..2025-03-18"},
		{"ontem", "2025-03-18..2025-03-18"},
		{"amanhã", "2025-03-20..2025-03-20"},
		{"sales last week", "2025-03-10..2025-03-16"},
		{"vendas da semana passada", "2025-03-10..2025-03-16"},
		{"this week", "2025-03-17..2025-03-19"},
		{"last month", "2025-02-01..2025-02-28"},
		{"vendas do mês passado", "2025-02-01..2025-02-28"},
		{"this month", "2025-03-01..2025-03-19"},
		{"mtd", "2025-03-01..2025-03-19"},
		{"this quarter", "2025-01-01..2025-03-19"},
		{"last quarter", "2024-10-01..2024-12-31"},
		{"year to date", "2025-01-01..2025-03-19"},
		{"YTD", "2025-01-01..2025-03-19"},
		{"neste ano", "2025-01-01..2025-03-19"},
		{"last year", "2024-01-01..2024-12-31"},
		{"ano passado", "2024-01-01..2024-12-31"},
	} {
		p, ok := Read(c.text, wed)
		if !ok {
			t.Errorf("%q: no period, want %s", c.text, c.want)
			continue
		}
		if got := show(p); got != c.want {
			t.Errorf("%q = %s, want %s", c.text, got, c.want)
		}
	}
}

func TestRollingWeeks(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"last week", "this week", "in the past week"} {
		p, ok := Options{RollingWeeks: true}.Read(text, wed)
		if got := show(p); !ok || got != "2025-03-12..2025-03-19" {
			t.Errorf("%q rolling = %s %v, want 2025-03-12..2025-03-19", text, got, ok)
		}
	}
}

// TestNoPeriod: odd and bad input names no period and never panics.
func TestNoPeriod(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"", "   ", "hello", "may I ask something?", "did prices fall?", "the Jan_2025 file",
		"Q1_2025 as-of", "2025-13-01", "2025-02-30", "1800-01-01", "in 12345", "top 10 projects",
		"the last word", "mar azul", "out of stock", "set the budget", "\x00\xff\xfe", strings.Repeat("last ", 1000),
		"99999999999999999999 days ago", "q5", "fifth quarter",
	} {
		if p, ok := Read(text, wed); ok {
			t.Errorf("%q: period %s, want none", text, show(p))
		}
	}
}

func TestMonthMeta(t *testing.T) {
	t.Parallel()
	p, _ := Read("prices in March 2024", wed)
	if p.Month != time.March {
		t.Errorf("March 2024: Month = %v", p.Month)
	}
	if y, ms := p.MonthsOfYear(); y != 2024 || len(ms) != 1 || ms[0] != 3 {
		t.Errorf("March 2024 months = %d %v", y, ms)
	}
	p, _ = Read("winter 2025", wed)
	if y, ms := p.MonthsOfYear(); y != 2025 || len(ms) != 3 || ms[0] != 1 || ms[2] != 12 {
		t.Errorf("winter 2025 months = %d %v", y, ms)
	}
	p, _ = Read("last year", wed)
	if y, ms := p.MonthsOfYear(); y != 2024 || ms != nil {
		t.Errorf("last year months = %d %v", y, ms)
	}
	p, _ = Read("last month", wed)
	if p.Month != time.February {
		t.Errorf("last month: Month = %v", p.Month)
	}
	if m, ok := MonthOf("Março"); !ok || m != time.March {
		t.Errorf("MonthOf(Março) = %v %v", m, ok)
	}
	if _, ok := MonthOf("marchy"); ok {
		t.Error("MonthOf(marchy) is a month")
	}
	ds := Dates("from 2025-01-02 to March 5", wed)
	if len(ds) != 2 || ds[0].At != day("2025-01-02") || ds[1].At != day("2025-03-05") || ds[1].HasYear || ds[0].Monthly {
		t.Errorf("Dates = %+v", ds)
	}
}

func TestWordsChecked(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		`{`,
		`{"en":{"months":{"smarch":13}}}`,
		`{"en":{"seasons":{"odd":[1,5,9]}}}`,
		`{"en":{"units":{"fortnight":"fortnight"}}}`,
		`{"en":{"to_date":{"wtd":"week"}}}`,
	} {
		if _, err := newLexicon([]byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "period: words.json") {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}

func FuzzRead(f *testing.F) {
	for _, s := range []string{"since March 5", "Q1 2025", "last 30 days", "15 de janeiro de 2024", "2025-02-30"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, ok := Read(text, wed)
		if ok && !p.End.IsZero() && p.End.Before(p.Start) {
			t.Errorf("%q: end %v before start %v", text, p.End, p.Start)
		}
	})
}
