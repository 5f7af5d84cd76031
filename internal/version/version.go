// Package version holds tierbench's version, set when the binary is built.
package version

// Version is set at build time with
// -ldflags "-X github.com/tierbench/tierbench/internal/version.Version=…".
var Version = "dev"
