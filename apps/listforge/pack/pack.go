// Package pack is listforge's domain pack for the offline model: what its chat's requests look
// like (listforge.RouteTools: a question per topic, a field update, fresh research), as cue
// phrases with their weights, the patterns of a field's new value, and its users' words. The
// server gives it to the offline model of every role listforge uses (server.App.Pack), and the
// chat asks that model which request a message is (listforge.Understand).
package pack

import (
	_ "embed"

	"github.com/trellis-go/trellis/model/offline"
)

//go:embed pack.json
var data []byte

// Pack is listforge's pack, read from pack.json.
var Pack = offline.MustParsePack(data)
