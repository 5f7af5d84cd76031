// Package engine defines what tierbench asks of a database engine. Each
// engine lives in its own sub-package (postgres, later mariadb, sqlite,
// mssql); package all maps a DSN's scheme to the engine's constructor.
package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// ErrBadInput marks errors caused by what the user gave (a malformed DSN, an
// existing schema without --drop): the CLI maps them to exit code 2.
var ErrBadInput = errors.New("bad input")

// ErrNoSchema says the database holds no usable TPC-C schema: none at all,
// or one whose build did not complete. It is also bad input (ErrBadInput):
// the remedy is to build one.
var ErrNoSchema = errors.New("no usable TPC-C schema")

// NoSchemaErrorf returns an error that is both ErrNoSchema and ErrBadInput.
func NoSchemaErrorf(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...), noSchema: true}
}

// InputErrorf returns an error wrapping ErrBadInput whose text is the
// formatted message alone.
func InputErrorf(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}

type inputError struct {
	msg      string
	noSchema bool
}

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Is(target error) bool {
	return target == ErrBadInput || (e.noSchema && target == ErrNoSchema)
}

// DB is one target database.
type DB interface {
	// BuildTPCC creates and loads the TPC-C schema.
	BuildTPCC(ctx context.Context, opts BuildOptions) (*tpcc.BuildResult, error)
	// CheckTPCC verifies the consistency conditions of 3.3.2 and the
	// cardinalities of 4.2.2.
	CheckTPCC(ctx context.Context, opts CheckOptions) (*tpcc.CheckResult, error)
	Close()
}

// BuildOptions says what to build and how.
type BuildOptions struct {
	Warehouses int
	Workers    int  // parallel loader connections
	Drop       bool // drop an existing TPC-C schema first
	// Progress, when set, is called about once a second while loading.
	Progress func(tpcc.BuildProgress)
	Version  string // tierbench's version, stored with the schema
}

// CheckOptions says how thoroughly to check.
type CheckOptions struct {
	All  bool   // run the expensive conditions on every warehouse
	Seed uint64 // picks the sampled warehouses
}

// Scheme returns a DSN's scheme, lower-cased: what names its engine (the
// table of engines is internal/engine/all's).
func Scheme(dsn string) (string, error) {
	i := strings.Index(dsn, "://")
	if i <= 0 {
		return "", InputErrorf("DSN %q has no scheme; give one such as postgres://user:password@host:5432/dbname", Redact(dsn))
	}
	return strings.ToLower(dsn[:i]), nil
}

// Redact returns dsn with any password replaced by "xxxxx", for messages:
// the URL's userinfo password, and a password parameter in the URL's query
// or in a keyword/value DSN (host=… password=…).
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		if start, end, ok := userinfoSpan(dsn); ok {
			// Unparseable but shaped like scheme://user:pass@host: cut the userinfo.
			return redactParams(dsn[:start] + "xxxxx" + dsn[end:])
		}
		return redactParams(dsn)
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return redactParams(u.String())
}

// PasswordOf returns the password a DSN carries, or "" (also when the DSN
// does not parse: then from between the first ':' after the scheme and the
// last '@'): what a tool that takes it out of band (PGPASSWORD) gets. A
// password parameter wins over the userinfo, as in pgx and libpq. Messages
// are never searched for it (a short password is in ordinary words): they
// show Redact(dsn), and RedactIn redacts a DSN that a driver's error quotes.
func PasswordOf(dsn string) string {
	if p := paramPassword(dsn); p != "" {
		return p
	}
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		p, _ := u.User.Password()
		return p
	}
	start, end, ok := userinfoSpan(dsn)
	if !ok {
		return ""
	}
	if _, pw, has := strings.Cut(dsn[start:end], ":"); has {
		return pw
	}
	return ""
}

// userinfoSpan finds the user[:password] part of a DSN that url.Parse
// refused: dsn[start:end] runs from after "://" to the last '@'.
func userinfoSpan(dsn string) (start, end int, ok bool) {
	i, j := strings.Index(dsn, "://"), strings.LastIndex(dsn, "@")
	if i < 0 || j <= i {
		return 0, 0, false
	}
	return i + 3, j, true
}

// Modes in which a Worker can run the transactions.
const (
	ModeRoutines   = "routines"   // one call of a stored routine per transaction
	ModeStatements = "statements" // client-side prepared statements in an explicit transaction
)

