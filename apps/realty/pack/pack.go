// Package pack is realty's domain pack for the offline model: the words its users write for
// homes, listings and sold comparables, the Zillow ID (zpid) as an identifier, and the words
// that pick one of the homes a search listed ("the cheapest", "the bigger one", "that home").
// The server gives it to the offline model of every role realty uses (server.App.Pack).
package pack

import (
	_ "embed"

	"github.com/trellis-go/trellis/model/offline"
)

//go:embed pack.json
var data []byte

// Pack is realty's pack, read from pack.json.
var Pack = offline.MustParsePack(data)
