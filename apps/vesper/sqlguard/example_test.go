package sqlguard_test

import (
	"fmt"

	"github.com/trellis-go/trellis/apps/vesper/sqlguard"
)

func ExampleGuard_Check() {
	g := sqlguard.New(nil)
	ok, err := g.Check("SELECT technology, COUNT(*) FROM per_project GROUP BY technology;")
	fmt.Println(ok.SQL, ok.Views, err)

	_, err = g.Check("WITH gone AS (DELETE FROM changes RETURNING *) SELECT * FROM gone")
	fmt.Println(err)
	// Output:
	// SELECT technology, COUNT(*) FROM per_project GROUP BY technology [per_project] <nil>
	// sqlguard: query rejected: DELETE changes data; only plain reads of the approved views can run here
}
