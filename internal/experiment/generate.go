package experiment

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// GenerateResult is what Generate wrote.
type GenerateResult struct {
	Warehouses int     `json:"warehouses"`
	Dir        string  `json:"dir"`
	Files      int     `json:"files"`
	Bytes      int64   `json:"bytes"`
	Seconds    float64 `json:"seconds"`
}

// Generate writes the initial population of a TPC-C schema into dir (which
// must exist), exactly what a build streams into the database, as
// tab-separated text files (one per table and load task), with tasks.txt
// (a task's table=file pairs a line) and each engine's SQL scripts beside
// them (all.Engine.Scripts).
// workers generators run at once.
func Generate(ctx context.Context, warehouses, workers int, dir string) (*GenerateResult, error) {
	start := time.Now()
	tasks := tpcc.LoadTasks(warehouses)
	lines := make([]string, len(tasks))
	var bytes, files atomic.Int64
	work := make(chan int, len(tasks))
	for i := range tasks {
		work <- i
	}
	close(work)
	seeds := tpcc.NewRand(uint64(start.UnixNano()))
	cload := tpcc.NewLoadC(seeds.Child())
	eg, ctx := errgroup.WithContext(ctx)
	for range workers {
		gen := tpcc.NewGen(seeds.Child(), cload, start)
		eg.Go(func() error {
			for i := range work {
				t := tasks[i]
				var pairs []string
				for _, s := range t.Streams(gen) {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					name := fmt.Sprintf("%s.%d.tsv", s.Table, t.W)
					n, err := writeStream(filepath.Join(dir, name), s)
					if err != nil {
						return err
					}
					bytes.Add(n)
					files.Add(1)
					pairs = append(pairs, s.Table+"="+name)
				}
				if t.Kind == "rest" {
					gen.ReleasePlan(t.W)
				}
				lines[i] = strings.Join(pairs, " ")
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, fmt.Errorf("generating: %w", err)
	}
	extra := map[string]string{"tasks.txt": strings.Join(lines, "\n") + "\n"}
	for _, e := range all.Engines {
		if e.Scripts != nil {
			for key, sql := range e.Scripts() {
				extra[e.Name+"-"+key+".sql"] = sql
			}
		}
	}
	for name, content := range extra {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return nil, fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return &GenerateResult{Warehouses: warehouses, Dir: dir, Files: int(files.Load()), Bytes: bytes.Load(),
		Seconds: time.Since(start).Seconds()}, nil
}

func writeStream(path string, s tpcc.Stream) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := w.ReadFrom(s.Reader())
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("writing %s: %w", path, err)
	}
	return n, nil
}
