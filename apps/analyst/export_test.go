package analyst

// Open builds the analyst outside the server, for the tests' harness.
var Open = open
