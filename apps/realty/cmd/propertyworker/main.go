// Command propertyworker is the realty app's property skill worker as a program of its own, for
// a container image: it listens on TRELLIS_WORKER_ADDR (":8080" by default) and serves GET
// /schema and POST /execute, calling RealtyAPI at REALTY_API_BASE with REALTY_API_KEY.
package main

import "github.com/trellis-go/trellis/apps/realty/propertyworker"

func main() { propertyworker.Main() }
