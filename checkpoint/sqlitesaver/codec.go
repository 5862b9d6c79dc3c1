package sqlitesaver

import "github.com/trellis-go/trellis/checkpoint/internal/rowcodec"

// The row layout and the checks on what is read back are shared with the other SQL saver.
type row = rowcodec.Row

var (
	encodeCheckpoint = rowcodec.Encode
	decodeCheckpoint = rowcodec.Decode
	checkChains      = rowcodec.CheckChains
	checkBlobs       = rowcodec.CheckBlobs
)
