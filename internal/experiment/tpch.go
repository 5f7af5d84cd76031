package experiment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpch"
	"github.com/tierbench/tierbench/internal/version"
)

// TPCHGenerateConfig is what `tpch generate` writes: the reference
// generator's flat files of a scale factor.
type TPCHGenerateConfig struct {
	Scale   float64  // the scale factor: 0.01, 0.1, 1, 10, …
	Out     string   // a new or empty directory
	Tables  []string // the tables to write (nil: all eight)
	Workers int      // parallel generators
	Refresh int      // update sets to write too (dbgen -U): 0 for none
}

// Validate reports every problem of the config at once.
func (c TPCHGenerateConfig) Validate() error {
	var ps problems
	ps.scale(c.Scale)
	if c.Out == "" {
		ps.missing("out", "is required: a new or empty directory for the TABLE.tbl files")
	} else if st, err := os.Stat(c.Out); err == nil {
		if !st.IsDir() {
			ps.add("out", c.Out, "is a file; give a new or empty directory")
		} else if ents, _ := os.ReadDir(c.Out); len(ents) > 0 {
			ps.add("out", c.Out, "is not empty; give a new or empty directory (tierbench does not overwrite files it did not create)")
		}
	}
	for _, t := range c.Tables {
		if !slices.Contains(tpch.Tables, t) {
			ps.add("tables", t, "is not a TPC-H table; give some of %s", strings.Join(tpch.Tables, ", "))
		}
	}
	ps.intRange("workers", c.Workers, 1, MaxBuildVUs, "parallel generators")
	ps.intRange("refresh", c.Refresh, 0, MaxRefreshSets, "update sets")
	return ps.err()
}

// scale adds a problem when sf is not a scale factor the reference
// generator takes.
func (ps *problems) scale(sf float64) {
	if _, err := tpch.NewScale(sf); err != nil {
		_, msg, _ := strings.Cut(err.Error(), " is ")
		ps.add("scale", strconv.FormatFloat(sf, 'g', -1, 64), "is %s", msg)
	}
}

// TPCHBuildConfig is a TPC-H build: its scale factor and how many loader
// connections make it.
type TPCHBuildConfig struct {
	Scale    float64
	BuildVUs int  // loader connections
	Drop     bool // replace an existing TPC-H build
}

// Validate reports every problem of the config at once: scale and
// build_vus.
func (c TPCHBuildConfig) Validate() error {
	var ps problems
	ps.scale(c.Scale)
	if sc, err := tpch.NewScale(c.Scale); err == nil && !sc.PartSuppKeysUnique() {
		ps.add("scale", strconv.FormatFloat(c.Scale, 'g', -1, 64),
			"gives some parts the same supplier twice (dbgen's PARTSUPP at this small scale), which its primary key refuses; give 0.01, 0.1 or 1")
	}
	ps.intRange("build_vus", c.BuildVUs, 1, MaxBuildVUs, "loader connections")
	return ps.err()
}

// BuildTPCH builds the TPC-H tables of cfg in db: the reference
// generator's rows, loaded in parallel, then the keys, the foreign-key
// indexes and fresh statistics. An engine that cannot is bad input.
func BuildTPCH(ctx context.Context, db engine.DB, cfg TPCHBuildConfig, obs Observer) (*tpch.BuildResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b, ok := db.(engine.TPCHBuilder)
	if !ok {
		return nil, invalidf("this engine cannot build TPC-H tables; give a postgres:// or mariadb:// DSN")
	}
	sc, _ := tpch.NewScale(cfg.Scale)
	said := false
	res, err := b.BuildTPCH(ctx, engine.TPCHBuildOptions{Scale: sc, Workers: cfg.BuildVUs, Drop: cfg.Drop, Version: version.Version,
		Progress: func(p tpch.BuildProgress) {
			if !said { // once the build has begun: a refused one says only why
				obs.Note(fmt.Sprintf("building TPC-H at scale factor %g with %d loader connections", cfg.Scale, cfg.BuildVUs))
				said = true
			}
			obs.Progress(Progress{TPCHBuild: &p})
		}})
	if err != nil {
		return nil, err
	}
	obs.Result(Result{TPCHBuild: res})
	return res, nil
}

// TPCHDatabase is the database a scenario's TPC-H tables are built in, on
// a server whose DSN names TPC-C's: TPC-H's ORDERS must not meet TPC-C's.
const TPCHDatabase = "tpch"

