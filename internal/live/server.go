package live

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server serves an Exporter's metrics over HTTP.
type Server struct {
	srv  *http.Server
	addr net.Addr
	done chan struct{}
}

// CheckAddr says whether addr is an address to listen on: a host (an IP or
// a name) and a port, 0 picking a free one. A bare ":9090" is refused
// rather than read as every interface: the endpoint is exposed only where
// the user says.
func CheckAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not ADDR:PORT (%v); give e.g. 127.0.0.1:9464, 127.0.0.1:0 for any free port, or 0.0.0.0:9464 for every interface", addr, err)
	}
	if host == "" {
		return fmt.Errorf("%q has no address; give 127.0.0.1%s to serve this host only, or 0.0.0.0%s for every interface", addr, addr, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q has no port number between 0 and 65535; give e.g. %s", addr, net.JoinHostPort(host, "9464"))
	}
	return nil
}

// Serve listens on addr and serves e's registry at /metrics (Prometheus
// text, or OpenMetrics when the scraper asks for it) until Close.
func Serve(addr string, e *Exporter) (*Server, error) {
	if err := CheckAddr(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serving metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		// A series that cannot be gathered must not hide the others.
		ErrorHandling: promhttp.ContinueOnError,
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "tierbench: metrics at /metrics")
	})
	s := &Server{
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: log.New(discard{}, "", 0)},
		addr: ln.Addr(),
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// URL is where the metrics are, with the port actually chosen.
func (s *Server) URL() string { return "http://" + s.addr.String() + "/metrics" }

// Close keeps serving for grace, so that a last scrape sees the run's end,
// unless ctx ends first (a second Ctrl-C), then stops.
func (s *Server) Close(ctx context.Context, grace time.Duration) {
	if grace > 0 {
		t := time.NewTimer(grace)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		_ = s.srv.Close()
	}
	_ = s.srv.Close()
	<-s.done
}
