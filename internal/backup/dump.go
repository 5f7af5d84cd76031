package backup

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
	"golang.org/x/sync/errgroup"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/mariadb"
	"github.com/tierbench/tierbench/internal/stored"
)

// tierbench-dump and tierbench-load are MariaDB's logical backup and
// restore, what mydumper and myloader do, in tierbench:
//
// The dump takes one consistent snapshot with Jobs connections: a control
// connection holds commits for an instant (BACKUP STAGE BLOCK_DDL, then
// BLOCK_COMMIT; FLUSH TABLES WITH READ LOCK on servers without BACKUP
// STAGE) while it reads the schema and each worker starts its transaction
// (START TRANSACTION WITH CONSISTENT SNAPSHOT), then lets go; so every
// worker sees the same committed state even while TPC-C runs, and writes
// stop only for that instant. The workers then stream the tables, the
// largest first, as LOAD DATA's default text (tab-separated, \N for NULL,
// backslash escapes, one row a line; bytes as stored: no character set
// conversion either way) into TABLE.NNNN.tsv files of at most dumpChunk
// bytes each. tierbench-dump.json, written last, holds the schema: each
// table's CREATE TABLE without its secondary indexes and foreign keys,
// which are added after the load, and the views, routines and triggers.
//
// The load creates the tables in a fresh database, loads the files with
// Jobs connections in parallel (LOAD DATA LOCAL INFILE, streamed by the
// driver; unique and foreign-key checks off), adds each table's secondary
// indexes as soon as its last file is in, then creates the views, routines
// and triggers. Their DEFINER is left out: the restoring user owns them,
// as pg_restore --no-owner does.
//
// Files are written and read by dd children inside the phase's cgroups
// (groupfile.go). What the dump does not copy: events, sequences,
// system-versioned history; non-transactional tables (MyISAM, Aria) are
// copied but are not part of the snapshot once the commits are let go.

// dumpManifest is the name of the dump's schema file.
const dumpManifest = "tierbench-dump.json"

// dumpFormat names the layout of a tierbench-dump directory.
const dumpFormat = "tierbench-dump/1"

// dumpChunk is the size at which a table's file is closed and the next
// begun, so that the load of a large table is spread over the workers.
const dumpChunk = 64 << 20

// dumpDoc is tierbench-dump.json.
type dumpDoc struct {
	Format    string       `json:"format"`
	Database  string       `json:"database"` // the source database's name
	Charset   string       `json:"charset"`
	Collation string       `json:"collation"`
	Tables    []dumpTable  `json:"tables"`  // largest first
	Objects   []dumpObject `json:"objects"` // created after the tables, in this order
}

// dumpTable is one table's schema and files.
type dumpTable struct {
	Name string `json:"name"`
	// Create is its CREATE TABLE without the secondary indexes and the
	// foreign keys: Later are the ALTER TABLE clauses that add them.
	Create string   `json:"create"`
	Later  []string `json:"later,omitempty"`
	// Columns are the columns dumped, in the files' order (generated
	// columns are computed again; invisible ones are included).
	Columns []string   `json:"columns"`
	Files   []dumpFile `json:"files"`
	size    int64      // its data's size on the server, to order the work
}

