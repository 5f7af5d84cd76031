// Package scenarios holds the bundled scenario files (quick, engines, paper-1
// … paper-5, space-efficiency, cluster, tiers-at-load, analytic-tiers,
// crash-tiers), embedded into tierbench. They live here, at the top of the
// repository, so they are easy to find and copy as a starting point; the
// model, the parser and the runner are in internal/scenario, and
// docs/scenarios.md describes the format.
package scenarios

import "embed"

// FS holds every *.yaml file of this directory; a file's name without .yaml
// is the scenario's name.
//
//go:embed *.yaml
var FS embed.FS
