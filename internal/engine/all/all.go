// Package all is the one table of the database engines tierbench drives:
// each engine's name, the DSN schemes that select it, how to open it and
// whether tierbench can run its server. Adding an engine is a row here (and
// its package beside internal/engine/postgres); nothing registers itself.
package all

import (
	"context"
	"slices"
	"strings"
	"syscall"

	"github.com/tierbench/tierbench/internal/durability"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/mariadb"
	"github.com/tierbench/tierbench/internal/engine/postgres"
)

// Constructor opens a database of one engine.
type Constructor func(ctx context.Context, dsn string) (engine.DB, error)

// Engine is one row of the table.
type Engine struct {
	Name    string
	Display string   // the engine's name in messages, e.g. "PostgreSQL"
	Schemes []string // lower-case DSN schemes that select it; the first is the one to show
	Open    Constructor
	// ManagedServer: `server start --engine NAME` and scenarios can run
	// this engine's server (internal/server).
	ManagedServer bool
	// DefaultPort is the port a DSN without one means.
	DefaultPort int
	// FaultSignals are the signals the durability test's faults send to
	// the main process of a server tierbench does not manage (kill, stop,
	// restart), in the engine's own meanings.
	FaultSignals map[string]syscall.Signal
	// Scripts are the SQL files `tpcc generate` writes beside the data,
	// named NAME-KEY.sql: the schema to create, its indexes, what runs
	// after a load, so that the data loads by hand into this engine.
	Scripts func() map[string]string
}

// sqlScript joins statements into a script, each ended with ";".
func sqlScript(stmts []string) string { return strings.Join(stmts, ";\n") + ";\n" }

// Engines lists every engine tierbench drives.
var Engines = []Engine{
	{
		Name: "postgres", Display: "PostgreSQL", Schemes: []string{"postgres", "postgresql"}, ManagedServer: true,
		DefaultPort: 5432, FaultSignals: durability.PostgresSignals,
		Open: func(ctx context.Context, dsn string) (engine.DB, error) { return postgres.Open(ctx, dsn) },
		Scripts: func() map[string]string {
			return map[string]string{"schema": postgres.SchemaSQL(), "indexes": sqlScript(postgres.IndexStatements()),
				"analyze": sqlScript(postgres.AfterLoadStatements())}
		},
	},
	{
		Name: "mariadb", Display: "MariaDB", Schemes: []string{"mysql", "mariadb"}, ManagedServer: true,
		DefaultPort: mariadb.DefaultPort, FaultSignals: durability.MariaDBSignals,
		Open: func(ctx context.Context, dsn string) (engine.DB, error) { return mariadb.Open(ctx, dsn) },
		// MariaDB/MySQL: LOAD DATA INFILE reads the same files.
		Scripts: func() map[string]string {
			return map[string]string{"schema": sqlScript(mariadb.SchemaStatements()), "indexes": sqlScript(mariadb.IndexStatements())}
		},
	},
}

// planned are schemes of engines users ask for that tierbench does not
// drive yet: their DSNs get "not supported yet" rather than "unknown".
var planned = []string{"sqlite", "sqlserver", "mssql"}

// Display is the engine's name in messages ("PostgreSQL", "MariaDB"), or
// name itself for an engine not in the table.
func Display(name string) string {
	if e, ok := Lookup(name); ok {
		return e.Display
	}
	return name
}

// FaultSignals are the fault signals of the engine of this name
// (PostgreSQL's for a name not in the table).
func FaultSignals(name string) map[string]syscall.Signal {
	if e, ok := Lookup(name); ok {
		return e.FaultSignals
	}
	return durability.PostgresSignals
}

// Lookup returns the engine of this name.
func Lookup(name string) (Engine, bool) {
	for _, e := range Engines {
		if e.Name == name {
			return e, true
		}
	}
	return Engine{}, false
}

// Names lists the engines' names; managed only those whose server tierbench
// can run.
func Names(managed bool) []string {
	var names []string
	for _, e := range Engines {
		if !managed || e.ManagedServer {
			names = append(names, e.Name)
		}
	}
	return names
}

// NameOf returns the name of the engine a DSN selects by its scheme. A DSN
// without a scheme, or with one no engine serves, is bad input
// (engine.ErrBadInput) whose message never shows the DSN's password.
func NameOf(dsn string) (string, error) {
	s, err := engine.Scheme(dsn)
	if err != nil {
		return "", err
	}
	for _, e := range Engines {
		if slices.Contains(e.Schemes, s) {
			return e.Name, nil
		}
	}
	if slices.Contains(planned, s) {
		return "", engine.InputErrorf("engine %q is not supported yet; use %s", s, schemeList())
	}
	return "", engine.InputErrorf("DSN scheme %q is unknown; use %s", s, schemeList())
}

// schemeList names the DSN forms to use, e.g. "a postgres:// DSN".
func schemeList() string {
	var forms []string
	for _, e := range Engines {
		forms = append(forms, e.Schemes[0]+"://")
	}
	return "a " + strings.Join(forms, " or ") + " DSN"
}

// Open connects to the database named by dsn, choosing the engine by the
// DSN's scheme.
func Open(ctx context.Context, dsn string) (engine.DB, error) {
	name, err := NameOf(dsn)
	if err != nil {
		return nil, err
	}
	e, _ := Lookup(name)
	return e.Open(ctx, dsn)
}