// dumpFile is one file of a table's rows.
type dumpFile struct {
	Name  string `json:"name"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

// dumpObject is a view, a stored procedure or function, or a trigger.
type dumpObject struct {
	Kind    string `json:"kind"` // "view" | "procedure" | "function" | "trigger"
	Name    string `json:"name"`
	SQLMode string `json:"sql_mode,omitempty"`
	Create  string `json:"create"`
}

// dumpSession is what every dump connection sets first: rows come as
// stored (no character set conversion), TIMESTAMPs in UTC, and a worker
// whose writes are slowed down by a throttled tier is not dropped by the
// server for not reading.
var dumpSession = []string{
	"SET SESSION character_set_results = binary",
	"SET SESSION time_zone = '+00:00'",
	"SET SESSION net_write_timeout = 3600",
	"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
}

// loadSession is what every load connection sets first: no unique or
// foreign-key checks while loading (the rows come from one consistent
// snapshot), a 0 in an AUTO_INCREMENT column kept as 0, TIMESTAMPs in
// UTC, and time for a slow tier to deliver the file.
var loadSession = []string{
	"SET SESSION unique_checks = 0",
	"SET SESSION foreign_key_checks = 0",
	"SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'",
	"SET SESSION time_zone = '+00:00'",
	"SET SESSION net_read_timeout = 3600",
}

// session opens a connection of db and runs stmts on it.
func session(ctx context.Context, db *sql.DB, dsn string, stmts []string) (*sql.Conn, error) {
	conn, err := mariaConn(ctx, db, dsn)
	if err != nil {
		return nil, err
	}
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", s, err)
		}
	}
	return conn, nil
}

// dumpDatabase is the backup phase of tierbench-dump into dir.
func dumpDatabase(ctx context.Context, o Options, ph *stored.Phase, dir string) error {
	if _, err := mariadb.ParseDSN(o.DSN); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	return timePhase(ph, o, o.DataDir, func() error { return dump(ctx, o, dir) })
}

func dump(ctx context.Context, o Options, dir string) error {
	db, err := mariaOpen(o.DSN)
	if err != nil {
		return err
	}
	defer db.Close()
	jobs := o.jobs()
	control, err := session(ctx, db, o.DSN, dumpSession)
	if err != nil {
		return err
	}
	defer control.Close()
	workers := make([]*sql.Conn, jobs)
	for i := range workers {
		if workers[i], err = session(ctx, db, o.DSN, dumpSession); err != nil {
			return err
		}
		defer workers[i].Close()
	}
	doc, err := snapshot(ctx, control, workers)
	if err != nil {
		return err
	}

	next := make(chan int, len(doc.Tables))
	for i := range doc.Tables {
		next <- i
	}
	close(next)
	g, gctx := errgroup.WithContext(ctx)
	for _, w := range workers {
		g.Go(func() error {
			for i := range next {
				if err := dumpRows(gctx, w, o.CgroupProcs, dir, &doc.Tables[i], i); err != nil {
					return err
				}
			}
			_, err := w.ExecContext(gctx, "COMMIT")
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileInGroup(ctx, o.CgroupProcs, filepath.Join(dir, dumpManifest), append(b, '\n')); err != nil {
		return err
	}
	// The files synced themselves; their entries, and dir's, remain.
	return syncInGroup(ctx, o.CgroupProcs, dir, filepath.Dir(dir))
}

// errNumber is the server's error number in err (0 when none).
func errNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// snapshot reads the schema and starts every worker's transaction on one
// consistent state of the database, holding commits (and DDL) meanwhile
// when there is more than one worker.
func snapshot(ctx context.Context, control *sql.Conn, workers []*sql.Conn) (doc *dumpDoc, err error) {
	release := ""
	if len(workers) > 1 {
		release = "BACKUP STAGE END"
		_, err := control.ExecContext(ctx, "BACKUP STAGE START")
		if err == nil {
			_, err = control.ExecContext(ctx, "BACKUP STAGE BLOCK_DDL")
		} else if errNumber(err) == 1064 { // a syntax error: MySQL, or MariaDB before 10.4
			release = "UNLOCK TABLES"
			_, err = control.ExecContext(ctx, "FLUSH TABLES WITH READ LOCK")
		}
		if err != nil {
			if errNumber(err) == 1227 { // ER_SPECIFIC_ACCESS_DENIED_ERROR
				return nil, engine.InputErrorf("tierbench-dump holds commits for an instant so that its %d connections share one snapshot, "+
					"which needs the RELOAD privilege: GRANT RELOAD ON *.* to the DSN's user, or give --jobs 1 (the server said: %v)", len(workers), err)
			}
			return nil, fmt.Errorf("holding commits for a consistent snapshot: %w", err)
		}
		defer func() {
			if release != "" {
				control.ExecContext(context.WithoutCancel(ctx), release)
			}
		}()
	}
	if doc, err = readSchema(ctx, control); err != nil {
		return nil, err
	}
	if release == "BACKUP STAGE END" {
		if _, err := control.ExecContext(ctx, "BACKUP STAGE BLOCK_COMMIT"); err != nil {
			return nil, fmt.Errorf("holding commits for a consistent snapshot: %w", err)
		}
	}
	for _, w := range workers {
		if _, err := w.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"); err != nil {
			return nil, fmt.Errorf("starting a snapshot: %w", err)
		}
	}
	if release != "" {
		if _, err := control.ExecContext(ctx, release); err != nil {
			return nil, fmt.Errorf("%s: %w", release, err)
		}
		release = ""
	}
	return doc, nil
}

// readSchema reads the database's tables (largest first), views, routines
// and triggers.
func readSchema(ctx context.Context, conn *sql.Conn) (*dumpDoc, error) {
	doc := &dumpDoc{Format: dumpFormat}
	if err := conn.QueryRowContext(ctx, `SELECT schema_name, default_character_set_name, default_collation_name
		FROM information_schema.schemata WHERE schema_name = DATABASE()`).Scan(&doc.Database, &doc.Charset, &doc.Collation); err != nil {
		return nil, fmt.Errorf("reading the database's character set: %w", err)
	}
	type entry struct {
		name, kind string
		size       int64
	}
	var entries []entry
	err := queryRows(ctx, conn, `SELECT table_name, table_type, CAST(COALESCE(data_length, 0) AS SIGNED) FROM information_schema.tables
		WHERE table_schema = DATABASE() ORDER BY data_length DESC, table_name`, func(rows *sql.Rows) error {
		var e entry
		err := rows.Scan(&e.name, &e.kind, &e.size)
		entries = append(entries, e)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the tables: %w", err)
	}
	for _, e := range entries {
		switch e.kind {
		case "BASE TABLE":
			t := dumpTable{Name: e.name, size: e.size}
			c, err := showCreate(ctx, conn, "SHOW CREATE TABLE "+quoteIdent(e.name), "Create Table")
			if err != nil {
				return nil, err
			}
			t.Create, t.Later = splitCreate(c["Create Table"])
			err = queryRows(ctx, conn, `SELECT column_name FROM information_schema.columns
				WHERE table_schema = DATABASE() AND table_name = ? AND extra NOT LIKE '%GENERATED%' ORDER BY ordinal_position`,
				func(rows *sql.Rows) error {
					var col string
					err := rows.Scan(&col)
					t.Columns = append(t.Columns, col)
					return err
				}, e.name)
			if err != nil {
				return nil, fmt.Errorf("listing the columns of %s: %w", e.name, err)
			}
			doc.Tables = append(doc.Tables, t)
		case "VIEW":
			c, err := showCreate(ctx, conn, "SHOW CREATE VIEW "+quoteIdent(e.name), "Create View")
			if err != nil {
				return nil, err
			}
			doc.Objects = append(doc.Objects, dumpObject{Kind: "view", Name: e.name, Create: c["Create View"]})
		default:
			return nil, engine.InputErrorf("%s is a %s, which tierbench-dump does not copy (it copies tables, views, routines and triggers); "+
				"back this database up physically, or drop %s", e.name, strings.ToLower(e.kind), e.name)
		}
	}
	var routines [][2]string
	err = queryRows(ctx, conn, `SELECT routine_type, routine_name FROM information_schema.routines
		WHERE routine_schema = DATABASE() ORDER BY routine_type, routine_name`, func(rows *sql.Rows) error {
		var r [2]string
		err := rows.Scan(&r[0], &r[1])
		routines = append(routines, r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the routines: %w", err)
	}
	for _, r := range routines {
		kind := strings.ToLower(r[0]) // procedure, function (package: refused by SHOW CREATE below)
		col := "Create " + strings.ToUpper(kind[:1]) + kind[1:]
		c, err := showCreate(ctx, conn, "SHOW CREATE "+strings.ToUpper(kind)+" "+quoteIdent(r[1]), col)
		if err != nil {
			return nil, err
		}
		doc.Objects = append(doc.Objects, dumpObject{Kind: kind, Name: r[1], SQLMode: c["sql_mode"], Create: c[col]})
	}
	var triggers []string
	err = queryRows(ctx, conn, `SELECT trigger_name FROM information_schema.triggers
		WHERE trigger_schema = DATABASE() ORDER BY event_object_table, action_order`, func(rows *sql.Rows) error {
		var t string
		err := rows.Scan(&t)
		triggers = append(triggers, t)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the triggers: %w", err)
	}
	for _, t := range triggers {
		c, err := showCreate(ctx, conn, "SHOW CREATE TRIGGER "+quoteIdent(t), "SQL Original Statement")
		if err != nil {
			return nil, err
		}
		doc.Objects = append(doc.Objects, dumpObject{Kind: "trigger", Name: t, SQLMode: c["sql_mode"], Create: c["SQL Original Statement"]})
	}
	return doc, nil
}

// queryRows runs a query and calls each for every row.
func queryRows(ctx context.Context, conn *sql.Conn, query string, each func(*sql.Rows) error, args ...any) error {
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// showCreate runs a SHOW CREATE statement and returns its one row by column
// name; want must be there and not NULL (it is NULL when the user may not
// see the definition).
func showCreate(ctx context.Context, conn *sql.Conn, stmt, want string) (map[string]string, error) {
	rows, err := conn.QueryContext(ctx, stmt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stmt, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stmt, err)
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", stmt, err)
		}
		return nil, fmt.Errorf("%s returned nothing", stmt)
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, fmt.Errorf("%s: %w", stmt, err)
	}
	m := map[string]string{}
	for i, c := range cols {
		m[c] = vals[i].String
		if c == want && !vals[i].Valid {
			return nil, engine.InputErrorf("%s: the server does not show the DSN's user the definition; "+
				"its definer, or a user with SELECT on mysql.proc (routines) or SHOW VIEW (views), can back this database up", stmt)
		}
	}
	if _, ok := m[want]; !ok {
		return nil, fmt.Errorf("%s has no column %q", stmt, want)
	}
	return m, nil
}

// deferred are the definitions of a CREATE TABLE that the load adds
// afterwards: secondary indexes, sorted once rather than grown row by row,
// and foreign keys.
var deferred = regexp.MustCompile("^(KEY|UNIQUE KEY|CONSTRAINT `(?:[^`]|``)*` FOREIGN KEY) ")

// definition is how a line of SHOW CREATE TABLE's body begins: a column or
// one of the table's other definitions.
var definition = regexp.MustCompile("^(`|PRIMARY KEY |KEY |UNIQUE KEY |FULLTEXT KEY |SPATIAL KEY |VECTOR KEY |CONSTRAINT |PERIOD FOR )")

// splitCreate takes the secondary indexes and foreign keys out of a table's
// SHOW CREATE TABLE, returning the rest and the ALTER TABLE clauses that
// add them back. A definition it does not know, or an AUTO_INCREMENT
// column that needs a secondary index, keeps the statement whole.
func splitCreate(create string) (string, []string) {
	lines := strings.Split(create, "\n")
	n := len(lines)
	if n < 3 || !strings.HasPrefix(lines[0], "CREATE TABLE ") || !strings.HasSuffix(lines[0], " (") || !strings.HasPrefix(lines[n-1], ")") {
		return create, nil
	}
	var keep, later []string
	autoInc, primary := "", ""
	for _, l := range lines[1 : n-1] {
		def := strings.TrimSuffix(strings.TrimPrefix(l, "  "), ",")
		if !strings.HasPrefix(l, "  ") || !definition.MatchString(def) {
			return create, nil
		}
		switch {
		case deferred.MatchString(def):
			later = append(later, "ADD "+def)
			continue
		case strings.HasPrefix(def, "`") && strings.Contains(def, " AUTO_INCREMENT"):
			autoInc = def[:strings.Index(def[1:], "`")+2]
		case strings.HasPrefix(def, "PRIMARY KEY "):
			primary = def
		}
		keep = append(keep, "  "+def)
	}
	if autoInc != "" && !strings.HasPrefix(primary, "PRIMARY KEY ("+autoInc) {
		return create, nil
	}
	if len(later) == 0 || len(keep) == 0 {
		return create, nil
	}
	return lines[0] + "\n" + strings.Join(keep, ",\n") + "\n" + lines[n-1], later
}

// fileStem is the stem of a table's files: its name when that is a plain
// file name, else "table-N" (N its place in the dump, from 1).
func fileStem(name string, i int) string {
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Sprintf("table-%d", i+1)
		}
	}
	if name == "" || len(name) > 64 {
		return fmt.Sprintf("table-%d", i+1)
	}
	return name
}

