//go:build !unix

package results

// pidAlive cannot tell on this platform, so a run marked running stays so.
func pidAlive(int) bool { return true }
