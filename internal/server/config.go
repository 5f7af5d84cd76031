package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Files tierbench keeps in a managed data directory.
const (
	StateFile = "tierbench-server.json" // port, password, settings (0600: it holds the password)
	ConfFile  = "tierbench.conf"        // rewritten on every start, included by postgresql.conf
	LogFile   = "tierbench-server.log"  // the server's log (pg_ctl -l)
)

// DBUser is the database superuser of a managed server.
const DBUser = "tierbench"

// state is what StateFile holds.
type state struct {
	Engine    string            `json:"engine"`
	Port      int               `json:"port"`
	User      string            `json:"user"`
	Password  string            `json:"password"`
	Memory    int64             `json:"memory"`
	Settings  map[string]string `json:"settings,omitempty"`
	PgBin     string            `json:"pg_bin"`
	SocketDir string            `json:"socket_dir"`
	Version   string            `json:"version"`
	// Listen is the address besides 127.0.0.1 the last start listened on
	// (Options.Listen, normalised), and Network the network it accepted
	// logins from (e.g. 10.0.0.0/24); both empty for 127.0.0.1 only. Every
	// start sets them anew.
	Listen  string `json:"listen,omitempty"`
	Network string `json:"network,omitempty"`
	// StartedBy is the process that last started the server, so that
	// `server status` can tell a server whose tierbench was killed (absent:
	// a start by a tierbench that did not record it).
	StartedBy *starter `json:"started_by,omitempty"`
	// movedFrom is the last start's port when another process held it and
	// this start picked a free one instead (Info.MovedFromPort); not kept.
	movedFrom int
}

func readState(dir string) (state, error) {
	var st state
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %w", filepath.Join(dir, StateFile), err)
	}
	if st.Password == "" || st.Port == 0 {
		return st, fmt.Errorf("%s is incomplete (no password or port)", filepath.Join(dir, StateFile))
	}
	return st, nil
}

func writeState(dir string, st state, a account) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAs(filepath.Join(dir, StateFile), append(b, '\n'), 0o600, a)
}

// writeFileAs replaces path atomically with data, mode perm, owned by a.
func writeFileAs(path string, data []byte, perm os.FileMode, a account) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, perm)
	}
	if werr == nil {
		werr = a.chown(tmp)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
	}
	return werr
}

// hbaConf is pg_hba.conf: password (SCRAM) logins only, on the local
// socket and from 127.0.0.1, and from network (e.g. 10.0.0.0/24) when the
// server listens on an address of it (Options.Listen); replication
// connections too, so pg_basebackup can copy the server.
func hbaConf(network string) string {
	var b strings.Builder
	b.WriteString("# Written by tierbench on every start: password (SCRAM) logins only, on the local socket and 127.0.0.1")
	if network != "" {
		b.WriteString(",\n# and from " + network + " (tierbench server start --listen)")
	}
	b.WriteString(",\n# for databases and for replication (pg_basebackup).\n")
	for _, kind := range []string{"all", "replication"} {
		fmt.Fprintf(&b, "local %s all scram-sha-256\n", kind)
		fmt.Fprintf(&b, "host %s all 127.0.0.1/32 scram-sha-256\n", kind)
		if network != "" {
			fmt.Fprintf(&b, "host %s all %s scram-sha-256\n", kind, network)
		}
	}
	return b.String()
}

// includeLine is appended to postgresql.conf at initdb, so tierbench.conf,
// read last, wins over everything above it.
const includeLine = "\n# tierbench: its settings live in tierbench.conf, rewritten on every start.\ninclude_if_exists = 'tierbench.conf'\n"