// dumpRows streams a table's rows through conn's snapshot into its files.
func dumpRows(ctx context.Context, conn *sql.Conn, procs []string, dir string, t *dumpTable, index int) error {
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = quoteIdent(c)
	}
	rows, err := conn.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+quoteIdent(t.Name))
	if err != nil {
		return fmt.Errorf("reading %s: %w", t.Name, err)
	}
	defer rows.Close()
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	stem := fileStem(t.Name, index)
	var w *groupWriter
	var f dumpFile
	defer func() {
		if w != nil {
			w.Abort()
		}
	}()
	for rows.Next() {
		if w == nil {
			f = dumpFile{Name: fmt.Sprintf("%s.%04d.tsv", stem, len(t.Files)+1)}
			if w, err = createInGroup(ctx, procs, filepath.Join(dir, f.Name)); err != nil {
				return err
			}
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("reading %s: %w", t.Name, err)
		}
		if err := writeRow(w, vals); err != nil {
			return err
		}
		f.Rows++
		if w.n >= dumpChunk {
			f.Bytes = w.n
			err, w = w.Close(), nil
			if err != nil {
				return err
			}
			t.Files = append(t.Files, f)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", t.Name, err)
	}
	if w != nil {
		f.Bytes = w.n
		err, w = w.Close(), nil
		if err != nil {
			return err
		}
		t.Files = append(t.Files, f)
	}
	return nil
}

