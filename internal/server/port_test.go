package server_test

import (
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/freeport"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/mariatest"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// A port tierbench picked itself, taken by someone else before the server
// binds it, is replaced by another; a port the user gave is not; the last
// start's, taken while the server was stopped, is replaced and reported. The race
// is played by a picker that hands out a port this test holds, once per
// engine. Not parallel: the picker is the package's.
func TestStartRetriesTakenPort(t *testing.T) {
	held := map[string]net.Listener{}
	for _, engine := range []string{server.EnginePostgres, server.EngineMariaDB} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		held[engine] = l
	}
	port := func(engine string) int { return held[engine].Addr().(*net.TCPAddr).Port }
	var mu sync.Mutex
	var handed []int
	restore := server.SetPortPicker(func(avoid int) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range []int{port(server.EnginePostgres), port(server.EngineMariaDB)} {
			// The port the failed start below wrote, handed out again
			// once: the race lost after the pick.
			if p == avoid && !slices.Contains(handed, p) {
				handed = append(handed, p)
				return p, nil
			}
		}
		return freeport.Pick(avoid)
	})
	t.Cleanup(restore)

	for _, engine := range []string{server.EnginePostgres, server.EngineMariaDB} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			if engine == server.EngineMariaDB {
				mariatest.RequireBinaries(t)
			} else {
				pgtest.RequireBinaries(t)
			}
			ctx := testContext(t)
			dir := filepath.Join(pgtest.TempDir(t), "data")
			stopAtEnd(t, dir)
			taken := port(engine)

			// Given by the user: kept, and the start fails.
			_, err := server.Start(ctx, server.Options{Engine: engine, DataDir: dir, Port: taken})
			if err == nil || !strings.Contains(err.Error(), "already in use") && !strings.Contains(err.Error(), "Bind on TCP/IP port") {
				t.Fatalf("start on port %d, which this test holds: err = %v; want the server's bind failure", taken, err)
			}
			// Picked by tierbench: first the same port (the picker plays
			// the race), then another.
			info, err := server.Start(ctx, server.Options{DataDir: dir, NewPort: true})
			if err != nil {
				t.Fatalf("start with a new port, the first one picked taken: %v", err)
			}
			mu.Lock()
			lost := slices.Contains(handed, taken)
			mu.Unlock()
			if !lost || info.Port == taken || info.Port == 0 {
				t.Fatalf("port %d (the taken one %d, handed out: %v); want the taken one tried, then another", info.Port, taken, lost)
			}
			st, err := server.Status(ctx, dir)
			if err != nil || !st.Running || st.Port != info.Port {
				t.Errorf("status after the start: %+v, %v; want running on port %d", st, err, info.Port)
			}
			var got string
			if engine == server.EngineMariaDB {
				got = mariaQuery(t, info.DSN, "SELECT @@port")
			} else {
				got = query(t, ctx, info.DSN, "SHOW port")
			}
			if got != strconv.Itoa(info.Port) {
				t.Errorf("the server says port %s; Start said %d", got, info.Port)
			}
			if info.MovedFromPort != 0 {
				t.Errorf("moved from port %d; want 0 for a start asked for a new port", info.MovedFromPort)
			}

			// The last start's port, taken while the server was stopped:
			// the next start moves to a free one and says so.
			if _, err := server.Stop(ctx, dir, "fast"); err != nil {
				t.Fatal(err)
			}
			last := info.Port
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(last)))
			if err != nil {
				t.Fatalf("holding the stopped server's port: %v", err)
			}
			defer l.Close()
			moved, err := server.Start(ctx, server.Options{DataDir: dir})
			if err != nil {
				t.Fatalf("start after its port %d was taken: %v", last, err)
			}
			if moved.MovedFromPort != last || moved.Port == last || !strings.Contains(moved.DSN, ":"+strconv.Itoa(moved.Port)+"/") {
				t.Errorf("port %d, moved from %d, DSN port right: %v; want a new port, moved from %d", moved.Port, moved.MovedFromPort,
					strings.Contains(moved.DSN, ":"+strconv.Itoa(moved.Port)+"/"), last)
			}

			// Held only for a moment, as a server just killed holds it
			// for some 10 ms after `server status` calls it stopped (a
			// supervisor restarting it then moved it, and a durability
			// run lost its DSN): the start waits and keeps it.
			if _, err := server.Stop(ctx, dir, "fast"); err != nil {
				t.Fatal(err)
			}
			brief, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(moved.Port)))
			if err != nil {
				t.Fatalf("holding the port for a moment: %v", err)
			}
			time.AfterFunc(300*time.Millisecond, func() { brief.Close() })
			kept, err := server.Start(ctx, server.Options{DataDir: dir})
			if err != nil || kept.Port != moved.Port || kept.MovedFromPort != 0 {
				t.Errorf("start with the port held for 300 ms: port %d (moved from %d), %v; want %d kept", kept.Port, kept.MovedFromPort, err, moved.Port)
			}
		})
	}
}
