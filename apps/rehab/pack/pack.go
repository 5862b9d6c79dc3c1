// Package pack is rehab's domain pack for the offline model: the words its users write for
// properties, portfolios, renovations, taxes and tasks (in Portuguese first, and in English,
// Spanish, French and German), the words after which they write a property's ID, and the
// Portuguese typology "T2" read as two bedrooms. The server gives it to the offline model of
// every role rehab uses (server.App.Pack).
package pack

import (
	_ "embed"

	"github.com/trellis-go/trellis/model/offline"
)

//go:embed pack.json
var data []byte

// Pack is rehab's pack, read from pack.json.
var Pack = offline.MustParsePack(data)