// specials are the bytes LOAD DATA's default format escapes.
const specials = "\\\t\n\x00"

// writeRow writes one row in LOAD DATA's default format.
func writeRow(w *groupWriter, vals []sql.RawBytes) error {
	for i, v := range vals {
		if i > 0 {
			if err := w.WriteByte('\t'); err != nil {
				return err
			}
		}
		if v == nil {
			if _, err := w.WriteString(`\N`); err != nil {
				return err
			}
			continue
		}
		for len(v) > 0 {
			j := bytes.IndexAny(v, specials)
			if j < 0 {
				if _, err := w.Write(v); err != nil {
					return err
				}
				break
			}
			if _, err := w.Write(v[:j]); err != nil {
				return err
			}
			esc := `\\`
			switch v[j] {
			case '\t':
				esc = `\t`
			case '\n':
				esc = `\n`
			case 0:
				esc = `\0`
			}
			if _, err := w.WriteString(esc); err != nil {
				return err
			}
			v = v[j+1:]
		}
	}
	return w.WriteByte('\n')
}

// readManifestHere reads a dump's schema file directly: for the untimed
// work before a restore.
func readManifestHere(dir string) (*dumpDoc, error) {
	b, err := os.ReadFile(filepath.Join(dir, dumpManifest))
	if err != nil {
		return nil, fmt.Errorf("%s is not a tierbench-dump backup: %w", dir, err)
	}
	return parseManifest(dir, b)
}