// Worker runs transactions on one connection; each virtual user owns one.
// Its methods return a *TxnError for failures the driver must classify.
type Worker interface {
	NewOrder(ctx context.Context, in *tpcc.NewOrderInput) (tpcc.NewOrderOutput, error)
	Payment(ctx context.Context, in *tpcc.PaymentInput) (tpcc.PaymentOutput, error)
	OrderStatus(ctx context.Context, in *tpcc.OrderStatusInput) (tpcc.OrderStatusOutput, error)
	Delivery(ctx context.Context, in *tpcc.DeliveryInput) (tpcc.DeliveryOutput, error)
	StockLevel(ctx context.Context, in *tpcc.StockLevelInput) (tpcc.StockLevelOutput, error)
	// Interrupt unblocks a transaction in progress by closing the
	// connection's socket. It is safe from any goroutine; the worker is
	// unusable afterwards except for Close. Drivers use it instead of
	// cancellable contexts, which cost a watcher per query.
	Interrupt()
	// PublishStats makes the database count this connection's finished
	// transactions in its shared counters now, where it would otherwise
	// do so later (PostgreSQL 15 and later: up to 10 s after a backend goes
	// idle). It reports whether it ran a transaction of its own to do so,
	// which the counters then include. Only called between transactions.
	PublishStats(ctx context.Context) (bool, error)
	Close()
}

// InterruptOnDone is for a worker's call that does not watch its context
// itself: it returns ctx.Err() when ctx has ended already, and otherwise
// has w's Interrupt close the connection should ctx end during the call,
// returning the function that undoes that. A context that can never end,
// as the driver's are, costs nothing.
func InterruptOnDone(ctx context.Context, w interface{ Interrupt() }) (stop func() bool, err error) {
	if ctx.Done() == nil {
		return neverStop, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.AfterFunc(ctx, w.Interrupt), nil
}

func neverStop() bool { return false }

// ErrorKind classifies a failed transaction.
type ErrorKind string

// The kinds of transaction failure the driver tells apart.
const (
	ErrSerialization ErrorKind = "serialization" // SQLSTATE 40001: retry may succeed
	ErrDeadlock      ErrorKind = "deadlock"      // SQLSTATE 40P01, MySQL error 1213: retry may succeed
	ErrLockTimeout   ErrorKind = "lock_timeout"  // MySQL error 1205 (innodb_lock_wait_timeout): retry may succeed
	ErrConnection    ErrorKind = "connection"    // the connection is gone: reconnect
	ErrOther         ErrorKind = "other"
)

// Retryable says whether a retry of a transaction that failed so may
// succeed: it lost a conflict with another transaction.
func (k ErrorKind) Retryable() bool {
	return k == ErrSerialization || k == ErrDeadlock || k == ErrLockTimeout
}

// TxnError is a transaction that failed (and was rolled back).
type TxnError struct {
	Kind     ErrorKind
	SQLState string // "" when the server did not answer
	Err      error
}

func (e *TxnError) Error() string { return string(e.Kind) + ": " + e.Err.Error() }
func (e *TxnError) Unwrap() error { return e.Err }

// Counters are the database's own counts that TPM and NOPM come from
// (docs/tpcc.md, "TPM and NOPM").
type Counters struct {
	Transactions int64 // commits + rollbacks of the target database (HammerDB's TPM source)
	SumNextOID   int64 // sum(d_next_o_id): its growth is the New-Orders committed (NOPM)
}

// Runner is what the TPC-C driver needs of a database besides DB.
type Runner interface {
	// Schema returns the built schema's size and C-Load, or an error
	// wrapping ErrNoSchema.
	Schema(ctx context.Context) (tpcc.SchemaInfo, error)
	// NewWorker opens a connection for one virtual user.
	NewWorker(ctx context.Context, mode string) (Worker, error)
	// Counters reads the database-side counters.
	Counters(ctx context.Context) (Counters, error)
	// InstallRoutines (re)creates the stored routines of ModeRoutines.
	InstallRoutines(ctx context.Context) error
}

// OrderVerifier is a database that can look up acknowledged New-Orders,
// for the durability test (3.5.4).
type OrderVerifier interface {
	// VerifyOrders returns the acknowledged New-Orders the database
	// contradicts: committed ones whose ORDER row is missing (or is not the
	// acknowledged order), and rolled-back ones whose order is there.
	VerifyOrders(ctx context.Context, acks []tpcc.Ack) (violations []tpcc.Ack, err error)
}

// Stats is one reading of a database server's own counters (cumulative since
// some reset; rates come from differences) and gauges (values now), by name.
type Stats struct {
	Counters map[string]float64
	Gauges   map[string]float64
}

// StatsReader is a database whose internals telemetry can sample.
type StatsReader interface {
	// Stats reads the server's counters and gauges. Its own connection is
	// kept open between calls.
	Stats(ctx context.Context) (Stats, error)
	// ServerInfo says where the server keeps its data, when the server
	// will tell, and its main process when it runs on this host (0
	// otherwise: another host, or a PID this host does not know as the
	// engine's). Telemetry uses them to find the devices and the server's
	// process tree; each engine knows its own processes (a PostgreSQL
	// postmaster and its backends, MariaDB's one mariadbd).
	ServerInfo(ctx context.Context) (dataDir string, serverPID int, err error)
}

// SettingsReader is a database that can say its version and the settings that matter
// (memory, durability, checkpoints, WAL).
type SettingsReader interface {
	Settings(ctx context.Context) (version string, settings []stored.Setting, err error)
}
