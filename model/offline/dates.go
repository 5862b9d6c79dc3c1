package offline

import (
	"strconv"
	"strings"
	"time"
)

var monthNames = map[string]time.Month{
	"january": 1, "jan": 1, "janeiro": 1, "february": 2, "feb": 2, "fevereiro": 2, "march": 3, "mar": 3, "marco": 3,
	"april": 4, "apr": 4, "abril": 4, "may": 5, "maio": 5, "june": 6, "jun": 6, "junho": 6, "july": 7, "jul": 7, "julho": 7,
	"august": 8, "aug": 8, "agosto": 8, "september": 9, "sep": 9, "sept": 9, "setembro": 9, "october": 10, "oct": 10,
	"outubro": 10, "november": 11, "nov": 11, "novembro": 11, "december": 12, "dec": 12, "dezembro": 12,
}

// dateRange finds the period a text talks about: explicit ISO dates first, then phrases such as
// "today", "this week", "last month", "this quarter", "last 30 days", "in March 2025". ok is false
// when the text names no period. For a single day, start equals end.
func dateRange(text string, now time.Time) (start, end time.Time, ok bool) {
	if m := reISODate.FindAllStringSubmatch(text, 2); len(m) > 0 {
		start, err := time.Parse(time.DateOnly, m[0][0])
		if err == nil {
			end = start
			if len(m) > 1 {
				if e, err := time.Parse(time.DateOnly, m[1][0]); err == nil {
					end = e
				}
			}
			return start, end, true
		}
	}
	w := words(text)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	weekStart := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7)) // Monday
	monthStart := time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC)
	quarterStart := time.Date(day.Year(), time.Month((int(day.Month())-1)/3*3+1), 1, 0, 0, 0, 0, time.UTC)
	yearStart := time.Date(day.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	for i, x := range w {
		next := ""
		if i+1 < len(w) {
			next = w[i+1]
		}
		switch x {
		case "today", "hoje":
			return day, day, true
		case "yesterday", "ontem":
			d := day.AddDate(0, 0, -1)
			return d, d, true
		case "tomorrow", "amanha":
			d := day.AddDate(0, 0, 1)
			return d, d, true
		case "this", "current", "este", "esta", "neste", "nesta":
			switch next {
			case "week", "semana":
				return weekStart, day, true
			case "month", "mes":
				return monthStart, day, true
			case "quarter", "trimestre":
				return quarterStart, day, true
			case "year", "ano":
				return yearStart, day, true
			}
		case "last", "past", "previous", "ultimo", "ultima", "ultimos", "ultimas", "passado", "passada":
			if n, err := strconv.Atoi(next); err == nil && i+2 < len(w) {
				switch unit := w[i+2]; {
				case strings.HasPrefix(unit, "day") || strings.HasPrefix(unit, "dia"):
					return day.AddDate(0, 0, -n), day, true
				case strings.HasPrefix(unit, "week") || strings.HasPrefix(unit, "semana"):
					return day.AddDate(0, 0, -7*n), day, true
				case strings.HasPrefix(unit, "month") || strings.HasPrefix(unit, "mes"):
					return day.AddDate(0, -n, 0), day, true
				case strings.HasPrefix(unit, "year") || strings.HasPrefix(unit, "ano"):
					return day.AddDate(-n, 0, 0), day, true
				}
			}
			switch next {
			case "week", "semana":
				return weekStart.AddDate(0, 0, -7), weekStart.AddDate(0, 0, -1), true
			case "month", "mes":
				return monthStart.AddDate(0, -1, 0), monthStart.AddDate(0, 0, -1), true
			case "quarter", "trimestre":
				return quarterStart.AddDate(0, -3, 0), quarterStart.AddDate(0, 0, -1), true
			case "year", "ano":
				return yearStart.AddDate(-1, 0, 0), yearStart.AddDate(0, 0, -1), true
			}
		}
		// Portuguese puts "passado" after the unit: "na semana passada", "no mês passado".
		if next == "passada" || next == "passado" || next == "anterior" {
			switch x {
			case "semana":
				return weekStart.AddDate(0, 0, -7), weekStart.AddDate(0, 0, -1), true
			case "mes":
				return monthStart.AddDate(0, -1, 0), monthStart.AddDate(0, 0, -1), true
			case "trimestre":
				return quarterStart.AddDate(0, -3, 0), quarterStart.AddDate(0, 0, -1), true
			case "ano":
				return yearStart.AddDate(-1, 0, 0), yearStart.AddDate(0, 0, -1), true
			}
		}
		if mo, isMonth := monthNames[x]; isMonth {
			dayNum, yearAt := dayOfMonth(w, i)
			ambiguous := x == "may" || x == "mar"
			if ambiguous && dayNum == 0 && !isYear(next) {
				continue
			}
			y := day.Year()
			if yearAt > 0 {
				y, _ = strconv.Atoi(w[yearAt])
			} else if isYear(next) {
				y, _ = strconv.Atoi(next)
			} else if (next == "de" || next == "of") && i+2 < len(w) && isYear(w[i+2]) {
				y, _ = strconv.Atoi(w[i+2]) // "março de 2024"
			}
			if dayNum > 0 {
				d := time.Date(y, mo, dayNum, 0, 0, 0, 0, time.UTC)
				if d.Month() == mo {
					return d, d, true
				}
			}
			s := time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)
			return s, s.AddDate(0, 1, -1), true
		}
	}
	return time.Time{}, time.Time{}, false
}

func isYear(s string) bool {
	if len(s) != 4 {
		return false
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1900 && n <= 2100
}

// dayOfMonth finds a day written beside the month at w[i]: "15 de janeiro", "15 January",
// "January 15", "15th of March", and the index of a year after it ("January 15, 2025",
// "15 de janeiro de 2025"), 0 when none.
func dayOfMonth(w []string, i int) (dayNum, yearAt int) {
	dayIn := func(s string) int {
		for _, suf := range []string{"st", "nd", "rd", "th", "o"} {
			s = strings.TrimSuffix(s, suf)
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 31 {
			return 0
		}
		return n
	}
	yearAfter := func(j int) int {
		if j < len(w) && (w[j] == "de" || w[j] == "of") {
			j++
		}
		if j < len(w) && isYear(w[j]) {
			return j
		}
		return 0
	}
	j := i - 1
	if j >= 0 && (w[j] == "de" || w[j] == "of") {
		j--
	}
	if j >= 0 {
		if n := dayIn(w[j]); n > 0 {
			return n, yearAfter(i + 1)
		}
	}
	if i+1 < len(w) {
		if n := dayIn(w[i+1]); n > 0 {
			return n, yearAfter(i + 2)
		}
	}
	return 0, 0
}