func parseManifest(dir string, b []byte) (*dumpDoc, error) {
	var doc dumpDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, dumpManifest), err)
	}
	if doc.Format != dumpFormat {
		return nil, fmt.Errorf("%s is of format %q; this tierbench reads %q", filepath.Join(dir, dumpManifest), doc.Format, dumpFormat)
	}
	return &doc, nil
}

// loadTask is one file to load, or (file < 0) a table without rows whose
// indexes are to be added.
type loadTask struct{ table, file int }

// loadDatabase is the restore phase of tierbench-load: the dump in dir
// into the empty database of dsn.
func loadDatabase(ctx context.Context, o Options, dir, dsn string) error {
	b, err := readFileInGroup(ctx, o.CgroupProcs, filepath.Join(dir, dumpManifest))
	if err != nil {
		return err
	}
	doc, err := parseManifest(dir, b)
	if err != nil {
		return err
	}
	db, err := mariaOpen(dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := session(ctx, db, dsn, loadSession)
	if err != nil {
		return err
	}
	defer conn.Close()
	var localInfile bool
	if err := conn.QueryRowContext(ctx, "SELECT @@GLOBAL.local_infile").Scan(&localInfile); err != nil {
		return fmt.Errorf("reading the server's local_infile setting: %w", err)
	}
	if !localInfile {
		return errLocalInfile
	}
	for _, t := range doc.Tables {
		if _, err := conn.ExecContext(ctx, t.Create); err != nil {
			return fmt.Errorf("creating table %s: %w", t.Name, err)
		}
	}

	left := make([]atomic.Int64, len(doc.Tables)) // files of each table not loaded yet
	var tasks []loadTask
	for i, t := range doc.Tables {
		left[i].Store(int64(len(t.Files)))
		if len(t.Files) == 0 {
			tasks = append(tasks, loadTask{i, -1})
		}
		for j := range t.Files {
			tasks = append(tasks, loadTask{i, j})
		}
	}
	next := make(chan loadTask, len(tasks))
	for _, t := range tasks {
		next <- t
	}
	close(next)
	g, gctx := errgroup.WithContext(ctx)
	for range min(o.jobs(), max(len(tasks), 1)) {
		g.Go(func() error {
			w, err := session(gctx, db, dsn, loadSession)
			if err != nil {
				return err
			}
			defer w.Close()
			for task := range next {
				t := &doc.Tables[task.table]
				if task.file >= 0 {
					if err := loadFile(gctx, w, o.CgroupProcs, dir, t, t.Files[task.file]); err != nil {
						return err
					}
					if left[task.table].Add(-1) > 0 {
						continue
					}
				}
				if len(t.Later) > 0 {
					if _, err := w.ExecContext(gctx, "ALTER TABLE "+quoteIdent(t.Name)+" "+strings.Join(t.Later, ", ")); err != nil {
						return fmt.Errorf("adding the indexes of %s: %w", t.Name, err)
					}
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return createObjects(ctx, conn, doc.Objects)
}

// errLocalInfile says the server refuses LOAD DATA LOCAL.
var errLocalInfile = engine.InputErrorf("the server does not allow LOAD DATA LOCAL INFILE (its local_infile setting is OFF), which tierbench-load restores with; " +
	"turn it on with SET GLOBAL local_infile = ON (or local_infile = ON in the server's configuration)")

// readerSeq numbers the streams registered with the driver.
var readerSeq atomic.Int64

// loadFile loads one of t's files, read by a dd child, with LOAD DATA LOCAL
// INFILE, and checks that every row went in as it was.
func loadFile(ctx context.Context, conn *sql.Conn, procs []string, dir string, t *dumpTable, f dumpFile) (err error) {
	r, err := openInGroup(ctx, procs, filepath.Join(dir, f.Name))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := r.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	name := fmt.Sprintf("tierbench-load-%d", readerSeq.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return struct{ io.Reader }{r} }) // not its Close: ours
	defer mysql.DeregisterReaderHandler(name)
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = quoteIdent(c)
	}
	res, err := conn.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+quoteIdent(t.Name)+
		` CHARACTER SET binary FIELDS TERMINATED BY '\t' ENCLOSED BY '' ESCAPED BY '\\' LINES STARTING BY '' TERMINATED BY '\n' (`+
		strings.Join(cols, ", ")+")")
	if err != nil {
		switch errNumber(err) {
		case 1148, 3948: // ER_NOT_ALLOWED_COMMAND (MariaDB), ER_CLIENT_LOCAL_FILES_DISABLED (MySQL 8.0)
			return errLocalInfile
		}
		return fmt.Errorf("loading %s into %s: %w", f.Name, t.Name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("loading %s into %s: %w", f.Name, t.Name, err)
	}
	// LOAD DATA LOCAL turns errors into warnings and goes on.
	if err := noWarnings(ctx, conn); err != nil {
		return fmt.Errorf("loading %s into %s: %w", f.Name, t.Name, err)
	}
	if n != f.Rows {
		return fmt.Errorf("loading %s into %s: %d rows went in, the dump has %d", f.Name, t.Name, n, f.Rows)
	}
	return nil
}

// noWarnings returns an error quoting the warnings of the connection's last
// statement, if it had any.
func noWarnings(ctx context.Context, conn *sql.Conn) error {
	var count int64
	if err := conn.QueryRowContext(ctx, "SELECT @@warning_count").Scan(&count); err != nil {
		return fmt.Errorf("reading the warnings: %w", err)
	}
	if count == 0 {
		return nil
	}
	var msgs []string
	_ = queryRows(ctx, conn, "SHOW WARNINGS LIMIT 3", func(rows *sql.Rows) error {
		var level, msg string
		var code int
		if err := rows.Scan(&level, &code, &msg); err != nil {
			return err
		}
		msgs = append(msgs, fmt.Sprintf("%s %d: %s", level, code, msg))
		return nil
	})
	return fmt.Errorf("the server took the rows with %d warnings, so some were not loaded exactly: %s", count, strings.Join(msgs, "; "))
}

// definer matches the DEFINER clause at the head of a SHOW CREATE
// statement (CREATE [ALGORITHM=…] DEFINER=user@host …).
var definer = regexp.MustCompile("^(CREATE (?:ALGORITHM=[A-Z]+ )?)DEFINER=(?:`(?:[^`]|``)*`|'(?:[^']|'')*'|[^ @]+)(?:@(?:`(?:[^`]|``)*`|'(?:[^']|'')*'|[^ ]+))? ")

// withoutDefiner is a SHOW CREATE statement without its DEFINER clause.
func withoutDefiner(stmt string) string { return definer.ReplaceAllString(stmt, "$1") }

// createObjects creates the views (those that need another view after it,
// however many rounds that takes), routines and triggers, without their
// DEFINER: the restoring user is theirs.
func createObjects(ctx context.Context, conn *sql.Conn, objs []dumpObject) error {
	create := func(o dumpObject) error {
		if _, err := conn.ExecContext(ctx, "SET SESSION sql_mode = "+quoteString(o.SQLMode)); err != nil {
			return err
		}
		_, err := conn.ExecContext(ctx, withoutDefiner(o.Create))
		return err
	}
	var views []dumpObject
	for _, o := range objs {
		if o.Kind == "view" {
			views = append(views, o)
		}
	}
	for len(views) > 0 {
		var again []dumpObject
		var last error
		for _, v := range views {
			if err := create(v); err != nil {
				again, last = append(again, v), fmt.Errorf("creating view %s: %w", v.Name, err)
			}
		}
		if len(again) == len(views) {
			return last
		}
		views = again
	}
	for _, o := range objs {
		if o.Kind == "view" {
			continue
		}
		if err := create(o); err != nil {
			return fmt.Errorf("creating %s %s: %w", o.Kind, o.Name, err)
		}
	}
	_, err := conn.ExecContext(ctx, "SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'")
	return err
}
