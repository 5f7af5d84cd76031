package experiment

// BuildConfig is a TPC-C schema to build: its size and how many loader
// connections build it. EnsureSchema, ReuseSchema and Build take its
// values; a front end checks them here first.
type BuildConfig struct {
	Warehouses int
	BuildVUs   int // loader connections
}

// Validate reports every problem of the config at once, each a *Problem
// naming its field: warehouses and build_vus.
func (c BuildConfig) Validate() error {
	var ps problems
	ps.intRange("warehouses", c.Warehouses, 1, MaxWarehouses, "warehouses")
	ps.intRange("build_vus", c.BuildVUs, 1, MaxBuildVUs, "loader connections")
	return ps.err()
}
