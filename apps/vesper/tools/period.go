package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/entity"
)

// This file holds what the price tools share about periods inside a year
// (a month, a quarter, a season: a set of months) and about the hub-zone's
// market, and the human dates every Searched text uses.

// monthsOf merges a tool's month and months arguments into a sorted set of
// months, checked; empty means the whole year.
func monthsOf(toolName string, month int, months []int) ([]int, error) {
	var out []int
	all := months
	if month != 0 {
		all = append([]int{month}, months...)
	}
	for _, m := range all {
		if m < 1 || m > 12 {
			return nil, &ArgError{Tool: toolName, Arg: "months", Problem: fmt.Sprintf("%d is not a month", m), Hint: "give months as 1-12, or leave them out for the whole year"}
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	if len(out) == 12 {
		return nil, nil
	}
	return out, nil
}

// inMonths adds the condition that the rolled-up rows are of the months.
func (q *query) inMonths(months []int) {
	if len(months) == 0 {
		return
	}
	ph := make([]string, len(months))
	for i, m := range months {
		ph[i] = q.arg(m)
	}
	q.conds = append(q.conds, "da.month IN ("+strings.Join(ph, ", ")+")")
}

// PeriodWords writes a year and months of it as people do: "2025", "July
// 2025", "July-September 2025", "January, February and December 2025".
func PeriodWords(year int, months []int) string {
	if len(months) == 0 {
		return fmt.Sprint(year)
	}
	contiguous := true
	for i := 1; i < len(months); i++ {
		if months[i] != months[i-1]+1 {
			contiguous = false
		}
	}
	name := func(m int) string { return time.Month(m).String() }
	switch {
	case len(months) == 1:
		return fmt.Sprintf("%s %d", name(months[0]), year)
	case contiguous:
		return fmt.Sprintf("%s-%s %d", name(months[0]), name(months[len(months)-1]), year)
	}
	names := make([]string, len(months))
	for i, m := range months {
		names[i] = name(m)
	}
	return fmt.Sprintf("%s%s%s %d", strings.Join(names[:len(names)-1], ", "), searchWords("and"), names[len(names)-1], year)
}

// marketOf returns the market to query: the one given, resolved, or, when
// none is given, the one whose curve files hold the hub-zone. A hub-zone
// that several markets hold needs the market named.
func (k *Toolkit) marketOf(ctx context.Context, tenant, toolName, market, hub string) (string, error) {
	if strings.TrimSpace(market) != "" {
		return resolve(entity.Market, market), nil
	}
	res, err := k.w.Query(ctx, tenant, `SELECT DISTINCT market FROM mc_vendor_files WHERE hubzone = $1 ORDER BY market`, hub)
	if err != nil {
		return "", err
	}
	switch len(res.Rows) {
	case 0:
		return "", nil // nothing holds the hub-zone: the query finds nothing and says so
	case 1:
		return str(res.Rows[0][0]), nil
	}
	var ms []string
	for _, r := range res.Rows {
		ms = append(ms, str(r[0]))
	}
	return "", &ArgError{Tool: toolName, Arg: "market", Problem: fmt.Sprintf("%s is a hub-zone of %s", hub, strings.Join(ms, " and ")), Hint: "name the market too"}
}

// humanDay writes a YYYY-MM-DD date as "Jan 5, 2026" for the Searched
// texts, which answers quote.
func humanDay(t time.Time) string { return t.Format("Jan 2, 2006") }

// humanRange writes a date range as "Jan 1, 2026 to Jan 31, 2026".
func humanRange(start, end time.Time) string {
	return searchWords("range", "start", humanDay(start), "end", humanDay(end))
}
