package serve

import (
	"embed"
	"io/fs"
	"net/http"
)

// consoleFS is the console: a page, its script and its styles, embedded,
// loading nothing from the network and built by no tool.
//
//go:embed console
var consoleFS embed.FS

// console serves the page at / and its files under /console/.
func (s *Server) console(m *http.ServeMux) {
	files, _ := fs.Sub(consoleFS, "console")
	m.Handle("GET /console/", http.StripPrefix("/console/", http.FileServerFS(files)))
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-src 'self'")
		http.ServeFileFS(w, r, files, "index.html")
	})
}