// TPCHDatabaseOf makes TPCHDatabase on dsn's server unless it is there,
// and returns its DSN.
func TPCHDatabaseOf(ctx context.Context, dsn string) (string, error) {
	db, err := Open(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	c, ok := db.(engine.DatabaseCreator)
	if !ok {
		return "", invalidf("this engine cannot make a database for TPC-H; give a postgres:// or mariadb:// DSN")
	}
	return c.CreateDatabase(ctx, TPCHDatabase)
}

// TPCHTableFile is one table's file that GenerateTPCH wrote.
type TPCHTableFile struct {
	Table string `json:"table"`
	File  string `json:"file"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

// TPCHGenerateResult is what GenerateTPCH wrote.
type TPCHGenerateResult struct {
	Scale  float64         `json:"scale"`
	Dir    string          `json:"dir"`
	Tables []TPCHTableFile `json:"tables"`
	// Refresh are the update sets' files, when asked for: orders.tbl.uN,
	// lineitem.tbl.uN and delete.N of each set N.
	Refresh []TPCHTableFile `json:"refresh,omitempty"`
	Bytes   int64           `json:"bytes"`
	Seconds float64         `json:"seconds"`
}

// GenerateTPCH writes the tables of cfg as TABLE.tbl files, each created
// new in cfg.Out (made if absent): byte for byte what the reference
// generator, dbgen, writes for the scale factor.
func GenerateTPCH(ctx context.Context, cfg TPCHGenerateConfig) (*TPCHGenerateResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	sc, _ := tpch.NewScale(cfg.Scale)
	dir, err := filepath.Abs(cfg.Out)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	tables := cfg.Tables
	if len(tables) == 0 {
		tables = tpch.Tables
	}
	res := &TPCHGenerateResult{Scale: cfg.Scale, Dir: dir}
	for _, table := range tables {
		path := filepath.Join(dir, table+".tbl")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return res, err
		}
		rows, n, err := tpch.WriteTable(ctx, f, sc, table, cfg.Workers)
		err = errors.Join(err, f.Close())
		res.Tables = append(res.Tables, TPCHTableFile{Table: table, File: path, Rows: rows, Bytes: n})
		res.Bytes += n
		if err != nil {
			return res, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	for n := 1; n <= cfg.Refresh; n++ {
		set, err := tpch.NewRefreshSet(sc, n)
		if err != nil {
			return res, err
		}
		for _, f := range []struct {
			name string
			data []byte
			rows int
		}{
			{fmt.Sprintf("orders.tbl.u%d", n), set.Orders, len(set.Deletes)},
			{fmt.Sprintf("lineitem.tbl.u%d", n), set.LineItems, bytes.Count(set.LineItems, []byte{'\n'})},
			{fmt.Sprintf("delete.%d", n), set.DeleteFile(), len(set.Deletes)},
		} {
			path := filepath.Join(dir, f.name)
			if err := writeNew(path, f.data); err != nil {
				return res, err
			}
			res.Refresh = append(res.Refresh, TPCHTableFile{Table: f.name, File: path, Rows: int64(f.rows), Bytes: int64(len(f.data))})
			res.Bytes += int64(len(f.data))
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// writeNew writes data to a file it creates, never over one that exists.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// TPCHSubstitutions are query stream stream's parameters of the 22
// queries: the specification's validation parameters with validate, else
// those qgen -r draws from seed + stream (so that streams differ) at scale
// factor sf.
func TPCHSubstitutions(validate bool, seed int64, sf float64, stream int) [22][]string {
	if validate {
		return tpch.ValidationSubstitutions(sf)
	}
	return tpch.Substitutions(seed+int64(stream), sf)
}

// TPCHQueriesConfig is a query stream's statements to print (`tpch
// queries`).
type TPCHQueriesConfig struct {
	Seed       int64
	Scale      float64
	Stream     int
	Validation bool // the validation parameters instead of drawn ones
	Dialect    string
}

// Validate reports every problem of the config at once.
func (c TPCHQueriesConfig) Validate() error {
	var ps problems
	ps.scale(c.Scale)
	ps.intRange("stream", c.Stream, 0, MaxTPCHStreams, "(the power test's stream is 0)")
	if !c.Validation && (c.Seed < 1 || c.Seed > MaxTPCHSeed) {
		// qgen's draws never change from a seed of 0: Q7 would wait for a
		// second nation forever.
		ps.add("seed", c.Seed, "is out of range; give 1 to %d", MaxTPCHSeed)
	}
	if c.Dialect != string(tpch.Postgres) && c.Dialect != string(tpch.MariaDB) {
		ps.add("dialect", c.Dialect, "is unknown; give %s or %s", tpch.Postgres, tpch.MariaDB)
	}
	return ps.err()
}

// TPCHQueryText is one query of a stream, as `tpch run` sends it.
type TPCHQueryText struct {
	Query  int      `json:"query"`
	Params []string `json:"params"`
	SQL    []string `json:"sql"`
}

// TPCHQueries returns cfg's stream's 22 queries in its order.
func TPCHQueries(cfg TPCHQueriesConfig) ([]TPCHQueryText, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	subs := TPCHSubstitutions(cfg.Validation, cfg.Seed, cfg.Scale, cfg.Stream)
	var out []TPCHQueryText
	for _, n := range tpch.StreamOrder(cfg.Stream) {
		q, err := tpch.Statements(tpch.Dialect(cfg.Dialect), n, subs[n-1], cfg.Stream)
		if err != nil {
			return nil, err
		}
		out = append(out, TPCHQueryText{Query: n, Params: subs[n-1], SQL: append(append(q.Setup, q.Answer), q.Teardown...)})
	}
	return out, nil
}
