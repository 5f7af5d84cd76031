package tpch

import (
	"bytes"
	"context"
	"io"
	"testing"
	"testing/iotest"
)

// The load tasks of a scale cover every generator row of every table once,
// the largest tables first, and their readers together yield the reference
// file's lines without the '|' that ends each, in the file's order.
func TestLoadTasks(t *testing.T) {
	sc, _ := NewScale(0.01)
	tasks := LoadTasks(sc, 3)
	if tasks[0].Table != LineItem || tasks[len(tasks)-1].Table != Region {
		t.Errorf("tasks run from %s to %s; want lineitem first and region last", tasks[0].Table, tasks[len(tasks)-1].Table)
	}
	loaded := map[string]*bytes.Buffer{}
	next := map[string]int64{}
	for _, task := range tasks {
		if task.First != next[task.Table]+1 && !(next[task.Table] == 0 && task.First == 1) {
			t.Fatalf("%s: a task starts at row %d after row %d", task.Table, task.First, next[task.Table])
		}
		next[task.Table] = task.First + task.Count - 1
		if loaded[task.Table] == nil {
			loaded[task.Table] = &bytes.Buffer{}
		}
		// A reader read a byte at a time yields what it yields whole.
		if err := iotest.TestReader(task.Reader(sc), mustRead(t, task.Reader(sc))); err != nil {
			t.Fatalf("%s from row %d: %v", task.Table, task.First, err)
		}
		loaded[task.Table].Write(mustRead(t, task.Reader(sc)))
	}
	for _, table := range Tables {
		if n := next[table]; n != sc.generatorRows(table) {
			t.Errorf("%s: tasks end at row %d; want %d", table, n, sc.generatorRows(table))
		}
		var file bytes.Buffer
		if _, _, err := WriteTable(context.Background(), &file, sc, table, 1); err != nil {
			t.Fatal(err)
		}
		want := bytes.ReplaceAll(file.Bytes(), []byte("|\n"), []byte("\n"))
		if got := loaded[table].Bytes(); !bytes.Equal(got, want) {
			t.Errorf("%s: the load's %d bytes are not the file's %d without each line's last '|'", table, len(got), len(want))
		}
	}
	if n := len(LoadTasks(sc, 1)); n >= len(tasks) {
		t.Errorf("one worker gets %d tasks, three %d; want fewer for one", n, len(tasks))
	}
}

func mustRead(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
