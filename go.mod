module github.com/trellis-go/trellis

go 1.25