// configFile is tierbench.conf for a server of the given major version: the
// fixed settings, the memory-derived ones and the user's --set overrides, in
// that order (later lines win). listen is the address it listens on besides
// 127.0.0.1 ("": none).
func configFile(port int, socketDir, listen string, memory int64, major int, settings map[string]string) string {
	var b strings.Builder
	b.WriteString("# Written by tierbench on every start; change it with `tierbench server start --set name=value`.\n")
	if listen == "" {
		b.WriteString("listen_addresses = '127.0.0.1'\n")
	} else {
		b.WriteString("# Other hosts reach it at " + listen + " (tierbench server start --listen); pg_hba.conf says which.\n")
		fmt.Fprintf(&b, "listen_addresses = %s\n", quoteConf("127.0.0.1,"+listen))
	}
	fmt.Fprintf(&b, "port = %d\n", port)
	fmt.Fprintf(&b, "unix_socket_directories = %s\n", quoteConf(socketDir))
	fmt.Fprintf(&b, "max_connections = %d\n", MaxConnections)
	b.WriteString("# A bulk load (tpcc build) writes many GB of WAL: with the defaults (1GB, 5min) it would\n")
	b.WriteString("# be dominated by forced checkpoints and measure those rather than the storage.\n")
	b.WriteString("max_wal_size = '4GB'\n")
	b.WriteString("checkpoint_timeout = '15min'\n")
	b.WriteString("# The log goes to stderr, which pg_ctl -l sends to tierbench-server.log in the data directory.\n")
	b.WriteString("logging_collector = off\n")
	b.WriteString("log_destination = 'stderr'\n")
	b.WriteString("log_line_prefix = '%m [%p] '\n")
	b.WriteString("# The server's own I/O latencies (a block read, a WAL sync) for telemetry: they include\n")
	b.WriteString("# waits above the device, such as an emulated tier's throttle, that device await misses.\n")
	b.WriteString("track_io_timing = on\n")
	if major >= 14 {
		b.WriteString("track_wal_io_timing = on\n")
	}
	if mem := MemorySettings(memory); mem != nil {
		fmt.Fprintf(&b, "# Sized from --memory %d bytes (see MemorySettings).\n", memory)
		writeSorted(&b, mem)
	}
	if len(settings) > 0 {
		b.WriteString("# --set overrides.\n")
		writeSorted(&b, settings)
	}
	return b.String()
}

func writeSorted(b *strings.Builder, m map[string]string) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(b, "%s = %s\n", k, quoteConf(m[k]))
	}
}

// quoteConf writes a value as a postgresql.conf string literal, on one line:
// PostgreSQL's lexer refuses a raw newline in a string, and reads \n and \r
// back as the characters (a --set value cannot end the line early).
func quoteConf(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", "''", "\n", `\n`, "\r", `\r`).Replace(v) + "'"
}

// ValidSettingName reports whether name can be a PostgreSQL setting name
// (letters, digits, '_' and, for extension settings, '.').
func ValidSettingName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case (r >= '0' && r <= '9' || r == '.') && i > 0:
		default:
			return false
		}
	}
	return true
}

// maxSocketPath is the longest Unix socket path the kernel takes
// (sun_path is 108 bytes with its NUL).
const maxSocketPath = 107

// socketDir is where the server puts its Unix socket: the data directory,
// unless the socket path would be too long; then a short directory in /tmp
// named after the data directory.
func socketDir(dataDir string, port int) string {
	if len(dataDir)+len("/.s.PGSQL.")+len(strconv.Itoa(port)) < maxSocketPath {
		return dataDir
	}
	sum := sha256.Sum256([]byte(dataDir))
	return "/tmp/tierbench-sock-" + hex.EncodeToString(sum[:4])
}

// ensureSocketDir makes the short socket directory: 0700, owned by a, and
// refuses one that someone else planted (a symlink, or another owner).
func ensureSocketDir(dir string, a account) error {
	return ensurePrivateDir(dir, "socket directory", a)
}

// ensurePrivateDir makes dir (what it is for in errors): 0700, owned by a,
// refusing one that someone else planted (a symlink, or another owner).
func ensurePrivateDir(dir, what string, a account) error {
	fi, err := os.Lstat(dir)
	if os.IsNotExist(err) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
		if err := a.chown(dir); err != nil {
			return err
		}
		return os.Chmod(dir, 0o700)
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s %s exists and is not a directory", what, dir)
	}
	if uid := ownerUID(fi); uid != a.uid && !(uid == 0 && a.switchTo) {
		return fmt.Errorf("%s %s belongs to another user (uid %d); remove it", what, dir, uid)
	}
	if err := a.chown(dir); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}
