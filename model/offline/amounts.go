package offline

import (
	"regexp"
	"strconv"
	"strings"
)

// Amounts are written in many conventions: 180.000€ and 180 000 € (Portuguese and French
// thousands), $1,250,000 (English), 1.250,50 and 1,250.50 (both separators: the last one is the
// decimal point), 180k€, 1.2M, 2,5 milhões, 180 mil euros.

var (
	// reSpacedThousands finds digit groups separated by spaces (also no-break and narrow
	// no-break spaces): "180 000", "1 250 000".
	reSpacedThousands = regexp.MustCompile(`\b(\d{1,3})((?:[ \x{00A0}\x{202F}]\d{3})+)\b`)
	reAmountCore      = regexp.MustCompile(`-?\d(?:[\d.,]*\d)?`)
)

// joinSpacedThousands writes "180 000 €" as "180000 €", so a number is one field.
func joinSpacedThousands(s string) string {
	return reSpacedThousands.ReplaceAllStringFunc(s, func(m string) string {
		return strings.NewReplacer(" ", "", "\u00a0", "", "\u202f", "").Replace(m)
	})
}

// parseNumber reads digits with thousands separators and a decimal separator in either
// convention. With both '.' and ',' the last one is the decimal point; a separator repeated, or
// a single one followed by exactly three digits after a non-zero leading group ("180.000",
// "1,250"), separates thousands; otherwise it is the decimal point ("1.2", "2,5", "0.250").
func parseNumber(s string) (float64, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	dots, commas := strings.Count(s, "."), strings.Count(s, ",")
	switch {
	case dots > 0 && commas > 0:
		dec := "."
		if strings.LastIndex(s, ",") > strings.LastIndex(s, ".") {
			dec = ","
		}
		thou := map[string]string{".": ",", ",": "."}[dec]
		s = strings.ReplaceAll(s, thou, "")
		s = strings.Replace(s, dec, ".", 1)
	case dots > 1 || commas > 1:
		s = strings.NewReplacer(".", "", ",", "").Replace(s)
	case dots == 1 || commas == 1:
		sep := "."
		if commas == 1 {
			sep = ","
		}
		head, tail, _ := strings.Cut(s, sep)
		if len(tail) == 3 && len(head) <= 3 && head != "0" && head != "" {
			s = head + tail
		} else {
			s = head + "." + tail
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// multiplierWords are words written after a number that scale it.
var multiplierWords = map[string]float64{
	"mil": 1e3, "thousand": 1e3, "thousands": 1e3, "k": 1e3,
	"million": 1e6, "millions": 1e6, "milhao": 1e6, "milhoes": 1e6, "millon": 1e6, "millones": 1e6, "mln": 1e6, "mio": 1e6,
	"billion": 1e9, "billions": 1e9, "bn": 1e9, "mil milhoes": 1e9,
}

// parseAmount reads one whitespace-separated field as a number: currency symbols and codes
// around it, a k/m/bn suffix, separators in either convention. next is the following field (for
// "180 mil", "2,5 milhões"), folded; scaled reports whether next was consumed as a multiplier.
func parseAmount(field, next string) (v float64, scaled, ok bool) {
	core := strings.Trim(strings.ToLower(field), "€$£¥.,;:!?()[]\"'*")
	for _, cur := range []string{"eur", "usd", "gbp", "brl", "r$", "us$"} {
		core = strings.TrimPrefix(strings.TrimSuffix(core, cur), cur)
	}
	core = strings.Trim(core, "€$£ ")
	if core == "" || !hasDigit(core) {
		return 0, false, false
	}
	mult := 1.0
	switch {
	case strings.HasSuffix(core, "bn"):
		mult, core = 1e9, strings.TrimSuffix(core, "bn")
	case strings.HasSuffix(core, "k") || strings.HasSuffix(core, "mil"):
		mult, core = 1000, strings.TrimSuffix(strings.TrimSuffix(core, "k"), "mil")
	case strings.HasSuffix(core, "m") && !strings.HasSuffix(core, "am") && !strings.HasSuffix(core, "pm") && !strings.HasSuffix(core, "km") && !strings.HasSuffix(core, "cm") && !strings.HasSuffix(core, "mm"):
		mult, core = 1e6, strings.TrimSuffix(core, "m")
	}
	m := reAmountCore.FindString(core)
	if m == "" {
		return 0, false, false
	}
	v, ok = parseNumber(m)
	if !ok {
		return 0, false, false
	}
	if mult == 1 {
		if x, isMult := multiplierWords[strings.Trim(next, ".,;:!?")]; isMult {
			return v * x, true, true
		}
	}
	return v * mult, false, true
}
