// Package pack is listforge's domain pack for the offline model: the words its users write to
// ask for fresh research on an item ("refresh", "rerun"). The server gives it to the offline
// model of every role listforge uses (server.App.Pack).
package pack

import (
	_ "embed"

	"github.com/trellis-go/trellis/model/offline"
)

//go:embed pack.json
var data []byte

// Pack is listforge's pack, read from pack.json.
var Pack = offline.MustParsePack(data)
