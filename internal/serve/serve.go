// Package serve is tierbench's HTTP front end (`tierbench serve`): a JSON
// API under /api/v1 that queues experiments and scenarios, streams their
// events, and serves the stored runs, their reports and comparisons, plus
// a console page at / and live Prometheus metrics at /metrics.
//
// It is a front end as the command line is: it fills the options of
// internal/options from a request's keys (the flags' names with _ for -),
// calls the experiment layer, and maps outcomes to run statuses. It copies
// no rule: bad input is what the configs' Validate says, in the same words
// as the command line's, with the dashes dropped.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/live"
	"github.com/tierbench/tierbench/internal/results"
)

// DefaultListen is where serve listens unless told otherwise: this host
// only.
const DefaultListen = "127.0.0.1:8080"

// Options are serve's settings.
type Options struct {
	Listen  string // host:port
	Results string // the results directory every run is stored in
	// Token, when set, is required of every request as
	// "Authorization: Bearer TOKEN" (read from --token-file).
	Token string
	// AllowDestructive lets requests write to block devices and files
	// tierbench did not create, and name programs to run.
	AllowDestructive bool
	// Log hears one line per queued, started and finished experiment (nil:
	// none).
	Log io.Writer
}

// Validate checks the options: an address to listen on, and a token for
// any address other than this host's loopback.
func (o Options) Validate() error {
	var errs []error
	if err := live.CheckAddr(o.Listen); err != nil {
		errs = append(errs, &experiment.Problem{Field: "listen", Msg: err.Error()})
	} else if host, _, _ := net.SplitHostPort(o.Listen); !loopback(host) && o.Token == "" {
		errs = append(errs, &experiment.Problem{Field: "listen", Value: experiment.Quote(o.Listen),
			Msg: "is reachable from other hosts, and serve runs experiments for whoever asks; give {token_file} FILE with a secret token, or listen on 127.0.0.1"})
	}
	if err := experiment.CheckResults(o.Results); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// loopback reports whether host names this host's loopback only.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server is a running serve: its queue, its runs' events and its HTTP
// handler.
type Server struct {
	opts    Options
	store   *results.Store // the results store the API reads (the runs write through their own)
	queue   *queue
	metrics *live.Exporter
	mux     *http.ServeMux

	mu   sync.Mutex
	logs map[string]*eventLog // by run or scenario id; the newest maxLogs
	ages []string             // their ids, oldest first
}

// maxLogs is how many runs' event logs a server keeps in memory.
const maxLogs = 32

// New opens the queue in the results directory (an entry that was running
// when a previous serve stopped is recorded as interrupted) and returns
// the server, not yet running its queue.
func New(opts Options) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, metrics: live.New(), logs: map[string]*eventLog{}}
	var err error
	if s.store, err = results.Open(opts.Results); err != nil { // an empty one when there is none yet
		return nil, fmt.Errorf("opening the results store: %w", err)
	}
	q, err := openQueue(opts.Results, s)
	if err != nil {
		s.store.Close()
		return nil, err
	}
	s.queue = q
	s.mux = http.NewServeMux()
	s.routes()
	return s, nil
}

// Handler is the server's HTTP handler: authentication and the origin
// check around the API, the console and /metrics.
func (s *Server) Handler() http.Handler { return s.guard(s.mux) }

// Run serves on ln and works through the queue until ctx ends. Then it
// interrupts the running experiment, which keeps what it measured, waits
// for it to be stored, and stops serving.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	worked := make(chan struct{})
	go func() {
		defer close(worked)
		s.queue.work(ctx)
	}()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	<-worked
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut) // event streams end with the context; others finish
	s.store.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// logf writes one line to the log.
func (s *Server) logf(format string, args ...any) {
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, format+"\n", args...)
	}
}

// log returns the event log of a run or scenario, creating it.
func (s *Server) log(id string) *eventLog {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.logs[id]; ok {
		return l
	}
	l := newEventLog()
	s.logs[id] = l
	s.ages = append(s.ages, id)
	if len(s.ages) > maxLogs {
		delete(s.logs, s.ages[0])
		s.ages = s.ages[1:]
	}
	return l
}

// existingLog returns a run's event log if this server keeps one.
func (s *Server) existingLog(id string) (*eventLog, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.logs[id]
	return l, ok
}

// guard refuses requests without the token (when one is set) and requests
// a page of another origin sends: a browser names the page's origin in
// Origin and says in Sec-Fetch-Site whether it is this site, so that a
// page elsewhere cannot drive a serve on this host.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
			writeError(w, http.StatusForbidden, &apiError{Error: "requests from another site (Sec-Fetch-Site: " + site + ") are refused"})
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r.Host) {
			writeError(w, http.StatusForbidden, &apiError{Error: "requests from another origin (" + origin + ") are refused"})
			return
		}
		if s.opts.Token != "" && !s.authorized(r) && !publicPath(r.URL.Path) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tierbench"`)
			writeError(w, http.StatusUnauthorized, &apiError{Error: "this serve needs its token: send Authorization: Bearer TOKEN"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// publicPath is what a browser loads before it can send the token: the
// console page and its assets, which hold no data.
func publicPath(p string) bool { return p == "/" || strings.HasPrefix(p, "/console/") }

// authorized reports whether r carries the token.
func (s *Server) authorized(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	return ok && constantTimeEqual(strings.TrimSpace(tok), s.opts.Token)
}

// sameOrigin reports whether origin (scheme://host[:port]) is this
// server's, as the request reached it (its Host header).
func sameOrigin(origin, host string) bool {
	_, rest, ok := strings.Cut(origin, "://")
	return ok && strings.EqualFold(rest, host)
}

// serveMetrics serves the live metrics of whatever runs.
func (s *Server) serveMetrics() http.Handler {
	return promhttp.HandlerFor(s.metrics.Registry(), promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError})
}
