package report

import (
	_ "embed"
	"html/template"
	"io"
)

//go:embed style.css
var styleCSS string

// The page has no script and fetches nothing: styles are inline and
// charts are inline SVG, so it opens offline and prints as it shows.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"numeric": func(t *Table, i int) bool { return i < len(t.Numeric) && t.Numeric[i] },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
` + htmlMarker + `
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Doc.Title}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<header>
<h1>{{.Doc.Title}}</h1>
<p>{{.Doc.Subtitle}}</p>
<ul class="legend">{{range .Doc.Runs}}<li><span class="swatch" style="background:{{.Color}}"></span>{{.Label}} <small>({{.Kind}}, {{.Status}})</small></li>{{end}}</ul>
</header>
<div class="layout">
<nav><ol>{{range .Doc.Sections}}<li><a href="#{{.ID}}">{{.Title}}</a></li>{{end}}</ol></nav>
<main>
{{range .Doc.Sections}}<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{template "blocks" $.With .Blocks}}
</section>
{{end}}</main>
</div>
<footer>Written by tierbench. Tables and every per-second series are also in CSV files beside this page.</footer>
</body>
</html>
{{define "blocks"}}{{range .Blocks}}{{if .Text}}<p>{{.Text}}</p>
{{else if .Table}}{{$t := .Table}}<div class="table-wrap"><table id="{{$t.ID}}">
<caption>{{$t.Caption}}</caption>
<thead><tr>{{range $i, $h := $t.Header}}<th{{if numeric $t $i}} class="num"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>{{range $t.Rows}}<tr>{{range $i, $c := .}}<td{{if numeric $t $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{else if .Figure}}<figure class="chart" id="{{.Figure.ID}}">
{{index $.SVG .Figure.ID}}
{{if .Figure.Caption}}<figcaption>{{.Figure.Caption}}</figcaption>{{end}}
</figure>
{{else if .List}}<div class="findings">
<h3><a href="#{{.List.Anchor}}">{{.List.Title}}</a></h3>
<ul>{{range .List.Items}}<li>{{.}}</li>
{{end}}</ul>
</div>
{{else if .Details}}<details>
<summary>{{.Details.Summary}}</summary>
{{template "blocks" $.With .Details.Blocks}}
</details>
{{end}}{{end}}{{end}}`))

// page is the template's data; With gives nested blocks the same SVGs.
type page struct {
	Doc    *Document
	CSS    template.CSS
	SVG    map[string]template.HTML
	Blocks []Block
}

func (p page) With(blocks []Block) page {
	p.Blocks = blocks
	return p
}

func writeHTML(w io.Writer, doc *Document, svgs map[string][]byte) error {
	p := page{Doc: doc, CSS: template.CSS(styleCSS), SVG: map[string]template.HTML{}}
	for id, svg := range svgs {
		// The SVG comes from the chart renderer, which escapes every text
		// it draws; it is markup, not user text.
		p.SVG[id] = template.HTML(svg)
	}
	return pageTemplate.Execute(w, p)
}
