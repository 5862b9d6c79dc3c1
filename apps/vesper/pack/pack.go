// Package pack is vesper's domain pack for the offline model: the words its users write for
// report usage (views, the most popular reports), hourly price shapes and project milestones and
// risks. The server gives it to the offline model of every role vesper uses (server.App.Pack).
package pack

import (
	_ "embed"

	"github.com/trellis-go/trellis/model/offline"
)

//go:embed pack.json
var data []byte

// Pack is vesper's pack, read from pack.json.
var Pack = offline.MustParsePack(data)
