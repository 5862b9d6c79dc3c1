package kb

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/numfmt"
)

// Euro writes an amount as pt-PT money with a dot for thousands: 180.000€.
func Euro(v float64) string {
	neg := v < 0
	n := int64(math.Round(math.Abs(v)))
	s := numfmt.Group(n, ".")
	if neg {
		s = "-" + s
	}
	return s + "€"
}

// EuroCents writes an amount with cents: 1.234,56€.
func EuroCents(v float64) string {
	neg := v < 0
	c := int64(math.Round(math.Abs(v) * 100))
	s := numfmt.Group(c/100, ".") + fmt.Sprintf(",%02d", c%100)
	if neg {
		s = "-" + s
	}
	return s + "€"
}

// EuroRange writes a cost range: 15.000€–25.000€.
func EuroRange(lo, hi float64) string {
	if math.Round(lo) == math.Round(hi) {
		return Euro(lo)
	}
	return Euro(lo) + "–" + Euro(hi)
}

// Short writes an amount in thousands without the euro sign: 180k, 1,2M, 950.
func Short(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1_000_000:
		m := math.Round(v/100_000) / 10
		return strings.Replace(strconv.FormatFloat(m, 'f', -1, 64), ".", ",", 1) + "M"
	case a >= 1000:
		return strconv.FormatInt(int64(math.Round(v/1000)), 10) + "k"
	default:
		return strconv.FormatInt(int64(math.Round(v)), 10)
	}
}

// EuroShort writes an amount compactly: 180k€.
func EuroShort(v float64) string { return Short(v) + "€" }

// RangeShort writes a range compactly: 15-25k€.
func RangeShort(lo, hi float64) string {
	if lo >= 1000 && hi >= 1000 && hi < 1_000_000 {
		l, h := strconv.FormatInt(int64(math.Round(lo/1000)), 10), strconv.FormatInt(int64(math.Round(hi/1000)), 10)
		if l == h {
			return l + "k€"
		}
		return l + "-" + h + "k€"
	}
	return Short(lo) + "-" + Short(hi) + "€"
}

// Area writes square metres: 65m².
func Area(m2 float64) string {
	return strings.Replace(strconv.FormatFloat(math.Round(m2*10)/10, 'f', -1, 64), ".", ",", 1) + "m²"
}

// Compact is the one-line analysis: Preço: 180.000€ | Área: 65m² | €/m²: 2.769€.
func Compact(price, area float64) string {
	parts := []string{answer("compact_price", "price", Euro(price))}
	if area > 0 {
		parts = append(parts, answer("compact_area", "area", Area(area), "per_m2", Euro(price/area)))
	}
	return strings.Join(parts, " | ")
}
