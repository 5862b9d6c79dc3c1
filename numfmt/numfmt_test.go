package numfmt_test

import (
	"math"
	"testing"

	"github.com/trellis-go/trellis/numfmt"
)

func TestGroup(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", -1000: "-1,000", 123456: "123,456",
		-123456: "-123,456", 1234567: "1,234,567", math.MinInt64: "-9,223,372,036,854,775,808"} {
		if got := numfmt.Group(n, ","); got != want {
			t.Errorf("Group(%d) = %q, want %q", n, got, want)
		}
	}
	if got := numfmt.Group(180000, "."); got != "180.000" {
		t.Errorf("Group with dots = %q", got)
	}
	if got := numfmt.Group(1234567, " "); got != "1 234 567" {
		t.Errorf("Group with spaces = %q", got)
	}
}

func TestGroupFloat(t *testing.T) {
	for v, want := range map[float64]string{2768.5: "2,769", -2768.5: "-2,769", 0.4: "0", 1e6: "1,000,000", 1e30: "1000000000000000019884624838656"} {
		if got := numfmt.GroupFloat(v, ","); got != want {
			t.Errorf("GroupFloat(%v) = %q, want %q", v, got, want)
		}
	}
	if got := numfmt.GroupFloat(math.NaN(), ","); got != "NaN" {
		t.Errorf("GroupFloat(NaN) = %q", got)
	}
}
