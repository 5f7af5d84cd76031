package experiment

import "sync"

// Tee is an Observer that passes every event to each of obs in turn, e.g.
// the command line's view and a live metrics exporter.
func Tee(obs ...Observer) Observer {
	if len(obs) == 1 {
		return obs[0]
	}
	return tee(obs)
}

type tee []Observer

func (t tee) Note(msg string) {
	for _, o := range t {
		o.Note(msg)
	}
}

func (t tee) Started(s Started) {
	for _, o := range t {
		o.Started(s)
	}
}

func (t tee) Progress(p Progress) {
	for _, o := range t {
		o.Progress(p)
	}
}

func (t tee) Tick(x Tick) {
	for _, o := range t {
		o.Tick(x)
	}
}

func (t tee) Result(r Result) {
	for _, o := range t {
		o.Result(r)
	}
}

// serial makes an Observer's events come one at a time: a run's telemetry
// samples arrive from the sampler's goroutine while the workload's events
// arrive from its own.
func serial(obs Observer) Observer {
	if _, ok := obs.(*serialObserver); ok {
		return obs
	}
	return &serialObserver{obs: obs}
}

type serialObserver struct {
	mu  sync.Mutex
	obs Observer
}

func (s *serialObserver) Note(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.obs.Note(msg)
}

func (s *serialObserver) Started(x Started) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.obs.Started(x)
}

func (s *serialObserver) Progress(x Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.obs.Progress(x)
}

func (s *serialObserver) Tick(x Tick) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.obs.Tick(x)
}

func (s *serialObserver) Result(x Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.obs.Result(x)
}
