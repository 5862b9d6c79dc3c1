package period_test

import (
	"fmt"
	"time"

	"github.com/trellis-go/trellis/period"
)

func ExampleRead() {
	today := time.Date(2025, 3, 19, 0, 0, 0, 0, time.UTC) // a Wednesday
	for _, text := range []string{
		"sales in December",
		"vendas da semana passada",
		"prices for Q3",
		"views since February 1",
		"did prices fall?",
	} {
		p, ok := period.Read(text, today)
		switch {
		case !ok:
			fmt.Printf("%-26s no period\n", text)
		case p.End.IsZero():
			fmt.Printf("%-26s %s onwards\n", text, p.Start.Format(time.DateOnly))
		default:
			fmt.Printf("%-26s %s to %s\n", text, p.Start.Format(time.DateOnly), p.End.Format(time.DateOnly))
		}
	}
	// Output:
	// sales in December          2024-12-01 to 2024-12-31
	// vendas da semana passada   2025-03-10 to 2025-03-16
	// prices for Q3              2024-07-01 to 2024-09-30
	// views since February 1     2025-02-01 onwards
	// did prices fall?           no period
}

func ExampleOptions_Read() {
	today := time.Date(2025, 3, 19, 0, 0, 0, 0, time.UTC)
	p, _ := period.Options{RollingWeeks: true}.Read("what changed last week?", today)
	fmt.Println(p.Start.Format(time.DateOnly), p.End.Format(time.DateOnly))
	// Output: 2025-03-12 2025-03-19
}
